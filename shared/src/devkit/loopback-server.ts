import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server on a free loopback port (receivers and pages the system calls), and how to close it. */
export async function loopbackServer(handler: RequestListener): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

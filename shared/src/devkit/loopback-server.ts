import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server on a free loopback port, and how to close it (open connections included). */
export interface LoopbackServer {
  origin: string;
  close(): Promise<void>;
}

/** Serves `handler` (an app under test, a receiver, a page the system fetches) on a free loopback port. */
export async function loopbackServer(handler: RequestListener): Promise<LoopbackServer> {
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

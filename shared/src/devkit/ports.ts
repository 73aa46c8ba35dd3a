import { createServer, type AddressInfo, type Server } from 'node:net';

/** A port that was free a moment ago, for a child process to listen on. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** `count` distinct ports that were free a moment ago: all bound at once, then released. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Whether `port` can be bound on every address (so nothing listens on it, on any of them). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}

/**
 * A base port such that base + each offset was free a moment ago, for processes that derive their
 * ports from one base (METRICS_PORT_BASE of `npm start`). Taken below Linux's ephemeral range
 * (32768 and up), where the kernel hands out the ports of freePort and of outgoing connections.
 */
export async function freePortBase(offsets: number[]): Promise<number> {
  const span = Math.max(...offsets) + 1;
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (12_000 - span));
    const results = await Promise.all(offsets.map((offset) => bindable(base + offset)));
    if (results.every(Boolean)) return base;
  }
  throw new Error(`no free range of ${span} ports found`);
}

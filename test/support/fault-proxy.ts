/**
 * A small fault-injecting TCP proxy between a client and a server (Postgres, Redis, a service):
 * it forwards bytes both ways and can add latency, reset every open connection, or refuse new
 * ones (the port stops listening: clients get ECONNREFUSED), as a crashed or partitioned server
 * would look to its clients, while the server itself keeps its state.
 */
import { freePort } from '@collab/shared/devkit';
import { createServer, createConnection, type Server, type Socket } from 'node:net';

export interface FaultProxy {
  /** The proxy's port on 127.0.0.1, to use instead of the target's. */
  port: number;
  /** Delay of every chunk in both directions (0: none). */
  setLatency(ms: number): void;
  /** Resets (RST) every open connection. */
  resetAll(): void;
  /** Stops listening, so that new connections are refused. */
  refuse(): void;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  /** Unreachable: refuses new connections and resets the open ones. */
  down(): void;
  close(): void;
}

export async function startFaultProxy(target: { host?: string; port: number }): Promise<FaultProxy> {
  const port = await freePort();
  const open = new Set<Socket>();
  let latencyMs = 0;
  let server: Server | null = null;

  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      if (latencyMs === 0) to.write(chunk);
      // Equal delays fire in order, so the byte stream stays in order.
      else setTimeout(() => to.writable && to.write(chunk), latencyMs);
    });
    from.on('end', () => to.end());
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };

  const onConnection = (client: Socket) => {
    const upstream = createConnection({ host: target.host ?? '127.0.0.1', port: target.port });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    }
    forward(client, upstream);
    forward(upstream, client);
  };

  async function accept(): Promise<void> {
    if (server) return;
    const listening = createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => resolve());
    });
    server = listening;
  }

  function refuse(): void {
    // New connections are refused from now on; open ones stay until reset or ended.
    server?.close();
    server = null;
  }

  function resetAll(): void {
    for (const socket of open) socket.resetAndDestroy();
  }

  await accept();
  return {
    port,
    setLatency(ms) {
      latencyMs = ms;
    },
    resetAll,
    refuse,
    accept,
    down() {
      refuse();
      resetAll();
    },
    close() {
      refuse();
      resetAll();
    },
  };
}

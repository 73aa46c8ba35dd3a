/**
 * A small fault-injecting TCP proxy between a client and a server (Postgres, Redis, a service):
 * it forwards bytes both ways and can add latency, reset every open connection, or refuse new
 * ones (each is reset at once), as a crashed or partitioned server would look to its clients,
 * while the server itself keeps its state. The proxy keeps its port all along: given up while
 * refusing, another program on a busy machine could take it before it listens again.
 */
import { createServer, createConnection, type AddressInfo, type Server, type Socket } from 'node:net';

export interface FaultProxy {
  /** The proxy's port on 127.0.0.1, to use instead of the target's. */
  port: number;
  /** Delay of every chunk in both directions (0: none). */
  setLatency(ms: number): void;
  /** Resets (RST) every open connection. */
  resetAll(): void;
  /** Resolves when the next bytes from a client arrive here (before they are forwarded). */
  clientData(): Promise<void>;
  /** Refuses new connections (resets each at once). */
  refuse(): void;
  /** Forwards new connections again. */
  accept(): Promise<void>;
  /** Unreachable: refuses new connections and resets the open ones. */
  down(): void;
  close(): void;
}

export async function startFaultProxy(target: { host?: string; port: number }): Promise<FaultProxy> {
  const open = new Set<Socket>();
  let latencyMs = 0;
  let refusing = false;
  /** Waiting for the next bytes from a client (clientData). */
  let onClientData: (() => void)[] = [];

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
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: target.host ?? '127.0.0.1', port: target.port });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    }
    client.on('data', () => {
      const waiting = onClientData;
      onClientData = [];
      for (const resolve of waiting) resolve();
    });
    forward(client, upstream);
    forward(upstream, client);
  };

  function refuse(): void {
    // New connections are refused from now on; open ones stay until reset or ended.
    refusing = true;
  }

  function resetAll(): void {
    for (const socket of open) socket.resetAndDestroy();
  }

  const server: Server = createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    setLatency(ms) {
      latencyMs = ms;
    },
    resetAll,
    clientData: () => new Promise<void>((resolve) => onClientData.push(resolve)),
    refuse,
    async accept() {
      refusing = false;
    },
    down() {
      refuse();
      resetAll();
    },
    close() {
      refuse();
      resetAll();
      server.close();
    },
  };
}

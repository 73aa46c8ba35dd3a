/**
 * A round-robin TCP balancer, run as its own process (`node balancer.js <port>`), standing in for
 * a Kubernetes Service in front of several conversation replicas: each new connection goes to the
 * next backend. The parent sets the backends over IPC (`{ backends: [port, …] }`); changing them
 * closes the open connections, so that the gateway's keep-alive pool reconnects across all of them.
 */
import { connect, createServer, type Socket } from 'node:net';

let backends: number[] = [];
let next = 0;
const open = new Set<Socket>();

const server = createServer((client) => {
  if (backends.length === 0) {
    client.destroy();
    return;
  }
  const upstream = connect(backends[next++ % backends.length], '127.0.0.1');
  for (const [socket, other] of [
    [client, upstream],
    [upstream, client],
  ]) {
    open.add(socket);
    socket.on('error', () => other.destroy());
    socket.on('close', () => {
      open.delete(socket);
      other.destroy();
    });
  }
  client.pipe(upstream).pipe(client);
});

process.on('message', (message: { backends: number[] }) => {
  backends = message.backends;
  for (const socket of open) socket.destroy();
  process.send?.('updated');
});
process.on('disconnect', () => process.exit(0));

server.listen(Number(process.argv[2]), '127.0.0.1', () => process.send?.('listening'));

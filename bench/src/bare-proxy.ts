/**
 * What forwarding costs one Node process at the least: a bare node:http proxy, run as its own
 * process (`node bare-proxy.js <service URL> <internal token> <application id>`), that adds the
 * internal headers the gateway adds and forwards every request to the service over keep-alive
 * connections, streaming both bodies. Nothing else: no express, no route lookup, no token check,
 * no logging, no metrics. Its CPU per request is the floor under the gateway's.
 * It listens on a free port, tells the parent over IPC (`{ port }`) and exits when the parent goes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { INTERNAL_HEADERS } from '@collab/shared';

const [serviceUrl, internalToken, applicationId] = process.argv.slice(2);
const service = new URL(serviceUrl);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, [INTERNAL_HEADERS.internalToken]: internalToken, [INTERNAL_HEADERS.applicationId]: applicationId };
  delete headers.authorization;
  const upstream = http.request({ host: service.hostname, port: service.port, method: req.method, path: req.url, headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});

process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));

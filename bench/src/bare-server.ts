/**
 * What one Node process can do for GET and PUT /v1/users/<ID>: a bare node:http server, run as
 * its own process (`node bare-server.js <database URL> <application id header>`), issuing the
 * statements identity issues for these calls (statements.ts) over a pg pool of identity's size
 * (DB_POOL_SIZE, default 10 as identity's) of identity's client (statements prepared as identity's
 * are, DB_PREPARED_STATEMENTS), and answering identity's JSON, built by identity's own
 * view (userDetails). Nothing else: no express, no schema validation, no token check, no logging.
 * The application is the one named by the header the gateway sets, so the same load reaches it as
 * reaches identity directly.
 * It listens on a free port, tells the parent over IPC (`{ port }`) and exits when the parent goes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userDetails } from '@collab/identity/domain/users/user-views';
import { ServiceClient } from '@collab/shared/storage';
import pg from 'pg';
import { IDENTITY } from './statements.js';

const [databaseUrl, applicationHeader] = process.argv.slice(2);
const sql = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.DB_POOL_SIZE || 10), Client: ServiceClient });
sql.on('error', () => undefined);

/** The row findUserWithGroupIds reads: the user as identity's view takes it, and its group ids. */
type UserWithGroups = Parameters<typeof userDetails>[0] & { groupIds: string[] };

function send(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

async function getUser(applicationId: string, userId: string, res: ServerResponse): Promise<void> {
  const user = (await sql.query<UserWithGroups>(IDENTITY.findUserWithGroupIds, [applicationId, userId])).rows[0];
  if (!user) return send(res, 404, { error: 'user_not_found', message: `Platform user ${userId} not found.` });
  send(res, 200, userDetails(user, user.groupIds));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Name and email, in the one statement identity issues for a PUT without group changes. */
async function putUser(applicationId: string, userId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let body: { name?: unknown; email?: unknown };
  try {
    body = (await readJson(req)) as typeof body;
  } catch {
    return send(res, 400, { error: 'invalid_request', message: 'The body is not JSON.' });
  }
  if (typeof body?.name !== 'string' || typeof body.email !== 'string')
    return send(res, 400, { error: 'invalid_field', message: 'name and email must be strings.' });
  const [written] = (await sql.query<{ created: boolean }>(IDENTITY.upsertNameAndEmail, [applicationId, userId, body.name, body.email])).rows;
  send(res, 200, { success: true, message: `You successfully ${written.created ? 'created' : 'updated'} user ${userId}` });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const match = /^\/v1\/users\/([^/?]+)(?:\?.*)?$/.exec(req.url ?? '');
  const applicationId = req.headers[applicationHeader];
  if (!match || typeof applicationId !== 'string') return send(res, 404, { error: 'not_found', message: 'No such route.' });
  const userId = decodeURIComponent(match[1]);
  if (req.method === 'GET') return getUser(applicationId, userId, res);
  if (req.method === 'PUT') return putUser(applicationId, userId, req, res);
  send(res, 405, { error: 'method_not_allowed', message: 'GET or PUT.' });
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: Error) => {
    if (!res.headersSent) send(res, 500, { error: 'error', message: error.message });
  });
});

process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));

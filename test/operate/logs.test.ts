/**
 * Logs: one request id follows a request from the gateway through the services into the jobs it
 * causes; the request is logged once at info (by the gateway), the services' own request lines
 * are at debug; and credentials never reach a log line (the logger's real redaction paths).
 */
import { LOG_REDACT_PATHS } from '@collab/shared';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { request, type TestApplication } from '../support/client.js';
import { pollUntil } from '../support/processes.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

interface LogLine {
  level?: number;
  service?: string;
  requestId?: string;
  msg?: string;
  [key: string]: unknown;
}

const lines: string[] = [];
// The same settings as createLogger, writing to memory instead of stdout, at debug to see the services' request lines.
const logger = pino(
  {
    level: 'debug',
    base: { service: 'test' },
    redact: { paths: [...LOG_REDACT_PATHS], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  },
  { write: (line: string) => void lines.push(line) },
);
const parsed = (): LogLine[] => lines.map((line) => JSON.parse(line) as LogLine);

let system: TestSystem;
let app: TestApplication;

systemWithApplication('test app', (started) => ({ system, app } = started), { logger });

/** The first log line `look` finds, once it has been written. */
const logged = <T>(what: string, look: () => T | undefined) => pollUntil(`a log line: ${what}`, 10_000, look);

describe('logs', () => {
  it('carry the request id from the gateway through the services into the purge jobs, and no credential', async () => {
    const token = await serverToken(app.id, app.secret);
    const call = (method: string, path: string, body?: unknown) => request(system.url, method, path, { token, body });
    expect((await call('PUT', '/v1/users/ann', { name: 'Ann' })).status).toBe(200);
    expect((await call('PUT', '/v1/groups/logged', { name: 'Logged', members: ['ann'] })).status).toBe(200);
    const posted = await call('POST', '/v1/threads/logged-thread/messages', {
      authorID: 'ann',
      content: [{ type: 'p', children: [{ text: 'hello' }] }],
      createThread: { groupID: 'logged', location: { page: 'p' }, url: 'https://example.com/p', name: 'thread' },
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);

    const deleted = await call('DELETE', '/v1/groups/logged');
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const requestId = deleted.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await waitForQueuesIdle(system);

    const ofRequest = (service: string, msg: string) => () =>
      parsed().find((line) => line.service === service && line.requestId === requestId && line.msg === msg);
    const gateway = await logged('gateway request', ofRequest('gateway', 'request'));
    expect(gateway).toMatchObject({ level: pino.levels.values.info, method: 'DELETE', url: '/v1/groups/logged', status: 200 });
    const identity = await logged('identity request', ofRequest('identity', 'request'));
    expect(identity).toMatchObject({ level: pino.levels.values.debug, method: 'DELETE', applicationId: app.id });
    const cascade = await logged('conversation cascade', ofRequest('conversation', 'request'));
    expect(cascade).toMatchObject({ level: pino.levels.values.debug, method: 'POST', url: '/internal/cascade', applicationId: app.id });
    // Once at info: the gateway's line.
    const atInfo = parsed().filter((line) => line.requestId === requestId && line.msg === 'request' && line.level! >= pino.levels.values.info!);
    expect(atInfo.map((line) => line.service)).toEqual(['gateway']);
    const job = await logged('conversation purge job', ofRequest('conversation-worker', 'job completed'));
    expect(job).toMatchObject({ jobName: 'marked.purge', applicationId: app.id });
    // Lines of other requests carry their own ids, not this one.
    const otherIds = new Set(parsed().filter((line) => line.service === 'gateway' && line.msg === 'request').map((line) => line.requestId));
    expect(otherIds.size).toBeGreaterThan(1);

    // Credentials passed as log fields are redacted by the real paths (as a handler logging a
    // request's headers, a body or a config would).
    const probe = logger.child({ service: 'probe', requestId });
    probe.info(
      {
        req: { headers: { authorization: `Bearer ${token}`, 'x-collab-internal-token': system.env.INTERNAL_TOKEN } },
        headers: { authorization: `Bearer ${token}`, 'x-collab-internal-token': system.env.INTERNAL_TOKEN },
        secret: app.secret,
        body: { secret: system.customer.secret, signed_app_token: token, access_token: token },
        token,
      },
      'probe',
    );
    const probeLine = await logged('probe', ofRequest('probe', 'probe'));
    expect(probeLine).toMatchObject({ secret: '[redacted]', token: '[redacted]', headers: { authorization: '[redacted]' } });

    const secrets = { applicationSecret: app.secret, customerSecret: system.customer.secret, bearerToken: token, internalToken: system.env.INTERNAL_TOKEN };
    expect(lines.length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(secrets)) {
      const leaking = lines.filter((line) => line.includes(value));
      expect(leaking, `${name} leaked`).toEqual([]);
    }
  });
});

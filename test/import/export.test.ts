/**
 * GET /v1/customer/dbdump: this server's data of a customer as a dump in the original's format,
 * which imports into a second, empty system with every read answering the same there.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { checkDumpComplete, linesOf, readDump } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/client.js';
import { expectedReads, FIXTURE_APPS, replayExpectedReads } from '../support/fixture-reads.js';
import { FIXTURE_CUSTOMER, FIXTURE_DUMP, importerFor, type Importer } from '../support/imports.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

let first: TestSystem;
let second: TestSystem;
let importerOfSecond: Importer;
let dir: string;
let dump: string;

beforeAll(async () => {
  first = await startSystem();
  const importer = await importerFor(first);
  expect((await importer.run(FIXTURE_DUMP)).status).toBe('completed');
  await importer.close();
  second = await startSystem();
  importerOfSecond = await importerFor(second);
  dir = await mkdtemp(join(tmpdir(), 'export-'));
}, 120_000);
afterAll(async () => {
  await importerOfSecond?.close();
  await first?.stop();
  await second?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('GET /v1/customer/dbdump', () => {
  it("streams the customer's data as a whole dump of the original's tables", async () => {
    const response = await fetch(`${first.url}/v1/customer/dbdump`, {
      headers: { authorization: `Bearer ${await customerToken(FIXTURE_CUSTOMER.id, FIXTURE_CUSTOMER.secret)}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    dump = await response.text();
    await checkDumpComplete(linesOf(Readable.from([dump])));
    const counts: Record<string, number> = {};
    for await (const event of readDump(linesOf(Readable.from([dump])))) if (event.kind === 'end') counts[event.table] = event.rows;
    expect(counts).toEqual({
      customers: 1,
      applications: 2,
      users: 28,
      orgs: 7,
      threads: 12,
      messages: 46,
      application_webhooks: 1,
      email_subscription: 0,
      files: 0,
      message_attachments: 0,
      message_mentions: 11,
      message_reactions: 11,
      notifications: 67,
      org_members: 39,
      pages: 12,
      thread_participants: 33,
      user_preferences: 1,
    });
  });

  it('is not readable with a server token', async () => {
    const response = await request(first.url, 'GET', '/v1/customer/dbdump', { token: await serverToken(FIXTURE_APPS.app1.id, FIXTURE_APPS.app1.secret) });
    expect(response.status).toBe(401);
  });
});

describe('importing the export into a second, empty system', () => {
  it('answers every read as the first system does, and as the original did', async () => {
    const file = join(dir, 'export.sql');
    await writeFile(file, dump);
    const report = await importerOfSecond.run(file);
    expect(report.status).toBe('completed');
    expect(report.conflicts).toEqual([]);
    expect(report.skipped).toEqual([]);

    for (const read of expectedReads()) {
      const token =
        read.auth === 'customer'
          ? await customerToken(FIXTURE_CUSTOMER.id, FIXTURE_CUSTOMER.secret)
          : await serverToken(FIXTURE_APPS[read.app!].id, FIXTURE_APPS[read.app!].secret);
      const [here, there] = await Promise.all([first, second].map((system) => request(system.url, read.method, read.path, { token })));
      expect({ seq: read.seq, status: there.status, body: there.body }).toEqual({ seq: read.seq, status: here.status, body: here.body });
    }
    const unexplained = (await replayExpectedReads(second.url)).filter((difference) => difference.decision === null);
    expect(unexplained).toEqual([]);
  });
});

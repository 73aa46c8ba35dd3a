/**
 * Per-thread e-mail opt-outs through import and export: the original's email_subscription rows
 * with subscribed false become opt-outs here, and GET /v1/customer/dbdump writes them back as such
 * rows, so that a second system importing the export keeps the same users unsubscribed from the
 * same threads.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { linesOf, readDump } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMER, FIXTURE_DUMP, importerFor } from '../support/imports.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { customerToken } from '../support/tokens.js';

const EMPTY_BLOCK = 'COPY "tmp_email_subscription" ("userID", "threadID", "subscribed") FROM stdin;\n\\.\n';

let first: TestSystem;
let second: TestSystem;
let dir: string;

beforeAll(async () => {
  [first, second] = await Promise.all([startSystem(), startSystem()]);
  dir = await mkdtemp(join(tmpdir(), 'opt-outs-'));
}, 120_000);
afterAll(async () => {
  await first?.stop();
  await second?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The dump's email_subscription rows as [user externalID, thread externalID, subscribed], sorted. */
async function subscriptionsOf(dump: string): Promise<string[][]> {
  const users = new Map<string, string>();
  const threads = new Map<string, string>();
  const rows: Record<string, string | null>[] = [];
  for await (const event of readDump(linesOf(Readable.from([dump])), new Set(['users', 'threads', 'email_subscription']))) {
    if (event.kind !== 'row') continue;
    if (event.table === 'users') users.set(event.row.id!, event.row.externalID!);
    if (event.table === 'threads') threads.set(event.row.id!, event.row.externalID!);
    if (event.table === 'email_subscription') rows.push(event.row);
  }
  return rows.map((row) => [users.get(row.userID!)!, threads.get(row.threadID!)!, row.subscribed!]).sort();
}

/** Two participants of the fixture's threads: their (user, thread) internal ids. */
async function participantsOf(dump: string, count: number): Promise<{ userID: string; threadID: string }[]> {
  const found: { userID: string; threadID: string }[] = [];
  for await (const event of readDump(linesOf(Readable.from([dump])), new Set(['thread_participants'])))
    if (event.kind === 'row' && found.length < count) found.push({ userID: event.row.userID!, threadID: event.row.threadID! });
  return found;
}

async function importInto(system: TestSystem, file: string) {
  const importer = await importerFor(system);
  try {
    return await importer.run(file);
  } finally {
    await importer.close();
  }
}

async function exportOf(system: TestSystem): Promise<string> {
  const response = await fetch(`${system.url}/v1/customer/dbdump`, {
    headers: { authorization: `Bearer ${await customerToken(FIXTURE_CUSTOMER.id, FIXTURE_CUSTOMER.secret)}` },
  });
  expect(response.status).toBe(200);
  return response.text();
}

describe('thread opt-outs in a dump', () => {
  it('are imported from subscribed-false rows, exported as such, and survive a second import', async () => {
    const fixture = await readFile(FIXTURE_DUMP, 'utf8');
    expect(fixture).toContain(EMPTY_BLOCK);
    const [optedOut, subscribed] = await participantsOf(fixture, 2);
    const block = EMPTY_BLOCK.replace('\\.\n', `${optedOut.userID}\t${optedOut.threadID}\tf\n${subscribed.userID}\t${subscribed.threadID}\tt\n\\.\n`);
    const given = fixture.replace(EMPTY_BLOCK, block);
    const file = join(dir, 'with-opt-outs.sql');
    await writeFile(file, given);
    const expected = (await subscriptionsOf(given)).filter(([, , flag]) => flag === 'f');
    expect(expected).toHaveLength(1);

    const report = await importInto(first, file);
    expect(report.status).toBe('completed');
    expect(report.counts.threadOptOuts).toEqual({ imported: 1, existing: 0 });
    expect(report.skipped).toContainEqual({ table: 'email_subscription', rows: 1, reason: 'a subscribed row is no opt-out, and mail is sent unless opted out' });

    const exported = await exportOf(first);
    expect(await subscriptionsOf(exported)).toEqual(expected);

    // Importing again changes nothing; the export imports into an empty system with the same opt-out.
    expect((await importInto(first, file)).counts.threadOptOuts).toEqual({ imported: 0, existing: 1 });
    const again = join(dir, 'export.sql');
    await writeFile(again, exported);
    const secondReport = await importInto(second, again);
    expect(secondReport.status).toBe('completed');
    expect(secondReport.skipped).toEqual([]);
    expect(secondReport.counts.threadOptOuts).toEqual({ imported: 1, existing: 0 });
    expect(await subscriptionsOf(await exportOf(second))).toEqual(expected);
  });
});

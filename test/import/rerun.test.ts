/**
 * Importing a dump again changes nothing; an application or user that exists here with other data
 * is reported as a conflict and kept, unless the import overwrites.
 */
import { describe, expect, it } from 'vitest';
import { request } from '../support/client.js';
import { snapshotDatabase, type DatabaseSnapshot } from '../support/db-snapshot.js';
import { FIXTURE_APPS, replayExpectedReads } from '../support/fixture-reads.js';
import { FIXTURE_CUSTOMER, FIXTURE_DUMP, systemWithImporter, type Importer } from '../support/imports.js';
import type { TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

let system: TestSystem;
let importer: Importer;

/** The import's own records (one more per import) are not the customer's data. */
const withoutImportRecords = (snapshot: DatabaseSnapshot) =>
  Object.fromEntries(Object.entries(snapshot).filter(([table]) => !['identity.imports', 'identity.import_chunks'].includes(table)));

systemWithImporter(async (started) => {
  ({ system, importer } = started);
  expect((await importer.run(FIXTURE_DUMP)).status).toBe('completed');
});

describe('importing the same dump again', () => {
  it('changes nothing, and reports every row as already there', async () => {
    const before = withoutImportRecords(await snapshotDatabase(system.sql));
    const report = await importer.run(FIXTURE_DUMP);
    expect(report.status).toBe('completed');
    expect(report.conflicts).toEqual([]);
    expect(withoutImportRecords(await snapshotDatabase(system.sql))).toEqual(before);
    for (const [entity, count] of Object.entries(report.counts)) expect({ entity, imported: count.imported }).toEqual({ entity, imported: 0 });
    expect(report.counts.messages).toEqual({ imported: 0, existing: 46 });
    // Pages are the threads' locations: there already, as their threads are.
    expect(report.counts.pages).toEqual({ imported: 0, existing: 12 });
  });

  it('keeps the import report once the dump it read is gone', async () => {
    const { rows } = await system.sql.query<{ count: number }>(`SELECT count(*)::int AS count FROM identity.import_chunks`);
    expect(rows[0].count).toBe(0);
  });
});

describe('a dump holding an application or user that exists here with other data', () => {
  const customer = () => customerToken(FIXTURE_CUSTOMER.id, FIXTURE_CUSTOMER.secret);

  it('reports the conflicts and keeps what is stored here', async () => {
    const app1 = FIXTURE_APPS.app1;
    const app2 = FIXTURE_APPS.app2;
    const renamed = await request(system.url, 'PUT', `/v1/applications/${app1.id}`, { token: await customer(), body: { name: 'Northwind Docs (here)' } });
    expect(renamed.status).toBe(200);
    const edited = await request(system.url, 'PUT', '/v1/users/agt-olu', { token: await serverToken(app2.id, app2.secret), body: { name: 'Olu (edited here)' } });
    expect(edited.status).toBe(200);
    const before = withoutImportRecords(await snapshotDatabase(system.sql));

    const report = await importer.run(FIXTURE_DUMP);
    expect(report.status).toBe('completed');
    expect(report.conflicts).toEqual([
      { entity: 'application', id: app1.id, reason: expect.stringContaining('another name') },
      { entity: 'user', id: 'agt-olu', applicationID: app2.id, reason: expect.stringContaining('other data') },
    ]);
    // Nothing of the conflicting application is imported.
    expect(report.skipped).toContainEqual({ table: 'users', rows: 16, reason: 'its application is in conflict' });
    expect(withoutImportRecords(await snapshotDatabase(system.sql))).toEqual(before);
    expect((await request(system.url, 'GET', `/v1/applications/${app1.id}`, { token: await customer() })).body.name).toBe('Northwind Docs (here)');
  });

  it('replaces them with the dump\'s data when the import overwrites', async () => {
    const report = await importer.run(FIXTURE_DUMP, { overwrite: true });
    expect(report.status).toBe('completed');
    expect(report.conflicts).toEqual([]);
    const unexplained = (await replayExpectedReads(system.url)).filter((difference) => difference.decision === null);
    expect(unexplained).toEqual([]);
  });

  it('refuses, as a conflict, an application that belongs to another customer here', async () => {
    const other = await system.addCustomer();
    const report = await importer.run(FIXTURE_DUMP, { customerId: other.id });
    expect(report.status).toBe('completed');
    expect(report.conflicts).toEqual([
      { entity: 'application', id: FIXTURE_APPS.app1.id, reason: expect.stringContaining('belongs to another customer') },
      { entity: 'application', id: FIXTURE_APPS.app2.id, reason: expect.stringContaining('belongs to another customer') },
    ]);
    expect(report.skipped).toContainEqual({ table: 'customers', rows: 1, reason: `the dump's customer is imported into customer ${other.id}` });
    // Nothing of the dump was imported for this customer before, so its threads and users are unknown
    // here: the rows that refer to them are skipped for their application's conflict, not as if
    // what they refer to were missing from the dump.
    expect(report.skipped).toContainEqual({ table: 'messages', rows: 46, reason: 'its application is in conflict' });
    expect(report.skipped.filter((skipped) => skipped.table === 'messages')).toHaveLength(1);
    // Mentions, reactions, participants and preferences name no application: they refer to rows
    // skipped for the conflict, which their reason says may be the cause.
    expect(report.skipped.filter((skipped) => skipped.reason === 'what it refers to is not in the dump')).toEqual([]);
    expect(report.skipped).toContainEqual({
      table: 'message_mentions',
      rows: 11,
      reason: 'what it refers to is not imported: it is not in the dump, or its application is in conflict',
    });
  });
});

describe('an import that overwrites an application whose secret was rotated here', () => {
  it('makes the gateway stop accepting the secret it replaced at once', async () => {
    const app2 = FIXTURE_APPS.app2;
    const rotated = await request(system.url, 'POST', `/v1/applications/${app2.id}/secret`, { token: await customerToken(FIXTURE_CUSTOMER.id, FIXTURE_CUSTOMER.secret) });
    expect(rotated.status).toBe(200);
    const rotatedToken = await serverToken(app2.id, rotated.body.secret);
    // The gateway now holds the rotated secret among the application's cached credentials.
    expect((await request(system.url, 'GET', '/v1/users/agt-olu', { token: rotatedToken })).status).toBe(200);

    const report = await importer.run(FIXTURE_DUMP, { overwrite: true });
    expect(report.status).toBe('completed');

    expect((await request(system.url, 'GET', '/v1/users/agt-olu', { token: rotatedToken })).status).toBe(401);
    expect((await request(system.url, 'GET', '/v1/users/agt-olu', { token: await serverToken(app2.id, app2.secret) })).status).toBe(200);
  });
});

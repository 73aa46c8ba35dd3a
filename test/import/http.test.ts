/**
 * POST /v1/customer/imports and GET /v1/customer/imports/<importID>: a customer sends its dump
 * (as the body, or the `dump` part of multipart form data) and follows the import; the data comes
 * in under that customer. A truncated dump is refused with nothing written; another customer's
 * import is not found.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { request } from '../support/client.js';
import { snapshotDatabase } from '../support/db-snapshot.js';
import { FIXTURE_APPS } from '../support/fixture-reads.js';
import { FIXTURE_DUMP } from '../support/imports.js';
import { waitForBackgroundWork } from '../support/queues.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

let system: TestSystem;
let dump: string;
const asCustomer = () => customerToken(system.customer.id, system.customer.secret);

systemForFile(async (started) => {
  system = started;
  dump = await readFile(FIXTURE_DUMP, 'utf8');
});

async function postDump(body: string | FormData, options: { query?: string; token?: string; contentType?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? (await asCustomer())}` };
  if (typeof body === 'string') headers['content-type'] = options.contentType ?? 'text/plain';
  const response = await fetch(`${system.url}/v1/customer/imports${options.query ?? ''}`, { method: 'POST', headers, body });
  return { status: response.status, body: (await response.json()) as any };
}

describe('POST /v1/customer/imports', () => {
  it('refuses a truncated dump with 400 and writes nothing', async () => {
    const before = await snapshotDatabase(system.sql);
    const answer = await postDump(dump.slice(0, 100_000));
    expect(answer).toEqual({ status: 400, body: { error: 'invalid_request', message: expect.stringContaining('The dump is incomplete') } });
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });

  it('answers 202 with an importID, and the import brings the applications in under the caller', async () => {
    const answer = await postDump(dump);
    expect(answer).toEqual({ status: 202, body: { success: true, message: 'Import accepted.', importID: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    await waitForBackgroundWork(system, 60_000);

    const status = await request(system.url, 'GET', `/v1/customer/imports/${answer.body.importID}`, { token: await asCustomer() });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      importID: answer.body.importID,
      status: 'completed',
      progress: { fraction: 1, dumpBytes: Buffer.byteLength(dump) },
      counts: { applications: { imported: 2, existing: 0 }, messages: { imported: 46, existing: 0 }, notifications: { imported: 67, existing: 0 } },
      conflicts: [],
      error: null,
    });
    // The dump's customer is another one: its row is not taken, its applications are the caller's.
    expect(status.body.skipped).toContainEqual({ table: 'customers', rows: 1, reason: `the dump's customer is imported into customer ${system.customer.id}` });
    const applications = await request(system.url, 'GET', '/v1/applications', { token: await asCustomer() });
    expect(applications.body.map((application: { id: string }) => application.id).sort()).toEqual([FIXTURE_APPS.app1.id, FIXTURE_APPS.app2.id]);
    // Server tokens signed with the imported secrets work.
    const thread = await request(system.url, 'GET', '/v1/threads/roadmap-q3', { token: await serverToken(FIXTURE_APPS.app1.id, FIXTURE_APPS.app1.secret) });
    expect(thread.status).toBe(200);
    expect(thread.body.id).toBe('roadmap-q3');
  });

  it('takes the dump as the `dump` part of multipart form data (again: everything is already there)', async () => {
    const form = new FormData();
    form.append('dump', new Blob([dump], { type: 'application/sql' }), 'customer-dump.sql');
    const answer = await postDump(form);
    expect(answer.status).toBe(202);
    await waitForBackgroundWork(system, 60_000);
    const status = await request(system.url, 'GET', `/v1/customer/imports/${answer.body.importID}`, { token: await asCustomer() });
    expect(status.body).toMatchObject({ status: 'completed', counts: { messages: { imported: 0, existing: 46 } }, conflicts: [] });
  });

  it('refuses multipart form data without a `dump` part', async () => {
    const form = new FormData();
    form.append('file', new Blob([dump]), 'customer-dump.sql');
    expect(await postDump(form)).toEqual({ status: 400, body: { error: 'missing_field', message: 'The multipart body has no `dump` part.' } });
  });

  it('refuses an overwrite value other than true or false', async () => {
    expect(await postDump(dump, { query: '?overwrite=yes' })).toEqual({
      status: 400,
      body: { error: 'invalid_field', message: "overwrite value is invalid: must be 'true' or 'false'" },
    });
  });
});

describe('GET /v1/customer/imports/<importID>', () => {
  it("answers not found for another customer's import and for an unknown id", async () => {
    const answer = await postDump(dump);
    expect(answer.status).toBe(202);
    await waitForBackgroundWork(system, 60_000);
    const otherCustomer = await system.addCustomer();
    const asOther = await customerToken(otherCustomer.id, otherCustomer.secret);
    const foreign = await request(system.url, 'GET', `/v1/customer/imports/${answer.body.importID}`, { token: asOther });
    expect(foreign).toMatchObject({ status: 404, body: { error: 'not_found', message: 'Import not found.' } });
    const unknown = await request(system.url, 'GET', '/v1/customer/imports/00000000-0000-4000-8000-000000000000', { token: await asCustomer() });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'not_found', message: 'Import not found.' } });
  });
});

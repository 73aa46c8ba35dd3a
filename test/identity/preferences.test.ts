/**
 * GET and PUT /v1/users/<ID>/preferences (decision 51): both channels on until set, a PUT changes
 * only the channels it sends, and the preferences go with their user and application.
 */
import type { ServerUpdatePreference } from '@cord-sdk/types';
import { describe, expect, it } from 'vitest';
import { asCustomer, createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('preferences app', (started) => ({ system, app } = started));

const preferencesPath = (id: string) => `/v1/users/${encodeURIComponent(id)}/preferences`;

async function newUser(client = app.client): Promise<string> {
  const id = uniqueId('user');
  expect((await client.put(`/v1/users/${id}`, { name: 'Pat' })).status).toBe(200);
  return id;
}

/** The body as @cord-sdk/server's callers type it, so that a drift from the original's request type fails to compile. */
const put = (id: string, value: ServerUpdatePreference['value'], client = app.client) =>
  client.put(preferencesPath(id), { key: 'notification_channels', value } satisfies ServerUpdatePreference);
const channels = async (id: string, client = app.client) => {
  const response = await client.get(preferencesPath(id));
  expect(response.status).toBe(200);
  return response.body;
};

const storedRows = async (applicationId: string) =>
  Number((await system.sql.query(`SELECT count(*) FROM identity.user_preferences WHERE application_id = $1`, [applicationId])).rows[0].count);

describe('GET /v1/users/<ID>/preferences', () => {
  it('answers both channels on for a user who never set them', async () => {
    expect(await channels(await newUser())).toEqual({ notification_channels: { sendViaEmail: true, sendViaSlack: true } });
  });

  it('answers 401 user_not_found for an unknown user', async () => {
    expectError(await app.client.get(preferencesPath('nobody-here')), 401, 'user_not_found', 'Platform user nobody-here not found.');
  });
});

describe('PUT /v1/users/<ID>/preferences', () => {
  it('changes only the channels sent; the others keep their value', async () => {
    const id = await newUser();
    const response = await put(id, { sendViaEmail: false });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: `You successfully updated user ${id} preferences` });
    expect(await channels(id)).toEqual({ notification_channels: { sendViaEmail: false, sendViaSlack: true } });

    expect((await put(id, { sendViaSlack: false })).status).toBe(200);
    expect(await channels(id)).toEqual({ notification_channels: { sendViaEmail: false, sendViaSlack: false } });

    expect((await put(id, {})).status).toBe(200);
    expect(await channels(id)).toEqual({ notification_channels: { sendViaEmail: false, sendViaSlack: false } });

    expect((await put(id, { sendViaEmail: true, sendViaSlack: true })).status).toBe(200);
    expect(await channels(id)).toEqual({ notification_channels: { sendViaEmail: true, sendViaSlack: true } });
  });

  it('works for a user who belongs to no group', async () => {
    const id = await newUser();
    expect((await put(id, { sendViaSlack: false })).status).toBe(200);
    expect(await channels(id)).toEqual({ notification_channels: { sendViaEmail: true, sendViaSlack: false } });
  });

  it('answers 401 user_not_found for an unknown user and stores nothing', async () => {
    const before = await storedRows(app.id);
    expectError(await put('nobody-here', { sendViaEmail: false }), 401, 'user_not_found', 'Platform user nobody-here not found.');
    expect(await storedRows(app.id)).toBe(before);
  });

  it.each([
    ['another key', { key: 'other', value: {} }, 'key'],
    ['no key', { value: {} }, 'key'],
    ['no value', { key: 'notification_channels' }, 'value'],
    ['a string for a boolean', { key: 'notification_channels', value: { sendViaEmail: 'false' } }, 'sendViaEmail'],
    ['an unknown channel', { key: 'notification_channels', value: { sendViaCarrierPigeon: true } }, 'sendViaCarrierPigeon'],
    ['an unknown top-level key', { key: 'notification_channels', value: {}, extra: 1 }, 'extra'],
  ])('refuses %s with a 400 naming the field, and stores nothing', async (_case, body, field) => {
    const id = await newUser();
    const response = await app.client.put(preferencesPath(id), body);
    expect(response.status).toBe(400);
    expect(response.body.message).toContain(field);
    expect(await channels(id)).toEqual({ notification_channels: { sendViaEmail: true, sendViaSlack: true } });
  });

  it("never reads or writes another application's user", async () => {
    const other = await createApplication(system, 'other preferences app');
    const id = await newUser(other.client);
    expectError(await put(id, { sendViaEmail: false }), 401, 'user_not_found');
    expectError(await app.client.get(preferencesPath(id)), 401, 'user_not_found');
    expect(await channels(id, other.client)).toEqual({ notification_channels: { sendViaEmail: true, sendViaSlack: true } });
  });
});

describe('deletion', () => {
  it("removes a user's preferences with the user", async () => {
    const id = await newUser();
    expect((await put(id, { sendViaEmail: false })).status).toBe(200);
    const before = await storedRows(app.id);
    expect((await app.client.delete(`/v1/users/${id}`, { permanently_delete: true })).status).toBe(200);
    expect(await storedRows(app.id)).toBe(before - 1);
    // Recreated, the user starts again from the defaults.
    await app.client.put(`/v1/users/${id}`, { name: 'Pat again' });
    expect(await channels(id)).toEqual({ notification_channels: { sendViaEmail: true, sendViaSlack: true } });
  });

  it("removes an application's preferences with the application", async () => {
    const doomed = await createApplication(system, 'doomed preferences app');
    const id = await newUser(doomed.client);
    expect((await put(id, { sendViaSlack: false }, doomed.client)).status).toBe(200);
    expect(await storedRows(doomed.id)).toBe(1);
    expect((await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret })).status).toBe(200);
    expect(await storedRows(doomed.id)).toBe(0);
  });
});

/**
 * GET /v1/client/notifications and /v1/client/notificationCounts: the viewer's own notifications
 * and how many are unread, never another user's.
 */
import { describe, expect, it } from 'vitest';
import { request, uniqueId, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { clientToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('client notifications app', (started) => ({ system, app } = started));

const enc = encodeURIComponent;

async function asViewer(viewer: string, path: string) {
  return request(system.url, 'GET', path, { token: await clientToken(app.id, app.secret, { user_id: viewer }) });
}

async function notify(actor: string, recipient: string, text: string) {
  const response = await app.client.post('/v1/notifications', {
    actor_id: actor,
    recipient_id: recipient,
    template: `{{actor}} ${text}`,
    url: 'https://example.com/n',
    type: 'url',
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.notificationID as string;
}

describe('client notification reads', () => {
  it("answer the viewer's notifications and unread count only", async () => {
    const [viewer, actor, other] = ['viewer', 'actor', 'other'].map(uniqueId);
    for (const id of [viewer, actor, other]) expect((await app.client.put(`/v1/users/${enc(id)}`, { name: id })).status).toBe(200);
    const none = await asViewer(viewer, '/v1/client/notificationCounts');
    expect(none.body).toEqual({ unread: 0 });

    const first = await notify(actor, viewer, 'says hello');
    const second = await notify(actor, viewer, 'says hello again');
    await notify(actor, other, 'for someone else');

    const list = await asViewer(viewer, '/v1/client/notifications');
    expect(list.status).toBe(200);
    expect(list.body.notifications.map((item: { id: string }) => item.id)).toEqual([second, first]);
    expect(list.body).toMatchObject({ loading: false, hasMore: false });
    expect(JSON.stringify(list.body)).not.toContain('for someone else');
    expect((await asViewer(viewer, '/v1/client/notificationCounts')).body).toEqual({ unread: 2 });
    expect((await asViewer(other, '/v1/client/notificationCounts')).body).toEqual({ unread: 1 });
  });

  it('answer at most ten notifications, and say there are more', async () => {
    const [viewer, actor] = ['viewer', 'actor'].map(uniqueId);
    for (const id of [viewer, actor]) expect((await app.client.put(`/v1/users/${enc(id)}`, { name: id })).status).toBe(200);
    for (let index = 0; index < 11; index++) await notify(actor, viewer, `number ${index}`);
    const list = await asViewer(viewer, '/v1/client/notifications');
    expect(list.body.notifications).toHaveLength(10);
    expect(list.body.hasMore).toBe(true);
    expect((await asViewer(viewer, '/v1/client/notificationCounts')).body).toEqual({ unread: 11 });
  });
});

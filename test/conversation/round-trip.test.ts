import { describe, expect, it } from 'vitest';
import { request, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('test app', async (started) => {
  ({ system, app } = started);
  await app.client.put('/v1/users/ann', { name: 'Ann' });
  await app.client.put('/v1/users/bob', { name: 'Bob', shortName: 'B' });
  await app.client.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob'] });
});

const hello = [{ type: 'p', children: [{ text: 'Hello ' }, { type: 'mention', user: { id: 'bob' }, children: [{ text: '@Bob' }] }] }];

describe('a message round trip through the gateway', () => {
  it('creates a thread with its first message, reacts, attaches a file, soft deletes and deletes', async () => {
    const created = await app.client.post('/v1/threads/t1/messages', {
      authorID: 'ann',
      content: hello,
      createThread: { groupID: 'team', location: { page: 'home' }, url: 'https://example.com/t1', name: 'First thread' },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ success: true, message: 'Message created.' });
    const messageID = created.body.messageID as string;
    expect(messageID).toMatch(/^cord:[0-9a-f-]{36}$/);

    const thread = await app.client.get('/v1/threads/t1');
    expect(thread.body).toMatchObject({ id: 't1', groupID: 'team', total: 1, userMessages: 1, subscribers: ['ann', 'bob'], mentioned: ['bob'] });

    const list = await app.client.get('/v1/threads/t1/messages');
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ id: messageID, plaintext: 'Hello @Bob', authorID: 'ann', threadID: 't1', url: 'https://example.com/t1' });

    const reacted = await app.client.put(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`, {
      addReactions: [{ reaction: '👍', userID: 'bob' }],
    });
    expect(reacted.status).toBe(200);
    const removedReaction = await app.client.put(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`, {
      removeReactions: [{ reaction: '👍', userID: 'bob' }],
      addReactions: [{ reaction: '🎉', userID: 'ann' }],
    });
    expect(removedReaction.status).toBe(200);

    const form = new FormData();
    form.set('ownerID', 'ann');
    form.set('file', new Blob([Buffer.from('hello file')], { type: 'text/plain' }), 'hello.txt');
    const uploaded = await fetch(`${system.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}` },
      body: form,
    });
    const upload = (await uploaded.json()) as { fileID: string };
    expect(uploaded.status).toBe(200);
    const attached = await app.client.put(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`, {
      addAttachments: [{ type: 'file', id: upload.fileID }],
    });
    expect(attached.status).toBe(200);

    const message = await app.client.get(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`);
    expect(message.body.reactions).toEqual([expect.objectContaining({ reaction: '🎉', userID: 'ann' })]);
    expect(message.body.attachments).toEqual([
      expect.objectContaining({ type: 'file', id: `cord:${upload.fileID}`, name: 'hello.txt', size: 10, mimeType: 'text/plain' }),
    ]);
    const download = await fetch(message.body.attachments[0].url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('hello file');

    await app.client.put(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`, { deleted: true });
    expect((await app.client.get(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`)).body.deletedTimestamp).not.toBeNull();
    await app.client.put(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`, { deleted: false });
    expect((await app.client.get(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`)).body.deletedTimestamp).toBeNull();

    const deleted = await app.client.delete(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`);
    expect(deleted.body).toEqual({ success: true, message: `You successfully deleted message ${messageID}` });
    expect((await app.client.get(`/v1/threads/t1/messages/${encodeURIComponent(messageID)}`)).status).toBe(404);

    const threads = await request(system.url, 'GET', '/v1/threads', { token: await serverToken(app.id, app.secret) });
    expect(threads.headers.get('x-total-count')).toBe('1');
  });
});

/**
 * The conversation issue's "done when": a round trip through the gateway with tokens minted by the
 * reference server SDK, @cord-sdk/server — its `fetchCordRESTApi` for JSON calls (it signs a fresh
 * server token per call and throws on non-2xx), `getServerAuthToken` for the multipart upload.
 */
import { fetchCordRESTApi, getServerAuthToken, type FetchOptions } from '@cord-sdk/server';
import { describe, expect, it } from 'vitest';
import { type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('sdk round trip', (started) => ({ system, app } = started));

/** fetchCordRESTApi against this system: the SDK appends the endpoint to `api_url` as is. */
function cord<T = any>(endpoint: string, options: Omit<FetchOptions, 'project_id' | 'project_secret' | 'api_url'> = {}) {
  return fetchCordRESTApi<T>(endpoint, { ...options, project_id: app.id, project_secret: app.secret, api_url: `${system.url}/` });
}

describe('a round trip with @cord-sdk/server', () => {
  it('creates a message with createThread, lists, reacts, attaches and downloads a file, soft deletes, undeletes and deletes', async () => {
    // Users and a group, through the SDK too.
    expect(await cord('v1/users/leela', { method: 'PUT', body: { name: 'Leela', email: 'leela@example.com' } })).toEqual({
      success: true,
      message: 'You successfully created user leela',
    });
    await cord('v1/users/fry', { method: 'PUT', body: { name: 'Fry' } });
    expect(await cord('v1/groups/crew', { method: 'PUT', body: { name: 'Crew', members: ['leela', 'fry'] } })).toEqual({
      success: true,
      message: 'You successfully created group crew',
    });

    // 1. A message that creates its thread.
    const content = [{ type: 'p', children: [{ text: 'Good news, ' }, { type: 'mention', user: { id: 'fry' }, children: [{ text: '@Fry' }] }] }];
    const created = await cord<{ success: boolean; message: string; messageID: string }>('v1/threads/sdk-thread/messages', {
      method: 'POST',
      body: {
        authorID: 'leela',
        content,
        createThread: { groupID: 'crew', location: { page: 'ship' }, url: 'https://example.com/ship', name: 'Ship' },
      },
    });
    expect(created).toEqual({ success: true, message: 'Message created.', messageID: expect.stringMatching(/^cord:[0-9a-f-]{36}$/) });
    const messageId = created.messageID;
    const messagePath = `v1/threads/sdk-thread/messages/${encodeURIComponent(messageId)}`;
    const thread = await cord('v1/threads/sdk-thread');
    expect(thread).toMatchObject({ id: 'sdk-thread', groupID: 'crew', name: 'Ship', total: 1 });

    // 2. List the thread's messages.
    const listed = await cord<any[]>('v1/threads/sdk-thread/messages');
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      id: messageId,
      authorID: 'leela',
      groupID: 'crew',
      threadID: 'sdk-thread',
      content,
      plaintext: 'Good news, @Fry',
      deletedTimestamp: null,
      reactions: [],
      attachments: [],
    });

    // 3. Add reactions, then remove one.
    expect(
      await cord(messagePath, {
        method: 'PUT',
        body: {
          addReactions: [
            { reaction: '👍', userID: 'fry' },
            { reaction: '🚀', userID: 'leela', timestamp: '2030-01-01T00:00:00.000Z' },
          ],
        },
      }),
    ).toEqual({ success: true, message: `You successfully updated message ${messageId}` });
    const reacted = await cord(messagePath);
    expect(reacted.reactions).toEqual([
      { reaction: '👍', userID: 'fry', timestamp: expect.any(String) },
      { reaction: '🚀', userID: 'leela', timestamp: '2030-01-01T00:00:00.000Z' },
    ]);
    await cord(messagePath, { method: 'PUT', body: { removeReactions: [{ reaction: '👍', userID: 'fry' }] } });
    expect((await cord(messagePath)).reactions).toEqual([{ reaction: '🚀', userID: 'leela', timestamp: '2030-01-01T00:00:00.000Z' }]);

    // 4. Upload a file with an SDK-minted token, attach it, download it through its url.
    const bytes = Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7) % 256));
    const form = new FormData();
    form.set('ownerID', 'leela');
    form.set('file', new Blob([bytes], { type: 'application/pdf' }), 'delivery.pdf');
    const uploadResponse = await fetch(`${system.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${getServerAuthToken(app.id, app.secret)}` },
      body: form,
    });
    const uploaded = (await uploadResponse.json()) as { success: boolean; message: string; fileID: string };
    expect(uploadResponse.status).toBe(200);
    expect(uploaded).toEqual({ success: true, message: 'File uploaded.', fileID: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await cord(messagePath, { method: 'PUT', body: { addAttachments: [{ type: 'file', id: uploaded.fileID }] } });
    const withFile = await cord(messagePath);
    expect(withFile.attachments).toEqual([
      {
        type: 'file',
        id: `cord:${uploaded.fileID}`,
        name: 'delivery.pdf',
        url: expect.stringMatching(new RegExp(`^${system.url}/v1/files/${uploaded.fileID}\\?`)),
        mimeType: 'application/pdf',
        size: bytes.length,
        uploadStatus: 'uploaded',
      },
    ]);
    const downloaded = await fetch(withFile.attachments[0].url);
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(bytes)).toBe(true);
    // The attachment is listed too, and the author's other uploads are not attached to it.
    expect((await cord<any[]>('v1/threads/sdk-thread/messages'))[0].attachments.map((a: { id: string }) => a.id)).toEqual([
      `cord:${uploaded.fileID}`,
    ]);

    // 5. Soft delete: still readable with its content, marked deleted.
    await cord(messagePath, { method: 'PUT', body: { deleted: true } });
    const softDeleted = await cord(messagePath);
    expect(softDeleted.deletedTimestamp).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/));
    expect(softDeleted.plaintext).toBe('Good news, @Fry');
    expect((await cord<any[]>('v1/threads/sdk-thread/messages'))[0].deletedTimestamp).toBe(softDeleted.deletedTimestamp);

    // 6. Undelete.
    await cord(messagePath, { method: 'PUT', body: { deleted: false } });
    expect((await cord(messagePath)).deletedTimestamp).toBeNull();

    // 7. Delete: gone for good, with its reactions and attachments; the thread stays.
    expect(await cord(messagePath, { method: 'DELETE' })).toEqual({ success: true, message: `You successfully deleted message ${messageId}` });
    await expect(cord(messagePath)).rejects.toThrow(/404.*message_not_found/s);
    expect(await cord('v1/threads/sdk-thread/messages')).toEqual([]);
    expect(await cord('v1/threads/sdk-thread')).toMatchObject({ id: 'sdk-thread', total: 0 });
    const { rows } = await system.sql.query(
      `SELECT (SELECT count(*) FROM conversation.message_attachments)::int AS attachments,
              (SELECT count(*) FROM conversation.message_reactions)::int AS reactions`,
    );
    expect(rows[0]).toEqual({ attachments: 0, reactions: 0 });
  });

  it('surfaces attachment errors through fetchCordRESTApi', async () => {
    await cord('v1/users/bender', { method: 'PUT', body: { name: 'Bender', addGroups: ['crew'] } });
    const form = new FormData();
    form.set('ownerID', 'bender');
    form.set('file', new Blob([Buffer.from('bite my shiny metal file')]), 'bender.txt');
    const uploadResponse = await fetch(`${system.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${getServerAuthToken(app.id, app.secret)}` },
      body: form,
    });
    const { fileID } = (await uploadResponse.json()) as { fileID: string };
    expect(uploadResponse.status).toBe(200);
    await expect(
      cord('v1/threads/sdk-thread/messages', {
        method: 'POST',
        body: { authorID: 'leela', content: [], addAttachments: [{ type: 'file', id: fileID }] },
      }),
    ).rejects.toThrow(/403.*file_belongs_to_different_user/s);
    await expect(
      cord('v1/threads/sdk-thread/messages', {
        method: 'POST',
        body: { authorID: 'bender', content: [], addAttachments: [{ type: 'file', id: '00000000-0000-4000-8000-000000000000' }] },
      }),
    ).rejects.toThrow(/404.*file_not_found/s);
  });
});

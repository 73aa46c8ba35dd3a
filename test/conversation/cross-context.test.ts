/**
 * Checks that cross from the conversation service to identity (author exists, group exists,
 * reaction users are active members, file owners exist) ask identity over internal HTTP, or reuse
 * its answer while the application's directory is unchanged (directory-reuse.test.ts): consistent
 * at once, and a clear 503 when identity cannot be reached.
 */
import { randomUUID } from 'node:crypto';
import http, { type Server } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createLogger, INTERNAL_HEADERS } from '@collab/shared';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConversationConfig } from '../../services/conversation/src/config.js';
import { createConversationService } from '../../services/conversation/src/service.js';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { request, uniqueId, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

const THREAD = 'cross-context-thread';
const content = (text: string) => [{ type: 'p', children: [{ text }] }];
const logger = createLogger('test', 'silent');

systemWithApplication('cross-context app', async (started) => {
  ({ system, app } = started);
  await app.client.put('/v1/users/ann', { name: 'Ann' });
  await app.client.put('/v1/groups/team', { name: 'Team', members: ['ann'] });
  const first = await app.client.post(`/v1/threads/${THREAD}/messages`, {
    id: 'first-message',
    authorID: 'ann',
    content: content('first'),
    createThread: { groupID: 'team', location: { page: 'cross' }, url: 'https://example.com/cross', name: 'Cross' },
  });
  if (first.status !== 200) throw new Error(`thread setup failed: ${JSON.stringify(first.body)}`);
});

function listen(handler: Express | http.RequestListener): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = http.createServer(handler as http.RequestListener);
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Another conversation service on this system's database, built with `env` overrides, listening on
 * a free port, with a gateway in front of it whose identity is the real one.
 */
async function conversationWith(env: Record<string, string>) {
  const conversation = await createConversationService(loadConversationConfig({ ...system.env, ...env }), logger);
  const conversationServer = await listen(conversation.app);
  const gateway = await createGateway(loadGatewayConfig({ ...system.env, CONVERSATION_URL: conversationServer.url }), logger, () => false);
  const gatewayServer = await listen(gateway.app);
  const internalToken = env.INTERNAL_TOKEN ?? system.env.INTERNAL_TOKEN;
  return {
    gatewayUrl: gatewayServer.url,
    /** Calls the service directly, as the gateway does. */
    direct(method: string, path: string, body?: unknown) {
      return request(conversationServer.url, method, path, {
        body,
        headers: { [INTERNAL_HEADERS.internalToken]: internalToken, [INTERNAL_HEADERS.applicationId]: app.id },
      });
    },
    async stop() {
      await close(gatewayServer.server);
      await close(conversationServer.server);
      await gateway.close();
      await conversation.close();
    },
  };
}

const messagePath = (messageId: string, thread = THREAD) => `/v1/threads/${thread}/messages/${encodeURIComponent(messageId)}`;

async function reactionsOf(messageId: string, thread = THREAD) {
  const message = await app.client.get(messagePath(messageId, thread));
  expect(message.status).toBe(200);
  return message.body.reactions.map((r: { reaction: string; userID: string }) => `${r.userID}:${r.reaction}`);
}

async function fileCount(): Promise<number> {
  const { rows } = await system.sql.query(`SELECT count(*)::int AS n FROM conversation.files`);
  return rows[0].n;
}

describe('checks against identity are consistent at once', () => {
  it('a user created by PUT /v1/users is known as an author in the very next request', async () => {
    for (let i = 0; i < 5; i++) {
      const userId = uniqueId('new-author');
      const created = await app.client.put(`/v1/users/${userId}`, { name: `Author ${i}`, addGroups: ['team'] });
      expect(created.body).toEqual({ success: true, message: `You successfully created user ${userId}` });
      const posted = await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: userId, content: content(`hi ${i}`) });
      expect(posted.status).toBe(200);
      expect(posted.body).toMatchObject({ success: true, message: 'Message created.' });
      const message = await app.client.get(messagePath(posted.body.messageID));
      expect(message.body.authorID).toBe(userId);
    }
  });

  it('a user created by PUT /v1/users can be mentioned, own a file and react in the very next requests', async () => {
    const mentioned = uniqueId('new-mention');
    await app.client.put(`/v1/users/${mentioned}`, { name: 'Mentioned', addGroups: ['team'] });
    const posted = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: [{ type: 'p', children: [{ type: 'mention', user: { id: mentioned }, children: [{ text: '@Mentioned' }] }] }],
    });
    expect(posted.status).toBe(200);

    const owner = uniqueId('new-owner');
    await app.client.put(`/v1/users/${owner}`, { name: 'Owner' });
    const form = new FormData();
    form.set('ownerID', owner);
    form.set('file', new Blob([Buffer.from('mine')], { type: 'text/plain' }), 'mine.txt');
    const uploaded = await fetch(`${system.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}` },
      body: form,
    });
    expect(uploaded.status).toBe(200);

    const reactor = uniqueId('new-reactor');
    await app.client.put(`/v1/users/${reactor}`, { name: 'Reactor', addGroups: ['team'] });
    const reacted = await app.client.put(messagePath(posted.body.messageID), { addReactions: [{ reaction: '👀', userID: reactor }] });
    expect(reacted.status).toBe(200);
    expect(await reactionsOf(posted.body.messageID)).toEqual([`${reactor}:👀`]);
  });

  it('a group created by PUT /v1/groups can take a new thread in the very next request', async () => {
    const groupId = uniqueId('new-group');
    await app.client.put(`/v1/groups/${groupId}`, { name: 'New group', members: ['ann'] });
    const threadId = uniqueId('new-group-thread');
    const posted = await app.client.post(`/v1/threads/${threadId}/messages`, {
      authorID: 'ann',
      content: content('first in the new group'),
      createThread: { groupID: groupId, location: { page: threadId }, url: 'https://example.com/new', name: 'New' },
    });
    expect(posted.status).toBe(200);
    expect((await app.client.get(`/v1/threads/${threadId}`)).body.groupID).toBe(groupId);
  });

  it('a user added to a group by the preceding request can post to its thread and react', async () => {
    const userId = uniqueId('joiner');
    await app.client.put(`/v1/users/${userId}`, { name: 'Joiner' });
    // Not a member yet: refused.
    const early = await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: userId, content: content('too early') });
    expect(early.status).toBe(400);
    expect(early.body.error).toBe('invalid_request');
    const earlyReaction = await app.client.put(messagePath('first-message'), { addReactions: [{ reaction: '🙋', userID: userId }] });
    expect(earlyReaction.status).toBe(401);
    expect(earlyReaction.body.error).toBe('user_not_in_organization');

    const added = await app.client.post('/v1/groups/team/members', { add: [userId] });
    expect(added.body).toEqual({ success: true, message: 'You successfully updated group members' });
    const posted = await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: userId, content: content('made it') });
    expect(posted.status).toBe(200);
    const reacted = await app.client.put(messagePath('first-message'), { addReactions: [{ reaction: '🙋', userID: userId }] });
    expect(reacted.status).toBe(200);
    expect(await reactionsOf('first-message')).toContain(`${userId}:🙋`);
  });

  it('a user removed from the group by the preceding request can no longer react → 401 user_not_in_organization', async () => {
    const userId = uniqueId('leaver');
    await app.client.put(`/v1/users/${userId}`, { name: 'Leaver', addGroups: ['team'] });
    const messageId = (await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: 'ann', content: content('leaving') })).body.messageID;
    expect((await app.client.put(messagePath(messageId), { addReactions: [{ reaction: '👋', userID: userId }] })).status).toBe(200);

    await app.client.post('/v1/groups/team/members', { remove: [userId] });
    const reacted = await app.client.put(messagePath(messageId), { addReactions: [{ reaction: '🚪', userID: userId }] });
    expect(reacted.status).toBe(401);
    expect(reacted.body).toEqual({ error: 'user_not_in_organization', message: `User with ID '${userId}' does not belong in organization team.` });
    expect(await reactionsOf(messageId)).toEqual([`${userId}:👋`]);
  });

  it('a reaction by a user whose status is deleted → 401 user_not_in_organization, and nothing in the request is applied', async () => {
    const userId = uniqueId('deleted-status');
    await app.client.put(`/v1/users/${userId}`, { name: 'Gone', addGroups: ['team'] });
    await app.client.put(`/v1/users/${userId}`, { status: 'deleted' });

    const createdId = uniqueId('with-deleted-reaction');
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      id: createdId,
      authorID: 'ann',
      content: content('react?'),
      addReactions: [{ reaction: '❌', userID: userId }],
    });
    expect(created.status).toBe(401);
    expect(created.body).toEqual({ error: 'user_not_in_organization', message: expect.any(String) });
    expect((await app.client.get(messagePath(createdId))).status).toBe(404);

    const messageId = (await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: 'ann', content: content('react later') })).body
      .messageID;
    const updated = await app.client.put(messagePath(messageId), {
      content: content('edited in the same request'),
      addReactions: [
        { reaction: '✅', userID: 'ann' },
        { reaction: '❌', userID: userId },
      ],
    });
    expect(updated.status).toBe(401);
    expect(updated.body.error).toBe('user_not_in_organization');
    const unchanged = await app.client.get(messagePath(messageId));
    expect(unchanged.body.reactions).toEqual([]);
    expect(unchanged.body.plaintext).toBe('react later');

    // Active again: the same reaction is accepted.
    await app.client.put(`/v1/users/${userId}`, { status: 'active' });
    expect((await app.client.put(messagePath(messageId), { addReactions: [{ reaction: '❌', userID: userId }] })).status).toBe(200);
    expect(await reactionsOf(messageId)).toEqual([`${userId}:❌`]);
  });

  it('a reaction by an unknown user → 401 user_not_found', async () => {
    const reacted = await app.client.put(messagePath('first-message'), { addReactions: [{ reaction: '👻', userID: 'nobody-at-all' }] });
    expect(reacted.status).toBe(401);
    expect(reacted.body).toEqual({ error: 'user_not_found', message: 'User with ID nobody-at-all does not exist.' });
  });
});

describe('identity unreachable → 503 service_unavailable, never a 4xx', () => {
  let broken: Awaited<ReturnType<typeof conversationWith>>;

  beforeAll(async () => {
    broken = await conversationWith({ IDENTITY_URL: `http://127.0.0.1:${await closedPort()}` });
  });
  afterAll(() => broken?.stop());

  function expectUnavailable(response: { status: number; headers: Headers; body: any }) {
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  it('a message create answers 503 with Retry-After, called directly with the internal headers', async () => {
    const id = uniqueId('unreachable');
    const response = await broken.direct('POST', `/v1/threads/${THREAD}/messages`, { id, authorID: 'ann', content: content('lost') });
    expectUnavailable(response);
    expect((await app.client.get(messagePath(id))).status).toBe(404);
  });

  it('a message create with a user no one knows yet still answers 503, not 401', async () => {
    const response = await broken.direct('POST', `/v1/threads/${THREAD}/messages`, { authorID: 'nobody', content: content('lost') });
    expectUnavailable(response);
  });

  it('a message create with createThread answers 503 and creates no thread', async () => {
    const threadId = uniqueId('unreachable-thread');
    const response = await broken.direct('POST', `/v1/threads/${threadId}/messages`, {
      authorID: 'ann',
      content: content('lost'),
      createThread: { groupID: 'team', location: { page: 'lost' }, url: 'https://example.com/lost', name: 'Lost' },
    });
    expectUnavailable(response);
    expect((await app.client.get(`/v1/threads/${threadId}`)).status).toBe(404);
  });

  it('a message update with reactions answers 503 and changes nothing', async () => {
    const response = await broken.direct('PUT', messagePath('first-message'), { addReactions: [{ reaction: '🔌', userID: 'ann' }] });
    expectUnavailable(response);
    expect(await reactionsOf('first-message')).not.toContain('ann:🔌');
  });

  it('the same answer comes through the gateway with a token', async () => {
    const response = await request(broken.gatewayUrl, 'POST', `/v1/threads/${THREAD}/messages`, {
      token: await serverToken(app.id, app.secret),
      body: { authorID: 'ann', content: content('lost') },
    });
    expectUnavailable(response);
  });

  it('a file upload answers 503 and stores nothing', async () => {
    const before = await fileCount();
    const form = new FormData();
    form.set('ownerID', 'ann');
    form.set('file', new Blob([Buffer.from('lost')], { type: 'text/plain' }), 'lost.txt');
    const uploaded = await fetch(`${broken.gatewayUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}` },
      body: form,
    });
    expectUnavailable({ status: uploaded.status, headers: uploaded.headers, body: await uploaded.json() });
    expect(await fileCount()).toBe(before);
  });

  it('the same service answers normally once it can reach identity', async () => {
    // Control: the working system, same database, same request.
    const response = await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: 'ann', content: content('reachable') });
    expect(response.status).toBe(200);
  });
});

describe('identity answering with something unusable → 5xx, never a 4xx', () => {
  it('identity refusing the internal credential (a misconfiguration) does not look like a missing entity', async () => {
    // A service whose INTERNAL_TOKEN differs from identity's: identity answers its lookups 404.
    const misconfigured = await conversationWith({ INTERNAL_TOKEN: `wrong-${randomUUID()}` });
    try {
      const response = await misconfigured.direct('POST', `/v1/threads/${THREAD}/messages`, { authorID: 'ann', content: content('refused') });
      expect(response.status).toBeGreaterThanOrEqual(500);
      expect(response.body).toEqual({ error: expect.stringMatching(/^(bad_gateway|service_unavailable)$/), message: expect.any(String) });
    } finally {
      await misconfigured.stop();
    }
  });

  it('identity answering a malformed lookup → 502 bad_gateway', async () => {
    const garbled = await listen((_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ users: 'not a list', group: 42 }));
    });
    const service = await conversationWith({ IDENTITY_URL: garbled.url });
    try {
      const response = await service.direct('POST', `/v1/threads/${THREAD}/messages`, { authorID: 'ann', content: content('garbled') });
      expect(response.status).toBe(502);
      expect(response.body).toEqual({ error: 'bad_gateway', message: expect.any(String) });
    } finally {
      await service.stop();
      await close(garbled.server);
    }
  });
});

/**
 * Conversation activity for the tests of what it causes (notifications, events): messages,
 * mentions, and waiting until the outbox relays have carried everything an application did.
 */
import { expect } from 'vitest';
import { until } from '@collab/shared/devkit';
import type { TestApplication } from './client.js';
import { uniqueId } from './client.js';
import type { TestSystem } from './system.js';
import { serverToken } from './tokens.js';

export const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];
export const mention = (userId: string) => ({ type: 'mention', user: { id: userId }, children: [{ text: `@${userId}` }] });
/** A paragraph of text with mentions of these users after it. */
export const mentioning = (text: string, ...userIds: string[]) => [
  { type: 'p', children: [{ text }, ...userIds.flatMap((userId) => [{ text: ' ' }, mention(userId)])] },
];

export const threadPath = (threadId: string) => `/v1/threads/${encodeURIComponent(threadId)}`;
export const messagesPath = (threadId: string) => `${threadPath(threadId)}/messages`;
export const messagePath = (threadId: string, messageId: string) => `${messagesPath(threadId)}/${encodeURIComponent(messageId)}`;

/** POSTs a message and returns its id; anything but 200 fails the test. */
export async function postMessage(app: TestApplication, threadId: string, body: Record<string, unknown>): Promise<string> {
  const response = await app.client.post(messagesPath(threadId), body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.messageID as string;
}

/** A new thread in `team`, started by ann's message (`extra` adds to or overrides the message). */
export async function newThread(app: TestApplication, extra: Record<string, unknown> = {}) {
  const threadId = uniqueId('thread');
  const name = `Thread ${threadId}`;
  const messageId = await postMessage(app, threadId, {
    authorID: 'ann',
    content: paragraph('first'),
    createThread: { groupID: 'team', location: { page: threadId }, url: `https://example.com/${threadId}`, name },
    ...extra,
  });
  return { threadId, messageId, name };
}

/** Uploads a small text file owned by `ownerId` as the application (multipart); returns its id. */
export async function uploadFile(app: TestApplication, ownerId: string, name = 'note.txt', text = 'hello'): Promise<string> {
  const form = new FormData();
  form.set('ownerID', ownerId);
  form.set('file', new Blob([Buffer.from(text)], { type: 'text/plain' }), name);
  const response = await fetch(`${app.client.system.url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}` },
    body: form,
  });
  const body = (await response.json()) as { fileID: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.fileID;
}

/** PUTs to a path; anything but 200 fails the test. */
export async function putOk(app: TestApplication, path: string, body: Record<string, unknown>): Promise<void> {
  const response = await app.client.put(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

/**
 * Waits until the conversation and notification outboxes hold nothing of the application: every
 * notification its activity caused exists, and every event is recorded with the webhooks service.
 * One statement reads both, so the conversation relay's calls into notification (made before it
 * deletes its entry) are seen with it.
 */
export async function settled(system: TestSystem, applicationId: string): Promise<void> {
  await until(async () => {
    const { rows } = await system.sql.query(
      `SELECT (SELECT count(*) FROM conversation.outbox WHERE application_id = $1)
            + (SELECT count(*) FROM notification.outbox WHERE application_id = $1) AS waiting`,
      [applicationId],
    );
    return Number(rows[0].waiting) === 0;
  }, 'the outbox relays to handle the application’s entries', 20_000);
}

export interface StoredNotification {
  id: string;
  kind: string;
  recipient: string;
  sender: string;
  replyActions: string[] | null;
  threadActionType: string | null;
  reaction: string | null;
  /** The conversation service's internal id of the message (see messageRefOf). */
  messageRef: string | null;
  /** The conversation outbox entry that caused it: the id of the message's thread-message-added event. */
  sourceId: string | null;
  createdAt: Date;
}

/** The application's stored notifications, oldest first. */
export async function storedNotifications(system: TestSystem, applicationId: string): Promise<StoredNotification[]> {
  const { rows } = await system.sql.query(
    `SELECT external_id AS id, kind, recipient_id AS recipient, actor_id AS sender, reply_actions AS "replyActions",
       thread_action_type AS "threadActionType", reaction, message_ref AS "messageRef", source_id AS "sourceId", created_at AS "createdAt"
     FROM notification.notifications WHERE application_id = $1 ORDER BY internal_id`,
    [applicationId],
  );
  return rows;
}

/** How the conversation service names a message internally (and notifications store it). */
export async function messageRefOf(system: TestSystem, applicationId: string, messageId: string): Promise<string> {
  const { rows } = await system.sql.query(`SELECT internal_id::text AS ref FROM conversation.messages WHERE application_id = $1 AND external_id = $2`, [
    applicationId,
    messageId,
  ]);
  return rows[0].ref;
}

/** The application's events of this type as the webhooks service recorded them, oldest first. */
export async function recordedEvents(system: TestSystem, applicationId: string, type: string): Promise<{ id: string; payload: any }[]> {
  const { rows } = await system.sql.query(
    `SELECT id, payload FROM webhooks.events WHERE application_id = $1 AND type = $2 ORDER BY created_at, id`,
    [applicationId, type],
  );
  return rows;
}

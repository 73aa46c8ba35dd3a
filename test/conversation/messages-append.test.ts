/**
 * POST /v1/threads/<tID>/messages/<mID>/append through the gateway: the order of its checks, what
 * an append changes (only the text of the one markdown node), that concurrent appends all land,
 * and that it notifies nobody: no webhook and no notification reach a real receiver.
 */
import type { ServerAppendMessage } from '@cord-sdk/types';
import { describe, expect, it } from 'vitest';
import { messagePath, paragraph, postMessage, recordedEvents, settled } from '../support/activity.js';
import { createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
let app: TestApplication;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, async (started) => {
  ({ system, receiver } = started);
  app = await newApp();
});

async function newApp(): Promise<TestApplication> {
  const created = await createApplication(system, 'append');
  secrets.set(created.id, created.secret);
  await seedTeam(created);
  return created;
}

const markdown = (text: string) => [{ type: 'markdown', children: [{ text }] }];
const appendPath = (threadID: string, messageID: string) => `${messagePath(threadID, messageID)}/append`;
/** The body as @cord-sdk/server's callers type it, so that a drift from the original's request type fails to compile. */
const append = (threadID: string, messageID: string, body: ServerAppendMessage, as = app) => as.client.post(appendPath(threadID, messageID), body);

/** A new thread in `team` whose first message, by ann, has this content. */
async function newMessage(content: unknown = markdown('Hello'), as = app): Promise<{ threadID: string; messageID: string }> {
  const threadID = uniqueId('thread');
  const messageID = await postMessage(as, threadID, {
    authorID: 'ann',
    content,
    createThread: { groupID: 'team', location: { page: threadID }, url: `https://example.com/${threadID}`, name: 'Thread' },
  });
  return { threadID, messageID };
}

async function getMessage(threadID: string, messageID: string, as = app) {
  const response = await as.client.get(messagePath(threadID, messageID));
  expect(response.status).toBe(200);
  return response.body;
}

describe('appending to a message', () => {
  it('adds the text to its markdown node and answers as a message update, changing nothing else', async () => {
    const { threadID, messageID } = await newMessage();
    const before = await getMessage(threadID, messageID);
    const response = await append(threadID, messageID, { text: ', world' });
    expect(response.body).toEqual({ success: true, message: `You successfully updated message ${messageID}` });
    expect(response.status).toBe(200);
    const after = await getMessage(threadID, messageID);
    expect(after).toEqual({ ...before, content: markdown('Hello, world'), plaintext: 'Hello, world' });
    expect(after.updatedTimestamp).toBeNull();
  });

  it('rebuilds the text node, dropping its other properties, as the original does', async () => {
    const { threadID, messageID } = await newMessage([{ type: 'markdown', children: [{ text: 'bold', bold: true }] }]);
    expect((await append(threadID, messageID, { text: ' no more' })).status).toBe(200);
    expect((await getMessage(threadID, messageID)).content).toEqual(markdown('bold no more'));
  });

  it('accepts an empty text, which changes nothing', async () => {
    const { threadID, messageID } = await newMessage();
    const before = await getMessage(threadID, messageID);
    expect((await append(threadID, messageID, { text: '' })).status).toBe(200);
    expect(await getMessage(threadID, messageID)).toEqual(before);
  });

  it('keeps every one of 100 concurrent one-character appends', async () => {
    const { threadID, messageID } = await newMessage(markdown('>'));
    const characters = Array.from({ length: 100 }, (_, index) => String.fromCodePoint(0x4e00 + index));
    const answers = await Promise.all(characters.map((text) => append(threadID, messageID, { text })));
    expect(answers.map((answer) => answer.status)).toEqual(characters.map(() => 200));
    const text: string = (await getMessage(threadID, messageID)).content[0].children[0].text;
    expect(text.startsWith('>')).toBe(true);
    expect([...text.slice(1)].sort()).toEqual(characters);
  });

  it('keeps every one of 100 concurrent appends of a next word, which are written in batches', async () => {
    const { threadID, messageID } = await newMessage(markdown('>'));
    const words = Array.from({ length: 100 }, (_, index) => ` w${index}`);
    const answers = await Promise.all(words.map((text) => append(threadID, messageID, { text })));
    expect(answers.map((answer) => answer.status)).toEqual(words.map(() => 200));
    const text: string = (await getMessage(threadID, messageID)).content[0].children[0].text;
    expect(text.startsWith('> ')).toBe(true);
    expect(text.slice(2).split(' ').sort()).toEqual(words.map((word) => word.trim()).sort());
  });

  it('keeps every append when appends that may change a URL and appends that cannot are mixed', async () => {
    const { threadID, messageID } = await newMessage(markdown('>'));
    // Each with a dot: the ones with a letter after it might form a URL, the others cannot.
    const words = Array.from({ length: 60 }, (_, index) => (index % 2 === 0 ? ` w${index}.` : ` w${index}.x`));
    const answers = await Promise.all(words.map((text) => append(threadID, messageID, { text })));
    expect(answers.map((answer) => answer.status)).toEqual(words.map(() => 200));
    const text: string = (await getMessage(threadID, messageID)).content[0].children[0].text;
    expect(text.slice(1).split(' ').slice(1).sort()).toEqual(words.map((word) => word.trim()).sort());
  });

  it('appends once when a request is retried with the same Idempotency-Key, and answers the retry the same', async () => {
    const { threadID, messageID } = await newMessage();
    const key = { 'Idempotency-Key': uniqueId('append-key') };
    const body: ServerAppendMessage = { text: ' once' };
    const first = await app.client.post(appendPath(threadID, messageID), body, key);
    const retry = await app.client.post(appendPath(threadID, messageID), body, key);
    expect(first.status).toBe(200);
    expect({ status: retry.status, body: retry.body }).toEqual({ status: first.status, body: first.body });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await getMessage(threadID, messageID)).plaintext).toBe('Hello once');
    // Without the key, the same request is another append.
    expect((await append(threadID, messageID, body)).status).toBe(200);
    expect((await getMessage(threadID, messageID)).plaintext).toBe('Hello once once');
  });

  it('finds the thread by its generated cord:<uuid> id', async () => {
    const created = await app.client.post('/v1/threads', { groupID: 'team', location: { page: uniqueId('page') }, url: 'https://example.com/t', name: 'T' });
    expect(created.status).toBe(200);
    const threadID: string = created.body.threadID;
    expect(threadID).toMatch(/^cord:/);
    const messageID = await postMessage(app, threadID, { authorID: 'ann', content: markdown('a') });
    expect((await append(threadID, messageID, { text: 'b' })).status).toBe(200);
    expect((await getMessage(threadID, messageID)).plaintext).toBe('ab');
  });
});

describe('what cannot be appended to', () => {
  const NOT_APPENDABLE = 'The request references a message that can not support appending. It must contain a markdown node only.';

  it('checks the thread, then the message in it, then its content', async () => {
    const { threadID, messageID } = await newMessage(paragraph('a paragraph'));
    const other = await newMessage();
    expectError(await append(uniqueId('nothread'), messageID, { text: 'x' }), 404, 'thread_not_found');
    expectError(await append(threadID, uniqueId('nomessage'), { text: 'x' }), 404, 'message_not_found');
    expectError(await append(threadID, other.messageID, { text: 'x' }), 404, 'message_not_found');
    expectError(await append(threadID, messageID, { text: 'x' }), 400, 'message_not_appendable', NOT_APPENDABLE);
    expect((await getMessage(threadID, messageID)).content).toEqual(paragraph('a paragraph'));
  });

  it('refuses a content of two nodes, markdown or not', async () => {
    for (const content of [
      [...paragraph('one'), ...paragraph('two')],
      [...markdown('one'), ...paragraph('two')],
      [...markdown('one'), ...markdown('two')],
    ]) {
      const { threadID, messageID } = await newMessage(content);
      expectError(await append(threadID, messageID, { text: 'x' }), 400, 'message_not_appendable', NOT_APPENDABLE);
      expect((await getMessage(threadID, messageID)).content).toEqual(content);
    }
  });

  it('names the field of a bad body and stores nothing', async () => {
    const { threadID, messageID } = await newMessage();
    const path = appendPath(threadID, messageID);
    expectError(await app.client.post(path, {}), 400, 'missing_field', /text/);
    expectError(await app.client.post(path, { text: 5 }), 400, 'invalid_field', /text/);
    expectError(await app.client.post(path, { text: 'x', bold: true }), 400, 'unexpected_field', /bold/);
    expect((await getMessage(threadID, messageID)).plaintext).toBe('Hello');
  });

  it('does not reach another application’s message', async () => {
    const { threadID, messageID } = await newMessage();
    const other = await newApp();
    expectError(await append(threadID, messageID, { text: 'x' }, other), 404, 'thread_not_found');
    expect((await getMessage(threadID, messageID)).plaintext).toBe('Hello');
  });
});

describe('what an append does not cause', () => {
  it('sends no webhook and creates no notification, unlike the message that follows it', async () => {
    const quiet = await newApp();
    const path = await receiver.register(quiet, ['thread-message-added', 'notification-created']);
    const { threadID, messageID } = await newMessage(markdown('first'), quiet);
    // bob takes part, so each message of ann's notifies him, and each sends its webhooks.
    const bobs = await postMessage(quiet, threadID, { authorID: 'bob', content: markdown('from bob') });
    const anns = await postMessage(quiet, threadID, { authorID: 'ann', content: markdown('streaming') });
    expect((await append(threadID, anns, { text: ' more' }, quiet)).status).toBe(200);
    expect((await append(threadID, messageID, { text: ' more' }, quiet)).status).toBe(200);
    // A last message of ann's: its webhooks and notification come after anything the appends caused.
    const last = await postMessage(quiet, threadID, { authorID: 'ann', content: markdown('done') });
    await receiver.waitFor((request) => request.path === path && (request.body as any)?.messageID === last);
    await settled(system, quiet.id);

    const bodies = receiver.received.filter((request) => request.path === path).map((request) => request.body as any);
    // Each message's event once, and none of an append's; deliveries go out concurrently, in any order.
    const added = bodies.filter((body) => body.type === 'thread-message-added').map((body) => body.messageID);
    expect(added.sort()).toEqual([messageID, bobs, anns, last].sort());
    const notifiedOf = async (userID: string) => {
      const response = await quiet.client.get(`/v1/users/${userID}/notifications`);
      expect(response.status).toBe(200);
      return response.body.notifications.map((notification: any) => notification.attachment.messageID);
    };
    expect(await notifiedOf('bob')).toEqual([last, anns]);
    expect(await notifiedOf('ann')).toEqual([bobs]);
    // Settled: every event is recorded; those three notifications are all the webhooks service has to send.
    expect(await recordedEvents(system, quiet.id, 'notification-created')).toHaveLength(3);
    await receiver.waitFor((request) => request.path === path && (request.body as any)?.type === 'notification-created', 3);
  });
});

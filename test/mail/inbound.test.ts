/**
 * Replies by mail (original-extras §5.8, decision 54): a reply's mail, received over SMTP, carries
 * a Reply-To naming it; the inbound-mail parser posts the reply to POST /email/inbound with its
 * Basic credentials, and the reply's own text becomes a message of the mail's recipient in the
 * thread, once however often the parser posts it. Bad credentials and malformed forms are refused;
 * a reply that can be no message is dropped, and nothing is stored.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mentioning, messagesPath, newThread, postMessage } from '../support/activity.js';
import { createApplication, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { putEach } from '../support/seed.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { systemForFile, type TestSystem } from '../support/system.js';

const smtp = await startSmtpServer();
let system: TestSystem;
const PARSER = { username: 'inbound-parser', password: 'inbound-parser-password' };

systemForFile((started) => (system = started), {
  env: {
    EMAIL_DELAY_SECONDS: '0',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Team Chat <chat@example.test>',
    EMAIL_DOMAIN: 'mail.example.test',
    INBOUND_EMAIL_USERNAME: PARSER.username,
    INBOUND_EMAIL_PASSWORD: PARSER.password,
  },
});
afterAll(() => smtp.close());

const basic = (credentials: { username: string; password: string }) => `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;

/** Posts a form to /email/inbound as a parser does (multipart unless `urlencoded`). */
async function postInbound(fields: Record<string, string>, options: { auth?: string | null; urlencoded?: boolean; file?: boolean } = {}): Promise<ApiResponse> {
  let body: FormData | URLSearchParams;
  if (options.urlencoded) body = new URLSearchParams(fields);
  else {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if (options.file) form.append('attachment1', new Blob(['%PDF-1.4']), 'report.pdf');
    body = form;
  }
  const auth = options.auth === undefined ? basic(PARSER) : options.auth;
  const response = await fetch(`${system.url}/email/inbound`, { method: 'POST', body, headers: auth === null ? {} : { authorization: auth } });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** An application with ann and bob in `team`, a thread of ann's, and the mail bob got of ann's mention. */
async function mailedMention(): Promise<{ app: TestApplication; threadId: string; bob: string; replyTo: string }> {
  const app = await createApplication(system, 'inbound app');
  const bob = `${uniqueId('bob')}@example.test`;
  await putEach(app, '/v1/users', [
    ['ann', { name: 'Ann', email: `${uniqueId('ann')}@example.test` }],
    ['bob', { name: 'Bob', email: bob }],
  ]);
  await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann', 'bob'] }]]);
  const { threadId } = await newThread(app);
  await postMessage(app, threadId, { authorID: 'ann', content: mentioning('Could you look at this,', 'bob') });
  const [mail] = await smtp.waitFor(bob);
  const replyTo = (mail.parsed.replyTo as { value: { address: string }[] } | undefined)?.value[0]?.address;
  expect(replyTo).toMatch(/^chat-[\w-]{32}@mail\.example\.test$/);
  return { app, threadId, bob, replyTo: replyTo! };
}

async function messagesOf(app: TestApplication, threadId: string) {
  const response = await app.client.get(`${messagesPath(threadId)}?sortDirection=ascending`);
  expect(response.status).toBe(200);
  return response.body as { id: string; authorID: string; content: unknown; plaintext: string }[];
}

describe('a reply by mail', () => {
  it('becomes a message of the recipient in the thread, without the quoted mail or the signature', async () => {
    const { app, threadId, bob, replyTo } = await mailedMention();
    const text = 'Looks good to me.\r\n\r\nShip it.\r\n\r\nOn Mon, 30 Nov 2026 at 10:00, Team Chat <chat@example.test>\r\nwrote:\r\n> Could you look at this, @bob\r\n';
    const response = await postInbound({ to: `Team Chat <${replyTo}>`, from: `Bob <${bob}>`, text, subject: 'Re: Ann mentioned you', headers: 'Auto-Submitted: no\r\n' });
    expect(response.body).toEqual({ success: true, message: 'The reply was posted.', messageID: expect.stringMatching(/^cord:/) });
    expect(response.status).toBe(200);

    const messages = await messagesOf(app, threadId);
    expect(messages.at(-1)).toMatchObject({
      id: response.body.messageID,
      authorID: 'bob',
      content: [{ type: 'p', children: [{ text: 'Looks good to me.' }] }, { type: 'p', children: [{ text: 'Ship it.' }] }],
    });
  });

  it('says that attached files were dropped, from a URL-encoded form too', async () => {
    const { app, threadId, bob, replyTo } = await mailedMention();
    const multipart = await postInbound({ to: replyTo, from: bob, text: 'See the report.' }, { file: true });
    expect(multipart.status).toBe(200);
    const urlencoded = await postInbound({ to: replyTo, from: bob, text: 'And another.', attachments: '2' }, { urlencoded: true });
    expect(urlencoded.status).toBe(200);
    const [first, second] = (await messagesOf(app, threadId)).slice(-2);
    expect(first.plaintext).toContain('See the report.');
    expect(first.plaintext).toContain('(Unable to display attached files)');
    expect(second.plaintext).toContain('And another.');
    expect(second.plaintext).toContain('(Unable to display attached files)');
  });

  it('is posted once however often the parser posts it, also at once; another reply is another message', async () => {
    const { app, threadId, bob, replyTo } = await mailedMention();
    const before = (await messagesOf(app, threadId)).length;
    const reply = { to: replyTo, from: bob, text: 'On it.', headers: 'Message-ID: <reply-1@example.test>\r\nAuto-Submitted: no\r\n' };
    const first = await postInbound(reply);
    expect(first.body).toEqual({ success: true, message: 'The reply was posted.', messageID: expect.stringMatching(/^cord:/) });
    // A retry after an answer the parser did not get, then two retries at the same moment.
    const again = [await postInbound(reply), ...(await Promise.all([postInbound(reply), postInbound(reply)]))];
    expect(again.map((response) => [response.status, response.body.messageID])).toEqual(Array(3).fill([200, first.body.messageID]));
    expect((await messagesOf(app, threadId)).length).toBe(before + 1);

    // The same text in a reply of its own (another Message-ID) is another message.
    const other = await postInbound({ ...reply, headers: 'Message-ID: <reply-2@example.test>\r\n' });
    expect(other.body.messageID).not.toBe(first.body.messageID);
    // Without headers the reply is known by its text: posted again, it is found.
    const bare = { to: replyTo, from: bob, text: 'Thanks!' };
    const [bareFirst, bareAgain] = [await postInbound(bare), await postInbound(bare)];
    expect(bareAgain.body.messageID).toBe(bareFirst.body.messageID);
    const messages = await messagesOf(app, threadId);
    expect(messages.length).toBe(before + 3);
    expect(messages.slice(-3).map((message) => [message.id, message.authorID, message.plaintext])).toEqual([
      [first.body.messageID, 'bob', 'On it.'],
      [other.body.messageID, 'bob', 'On it.'],
      [bareFirst.body.messageID, 'bob', 'Thanks!'],
    ]);
  });

  it('is dropped, posting nothing, when it names no mail, is an automatic answer or has no text of its own', async () => {
    const { app, threadId, bob, replyTo } = await mailedMention();
    const before = await messagesOf(app, threadId);
    const cases: [Record<string, string>, string][] = [
      [{ to: `chat-${'A'.repeat(32)}@mail.example.test`, from: bob, text: 'Hello' }, 'unknown_address'],
      [{ to: 'someone@mail.example.test', from: bob, text: 'Hello' }, 'unknown_address'],
      [{ to: replyTo, from: bob, text: 'I am out of office.', headers: 'Subject: Away\r\nAuto-Submitted: auto-replied\r\n' }, 'automatic_reply'],
      [{ to: replyTo, from: bob, text: '\r\n> Could you look at this, @bob\r\n' }, 'empty'],
    ];
    for (const [fields, reason] of cases) {
      const response = await postInbound(fields);
      expect({ reason, status: response.status, body: response.body }).toEqual({
        reason,
        status: 200,
        body: { success: true, message: `The reply was not posted: ${reason}.`, messageID: null },
      });
    }
    expect(await messagesOf(app, threadId)).toEqual(before);
  });

  it('is refused without the parser credentials, and a form that lacks a field names it', async () => {
    const { app, threadId, bob, replyTo } = await mailedMention();
    const before = await messagesOf(app, threadId);
    const fields = { to: replyTo, from: bob, text: 'Hi' };
    for (const auth of [null, basic({ ...PARSER, password: 'wrong' }), 'Bearer x']) {
      const response = await postInbound(fields, { auth });
      expectError(response, 401, 'invalid_authorization_header');
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="inbound-email"');
    }
    expectError(await postInbound({ from: bob, text: 'Hi' }), 400, 'missing_field', /to/);
    expectError(await postInbound({ to: replyTo, from: bob }), 400, 'missing_field', /text/);
    const crowded = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`x${index}`, 'y']));
    expectError(await postInbound({ ...fields, ...crowded }), 413, 'payload_too_large');
    const json = await fetch(`${system.url}/email/inbound`, { method: 'POST', body: JSON.stringify(fields), headers: { authorization: basic(PARSER), 'content-type': 'application/json' } });
    expectError({ status: json.status, headers: json.headers, body: await json.json() }, 400, 'invalid_request');
    expect(await messagesOf(app, threadId)).toEqual(before);
  });
});

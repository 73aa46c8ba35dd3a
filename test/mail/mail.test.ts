/**
 * Mails on replies, mentions and thread actions (original-extras §5, decisions 54–55), received by
 * a real SMTP server on 127.0.0.1 and parsed: recipients, headers, both parts and links; the gates
 * (preference, application switch); and at most one mail per notification when SMTP refuses it
 * for a while or its job runs again.
 */
import { createProducer } from '@collab/shared';
import { until } from '@collab/shared/devkit';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mentioning, messagePath, newThread, paragraph, postMessage, putOk, settled, threadPath } from '../support/activity.js';
import { asCustomer, createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { putEach } from '../support/seed.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { systemForFile, type TestSystem } from '../support/system.js';

const smtp = await startSmtpServer();
let system: TestSystem;

systemForFile((started) => (system = started), {
  // Mails due at once: the tests wait for them to arrive or settle, never for the delay.
  env: { EMAIL_DELAY_SECONDS: '0', SMTP_URL: smtp.url, MAIL_FROM: 'Team Chat <chat@example.test>', EMAIL_DOMAIN: 'mail.example.test' },
});
afterAll(() => smtp.close());

/** An application of its own: ann and bob (each with an address unique to the application) in `team`. */
async function freshApp(): Promise<{ app: TestApplication; ann: string; bob: string }> {
  const app = await createApplication(system, 'mail app');
  const ann = `${uniqueId('ann')}@example.test`;
  const bob = `${uniqueId('bob')}@example.test`;
  await putEach(app, '/v1/users', [
    ['ann', { name: 'Ann', email: ann }],
    ['bob', { name: 'Bob', email: bob }],
  ]);
  await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann', 'bob'] }]]);
  return { app, ann, bob };
}

/** The mails recorded for the application's user, once none is waiting to be sent. */
async function settledMails(app: TestApplication, recipientId: string, count: number) {
  await settled(system, app.id);
  let rows: { id: string; status: string; outcome: string | null }[] = [];
  await until(async () => {
    rows = (
      await system.sql.query(`SELECT id, status, outcome FROM mail.mails WHERE application_id = $1 AND recipient_id = $2 ORDER BY created_at`, [app.id, recipientId])
    ).rows;
    return rows.length >= count && rows.every((row) => row.status !== 'pending' && row.status !== 'sending');
  }, 'the mails to be settled', 20_000);
  return rows;
}

const header = (mail: { parsed: { headers: Map<string, unknown> } }, name: string) => mail.parsed.headers.get(name);
/** A header as it was sent (the parser folds the List-* headers into one object). */
const rawHeader = (mail: { parsed: { headerLines: readonly { key: string; line: string }[] } }, name: string) =>
  mail.parsed.headerLines.find((line) => line.key === name)?.line.slice(name.length + 1).trim();

describe('a mention', () => {
  it('mails the mentioned user once: envelope, headers, text and HTML parts, links', async () => {
    const { app, bob } = await freshApp();
    const { threadId, name } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('Could you look at this,', 'bob') });

    const [mail] = await smtp.waitFor(bob);
    expect(mail.rcptTo).toEqual([bob]);
    const { parsed } = mail;
    expect(parsed.to).toMatchObject({ value: [{ address: bob, name: 'Bob' }] });
    expect(parsed.from).toMatchObject({ value: [{ address: 'chat@example.test', name: 'Team Chat' }] });
    expect(parsed.subject).toBe(`Ann mentioned you in ${name}`);
    expect(parsed.messageId).toMatch(/^<thread-.+@mail\.example\.test>$/);
    expect(header(mail, 'x-auto-response-suppress')).toBe('OOF');
    expect(rawHeader(mail, 'list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    const unsubscribe = rawHeader(mail, 'list-unsubscribe')!.replace(/^<|>$/g, '');
    expect(unsubscribe).toMatch(new RegExp(`^${system.url}/email/unsubscribe_thread\\?token=[\\w-]{32}$`));

    expect(parsed.text).toContain('Ann mentioned you in');
    expect(parsed.text).toContain('Could you look at this, @bob');
    expect(parsed.text).toContain(`Stop e-mails about this thread: ${unsubscribe}`);
    expect(parsed.html).toContain('<strong>@bob</strong>');
    expect(parsed.html).toContain(`href="${unsubscribe}"`);
    expect(parsed.html).toMatch(new RegExp(`href="${system.url}/redirect/[\\w-]{32}"`));

    expect(await settledMails(app, 'bob', 1)).toMatchObject([{ status: 'sent', outcome: null }]);
    expect(smtp.to(bob)).toHaveLength(1);
  });

  it("threads a recipient's later mails of the thread under the first", async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('one', 'bob') });
    const [first] = await smtp.waitFor(bob);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('two', 'bob') });
    const [, second] = await smtp.waitFor(bob, 2);
    expect(second.parsed.messageId).toMatch(/^<notif-.+@mail\.example\.test>$/);
    expect(second.parsed.inReplyTo).toBe(first.parsed.messageId);
    expect(second.parsed.references).toBe(first.parsed.messageId);
  });

  it("shows the thread's first message and the one before, and how many between them are not shown", async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app, { content: paragraph('the opening message') });
    for (const text of ['second', 'third', 'fourth']) await postMessage(app, threadId, { authorID: 'ann', content: paragraph(`the ${text} message`) });
    // A deleted message is neither shown nor counted.
    const deleted = await postMessage(app, threadId, { id: uniqueId('message'), authorID: 'ann', content: paragraph('the deleted message') });
    await putOk(app, messagePath(threadId, deleted), { deleted: true });
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('the mention', 'bob') });

    const [mail] = await smtp.waitFor(bob);
    const text = mail.parsed.text!;
    const order = ['the opening message', '(2 more messages)', 'the fourth message', 'the mention @bob'].map((part) => text.indexOf(part));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    for (const hidden of ['the second message', 'the third message', 'the deleted message']) expect(text).not.toContain(hidden);
    expect(mail.parsed.html).toContain('2 more messages');
    expect(mail.parsed.html).toContain('the opening message');
  });

  it('shows the one message before, alone, in a thread of two', async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app, { content: paragraph('the opening message') });
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('the mention', 'bob') });
    const [mail] = await smtp.waitFor(bob);
    expect(mail.parsed.text).toContain('the opening message');
    expect(mail.parsed.text).not.toContain('more message');
  });

  it('cannot inject a header or markup through a name or a thread title', async () => {
    const { app, bob } = await freshApp();
    await putOk(app, '/v1/users/ann', { name: 'Ann\r\nBcc: victim@example.test' });
    const { threadId } = await newThread(app, {
      createThread: { groupID: 'team', location: { page: 'x' }, url: 'https://example.com/x', name: '<script>alert(1)</script>\r\nX-Evil: 1' },
    });
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('<b>bold?</b>', 'bob') });
    const [mail] = await smtp.waitFor(bob);
    expect(mail.rcptTo).toEqual([bob]);
    expect(mail.parsed.bcc).toBeUndefined();
    expect(mail.parsed.headers.has('x-evil')).toBe(false);
    expect(mail.parsed.subject).toBe('Ann Bcc: victim@example.test mentioned you in <script>alert(1)</script> X-Evil: 1');
    expect(mail.parsed.html).not.toContain('<script>');
    expect(mail.parsed.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.parsed.html).toContain('&lt;b&gt;bold?&lt;/b&gt;');
  });
});

describe('a resolve', () => {
  it('mails the subscribed participants but the one who resolved', async () => {
    const { app, ann, bob } = await freshApp();
    const { threadId, name } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('hi', 'bob') });
    await smtp.waitFor(bob);
    await putOk(app, threadPath(threadId), { resolved: true, userID: 'bob' });
    const [resolved] = await smtp.waitFor(ann);
    expect(resolved.parsed.subject).toBe(`Bob resolved the thread in ${name}`);
    await settledMails(app, 'ann', 1);
    expect(smtp.to(bob)).toHaveLength(1);
  });
});

describe('the gates', () => {
  it("sends nothing to a user who turned e-mail off in the preferences", async () => {
    const { app, bob } = await freshApp();
    await putOk(app, '/v1/users/bob/preferences', { key: 'notification_channels', value: { sendViaEmail: false } });
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('hello', 'bob') });
    expect(await settledMails(app, 'bob', 1)).toMatchObject([{ status: 'skipped', outcome: 'preference' }]);
    expect(smtp.to(bob)).toEqual([]);
  });

  it("sends nothing for an application whose emailSettings switch mails off", async () => {
    const { app, bob } = await freshApp();
    const switched = await asCustomer(system).put(`/v1/applications/${app.id}`, { emailSettings: { enableEmailNotifications: false } });
    expect(switched.status).toBe(200);
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('hello', 'bob') });
    expect(await settledMails(app, 'bob', 1)).toMatchObject([{ status: 'skipped', outcome: 'application_disabled' }]);
    expect(smtp.to(bob)).toEqual([]);
  });

  it('sends nothing to a recipient who read the thread before the mail went', async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    // The server refuses the first attempts, so the mail is still waiting when bob reads the thread.
    smtp.refuseNext(2);
    try {
      await postMessage(app, threadId, { authorID: 'ann', content: mentioning('did you see?', 'bob') });
      await putOk(app, threadPath(threadId), { seenByUsers: [{ userID: 'bob', seen: true }] });
      expect(await settledMails(app, 'bob', 1)).toMatchObject([{ status: 'skipped', outcome: 'seen' }]);
    } finally {
      smtp.refuseNext(0);
    }
    expect(smtp.to(bob)).toEqual([]);
  });

  it('sends the message as it is when the mail goes, an edit included', async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    smtp.refuseNext(2);
    try {
      const messageId = await postMessage(app, threadId, { id: uniqueId('message'), authorID: 'ann', content: mentioning('first draft', 'bob') });
      await putOk(app, messagePath(threadId, messageId), { content: mentioning('edited text', 'bob') });
      const [mail] = await smtp.waitFor(bob);
      expect(mail.parsed.text).toContain('edited text');
      expect(mail.parsed.text).not.toContain('first draft');
    } finally {
      smtp.refuseNext(0);
    }
  });

  it("sends the application's sender and name when its emailSettings give them", async () => {
    const { app, bob } = await freshApp();
    const branded = await asCustomer(system).put(`/v1/applications/${app.id}`, { emailSettings: { name: 'Acme', sender: 'notify@acme.test' } });
    expect(branded.status).toBe(200);
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('hello', 'bob') });
    const [mail] = await smtp.waitFor(bob);
    expect(mail.parsed.from).toMatchObject({ value: [{ address: 'notify@acme.test', name: 'Acme' }] });
    expect(mail.parsed.text).toContain('Sent by Acme.');
  });
});

describe("the mail's button", () => {
  const buttonOf = (mail: { parsed: { html?: string | false } }) => String(mail.parsed.html).match(/href="([^"]+\/redirect\/[^"]+)"/)![1];

  it("leads to the thread's URL", async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('look', 'bob') });
    const response = await fetch(buttonOf((await smtp.waitFor(bob))[0]), { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`https://example.com/${threadId}`);
  });

  it("leads to the application's redirectURI with a cord_notifications token signed with its secret", async () => {
    const { app, bob } = await freshApp();
    expect((await asCustomer(system).put(`/v1/applications/${app.id}`, { redirectURI: 'https://app.example/open?from=mail' })).status).toBe(200);
    const { threadId } = await newThread(app);
    const messageId = await postMessage(app, threadId, { id: uniqueId('message'), authorID: 'ann', content: mentioning('look', 'bob') });
    const response = await fetch(buttonOf((await smtp.waitFor(bob))[0]), { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example/open');
    expect(location.searchParams.get('from')).toBe('mail');
    const { payload, protectedHeader } = await jwtVerify(location.searchParams.get('cord_notifications')!, new TextEncoder().encode(app.secret));
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload.notificationInfo).toMatchObject({
      type: 'email',
      messageID: messageId,
      threadID: threadId,
      url: `https://example.com/${threadId}`,
      sharerDetails: { userID: 'ann', groupID: 'team', name: 'Ann' },
      targetDetails: { userID: 'bob', groupID: 'team', name: 'Bob', email: bob },
    });
  });

  it('answers a page saying so for a link that names nothing, whatever text it carries', async () => {
    for (const linkId of ['nothing-here', '%00', `${'A'.repeat(31)}%00`, 'x'.repeat(5000)]) {
      const response = await fetch(`${system.url}/redirect/${linkId}`, { redirect: 'manual' });
      expect(response.status, linkId).toBe(200);
      expect(await response.text()).toContain('This link is not valid.');
    }
    for (const token of ['%00', `${'A'.repeat(31)}%00`]) {
      const page = await fetch(`${system.url}/email/unsubscribe_thread?token=${token}`);
      expect(page.status, token).toBe(200);
      expect(await page.text()).toContain('This link is not valid.');
    }
  });
});

describe('the unsubscribe link', () => {
  it('stops the mails of the thread for good after a one-click POST, and unsubscribes the user in the app', async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('first', 'bob') });
    const [mail] = await smtp.waitFor(bob);
    const link = rawHeader(mail, 'list-unsubscribe')!.replace(/^<|>$/g, '');

    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<form method="post"');
    // A GET alone unsubscribes nobody (mail scanners follow links).
    expect((await app.client.get(threadPath(threadId))).body.subscribers).toContain('bob');

    const oneClick = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(oneClick.status).toBe(200);
    expect(await oneClick.text()).toContain('been unsubscribed from the thread.');
    expect((await app.client.get(threadPath(threadId))).body.subscribers).not.toContain('bob');

    // Mentioned again, bob gets the notification but no mail.
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('second', 'bob') });
    const rows = await settledMails(app, 'bob', 2);
    expect(rows.map((row) => [row.status, row.outcome])).toEqual([
      ['sent', null],
      ['skipped', 'unsubscribed'],
    ]);
    expect(smtp.to(bob)).toHaveLength(1);
  });

  it('answers a page saying so for a token that names no mail, and changes nothing', async () => {
    const optOuts = async () => (await system.sql.query(`SELECT count(*)::int AS n FROM mail.thread_opt_outs`)).rows[0].n;
    const before = await optOuts();
    for (const method of ['GET', 'POST']) {
      const response = await fetch(`${system.url}/email/unsubscribe_thread?token=not-a-token`, { method });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('This link is not valid.');
    }
    expect(await optOuts()).toBe(before);
  });
});

describe('replies by mail, when INBOUND_EMAIL_* are unset', () => {
  it('are not offered: no Reply-To, and POST /email/inbound answers 404', async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('Any reply?', 'bob') });
    const [mail] = await smtp.waitFor(bob);
    expect(mail.parsed.replyTo).toBeUndefined();
    const form = new FormData();
    form.append('to', `chat-${'A'.repeat(32)}@mail.example.test`);
    const response = await fetch(`${system.url}/email/inbound`, { method: 'POST', body: form, headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: string }).error).toBe('not_found');
  });
});

describe('deletion', () => {
  const mailRows = async (applicationId: string) =>
    (await system.sql.query(`SELECT count(*)::int AS n FROM mail.mails WHERE application_id = $1`, [applicationId])).rows[0].n as number;

  it("removes a deleted user's mails, and a deleted application's mails and opt-outs", async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('hi', 'bob') });
    await smtp.waitFor(bob);
    expect(await mailRows(app.id)).toBe(1);
    expect((await app.client.delete('/v1/users/bob', { permanently_delete: true })).status).toBe(200);
    await until(async () => (await mailRows(app.id)) === 0, "bob's mails to go", 20_000);

    const other = await freshApp();
    const thread = await newThread(other.app);
    await postMessage(other.app, thread.threadId, { authorID: 'ann', content: mentioning('hi', 'bob') });
    const link = rawHeader((await smtp.waitFor(other.bob))[0], 'list-unsubscribe')!.replace(/^<|>$/g, '');
    expect((await fetch(link, { method: 'POST' })).status).toBe(200);
    expect((await asCustomer(system).delete(`/v1/applications/${other.app.id}`, { secret: other.app.secret })).status).toBe(200);
    await until(async () => {
      const optOuts = (await system.sql.query(`SELECT count(*)::int AS n FROM mail.thread_opt_outs WHERE application_id = $1`, [other.app.id])).rows[0].n;
      return (await mailRows(other.app.id)) === 0 && optOuts === 0;
    }, "the application's mails and opt-outs to go", 20_000);
  });
});

describe('at most once', () => {
  let producer: ReturnType<typeof createProducer<'mail-send'>>;
  beforeAll(() => {
    producer = createProducer('mail-send', { redisUrl: system.env.REDIS_URL, prefix: system.env.REDIS_PREFIX });
  });
  afterAll(() => producer.close());

  it('retries a mail the SMTP server refused, and it arrives once', async () => {
    const { app, bob } = await freshApp();
    const refusedBefore = smtp.refused;
    smtp.refuseNext(2);
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('are you there?', 'bob') });
    expect(await settledMails(app, 'bob', 1)).toMatchObject([{ status: 'sent' }]);
    expect(smtp.refused - refusedBefore).toBe(2);
    expect(smtp.to(bob)).toHaveLength(1);
  });

  it('sends nothing when the job of a sent mail runs again', async () => {
    const { app, bob } = await freshApp();
    const { threadId } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('once', 'bob') });
    const [row] = await settledMails(app, 'bob', 1);
    expect(row.status).toBe('sent');
    const again = `again-${row.id}`;
    await producer.add('mail.send', { applicationId: app.id, requestId: 'test', mailId: row.id }, { jobId: again });
    await until(async () => (await producer.getJob(again))?.state === 'completed', 'the repeated job to complete', 20_000);
    expect((await producer.getJob(again))?.returnValue).toBe('not pending');
    expect(smtp.to(bob)).toHaveLength(1);
  });
});

/**
 * Link previews end to end: messages whose content links to pages served on 127.0.0.1 get
 * `link_preview` attachments once the conversation-link-previews queue has drained; pages that fail
 * give none; edits, hiding and skipLinkPreviews follow the preview rule; a popular page is fetched
 * once; appends follow the text as edits do. The outbound guard exempts only 127.0.0.1/32, so
 * 127.0.0.2 stands for a blocked address.
 */
import { createHash } from 'node:crypto';
import { createOutboundClient, createRedis, parseCidrList, processMetrics, type RedisClient } from '@collab/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { createPageCache, fetchPage } from '../../services/conversation/src/domain/link-previews/pages.js';
import { uploadFile } from '../support/activity.js';
import { createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { previewsDrained } from './drained.js';
import { html, PageServer, systemWithPages } from './page-server.js';

let system: TestSystem;
let app: TestApplication;
let pages: PageServer;
/** Pages on 127.0.0.2: reachable on loopback, but outside the exempted range. */
let blockedPages: PageServer;

const enc = encodeURIComponent;
const messagesPath = (threadID: string) => `/v1/threads/${enc(threadID)}/messages`;
const messagePath = (threadID: string, messageID: string) => `${messagesPath(threadID)}/${enc(messageID)}`;
const paragraph = (...children: unknown[]) => [{ type: 'p', children }];
const text = (value: string) => ({ text: value });

systemWithPages('on', async (started) => {
  ({ system, app, pages } = started);
  blockedPages = await PageServer.start('127.0.0.2');
}, { beforeStop: () => blockedPages?.close() });

/** Posts a message by ann; `threadID` adds it to that thread instead of a new one. */
async function create(content: unknown, extra: Record<string, unknown> = {}, threadID = uniqueId('thread'), as = app) {
  const response = await as.client.post(messagesPath(threadID), {
    authorID: 'ann',
    content,
    createThread: { groupID: 'team', location: { page: threadID }, url: `https://example.com/${threadID}`, name: 'Thread' },
    ...extra,
  });
  expect(response.body).toMatchObject({ success: true });
  return { threadID, messageID: response.body.messageID as string };
}

async function update(message: { threadID: string; messageID: string }, body: unknown) {
  const response = await app.client.put(messagePath(message.threadID, message.messageID), body);
  expect(response.body).toMatchObject({ success: true });
}

/** Every link-preview job asked for so far has run. */
const drained = () => previewsDrained(system);

async function previewsOf(message: { threadID: string; messageID: string }) {
  const response = await app.client.get(messagePath(message.threadID, message.messageID));
  expect(response.status).toBe(200);
  return (response.body.attachments as { type: string }[]).filter((attachment) => attachment.type === 'link_preview') as {
    type: 'link_preview';
    id: string;
    url: string;
    imageURL: string | null;
    title: string | null;
    description: string | null;
  }[];
}

const titlesOf = async (message: { threadID: string; messageID: string }) => (await previewsOf(message)).map((preview) => preview.title);

/** The stored rows of a message's previews, hidden ones included, in their order. */
async function rowsOf(messageID: string) {
  const { rows } = await system.sql.query<{ id: string; url: string; hidden: boolean }>(
    `SELECT p.id, p.url, p.hidden FROM conversation.message_link_previews p
     JOIN conversation.messages m ON m.internal_id = p.message_id WHERE m.external_id = $1 ORDER BY p.seq`,
    [messageID],
  );
  return rows;
}

/** link_preview_fetches_total{outcome} of this process, whose in-process worker fetches the pages. */
async function fetches(outcome: string): Promise<number> {
  const metric = processMetrics().registry.getSingleMetric('link_preview_fetches_total');
  if (!metric) return 0;
  return (await metric.get()).values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

describe('a message with a link', () => {
  it('shows the OpenGraph preview through GET message, the thread messages and GET /v1/messages', async () => {
    const url = pages.page(
      '/og',
      html(`<title>Plain</title>
        <meta property="og:title" content="The OpenGraph title">
        <meta property="og:description" content="What the page is about">
        <meta property="og:image" content="https://images.example/og.png">`),
    );
    const message = await create(paragraph(text(`look at ${url} please`)));
    await drained();

    const expected = [
      { type: 'link_preview', id: expect.stringMatching(/^[0-9a-f-]{36}$/), url, imageURL: 'https://images.example/og.png', title: 'The OpenGraph title', description: 'What the page is about' },
    ];
    expect(await previewsOf(message)).toEqual(expected);
    const inThread = await app.client.get(messagesPath(message.threadID));
    expect(inThread.body.find((item: { id: string }) => item.id === message.messageID).attachments).toEqual(expected);
    const listed = await app.client.get(`/v1/messages?limit=1000`);
    expect(listed.body.messages.find((item: { id: string }) => item.id === message.messageID).attachments).toEqual(expected);
  });

  it('lists a file attachment before the preview, with its signed link, the same through all three reads', async () => {
    const url = pages.page('/with-file', html('<title>With a file</title>'));
    const fileID = await uploadFile(app, 'ann', 'notes.txt');
    const message = await create(paragraph(text(`the notes and ${url}`)), { addAttachments: [{ type: 'file', id: fileID }] });
    await drained();

    const got = await app.client.get(messagePath(message.threadID, message.messageID));
    expect(got.body.attachments).toEqual([
      {
        type: 'file',
        id: `cord:${fileID}`,
        name: 'notes.txt',
        url: expect.stringMatching(new RegExp(`/v1/files/${fileID}\\?expires=\\d+&signature=[\\w-]+$`)),
        mimeType: 'text/plain',
        size: 5,
        uploadStatus: 'uploaded',
      },
      { type: 'link_preview', id: expect.any(String), url, imageURL: null, title: 'With a file', description: null },
    ]);
    expect(got.body.plaintext).toBe(`the notes and ${url}`);
    // The links are signed per answer: compared without them.
    const withoutLinks = (answer: { attachments: { type: string; url: string }[] }) => ({
      ...answer,
      attachments: answer.attachments.map((attachment) => (attachment.type === 'file' ? { ...attachment, url: 'signed' } : attachment)),
    });
    const inThread = await app.client.get(messagesPath(message.threadID));
    expect(withoutLinks(inThread.body.find((item: { id: string }) => item.id === message.messageID))).toEqual(withoutLinks(got.body));
    const listed = await app.client.get(`/v1/messages?limit=1000`);
    expect(withoutLinks(listed.body.messages.find((item: { id: string }) => item.id === message.messageID))).toEqual(withoutLinks(got.body));
  });

  it('falls back to the <title> and the plain description of a page without OpenGraph tags', async () => {
    const url = pages.page('/plain', html('<title>Just a title</title><meta name="description" content="Plain description">'));
    const message = await create(paragraph(text(url)));
    await drained();
    expect(await previewsOf(message)).toEqual([
      { type: 'link_preview', id: expect.any(String), url, imageURL: null, title: 'Just a title', description: 'Plain description' },
    ]);
  });

  it('resolves a relative image URL against the page, after redirects, and keeps the URL the message has', async () => {
    const landing = pages.page('/articles/landing', html('<meta property="og:title" content="Landed"><meta property="og:image" content="img/cover.png">'));
    pages.redirect('/hop-2', landing);
    const url = pages.redirect('/hop-1', '/hop-2', 301);
    const message = await create(paragraph(text(url)));
    await drained();
    expect(await previewsOf(message)).toEqual([
      { type: 'link_preview', id: expect.any(String), url, imageURL: pages.url('/articles/img/cover.png'), title: 'Landed', description: null },
    ]);
  });

  it('takes the URLs of text and of link nodes (a link without scheme gets http://), in order, never of mentions', async () => {
    const inText = pages.page('/in-text', html('<title>In text</title>'));
    pages.page('/in-node', html('<title>In a link node</title>'));
    const mentioned = pages.page('/mentioned', html('<title>Mentioned</title>'));
    const nodeUrl = pages.url('/in-node').replace(/^http:\/\//, '');
    const message = await create(
      paragraph(
        text(`first ${inText} then `),
        { type: 'link', url: nodeUrl, children: [text('the node')] },
        { type: 'mention', user: { id: 'bob' }, children: [text(`@${mentioned}`)] },
      ),
    );
    await drained();
    expect((await previewsOf(message)).map(({ url, title }) => ({ url, title }))).toEqual([
      { url: inText, title: 'In text' },
      { url: `http://${nodeUrl}`, title: 'In a link node' },
    ]);
    expect(pages.hits('/mentioned')).toBe(0);
  });

  it('answers the create before the page: a page held until after the answer still becomes a preview', async () => {
    const held = pages.hold('/held', html('<title>Held back</title>'));
    const message = await create(paragraph(text(held.url)));
    // The answer came; the page has not been answered yet.
    await held.arrived;
    expect(await previewsOf(message)).toEqual([]);
    held.release();
    await drained();
    expect(await titlesOf(message)).toEqual(['Held back']);
  });
});

describe('a page that gives no preview', () => {
  const cases: [string, (path: string) => string, string][] = [
    ['a non-HTML answer', (path) => pages.page(path, '{"title":"json"}', { contentType: 'application/json' }), 'unsupported_content_type'],
    ['a 404', (path) => pages.page(path, html('<title>Not here</title>'), { status: 404 }), 'http_error'],
    ['a page over 1 MB', (path) => pages.page(path, html('<title>Huge</title>', 'x'.repeat(1_100_000))), 'body_too_large'],
    ['a redirect to a blocked address', (path) => pages.redirect(path, blockedPages.page(`${path}-target`, html('<title>Inside</title>'))), 'blocked_address'],
    [
      'more than 3 redirects',
      (path) => {
        pages.page(`${path}/4`, html('<title>Too far</title>'));
        for (const hop of [3, 2, 1]) pages.redirect(`${path}/${hop}`, `${path}/${hop + 1}`);
        return pages.redirect(path, `${path}/1`);
      },
      'too_many_redirects',
    ],
    ['a page slower than 5 s', (path) => pages.hold(path, html('<title>Too slow</title>')).url, 'timeout'],
  ];

  for (const [name, serve, outcome] of cases) {
    it(`${name}: no preview, counted as ${outcome}, while the message's other link gets one`, async () => {
      const path = `/failing-${outcome}`;
      const failing = serve(path);
      const working = pages.page(`/working-beside-${outcome}`, html('<title>Working</title>'));
      const before = await fetches(outcome);
      const message = await create(paragraph(text(`${failing} and ${working}`)));
      await drained();
      expect((await previewsOf(message)).map((preview) => preview.url)).toEqual([working]);
      expect(pages.hits(path)).toBe(1);
      expect(await fetches(outcome)).toBe(before + 1);
      // A blocked address is refused before connecting: its page is never asked for.
      expect(blockedPages.hits(`${path}-target`)).toBe(0);
    });
  }
});

describe('edits', () => {
  it('an edit that removes a URL drops its preview at once; one that adds a URL gets its preview', async () => {
    const a = pages.page('/edit-a', html('<title>A</title>'));
    const b = pages.page('/edit-b', html('<title>B</title>'));
    const message = await create(paragraph(text(a)));
    await drained();
    expect(await titlesOf(message)).toEqual(['A']);

    await update(message, { content: paragraph(text(`now ${b}`)) });
    // A's preview is gone with the edit's answer; B's may already be made (the worker is quick).
    expect(await titlesOf(message)).not.toContain('A');
    await drained();
    expect(await titlesOf(message)).toEqual(['B']);

    await update(message, { content: paragraph(text(`${a} and ${b}`)) });
    await drained();
    // Stored order: B was there first.
    expect(await titlesOf(message)).toEqual(['B', 'A']);

    await update(message, { content: paragraph(text('no links any more')) });
    expect(await rowsOf(message.messageID)).toEqual([]);
  });

  it('a hidden preview stays hidden while its URL stays, and comes back anew once the URL left and returned', async () => {
    const a = pages.page('/hide-a', html('<title>A</title>'));
    const b = pages.page('/hide-b', html('<title>B</title>'));
    const c = pages.page('/hide-c', html('<title>C</title>'));
    const message = await create(paragraph(text(`${a} ${b}`)));
    await drained();
    const [previewA] = await previewsOf(message);
    await update(message, { removeAttachments: [{ type: 'link_preview', id: previewA.id }] });
    expect(await titlesOf(message)).toEqual(['B']);

    await update(message, { content: paragraph(text(`${a} ${b} ${c}`)) });
    await drained();
    expect(await titlesOf(message)).toEqual(['B', 'C']);
    expect((await rowsOf(message.messageID)).find((row) => row.url === a)).toEqual({ id: previewA.id, url: a, hidden: true });
    expect(pages.hits('/hide-a')).toBe(1);

    await update(message, { content: paragraph(text(`${b} ${c}`)) });
    await update(message, { content: paragraph(text(`${a} ${b} ${c}`)) });
    await drained();
    const previews = await previewsOf(message);
    expect(previews.map((preview) => preview.title)).toEqual(['B', 'C', 'A']);
    expect(previews[2].id).not.toBe(previewA.id);
  });

  it('edits made while the job runs end with the previews of the latest content', async () => {
    const held = pages.hold('/fast-a', html('<title>A</title>'));
    const b = pages.page('/fast-b', html('<title>B</title>'));
    const c = pages.page('/fast-c', html('<title>C</title>'));
    const message = await create(paragraph(text(held.url)));
    await held.arrived;
    await update(message, { content: paragraph(text(b)) });
    await update(message, { content: paragraph(text(c)) });
    held.release();
    await drained();
    expect(await titlesOf(message)).toEqual(['C']);
    // One more run after the one that was fetching A, reading the latest content: B was never asked for.
    expect(pages.hits('/fast-b')).toBe(0);
  });
});

describe('appends', () => {
  const markdown = (value: string) => [{ type: 'markdown', children: [text(value)] }];
  async function append(message: { threadID: string; messageID: string }, appended: string) {
    const response = await app.client.post(`${messagePath(message.threadID, message.messageID)}/append`, { text: appended });
    expect(response.body).toMatchObject({ success: true });
  }

  it('follow the text: a URL an append completes gets its preview, one an append changes loses its own at once', async () => {
    const a = pages.page('/append-a', html('<title>A</title>'));
    const b = pages.page('/append-b', html('<title>B</title>'));
    const message = await create(markdown(`see ${a.slice(0, -2)}`));
    await drained();
    expect(await titlesOf(message)).toEqual([]);

    await append(message, a.slice(-2));
    await drained();
    expect(await titlesOf(message)).toEqual(['A']);

    await append(message, ` and ${b}`);
    await drained();
    expect(await titlesOf(message)).toEqual(['A', 'B']);

    // The URL is now b + "-gone", a page that does not exist: B's preview goes with the answer.
    await append(message, '-gone');
    expect(await titlesOf(message)).toEqual(['A']);
    await drained();
    expect(await titlesOf(message)).toEqual(['A']);
  });

  it('to a message that skips previews bring none', async () => {
    const a = pages.page('/append-skip', html('<title>A</title>'));
    const message = await create(markdown('see '), { skipLinkPreviews: true });
    await append(message, a);
    await drained();
    expect(await rowsOf(message.messageID)).toEqual([]);
    expect(pages.hits('/append-skip')).toBe(0);
  });
});

describe('skipLinkPreviews', () => {
  it('on create: no preview; set to false later, the preview comes', async () => {
    const url = pages.page('/skip-create', html('<title>Skipped</title>'));
    const message = await create(paragraph(text(url)), { skipLinkPreviews: true });
    await drained();
    expect(await previewsOf(message)).toEqual([]);
    expect(pages.hits('/skip-create')).toBe(0);

    await update(message, { skipLinkPreviews: false });
    await drained();
    expect(await titlesOf(message)).toEqual(['Skipped']);
  });

  it('on update: the previews go at once and none come while it stays set', async () => {
    const a = pages.page('/skip-update-a', html('<title>A</title>'));
    const b = pages.page('/skip-update-b', html('<title>B</title>'));
    const message = await create(paragraph(text(a)));
    await drained();
    expect(await titlesOf(message)).toEqual(['A']);

    await update(message, { skipLinkPreviews: true });
    expect(await rowsOf(message.messageID)).toEqual([]);
    await update(message, { content: paragraph(text(`${a} ${b}`)) });
    await drained();
    expect(await previewsOf(message)).toEqual([]);
    expect(pages.hits('/skip-update-b')).toBe(0);

    await update(message, { skipLinkPreviews: false });
    await drained();
    expect(await titlesOf(message)).toEqual(['A', 'B']);
  });
});

describe('the page cache', () => {
  it('fetches the same URL in 50 messages, of two applications, once', async () => {
    const url = pages.page('/popular', html('<title>Popular</title>'));
    const threadID = uniqueId('popular-thread');
    await create(paragraph(text(url)), {}, threadID);
    await Promise.all(Array.from({ length: 48 }, () => create(paragraph(text(`again ${url}`)), {}, threadID)));
    const other = await createApplication(system, 'another app');
    await seedTeam(other);
    await create(paragraph(text(url)), {}, uniqueId('thread'), other);
    await drained();

    expect(pages.hits('/popular')).toBe(1);
    const listed = await app.client.get(messagesPath(threadID));
    expect(listed.body).toHaveLength(49);
    for (const message of listed.body) expect(message.attachments.map((attachment: { title: string }) => attachment.title)).toEqual(['Popular']);
  });

  describe('between worker processes', () => {
    const connections: RedisClient[] = [];
    const client = createOutboundClient({ allowedCidrs: parseCidrList('127.0.0.1/32') });
    /** A page cache as one worker process has it: its own Redis connection, the system's prefix. */
    const workerCache = () => {
      const redis = createRedis(system.env.REDIS_URL);
      connections.push(redis);
      const cache = createPageCache({ redis, prefix: system.env.REDIS_PREFIX, fetch: (url) => fetchPage(client, url), ttlSeconds: 3600, failureTtlSeconds: 300 });
      return { redis, cache };
    };
    const pageKey = (url: string) => `${system.env.REDIS_PREFIX}:link-previews:page:${createHash('sha256').update(url).digest('hex')}`;
    afterAll(() => connections.forEach((redis) => redis.disconnect()));

    it('a process that needs a page another one is fetching waits for that fetch', async () => {
      const held = pages.hold('/two-workers', html('<title>Fetched once</title>'));
      const first = workerCache().cache.lookup(held.url);
      await held.arrived;
      // The second process finds the page being fetched (the fetch lock taken) before the page is answered.
      const second = workerCache();
      let refused!: () => void;
      const lockRefused = new Promise<void>((resolve) => (refused = resolve));
      const set = second.redis.set.bind(second.redis) as (...args: unknown[]) => Promise<string | null>;
      second.redis.set = (async (...args: unknown[]) => {
        const answer = await set(...args);
        if (answer === null) refused();
        return answer;
      }) as unknown as typeof second.redis.set;
      const secondLookup = second.cache.lookup(held.url);
      await lockRefused;
      held.release();
      const expected = { preview: { title: 'Fetched once', description: null, imageUrl: null } };
      expect(await first).toEqual(expected);
      expect(await secondLookup).toEqual(expected);
      expect(pages.hits('/two-workers')).toBe(1);
    });

    it('keeps a preview for an hour and a failure for 5 minutes, under REDIS_PREFIX', async () => {
      const { redis, cache } = workerCache();
      const good = pages.page('/cached-good', html('<title>Good</title>'));
      const bad = pages.page('/cached-bad', 'gone', { status: 410, contentType: 'text/html' });
      for (const url of [good, bad, good, bad]) await cache.lookup(url);
      expect([pages.hits('/cached-good'), pages.hits('/cached-bad')]).toEqual([1, 1]);
      const goodTtl = await redis.ttl(pageKey(good));
      const badTtl = await redis.ttl(pageKey(bad));
      expect(goodTtl).toBeGreaterThan(300);
      expect(goodTtl).toBeLessThanOrEqual(3600);
      expect(badTtl).toBeGreaterThan(0);
      expect(badTtl).toBeLessThanOrEqual(300);
    });
  });
});

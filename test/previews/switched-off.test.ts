/** LINK_PREVIEWS=off: a message with a link gets no preview, and its page is never asked for. */
import { expect, it } from 'vitest';
import { uniqueId, type TestApplication } from '../support/client.js';
import type { TestSystem } from '../support/system.js';
import { previewsDrained } from './drained.js';
import { html, systemWithPages, type PageServer } from './page-server.js';

let system: TestSystem;
let app: TestApplication;
let pages: PageServer;

systemWithPages('off', (started) => ({ system, app, pages } = started));

it('creates and edits messages with links without fetching anything', async () => {
  const first = pages.page('/off-1', html('<title>One</title>'));
  const second = pages.page('/off-2', html('<title>Two</title>'));
  const threadID = uniqueId('thread');
  const created = await app.client.post(`/v1/threads/${threadID}/messages`, {
    authorID: 'ann',
    content: [{ type: 'p', children: [{ text: first }] }],
    createThread: { groupID: 'team', location: { page: threadID }, url: 'https://example.com/t', name: 'Thread' },
  });
  expect(created.status).toBe(200);
  const path = `/v1/threads/${threadID}/messages/${created.body.messageID}`;
  expect((await app.client.put(path, { content: [{ type: 'p', children: [{ text: `${first} ${second}` }] }] })).status).toBe(200);
  await previewsDrained(system);

  expect((await app.client.get(path)).body.attachments).toEqual([]);
  expect([pages.hits('/off-1'), pages.hits('/off-2')]).toEqual([0, 0]);
});

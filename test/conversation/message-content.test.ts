/**
 * Message content through the gateway: the eleven node types, the structural check and plaintext.
 */
import { describe, expect, it } from 'vitest';
import { createApplication, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { putEach } from '../support/seed.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;
let threadID: string;

const enc = encodeURIComponent;
const messagesPath = (thread: string) => `/v1/threads/${enc(thread)}/messages`;
const messagePath = (thread: string, messageID: string) => `/v1/threads/${enc(thread)}/messages/${enc(messageID)}`;

type Node = Record<string, unknown>;
const text = (value: string, extra: Node = {}): Node => ({ text: value, ...extra });
const p = (...children: Node[]): Node => ({ type: 'p', children });
const mention = (id: string, label: string, extra: Node = {}): Node => ({ type: 'mention', user: { id }, children: [text(label)], ...extra });
const assignee = (id: string, label: string): Node => ({ type: 'assignee', user: { id }, children: [text(label)] });
const link = (url: string, ...children: Node[]): Node => ({ type: 'link', url, children });

systemWithApplication('message content app', async (started) => {
  ({ system, app } = started);
  await putEach(app, '/v1/users', [
    ['ann', { name: 'Ann' }],
    ['bob', { name: 'Bob' }],
    ['u1', { name: 'Leela' }],
    ['carl', { name: 'Carl' }],
    ['dora', { name: 'Dora', status: 'deleted' }],
  ]);
  await putEach(app, '/v1/groups', [
    ['team', { name: 'Team', members: ['ann', 'bob', 'u1', 'dora'] }],
    ['outside', { name: 'Outside', members: ['carl'] }],
  ]);
  threadID = uniqueId('content-thread');
  const first = await app.client.post(messagesPath(threadID), {
    authorID: 'ann',
    content: [p(text('first'))],
    createThread: { groupID: 'team', location: { page: 'content' }, url: 'https://example.com/content', name: 'Content' },
  });
  if (first.status !== 200) throw new Error(`creating the thread failed: ${JSON.stringify(first.body)}`);
});

const create = (content: unknown, extra: Node = {}) => app.client.post(messagesPath(threadID), { authorID: 'ann', content, ...extra });

/** Creates a message with the content and reads it back. */
async function roundTrip(content: unknown): Promise<{ content: unknown; plaintext: string }> {
  const created = await create(content);
  expect(created.body).toMatchObject({ success: true });
  expect(created.status).toBe(200);
  const fetched = await app.client.get(messagePath(threadID, created.body.messageID));
  expect(fetched.status).toBe(200);
  return fetched.body;
}

function expectInvalidContent(response: ApiResponse, message?: RegExp | string) {
  expect(response.body).toMatchObject({ error: 'invalid_field' });
  if (typeof message === 'string') expect(response.body.message).toBe(message);
  else expect(response.body.message).toMatch(message ?? /^content field is invalid: Message contents contained invalid element\(s\): /);
  expect(response.status).toBe(400);
}

describe('valid content: each node type is stored and returned as sent', () => {
  const cases: [string, Node[], string][] = [
    ['text nodes inside p, with every formatting mark, class and empty text', [p(text('plain '), text('marked', { bold: true, italic: true, underline: true, code: true, class: 'hl' }), text(''))], 'plain marked'],
    ['p with a class and several paragraphs', [{ ...p(text('one')), class: 'lead' }, p(text('two'))], 'one\ntwo'],
    ['mention inside p and at top level, with a class', [p(text('hi '), mention('bob', '@Bob', { class: 'm' })), mention('u1', '@Leela')], 'hi @Bob\n@Leela'],
    ['mention of a user outside the group and of a deleted user', [p(mention('carl', '@Carl'), text(' '), mention('dora', '@Dora'))], '@Carl @Dora'],
    ['assignee inside p and at top level, its user not checked', [p(text('for '), assignee('not-a-user', '+Someone')), assignee('bob', '+Bob')], 'for +Someone\n+Bob'],
    ['link with any url, text and mention children, and an empty link', [p(link('not a url at all', text('click '), mention('bob', '@Bob')), link('x')), link('https://example.com', text('top'))], 'click @Bob\ntop'],
    ['bullet with p children, with and without indent 0–4', [{ type: 'bullet', children: [p(text('a')), p(text('b'))] }, { type: 'bullet', indent: 0, children: [p(text('c'))] }, { type: 'bullet', indent: 4, class: 'b', children: [p(text('d'))] }], 'ab\nc\nd'],
    ['number_bullet with bulletNumber and indent', [{ type: 'number_bullet', bulletNumber: 1, children: [p(text('first'))] }, { type: 'number_bullet', bulletNumber: 2, indent: 3, children: [p(text('second'), link('u', text('!')))] }], 'first\nsecond!'],
    ['quote with each allowed child kind', [{ type: 'quote', class: 'q', children: [p(text('para')), { type: 'bullet', children: [p(text('bul'))] }, { type: 'number_bullet', bulletNumber: 7, children: [p(text('num'))] }, text(' txt '), mention('bob', '@Bob'), assignee('bob', '+Bob'), link('u', text('lnk'))] }], 'parabulnum txt @Bob+Boblnk'],
    ['code with text children', [{ type: 'code', children: [text('const x = 1;'), text('\nreturn x;')] }], 'const x = 1;\nreturn x;'],
    ['todo with todoID, done and children', [{ type: 'todo', todoID: 't-1', done: false, children: [p(text('buy milk'))] }, { type: 'todo', todoID: 't-2', done: true, class: 'td', children: [text('done '), mention('bob', '@Bob')] }], 'buy milk\ndone @Bob'],
    ['markdown with exactly one text child', [{ type: 'markdown', children: [text('**bold** _it_')] }], '**bold** _it_'],
    ['an empty content array', [], ''],
  ];
  for (const [name, content, plaintext] of cases) {
    it(name, async () => {
      const message = await roundTrip(content);
      expect(message.content).toEqual(content);
      expect(message.plaintext).toBe(plaintext);
    });
  }
});

describe('invalid structure: 400 invalid_field naming the content', () => {
  const cases: [string, unknown[]][] = [
    ['a bare text node at top level', [text('hello')]],
    ['a bare text node beside valid nodes', [p(text('ok')), text('stray')]],
    ['p with no children', [p()]],
    ['p containing a p', [p(p(text('x')))]],
    ['p containing a quote', [p({ type: 'quote', children: [text('x')] })]],
    ['p containing a bullet', [p({ type: 'bullet', children: [p(text('x'))] })]],
    ['p containing code', [p({ type: 'code', children: [text('x')] })]],
    ['p containing markdown', [p({ type: 'markdown', children: [text('x')] })]],
    ['quote with no children', [{ type: 'quote', children: [] }]],
    ['quote containing code', [{ type: 'quote', children: [{ type: 'code', children: [text('x')] }] }]],
    ['quote containing a quote', [{ type: 'quote', children: [{ type: 'quote', children: [text('x')] }] }]],
    ['bullet with no children', [{ type: 'bullet', children: [] }]],
    ['bullet with a text child', [{ type: 'bullet', children: [text('x')] }]],
    ['bullet with a quote child', [{ type: 'bullet', children: [{ type: 'quote', children: [text('x')] }] }]],
    ['bullet with indent 5', [{ type: 'bullet', indent: 5, children: [p(text('x'))] }]],
    ['bullet with indent -1', [{ type: 'bullet', indent: -1, children: [p(text('x'))] }]],
    ['bullet with indent 1.5', [{ type: 'bullet', indent: 1.5, children: [p(text('x'))] }]],
    ['number_bullet with indent 5', [{ type: 'number_bullet', bulletNumber: 1, indent: 5, children: [p(text('x'))] }]],
    ['number_bullet with bulletNumber 1.5', [{ type: 'number_bullet', bulletNumber: 1.5, children: [p(text('x'))] }]],
    ['number_bullet with a mention child', [{ type: 'number_bullet', bulletNumber: 1, children: [mention('bob', '@Bob')] }]],
    ['code with no children', [{ type: 'code', children: [] }]],
    ['code with a mention child', [{ type: 'code', children: [mention('bob', '@Bob')] }]],
    ['code with a p child', [{ type: 'code', children: [p(text('x'))] }]],
    ['link with a p child', [p(link('u', p(text('x'))))]],
    ['link with an assignee child', [link('u', assignee('bob', '+Bob'))]],
    ['mention text without @', [p(mention('bob', 'Bob'))]],
    ['mention text that is only @', [p(mention('bob', '@'))]],
    ['mention with no children', [p({ type: 'mention', user: { id: 'bob' }, children: [] })]],
    ['mention with two children', [p({ type: 'mention', user: { id: 'bob' }, children: [text('@Bob'), text('@Bob')] })]],
    ['mention whose child carries an extra key', [p({ type: 'mention', user: { id: 'bob' }, children: [text('@Bob', { bold: true })] })]],
    ['mention whose child is a mention', [p({ type: 'mention', user: { id: 'bob' }, children: [mention('bob', '@Bob')] })]],
    ['assignee text without +', [p(assignee('bob', 'Bob'))]],
    ['assignee text that is only +', [p(assignee('bob', '+'))]],
    ['assignee with a class', [p({ ...assignee('bob', '+Bob'), class: 'x' })]],
    ['assignee with two children', [{ type: 'assignee', user: { id: 'bob' }, children: [text('+a'), text('+b')] }]],
    ['markdown with two children', [{ type: 'markdown', children: [text('a'), text('b')] }]],
    ['markdown with no children', [{ type: 'markdown', children: [] }]],
    ['markdown with a class', [{ type: 'markdown', class: 'md', children: [text('a')] }]],
    ['invalid nesting deep inside valid nodes', [{ type: 'quote', children: [{ type: 'bullet', children: [p(text('ok')), p()] }] }]],
  ];
  for (const [name, content] of cases) {
    it(name, async () => {
      expectInvalidContent(await create(content));
    });
  }

  it('names the whole content in the message', async () => {
    const content = [text('stray')];
    expectInvalidContent(await create(content), `content field is invalid: Message contents contained invalid element(s): ${JSON.stringify(content)}`);
  });

  it('applies the same check on update', async () => {
    const created = await create([p(text('fine'))]);
    const response = await app.client.put(messagePath(threadID, created.body.messageID), { content: [p(mention('bob', 'Bob'))] });
    expectInvalidContent(response);
    expect((await app.client.get(messagePath(threadID, created.body.messageID))).body.content).toEqual([p(text('fine'))]);
  });

  it('checks the structure after the thread and the author', async () => {
    const missingThread = uniqueId('missing');
    const missing = await app.client.post(messagesPath(missingThread), { authorID: 'ann', content: [text('stray')] });
    expect(missing.body.error).toBe('thread_not_found');
    expect(missing.status).toBe(404);
    const unknownAuthor = await create([text('stray')], { authorID: 'nobody' });
    expect(unknownAuthor.body.error).toBe('user_not_found');
    const nonMember = await create([text('stray')], { authorID: 'carl' });
    expect(nonMember.body.error).toBe('invalid_request');
  });
});

describe('invalid node shapes: rejected by the request schema with the path of the field', () => {
  const invalidField: [string, unknown, RegExp][] = [
    ['content that is not an array', { type: 'p', children: [] }, /^Input type for content is not valid/],
    ['a node that is not an object', [p(text('x')), 'text'], /^Input type for content\/1 is not valid/],
    ['a null node', [null], /^Input type for content\/0 is not valid/],
    ['an unknown node type', [{ type: 'heading', children: [text('x')] }], /^Input type for content\/0\/type is not valid/],
    ['a text node with a type', [p({ type: 'text', text: 'x' })], /^Input type for content\/0\/children\/0\/type is not valid/],
    ['a text node whose text is not a string', [p(text(5 as unknown as string))], /^Input type for content\/0\/children\/0\/text is not valid/],
    ['a formatting mark that is not a boolean', [p(text('x', { bold: 'yes' }))], /^Input type for content\/0\/children\/0\/bold is not valid/],
    ['a class that is not a string', [{ ...p(text('x')), class: 1 }], /^Input type for content\/0\/class is not valid/],
    ['indent that is not a number', [{ type: 'bullet', indent: '1', children: [p(text('x'))] }], /^Input type for content\/0\/indent is not valid/],
    ['children that are not an array', [{ type: 'p', children: text('x') }], /^Input type for content\/0\/children is not valid/],
    ['a link url that is not a string', [link(5 as unknown as string, text('x'))], /^Input type for content\/0\/url is not valid/],
    ['a todo done that is not a boolean', [{ type: 'todo', todoID: 't', done: 'no', children: [] }], /^Input type for content\/0\/done is not valid/],
    ['a mention user id that is not a string', [p({ type: 'mention', user: { id: 1 }, children: [text('@x')] })], /^Input type for content\/0\/children\/0\/user\.id is not valid/],
  ];
  for (const [name, content, message] of invalidField) {
    it(`${name} → invalid_field`, async () => {
      expectInvalidContent(await create(content), message);
    });
  }

  const missingField: [string, unknown, string][] = [
    ['a text node without text', [p({ bold: true })], 'Missing required field: content/0/children/0/text.'],
    ['a p without children', [{ type: 'p' }], 'Missing required field: content/0/children.'],
    ['a mention without user', [p({ type: 'mention', children: [text('@x')] })], 'Missing required field: content/0/children/0/user.'],
    ['a mention user without id', [p({ type: 'mention', user: {}, children: [text('@x')] })], 'Missing required field: content/0/children/0/user.id.'],
    ['a link without url', [{ type: 'link', children: [] }], 'Missing required field: content/0/url.'],
    ['a number_bullet without bulletNumber', [{ type: 'number_bullet', children: [p(text('x'))] }], 'Missing required field: content/0/bulletNumber.'],
    ['a todo without todoID and done', [{ type: 'todo', children: [] }], 'Missing required fields: content/0/todoID and content/0/done.'],
  ];
  for (const [name, content, message] of missingField) {
    it(`${name} → missing_field`, async () => {
      const response = await create(content);
      expect(response.body).toEqual({ error: 'missing_field', message });
      expect(response.status).toBe(400);
    });
  }

  it('rejects a key that no node type has as an unexpected field, by path', async () => {
    const onNode = await create([{ ...p(text('x')), foo: 1 }]);
    expect(onNode.body.error).toBe('unexpected_field');
    expect(onNode.body.message).toMatch(/^content\/0\/foo is not a valid field name for this request\./);
    expect(onNode.status).toBe(400);
    const onText = await create([p(text('x', { color: 'red' }))]);
    expect(onText.body.error).toBe('unexpected_field');
    expect(onText.body.message).toMatch(/^content\/0\/children\/0\/color is not a valid field name/);
    const onBullet = await create([{ type: 'bullet', bulletNumber: 1, children: [p(text('x'))] }]);
    expect(onBullet.body.error).toBe('unexpected_field');
  });
});

describe('mentioned users', () => {
  it('rejects a mention of an unknown user with invalid_field, wherever it is nested', async () => {
    for (const content of [
      [p(mention('nobody', '@Nobody'))],
      [mention('nobody', '@Nobody')],
      [{ type: 'quote', children: [p(link('u', mention('nobody', '@Nobody')))] }],
      [{ type: 'bullet', children: [p(text('ok'), mention('bob', '@Bob')), p(mention('nobody', '@Nobody'))] }],
    ]) {
      expectInvalidContent(await create(content), 'content field is invalid: Could not find mentioned user with ID nobody');
    }
  });

  it('does not check assignee users', async () => {
    expect((await create([p(assignee('nobody', '+Nobody'))])).status).toBe(200);
  });

  it('lets mentions of another application’s user fail here', async () => {
    const other = await createApplication(system, 'other content app');
    await other.client.put('/v1/users/only-there', { name: 'Only there' });
    expectInvalidContent(await create([p(mention('only-there', '@Only'))]), /Could not find mentioned user with ID only-there/);
  });
});

describe('plaintext', () => {
  it('renders paragraphs, mentions and list items as plain text exactly', async () => {
    const content = [
      { type: 'p', children: [{ text: 'Hello ' }, { type: 'mention', user: { id: 'u1' }, children: [{ text: '@Leela' }] }] },
      { type: 'bullet', children: [{ type: 'p', children: [{ text: 'one' }] }, { type: 'p', children: [{ text: 'two' }] }] },
    ];
    expect((await roundTrip(content)).plaintext).toBe('Hello @Leela\nonetwo');
  });

  it('trims the whole result but keeps inner whitespace and newlines', async () => {
    const content = [p(text('  padded  ')), p(text(' end \n '))];
    expect((await roundTrip(content)).plaintext).toBe('padded  \n end');
  });

  it('gives a link its text, not its URL', async () => {
    expect((await roundTrip([p(text('see '), link('https://example.com/docs', text('the docs')), text('.'))])).plaintext).toBe('see the docs.');
  });

  it('drops formatting and runs paragraphs inside one quote together', async () => {
    const content = [{ type: 'quote', children: [p(text('a', { bold: true })), p(text('b', { italic: true }))] }, { type: 'code', children: [text('  x  ')] }];
    expect((await roundTrip(content)).plaintext).toBe('ab\n  x');
  });

  it('is empty for whitespace-only content', async () => {
    expect((await roundTrip([p(text('   ')), p(text('\t'))])).plaintext).toBe('');
  });

  it('follows an edit of the content', async () => {
    const created = await create([p(text('before'))]);
    await app.client.put(messagePath(threadID, created.body.messageID), { content: [p(text('after '), mention('bob', '@Bob'))] });
    expect((await app.client.get(messagePath(threadID, created.body.messageID))).body.plaintext).toBe('after @Bob');
  });

  it('is not accepted as input', async () => {
    const response = await create([p(text('x'))], { plaintext: 'y' });
    expect(response.body.error).toBe('unexpected_field');
    expect(response.status).toBe(400);
  });
});

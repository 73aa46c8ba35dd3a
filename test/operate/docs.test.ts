/**
 * The command blocks of README.md and docs/*.md, checked as a reader uses them: every ```sh block
 * either runs as printed, or is preceded by `<!-- not runnable here: <reason> -->`. The runnable
 * blocks of a page run in order in one shell (a reader's terminal: variables carry over) against
 * a system this file starts; the page's `export BASE_URL=http://localhost:8080` is the one line
 * pointed elsewhere, at that system. A block fails the test when its shell fails, when an answer
 * it prints is an API error, or when a one-line answer the page shows (`# {…}`, `…` and `<…>`
 * standing for anything) is not among what it printed.
 * Needs `npm run build` first (the pages call `npm run customer` and `npm run token`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort, until } from '@collab/shared/devkit';
import { describe, expect, it } from 'vitest';
import { createApplication } from '../support/client.js';
import { ROOT } from '../support/process-catalog.js';
import { putEach } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';

const NOT_RUNNABLE = /^<!-- not runnable here: \S.*-->$/;
const BASE_URL_LINE = 'export BASE_URL=http://localhost:8080';
/** Each page's runnable blocks together must finish within this. */
const PAGE_TIMEOUT_MS = 60_000;

interface Block {
  page: string;
  line: number;
  language: string;
  code: string;
  runnable: boolean;
}

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** The fenced blocks of a page, with whether the line before the fence marks them not runnable. */
export function blocksOf(page: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A block may be indented (in a list item); its lines lose that indentation.
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.trim().startsWith('```'));
    if (end < 0) throw new Error(`${page}:${i + 1}: a block that is never closed`);
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    blocks.push({
      page,
      line: i + 1,
      language: open[2],
      code: lines
        .slice(i + 1, end)
        .map((line) => (line.startsWith(open[1]) ? line.slice(open[1].length) : line))
        .join('\n'),
      runnable: !(before >= 0 && NOT_RUNNABLE.test(lines[before].trim())),
    });
    i = end;
  }
  return blocks;
}

const BLOCKS = PAGES.flatMap((page) => blocksOf(page, readFileSync(join(ROOT, page), 'utf8')));
const RUNNABLE = BLOCKS.filter((block) => block.language === 'sh' && block.runnable);

/** The one-line answers a block shows (`# {…}`), as patterns of what it must print. */
function shownAnswers(code: string): RegExp[] {
  return code
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('# {') && line.endsWith('}'))
    .map((line) => {
      const parts = line.slice(2).split(/…|<[^>]*>/);
      return new RegExp(parts.map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?'));
    });
}

const END_OF_BLOCK = '<<end of block>>';

/** Runs a page's blocks in one bash, each followed by a marker line, and splits what each printed. */
async function runPage(blocks: Block[], env: Record<string, string>): Promise<{ code: number | null; outputs: string[]; stderr: string }> {
  const script = blocks.map((block) => `${block.code.split('\n').map((line) => (line.trim() === BASE_URL_LINE ? `export BASE_URL=${env.BASE_URL}` : line)).join('\n')}\necho '${END_OF_BLOCK}'`).join('\n');
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), PAGE_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, outputs: stdout.split(`${END_OF_BLOCK}\n`), stderr };
}

describe('the command blocks of README.md and docs/', () => {
  it('are all `sh` blocks (what a reader pastes into a shell), so that none escapes the check', () => {
    const shells = BLOCKS.filter((block) => ['bash', 'shell', 'console', 'zsh'].includes(block.language));
    expect(shells.map((block) => `${block.page}:${block.line}`)).toEqual([]);
  });

  it('mark a block not runnable only with a reason, and only a command block', () => {
    const marked = BLOCKS.filter((block) => !block.runnable && block.language !== 'sh');
    expect(marked.map((block) => `${block.page}:${block.line}`)).toEqual([]);
    expect(RUNNABLE.length).toBeGreaterThan(5);
  });

  it('recognise the marker and the answers a page shows', () => {
    const page = ['<!-- not runnable here: needs Docker -->', '```sh', 'docker compose up', '```', '', '```sh', 'curl x', '# {"a":"…","b":"<time>"}', '```', '1. In a list:', '   ```sh', '   echo indented', '   ```'].join('\n');
    expect(blocksOf('p.md', page).map((block) => block.runnable)).toEqual([false, true, true]);
    expect(blocksOf('p.md', page)[2].code).toBe('echo indented');
    const [answer] = shownAnswers(blocksOf('p.md', page)[1].code);
    expect(answer.test('{"a":"x y","b":"2026"}')).toBe(true);
    expect(answer.test('{"error":"a"}')).toBe(false);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.trim().startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

describe('the links of README.md and docs/', () => {
  it('point at files that exist and at headings they have', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#');
        const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path);
        if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor !== undefined && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the anchors are GitHub\'s', () => {
    expect([...anchorsOf('## Safe retries (`Idempotency-Key`)\n## Appending to a message (streaming a bot\'s answer)\n## A\n## A')]).toEqual([
      'safe-retries-idempotency-key',
      'appending-to-a-message-streaming-a-bots-answer',
      'a',
      'a-1',
    ]);
  });
});

describe('the runnable command blocks, against a running system', () => {
  let system: TestSystem;
  // As the guide says to run it for a receiver on this machine.
  systemForFile((started) => (system = started), { env: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });

  for (const page of [...new Set(RUNNABLE.map((block) => block.page))]) {
    it(`${page} runs as printed`, async () => {
      const blocks = RUNNABLE.filter((block) => block.page === page);
      const { code, outputs, stderr } = await runPage(blocks, { ...system.env, BASE_URL: system.url });
      const finished = outputs.length - 1;
      const at = blocks[Math.min(finished, blocks.length - 1)];
      expect(code, `${page}:${at.line} failed:\n${outputs[finished]}\n${stderr}`).toBe(0);
      blocks.forEach((block, index) => {
        const output = outputs[index];
        expect(output, `${page}:${block.line} printed an error`).not.toMatch(/"error"\s*:/);
        for (const answer of shownAnswers(block.code)) expect(output, `${page}:${block.line} shows ${answer.source}`).toMatch(answer);
      });
    }, PAGE_TIMEOUT_MS + 10_000);
  }

  // The receiver a reader saves as receiver.mjs, run as printed but on a free port instead of 4000.
  it('docs/using-the-api.md: the webhook receiver prints the events it is sent and refuses a forged one', async () => {
    const receiver = BLOCKS.find((block) => block.page === 'docs/using-the-api.md' && block.code.startsWith('// receiver.mjs'));
    expect(receiver, 'the receiver.mjs block').toBeDefined();
    const port = await freePort();
    const file = join(ROOT, '.data', `receiver-${process.pid}.mjs`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, receiver!.code.replaceAll('4000', String(port)));
    const app = await createApplication(system, 'receiver');
    const child = spawn(process.execPath, [file], { cwd: ROOT, env: { ...process.env, APP_SECRET: app.secret }, stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    try {
      await until(async () => printed.includes('listening on'), 'the receiver to listen');
      const url = `http://127.0.0.1:${port}/cord-events`;
      expect((await app.client.post(`/v1/applications/${app.id}/webhooks`, { url, events: ['thread-message-added'] })).status).toBe(201);
      await putEach(app, '/v1/users', [['alice', { name: 'Alice' }]]);
      await putEach(app, '/v1/groups', [['team', { name: 'Team', members: ['alice'] }]]);
      const posted = await app.client.post('/v1/threads/t1/messages', {
        id: 'hello-1',
        authorID: 'alice',
        content: [{ type: 'p', children: [{ text: 'Hello' }] }],
        createThread: { groupID: 'team', name: 'Hello', location: { page: 'hello' }, url: 'https://example.com/hello' },
      });
      expect(posted.status).toBe(200);
      await until(async () => printed.includes('thread-message-added'), 'the receiver to print the event');
      expect(printed).toMatch(/^thread-message-added \{.*"hello-1"/m);
      const forged = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Cord-Timestamp': String(Date.now()), 'X-Cord-Signature': 'forged' },
        body: JSON.stringify({ type: 'url-verification', event: {} }),
      });
      expect(forged.status).toBe(401);
      // The receiver's line reaches this process's pipe after its answer, not before.
      await until(async () => printed.includes('refused: '), 'the receiver to print the refusal');
    } finally {
      child.kill();
      rmSync(file, { force: true });
    }
  }, 90_000);
});

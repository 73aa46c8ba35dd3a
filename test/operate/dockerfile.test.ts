/**
 * The Dockerfile, replayed without a Docker engine: each stage gets a directory standing for its
 * filesystem root; its COPY lines copy from the build context (honouring .dockerignore, with
 * Docker's own matcher) or from an earlier stage, and its RUN lines run as they are written
 * (`npm ci`, `npx tsc -b`, `npm prune --omit=dev`) in its WORKDIR. Then, from the final stage only,
 * with its ENV and its command form (ENTRYPOINT + command), the three migrate scripts migrate a
 * scratch database, the identity API answers /readyz with 200, and the identity worker applies a
 * batch the API queues (its own Redis prefix) and exits 0 on SIGTERM.
 *
 * Slow (a real `npm ci` from the lock file): about a minute and a half on a CI machine.
 */
import { deleteRedisPrefix, dropDatabase, freePort } from '@collab/shared/devkit';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ignore } from '@balena/dockerignore';
import { createRedis, INTERNAL_HEADERS, queuePrefix } from '@collab/shared';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Docker's own .dockerignore matching (CommonJS: module.exports is the factory its types call default).
const dockerignore = createRequire(import.meta.url)('@balena/dockerignore') as () => Ignore;

// ---------------------------------------------------------------------------------------------
// Reading the Dockerfile

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Instructions with their continuation lines joined; comments and blank lines dropped. */
function parseDockerfile(text: string): Instruction[] {
  const lines = text.split('\n');
  if (lines.some((l) => /^#\s*(escape|syntax)\s*=/i.test(l))) throw new Error('parser directives are not replayed');
  const instructions: Instruction[] = [];
  let current: { text: string; line: number } | null = null;
  lines.forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line) || (current === null && line.trim() === '')) return;
    const continued = /\\\s*$/.test(line);
    const part = continued ? line.replace(/\\\s*$/, '') : line;
    if (current === null) current = { text: part.trim(), line: index + 1 };
    else current.text += ` ${part.trim()}`;
    if (!continued) {
      const match = /^(\S+)\s*([\s\S]*)$/.exec(current.text)!;
      instructions.push({ keyword: match[1].toUpperCase(), args: match[2].trim(), line: current.line });
      current = null;
    }
  });
  if (current !== null) throw new Error('the Dockerfile ends in a line continuation');
  return instructions;
}

type Step =
  | { kind: 'copy'; from?: string; sources: string[]; dest: string; line: number }
  | { kind: 'run'; command: string[]; line: number };

interface Stage {
  name?: string;
  base: string;
  workdir: string;
  env: Record<string, string>;
  cmd?: string[];
  entrypoint?: string[];
  steps: Step[];
}

/** `--flag=value` options in front of an instruction's arguments. */
function takeFlags(args: string, allowed: string[], line: number): { flags: Record<string, string>; rest: string } {
  const flags: Record<string, string> = {};
  let rest = args;
  for (let match = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest); match; match = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest)) {
    if (!allowed.includes(match[1])) throw new Error(`line ${line}: --${match[1]} is not replayed`);
    flags[match[1]] = match[2] ?? 'true';
    rest = rest.slice(match[0].length);
  }
  return { flags, rest };
}

/** Exec form (a JSON array) or shell form (`/bin/sh -c`). */
function commandForm(args: string): string[] {
  if (args.startsWith('[')) return JSON.parse(args) as string[];
  return ['/bin/sh', '-c', args];
}

function stagesOf(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const { keyword, args, line } of instructions) {
    if (keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!match) throw new Error(`line ${line}: FROM ${args} is not replayed`);
      stages.push({ base: match[1], name: match[2], workdir: '/', env: {}, steps: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`line ${line}: ${keyword} before FROM`);
    if (/\$|<</.test(args) && keyword !== 'RUN' && keyword !== 'CMD' && keyword !== 'ENTRYPOINT')
      throw new Error(`line ${line}: variables and heredocs in ${keyword} are not replayed`);
    switch (keyword) {
      case 'WORKDIR':
        stage.workdir = posix.resolve(stage.workdir, args);
        break;
      case 'ENV': {
        const pairs = [...args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)];
        if (pairs.length === 0) throw new Error(`line ${line}: write ENV as KEY=value`);
        for (const [, key, value] of pairs) stage.env[key] = value.replace(/^"|"$/g, '');
        break;
      }
      case 'COPY': {
        const { flags, rest } = takeFlags(args, ['from', 'chown', 'chmod', 'link'], line);
        const parts = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
        if (parts.length < 2) throw new Error(`line ${line}: COPY needs a source and a destination`);
        if (parts.some((p) => /[*?[]/.test(p))) throw new Error(`line ${line}: wildcards in COPY are not replayed`);
        const dest = posix.resolve(stage.workdir, parts.at(-1)!) + (parts.at(-1)!.endsWith('/') ? '/' : '');
        stage.steps.push({ kind: 'copy', from: flags.from, sources: parts.slice(0, -1), dest, line });
        break;
      }
      case 'RUN': {
        const { rest } = takeFlags(args, [], line);
        if (rest.includes('<<')) throw new Error(`line ${line}: heredocs in RUN are not replayed`);
        stage.steps.push({ kind: 'run', command: commandForm(rest), line });
        break;
      }
      case 'CMD':
        stage.cmd = commandForm(args);
        break;
      case 'ENTRYPOINT':
        stage.entrypoint = commandForm(args);
        break;
      case 'USER':
      case 'EXPOSE':
      case 'LABEL':
        break;
      default:
        throw new Error(`line ${line}: ${keyword} is not replayed; teach test/operate/dockerfile.test.ts about it`);
    }
  }
  return stages;
}

// ---------------------------------------------------------------------------------------------
// Replaying it

/** Host path of a path inside a stage's filesystem. */
function inStage(stageRoot: string, containerPath: string): string {
  return join(stageRoot, ...posix.normalize(containerPath).split('/').filter(Boolean));
}

/** Copies a file, a symlink (as a link, as Docker does) or a directory's entries, skipping what `skip` says. */
function copyTree(src: string, dest: string, skip: (src: string) => boolean): void {
  const stat = lstatSync(src);
  if (stat.isSymbolicLink()) {
    mkdirSync(dirname(dest), { recursive: true });
    rmSync(dest, { force: true, recursive: true });
    symlinkSync(readlinkSync(src), dest);
  } else if (stat.isDirectory()) {
    mkdirSync(dest, { recursive: true });
    for (const entry of readdirSync(src)) {
      const child = join(src, entry);
      if (!skip(child)) copyTree(child, join(dest, entry), skip);
    }
  } else {
    mkdirSync(dirname(dest), { recursive: true });
    copyFileSync(src, dest);
  }
}

/** The environment a RUN step or a container gets: this machine's tools, none of the test runner's settings. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|NODE_ENV$|NODE_OPTIONS$|NODE_PATH$|TEST_|INIT_CWD$)/.test(key)) continue;
    if (/^(DATABASE_URL|REDIS_URL|REDIS_PREFIX|INTERNAL_TOKEN|ACCESS_TOKEN_SECRET|FILE_URL_SECRET|PORT|HOST)$/.test(key)) continue;
    env[key] = value;
  }
  // The runner's node_modules/.bin (tsc, …) must not stand in for what the replayed install lacks.
  env.PATH = (env.PATH ?? '').split(':').filter((entry) => !entry.includes('node_modules')).join(':');
  return { ...env, ...extra };
}

function runToEnd(argv: string[], cwd: string, env: NodeJS.ProcessEnv, logFile: string, timeoutMs: number): Promise<void> {
  const program = argv[0] === 'node' ? process.execPath : argv[0] === '/bin/sh' ? 'sh' : argv[0];
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.write(`\n$ ${argv.join(' ')}\n`);
    const child = spawn(program, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      log.end(() => {
        if (code === 0) resolve();
        else {
          const tail = readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
          reject(new Error(`${argv.join(' ')} failed (${signal ?? `exit ${code}`}; ${timeoutMs} ms limit):\n${tail}`));
        }
      });
    });
  });
}

interface Replayed {
  stages: Stage[];
  roots: string[];
  final: Stage;
  finalRoot: string;
}

async function replay(dir: string, stages: Stage[], logFile: string): Promise<Replayed> {
  const ignore = dockerignore().add(existsSync(join(ROOT, '.dockerignore')) ? readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n') : []);
  const ignored = (hostPath: string) => ignore.ignores(relative(ROOT, hostPath).split(sep).join('/'));
  const roots: string[] = [];
  for (const [index, stage] of stages.entries()) {
    const stageRoot = join(dir, `stage-${index}${stage.name ? `-${stage.name}` : ''}`);
    mkdirSync(inStage(stageRoot, stage.workdir), { recursive: true });
    roots.push(stageRoot);
    for (const step of stage.steps) {
      if (step.kind === 'run') {
        await runToEnd(step.command, inStage(stageRoot, stage.workdir), cleanEnv(stage.env), logFile, 200_000);
        continue;
      }
      let fromRoot: string | null = null;
      if (step.from !== undefined) {
        const source = stages.findIndex((s, i) => i < index && (s.name === step.from || String(i) === step.from));
        if (source < 0) throw new Error(`line ${step.line}: no earlier stage ${step.from}`);
        fromRoot = roots[source];
      }
      for (const source of step.sources) {
        const src = fromRoot ? inStage(fromRoot, source) : join(ROOT, ...source.split('/').filter((p) => p !== '.'));
        if (!existsSync(src) || (!fromRoot && ignored(src) && src !== ROOT))
          throw new Error(`line ${step.line}: COPY ${source}: not found${fromRoot ? ` in stage ${step.from}` : ' in the build context (or excluded by .dockerignore)'}`);
        const intoDir = step.dest.endsWith('/') || step.sources.length > 1 || lstatSync(src).isDirectory();
        const dest = inStage(stageRoot, step.dest);
        const target = intoDir && !lstatSync(src).isDirectory() ? join(dest, posix.basename(source)) : dest;
        copyTree(src, target, fromRoot ? () => false : ignored);
      }
    }
  }
  return { stages, roots, final: stages.at(-1)!, finalRoot: roots.at(-1)! };
}

// ---------------------------------------------------------------------------------------------
// Running the image's processes

interface Running {
  child: ChildProcess;
  exit: Promise<number | null>;
  output: () => string;
}

/** The container's argv for a command (exec form), after the image's ENTRYPOINT, run in its WORKDIR. */
function start(image: Replayed, command: string[] | undefined, env: Record<string, string>): Running {
  const argv = [...(image.final.entrypoint ?? []), ...(command ?? image.final.cmd ?? [])];
  if (argv[0] !== 'node') throw new Error(`the image runs ${argv[0]}, which this replay does not provide`);
  const child = spawn(process.execPath, argv.slice(1), {
    cwd: inStage(image.finalRoot, image.final.workdir),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...image.final.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exit, output: () => output };
}

/** Resolves with the exit code, or rejects when the process is still running after `ms`. */
function exitWithin(process_: Running, ms: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after ${ms} ms:\n${process_.output().slice(-2000)}`)), ms);
    void process_.exit.then((code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Polls `check` until it returns a value, at most `ms`; fails with `what` and the process output. */
async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>, running?: Running): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (running && running.child.exitCode !== null) throw new Error(`${what}: the process exited (${running.child.exitCode}):\n${running.output().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms\n${running?.output().slice(-3000) ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function databaseUrlFor(name: string): string {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${name}`;
  return url.toString();
}

// ---------------------------------------------------------------------------------------------

const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const STAGES = stagesOf(parseDockerfile(DOCKERFILE));
const suffix = randomBytes(6).toString('hex');
const databaseName = `collab_dockerfile_${suffix}`;
const env = {
  DATABASE_URL: databaseUrlFor(databaseName),
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  REDIS_PREFIX: `dockerfile-${suffix}`,
  INTERNAL_TOKEN: randomBytes(24).toString('hex'),
  LOG_LEVEL: 'info',
  HOST: '127.0.0.1',
};

let workdir: string;
let logFile: string;
let image: Replayed;
const running: Running[] = [];

beforeAll(async () => {
  workdir = mkdtempSync(join(tmpdir(), 'collab-dockerfile-'));
  logFile = join(workdir, 'build.log');
  image = await replay(workdir, STAGES, logFile);
}, 240_000);

afterAll(async () => {
  for (const process_ of running) {
    if (process_.child.exitCode === null && process_.child.signalCode === null) {
      process_.child.kill('SIGTERM');
      await exitWithin(process_, 15_000).catch(() => {
        process_.child.kill('SIGKILL');
        return process_.exit;
      });
    }
  }
  await dropDatabase(env.DATABASE_URL, databaseName);
  await deleteRedisPrefix(env.REDIS_URL, env.REDIS_PREFIX);
  if (workdir) rmSync(workdir, { recursive: true, force: true });
}, 60_000);

describe('the Dockerfile as written', () => {
  it('builds in one stage and runs from a second with only what it copies, on the current Node LTS (24), as a non-root user', () => {
    expect(STAGES.map((s) => s.base)).toEqual(['node:24-bookworm-slim', 'node:24-bookworm-slim']);
    const build = STAGES[0];
    const runs = build.steps.filter((s) => s.kind === 'run').map((s) => s.command.join(' '));
    expect(runs.join('\n')).toMatch(/npm ci/);
    expect(runs.join('\n')).toMatch(/npx tsc -b/);
    expect(runs.join('\n')).toMatch(/npm prune --omit=dev/);
    expect(STAGES[1].steps.every((s) => s.kind === 'copy' && s.from === build.name)).toBe(true);
    expect(/^USER\s+node\s*$/m.test(DOCKERFILE)).toBe(true);
    expect(STAGES[1].env.NODE_ENV).toBe('production');
  });

  it('the replay refuses what it cannot reproduce rather than skipping it', () => {
    expect(() => stagesOf(parseDockerfile('FROM node:22\nADD . /app\n'))).toThrow(/ADD is not replayed/);
    expect(() => stagesOf(parseDockerfile('FROM node:22\nRUN --mount=type=cache,target=/root/.npm npm ci\n'))).toThrow(/--mount is not replayed/);
    expect(() => stagesOf(parseDockerfile('FROM node:22\nCOPY services/*/package.json ./\n'))).toThrow(/wildcards/);
    const continued = stagesOf(parseDockerfile('FROM node:22 AS b\nWORKDIR /app\nRUN npm ci \\\n  # a comment\n  && npm test\n'));
    expect(continued[0].steps[0]).toMatchObject({ kind: 'run', command: ['/bin/sh', '-c', 'npm ci && npm test'] });
  });
});

describe('the image the Dockerfile builds (replayed)', () => {
  let identityUrl: string | undefined;
  let identityCustomer: { id: string; secret: string };
  /** Identity's key, which its worker needs too. */
  const secretsKey = randomBytes(32).toString('hex');

  it('holds the built entry points the compose file and the default command run, and no dev dependency', () => {
    const appRoot = inStage(image.finalRoot, image.final.workdir);
    const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, { build?: unknown; command?: unknown }> };
    const scripts = new Set<string>([String(image.final.cmd?.[1])]);
    for (const service of Object.values(compose.services))
      if (service.build !== undefined) {
        const command = Array.isArray(service.command) ? service.command.join(' ') : String(service.command ?? '');
        for (const m of command.matchAll(/node\s+(\S+?\.js)/g)) scripts.add(m[1]);
      }
    expect(scripts.size).toBeGreaterThan(5);
    expect([...scripts].filter((script) => !existsSync(join(appRoot, script)))).toEqual([]);
    // What the process would find outside the image must not mask a missing module.
    for (let dir = dirname(image.finalRoot); dir !== dirname(dir); dir = dirname(dir))
      expect(existsSync(join(dir, 'node_modules')), `${dir}/node_modules`).toBe(false);
    // npm prune --omit=dev ran: no package the lock file marks dev-only is in the image.
    const lockfile = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.entries(lockfile.packages).filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev).map(([path]) => path);
    expect(devOnly.length).toBeGreaterThan(0);
    expect(devOnly.filter((path) => existsSync(join(appRoot, path)))).toEqual([]);
    expect(existsSync(join(appRoot, 'node_modules', '@collab', 'shared', 'dist', 'index.js'))).toBe(true);
    // The console's build, where the gateway serves it from (CONSOLE_DIST), and its fonts.
    expect(existsSync(join(appRoot, 'console', 'dist', 'index.html'))).toBe(true);
    expect(existsSync(join(appRoot, 'node_modules', '@fontsource', 'ibm-plex-sans', '400.css'))).toBe(true);
  });

  it('migrates a scratch database with the built migrate scripts, and the identity API answers /readyz with 200', async () => {
    for (const service of ['identity', 'conversation', 'notification']) {
      const migrate = start(image, ['node', `services/${service}/dist/main-migrate.js`], { DATABASE_URL: env.DATABASE_URL, LOG_LEVEL: 'warn' });
      running.push(migrate);
      expect(await exitWithin(migrate, 60_000), migrate.output()).toBe(0);
    }
    const port = await freePort();
    const customer = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
    const identity = start(image, ['node', 'services/identity/dist/main-api.js'], {
      ...env,
      PORT: String(port),
      ACCESS_TOKEN_SECRET: randomBytes(32).toString('hex'),
      SECRETS_ENCRYPTION_KEY: secretsKey,
      CUSTOMER_ID: customer.id,
      CUSTOMER_SECRET: customer.secret,
      // The batch below waits for the worker rather than answering 202.
      BATCH_WAIT_MS: '20000',
    });
    running.push(identity);
    const url = `http://127.0.0.1:${port}`;
    const ready = await waitFor('identity /readyz', 30_000, async () => {
      const response = await fetch(`${url}/readyz`);
      return response.status === 200 ? ((await response.json()) as { status: string }) : undefined;
    }, identity);
    expect(ready.status).toBe('ready');
    identityUrl = url;
    identityCustomer = customer;
  }, 120_000);

  it('runs the identity worker: it joins its queue under its own Redis prefix, applies a batch, and exits 0 on SIGTERM', async () => {
    if (!identityUrl) throw new Error('the identity API did not start (previous test)');
    // The worker seals the secrets of imported dumps with identity's key.
    const worker = start(image, ['node', 'services/identity/dist/main-worker.js'], { ...env, SECRETS_ENCRYPTION_KEY: secretsKey });
    running.push(worker);
    const connection = createRedis(env.REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue('identity-batch', { connection, prefix: queuePrefix(env.REDIS_PREFIX, 'identity-batch') });
    try {
      await waitFor('the worker on identity-batch', 30_000, async () => ((await queue.getWorkers()).length > 0 ? true : undefined), worker);
    } finally {
      await queue.close();
      connection.disconnect();
    }

    const internal = { [INTERNAL_HEADERS.internalToken]: env.INTERNAL_TOKEN, 'content-type': 'application/json' };
    const created = await fetch(`${identityUrl}/v1/applications`, {
      method: 'POST',
      headers: { ...internal, [INTERNAL_HEADERS.customerId]: identityCustomer.id },
      body: JSON.stringify({ name: 'dockerfile replay' }),
    });
    const application = (await created.json()) as { applicationID: string };
    expect(created.status, JSON.stringify(application)).toBe(200);
    const asApp = { ...internal, [INTERNAL_HEADERS.applicationId]: application.applicationID };
    const batch = await fetch(`${identityUrl}/v1/batch`, { method: 'POST', headers: asApp, body: JSON.stringify({ users: [{ id: 'replayed-user', name: 'Replayed' }] }) });
    expect({ status: batch.status, body: await batch.json() }).toEqual({
      status: 200,
      body: { success: true, message: 'You successfully batch updated 1 user and 0 groups' },
    });
    const user = await fetch(`${identityUrl}/v1/users/replayed-user`, { headers: asApp });
    expect(((await user.json()) as { name: string }).name).toBe('Replayed');

    expect(worker.child.exitCode, 'the worker is still running').toBeNull();
    worker.child.kill('SIGTERM');
    expect(await exitWithin(worker, 30_000), worker.output().slice(-2000)).toBe(0);
  }, 90_000);
});

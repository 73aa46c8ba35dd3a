/**
 * docker-compose.yml, checked without a Docker engine:
 * - it validates against the Compose Specification's JSON schema (vendored in deploy/schemas/,
 *   see SOURCE.md there), before and after variable interpolation;
 * - it agrees with the code: each command runs entry points the build produces (every service's
 *   migration in the migrate service), each process gets every variable its config requires (and
 *   only names some process reads) with values its config loader accepts, service URLs point at
 *   the compose service running that API on the port it listens on;
 * - each HTTP service's health check is run for real against that kind of process (a test system
 *   of the same apps) and answers 0, and 1 when nothing listens;
 * - depends_on targets exist, with the conditions compose can satisfy (service_healthy needs a
 *   health check, service_completed_successfully a one-shot), and nothing starts before what it needs.
 * Needs `npm run build` first (the commands' scripts are looked up in dist/).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { freePort } from '@collab/shared/devkit';
import { startSystem, type TestSystem } from '../support/system.js';
import {
  DIRECT_VARS,
  documentedVars,
  ENTRY_POINTS,
  MIGRATIONS,
  NODE_VARS,
  OPERATING_GUIDE,
  PROCESS_MEMORY,
  processes,
  ROOT,
  sourceEntryPoints,
  type EntryPoint,
} from '../support/process-catalog.js';

const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');
const SCHEMA_FILE = join(ROOT, 'deploy', 'schemas', 'compose-spec.json');

type Doc = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// What the code reads and serves


/** The process the gateway's lifecycle default and every process's SHUTDOWN_TIMEOUT_MS default to. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------------------------
// Reading the compose file as Compose does: YAML with merge keys, then interpolation

function loadCompose(text = readFileSync(COMPOSE_FILE, 'utf8')): Doc {
  const parsed = parseDocument(text, { merge: true });
  if (parsed.errors.length > 0 || parsed.warnings.length > 0)
    throw new Error([...parsed.errors, ...parsed.warnings].map((e) => e.message).join('; '));
  return parsed.toJS() as Doc;
}

class MissingVariableError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
  }
}

/**
 * Compose's interpolation: `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`,
 * `${VAR:?error}`, `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}` (defaults may nest). Any other `$`
 * is an error, as in Compose.
 */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  let out = '';
  let i = 0;
  while (i < value.length) {
    if (value[i] !== '$') {
      out += value[i++];
      continue;
    }
    if (value[i + 1] === '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (value[i + 1] === '{') {
      let depth = 1;
      let j = i + 2;
      for (; j < value.length && depth > 0; j++) {
        if (value[j] === '{') depth++;
        else if (value[j] === '}') depth--;
      }
      if (depth !== 0) throw new Error(`unterminated \${ in ${JSON.stringify(value)}`);
      const body = value.slice(i + 2, j - 1);
      const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(body);
      if (!match) throw new Error(`invalid interpolation \${${body}} in ${JSON.stringify(value)}`);
      const [, name, op, arg = ''] = match;
      const raw = env[name];
      const unset = raw === undefined;
      const empty = unset || raw === '';
      switch (op ?? '') {
        case '':
          out += raw ?? '';
          break;
        case ':-':
          out += empty ? interpolate(arg, env) : raw;
          break;
        case '-':
          out += unset ? interpolate(arg, env) : raw;
          break;
        case ':?':
        case '?':
          if (op === ':?' ? empty : unset) throw new MissingVariableError(name, arg);
          out += raw;
          break;
        case ':+':
          out += empty ? '' : interpolate(arg, env);
          break;
        case '+':
          out += unset ? '' : interpolate(arg, env);
          break;
      }
      i = j;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(value.slice(i + 1));
    if (!name) throw new Error(`invalid interpolation: a lone $ in ${JSON.stringify(value)} (write $$)`);
    out += env[name[0]] ?? '';
    i += 1 + name[0].length;
  }
  return out;
}

/** The whole file with every string interpolated, as `docker compose config` shows it. */
function resolveCompose(doc: Doc, env: Record<string, string | undefined>): Doc {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return interpolate(value, env);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    return value;
  };
  return walk(doc) as Doc;
}

/** Variables the file refuses to start without (`${VAR:?…}` / `${VAR?…}`). */
function requiredComposeVars(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):?\?/g)].map((m) => m[1]))].sort();
}

/**
 * What an operator sets: every variable the file requires, with a value any config accepts (64 hex
 * characters, distinct per variable: a secret of at least 16 characters, and a 32-byte key).
 */
function operatorEnv(text: string): Record<string, string> {
  return Object.fromEntries(requiredComposeVars(text).map((name) => [name, createHash('sha256').update(name).digest('hex')]));
}

/** An environment given as a map or as a list of KEY=VALUE. */
function environmentOf(service: Doc): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env))
    return Object.fromEntries(env.map((entry: string) => [entry.split('=')[0], entry.includes('=') ? entry.slice(entry.indexOf('=') + 1) : '']));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** The entry points a command runs: `node <script>`, or `sh -c "node <a> && node <b>"`. */
function scriptsOf(command: unknown): string[] | null {
  const argv = typeof command === 'string' ? ['sh', '-c', command] : (command as string[] | undefined);
  if (!argv) return null;
  if (argv.length === 2 && argv[0] === 'node') return [argv[1]];
  if (argv.length === 3 && argv[0] === 'sh' && argv[1] === '-c') {
    const steps = argv[2].split('&&').map((step) => step.trim().split(/\s+/));
    if (steps.every((step) => step.length === 2 && step[0] === 'node')) return steps.map((step) => step[1]);
  }
  return null;
}

/** Compose durations: `1m30s`, `15s`, `500ms`, `2h`. */
function durationMs(value: string): number {
  const units: Record<string, number> = { us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  const rest = value.replace(/(\d+(?:\.\d+)?)(us|ms|s|m|h)/g, (_all, n: string, unit: string) => {
    total += Number(n) * units[unit];
    return '';
  });
  if (rest !== '' || value === '') throw new Error(`not a duration: ${value}`);
  return total;
}

interface AppService {
  name: string;
  service: Doc;
  scripts: string[];
  /** The one long-running entry point, when the command runs one. */
  entry?: EntryPoint & { script: string };
}

function appServices(doc: Doc): AppService[] {
  return Object.entries(doc.services as Record<string, Doc>)
    .filter(([, service]) => service.build !== undefined)
    .map(([name, service]) => {
      const scripts = scriptsOf(service.command) ?? [];
      const script = scripts.length === 1 ? scripts[0] : undefined;
      const entry = script && ENTRY_POINTS[script] && ENTRY_POINTS[script].kind !== 'migrate' ? { ...ENTRY_POINTS[script], script } : undefined;
      return { name, service, scripts, entry };
    });
}

/** The port an API process listens on, from its environment or its config's default. */
function listenPort(app: AppService, env: Record<string, string>): number {
  const raw = env.PORT || String(app.entry!.spec.PORT?.default ?? '');
  return Number(raw);
}

/** The compose service running `services/<name>/dist/main-api.js`. */
function apiServiceOf(apps: AppService[], serviceDir: string): AppService | undefined {
  return apps.find((app) => app.entry?.script === `services/${serviceDir}/dist/main-api.js`);
}

function dependsOn(service: Doc): Record<string, { condition: string }> {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name: string) => [name, { condition: 'service_started' }]));
  return deps;
}

/** IDENTITY_URL, CONVERSATION_URL, …: where the compose service running that API is. */
function isServiceUrlVar(name: string): boolean {
  return /_URL$/.test(name) && `services/${name.replace(/_URL$/, '').toLowerCase()}/dist/main-api.js` in ENTRY_POINTS;
}

/**
 * Variables whose value the compose file itself decides rather than the operator: where
 * PostgreSQL, Redis and the services are (DATABASE_URL is built from POSTGRES_PASSWORD), the ports
 * inside the containers that the health checks and service URLs use, and the graceful-stop
 * deadline each stop_grace_period is set against.
 */
function fixedByCompose(name: string): boolean {
  return ['DATABASE_URL', 'REDIS_URL', 'PORT', 'METRICS_PORT', 'SHUTDOWN_TIMEOUT_MS'].includes(name) || isServiceUrlVar(name);
}

/**
 * Every variable of the configuration table (docs/operating.md) that a process reads (its config spec) must
 * reach it from .env or the environment: set as `${NAME}`, `${NAME:-default}` or `${NAME:?…}`.
 */
function passThroughProblems(raw: Doc, documented: Set<string>): string[] {
  const problems: string[] = [];
  for (const app of appServices(raw)) {
    const env = environmentOf(app.service);
    for (const script of app.scripts) {
      for (const name of Object.keys(ENTRY_POINTS[script]?.spec ?? {})) {
        if (!documented.has(name) || fixedByCompose(name)) continue;
        const passed = new RegExp(`^\\$\\{${name}(?::?[-?][^}]*)?\\}$`);
        if (!(name in env)) problems.push(`${app.name}: ${name} is documented and read by ${script}, but not passed through`);
        else if (!passed.test(env[name])) problems.push(`${app.name}: ${name}=${env[name]} ignores the operator's ${name}`);
      }
    }
  }
  return problems;
}

/** Compose byte values (`512m`, `1g`, `256M`): binary units, as Docker reads them. */
function megabytes(value: string | number): number {
  const match = /^(\d+)([bkmg])?$/i.exec(String(value));
  if (!match) throw new Error(`not a byte value: ${value}`);
  const factor: Record<string, number> = { b: 1 / 1024 ** 2, k: 1 / 1024, m: 1, g: 1024 };
  return Number(match[1]) * factor[(match[2] ?? 'b').toLowerCase()];
}

// ---------------------------------------------------------------------------------------------
// Schema

function composeValidator(): ValidateFunction {
  const require = createRequire(import.meta.url);
  const draft07 = require('ajv/dist/refs/json-schema-draft-07.json') as Doc;
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Doc;
  // Strict about the schema's keywords; the upstream schema mixes types within keywords, as
  // draft-07 allows, which ajv's strictTypes lint would refuse.
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
  // The schema names draft-07 by its https address; ajv registers it under http.
  if (schema.$schema !== draft07.$id) ajv.addMetaSchema({ ...draft07, $id: schema.$schema });
  return ajv.compile(schema);
}

function schemaProblems(validate: ValidateFunction, doc: Doc): string[] {
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
}

// ---------------------------------------------------------------------------------------------

const TEXT = readFileSync(COMPOSE_FILE, 'utf8');
const RAW = loadCompose(TEXT);
const OPERATOR_ENV = operatorEnv(TEXT);
const DOC = resolveCompose(RAW, OPERATOR_ENV);
const APPS = appServices(DOC);
const SERVICES = DOC.services as Record<string, Doc>;

describe('docker-compose.yml against the Compose Specification schema', () => {
  const validate = composeValidator();

  it('the vendored schema is the file SOURCE.md describes', () => {
    const source = readFileSync(join(ROOT, 'deploy', 'schemas', 'SOURCE.md'), 'utf8');
    const sha256 = createHash('sha256').update(readFileSync(SCHEMA_FILE)).digest('hex');
    expect(source).toContain(sha256);
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')).title).toBe('Compose Specification');
  });

  it('validates as written and once its variables are interpolated', () => {
    expect(schemaProblems(validate, RAW)).toEqual([]);
    expect(schemaProblems(validate, DOC)).toEqual([]);
  });

  it('the schema check catches a misspelt key, a wrong condition and a wrong type', () => {
    const misspelt = structuredClone(RAW);
    misspelt.services.identity.healthcheck.intervall = '5s';
    expect(schemaProblems(validate, misspelt).join('\n')).toMatch(/\/services\/identity\/healthcheck must NOT have additional properties.*intervall/);
    const condition = structuredClone(RAW);
    condition.services.gateway.depends_on.redis.condition = 'service_ready';
    expect(schemaProblems(validate, condition).join('\n')).toMatch(/depends_on\/redis\/condition must be equal to one of the allowed values/);
    const wrongType = structuredClone(RAW);
    wrongType.services.gateway.ports = '8080:8080';
    expect(schemaProblems(validate, wrongType).join('\n')).toMatch(/\/services\/gateway\/ports must be array/);
  });

  it('interpolates: every $ is a valid reference, and the variables it requires are exactly the secrets', () => {
    expect(requiredComposeVars(TEXT)).toEqual(['ACCESS_TOKEN_SECRET', 'FILE_URL_SECRET', 'INTERNAL_TOKEN', 'SECRETS_ENCRYPTION_KEY']);
    // Without them, Compose refuses to start rather than starting processes that would crash.
    expect(() => resolveCompose(RAW, {})).toThrow(MissingVariableError);
    // The interpolation itself is checked: a lone $ is refused, and defaults apply.
    expect(() => interpolate('pa$ word', {})).toThrow(/lone \$/);
    expect(interpolate('${A:-x}-${B-y}-$$C-${D:+z}', { A: '', D: '1' })).toBe('x-y-$C-z');
  });
});

describe('docker-compose.yml against the code', () => {
  it('runs every long-running entry point once, and the migrate service runs every migration in order', () => {
    expect(Object.keys(ENTRY_POINTS).sort()).toEqual(sourceEntryPoints());
    const longRunning = APPS.filter((app) => app.entry).map((app) => app.entry!.script).sort();
    expect(longRunning).toEqual(Object.entries(ENTRY_POINTS).filter(([, e]) => e.kind !== 'migrate').map(([s]) => s).sort());
    const expectedNames = ['gateway', 'identity', 'conversation', 'notification', 'identity-worker', 'conversation-worker', 'notification-worker'];
    for (const name of expectedNames) expect(APPS.find((app) => app.name === name)?.entry, name).toBeDefined();
    const migrate = APPS.find((app) => app.name === 'migrate');
    expect(migrate?.scripts).toEqual(MIGRATIONS.map((m) => m.script.slice(ROOT.length + 1)));
  });

  it('every command runs scripts the build produces (services/*/dist), from the one image', () => {
    const problems: string[] = [];
    for (const app of APPS) {
      if (app.scripts.length === 0) problems.push(`${app.name}: command ${JSON.stringify(app.service.command)} is not \`node <entry point>\``);
      for (const script of app.scripts) {
        if (!ENTRY_POINTS[script]) problems.push(`${app.name}: ${script} is not an entry point`);
        if (!existsSync(join(ROOT, script))) problems.push(`${app.name}: ${script} does not exist (run npm run build)`);
      }
      const context = typeof app.service.build === 'string' ? app.service.build : app.service.build.context;
      if (context !== '.') problems.push(`${app.name}: builds ${context}, not the repository's Dockerfile`);
      if (app.service.image !== APPS[0].service.image) problems.push(`${app.name}: image ${app.service.image} differs from ${APPS[0].service.image}`);
    }
    expect(APPS.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('gives every process each variable its config requires, only variables it reads, and values its loader accepts', () => {
    const problems: string[] = [];
    const rawServices = RAW.services as Record<string, Doc>;
    for (const app of APPS) {
      const env = environmentOf(app.service);
      const rawEnv = environmentOf(rawServices[app.name]);
      for (const script of app.scripts) {
        const entry = ENTRY_POINTS[script];
        if (!entry) continue;
        const where = `${app.name} (${script})`;
        // A container that runs several entry points (the migrate service) gives each the same
        // environment: a variable one of them reads is not superfluous.
        const readByAnother = (name: string) => app.scripts.some((other) => name in (ENTRY_POINTS[other]?.spec ?? {}));
        for (const name of Object.keys(env))
          if (!readByAnother(name) && !(entry.kind !== 'migrate' && (DIRECT_VARS.has(name) || NODE_VARS.has(name))))
            problems.push(`${where}: sets ${name}, which it never reads`);
        for (const [name, rule] of Object.entries(entry.spec)) {
          if (rule.default === undefined) {
            if (!(name in rawEnv)) problems.push(`${where}: required ${name} is not set`);
            else {
              // Either Compose refuses to start without it, or it has a non-empty value anyway.
              let value: string | undefined;
              try {
                value = interpolate(rawEnv[name], {});
              } catch (error) {
                if (!(error instanceof MissingVariableError)) throw error;
              }
              if (value === '') problems.push(`${where}: required ${name} may be empty (${rawEnv[name]})`);
            }
          }
          if (typeof rule.default === 'string' && /127\.0\.0\.1|localhost/.test(rule.default) && !env[name])
            problems.push(`${where}: ${name} is not set and its default ${rule.default} is this container itself`);
        }
        try {
          entry.load(env);
        } catch (error) {
          problems.push(`${where}: its config does not load: ${(error as Error).message}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('points DATABASE_URL at the postgres service, REDIS_URL at the redis service, and each service URL at that API', () => {
    const problems: string[] = [];
    const postgres = Object.entries(SERVICES).find(([, s]) => String(s.image).startsWith('postgres:'));
    const redis = Object.entries(SERVICES).find(([, s]) => String(s.image).startsWith('redis:'));
    expect(postgres && redis).toBeTruthy();
    for (const app of APPS) {
      const env = environmentOf(app.service);
      for (const [name, value] of Object.entries(env)) {
        if (!/_URL$/.test(name) || value === '' || name === 'PUBLIC_URL') continue;
        const url = new URL(value);
        const where = `${app.name}: ${name}=${value}`;
        if (name === 'DATABASE_URL') {
          const pgEnv = environmentOf(postgres![1]);
          if (url.hostname !== postgres![0] || url.port !== '5432') problems.push(`${where} is not the ${postgres![0]} service`);
          if (decodeURIComponent(url.password) !== pgEnv.POSTGRES_PASSWORD) problems.push(`${where}: password differs from POSTGRES_PASSWORD`);
          if (url.username !== (pgEnv.POSTGRES_USER || 'postgres')) problems.push(`${where}: user differs from POSTGRES_USER`);
        } else if (name === 'REDIS_URL') {
          if (url.hostname !== redis![0] || url.port !== '6379') problems.push(`${where} is not the ${redis![0]} service`);
        } else {
          const target = apiServiceOf(APPS, name.replace(/_URL$/, '').toLowerCase());
          if (!target) problems.push(`${where}: no compose service runs that API`);
          else if (url.hostname !== target.name || Number(url.port) !== listenPort(target, environmentOf(target.service)))
            problems.push(`${where}: ${target.name} listens on http://${target.name}:${listenPort(target, environmentOf(target.service))}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('publishes only the gateway, on the port it listens on; workers listen on nothing and have no HTTP health check', () => {
    const problems: string[] = [];
    for (const app of APPS) {
      const ports: unknown[] = app.service.ports ?? [];
      if (app.entry?.script !== 'services/gateway/dist/main-api.js') {
        if (ports.length > 0) problems.push(`${app.name}: publishes ${JSON.stringify(ports)}`);
      } else {
        const listen = listenPort(app, environmentOf(app.service));
        const targets = ports.map((p) => (typeof p === 'string' ? Number(p.split(':').at(-1)!.split('/')[0]) : Number((p as Doc).target)));
        if (targets.length !== 1 || targets[0] !== listen) problems.push(`${app.name}: publishes ${JSON.stringify(ports)}, listens on ${listen}`);
      }
      if (app.entry?.kind === 'worker' && app.service.healthcheck && !app.service.healthcheck.disable)
        problems.push(`${app.name}: a worker has no HTTP endpoint for a health check`);
    }
    expect(problems).toEqual([]);
  });

  it('stops each process later than its own graceful-stop deadline', () => {
    const problems: string[] = [];
    for (const app of APPS.filter((a) => a.entry)) {
      const deadline = Number(environmentOf(app.service).SHUTDOWN_TIMEOUT_MS || DEFAULT_SHUTDOWN_TIMEOUT_MS);
      const grace = durationMs(app.service.stop_grace_period ?? '10s');
      if (grace <= deadline) problems.push(`${app.name}: stop_grace_period ${grace} ms is not above SHUTDOWN_TIMEOUT_MS ${deadline} ms`);
    }
    expect(problems).toEqual([]);
  });

  it('passes every documented variable a process reads through from .env, so no setting needs an edit of the file', () => {
    const documented = documentedVars();
    // The table documents what the gateway and the workers read, e.g. the queue dashboard's credentials.
    for (const name of ['ADMIN_USERNAME', 'ADMIN_PASSWORD', 'RATE_LIMIT_PER_MINUTE', 'LINK_PREVIEW_CONCURRENCY', 'WEBHOOK_RETRY_HOURS'])
      expect(documented, name).toContain(name);
    expect(passThroughProblems(RAW, documented)).toEqual([]);
  });

  it('the pass-through check catches a variable left out and one fixed to a literal', () => {
    const broken = structuredClone(RAW);
    delete broken.services.gateway.environment.ADMIN_PASSWORD;
    broken.services['webhooks-worker'].environment.WEBHOOK_RETRY_HOURS = '24';
    expect(passThroughProblems(broken, documentedVars())).toEqual([
      'webhooks-worker: WEBHOOK_RETRY_HOURS=24 ignores the operator\'s WEBHOOK_RETRY_HOURS',
      'gateway: ADMIN_PASSWORD is documented and read by services/gateway/dist/main-api.js, but not passed through',
    ]);
  });

  it('gives every long-running process the heap limit and memory limit npm start uses (PROCESS_MEMORY)', () => {
    const names = processes({}).map((entry) => entry.name).sort();
    expect(Object.keys(PROCESS_MEMORY).sort()).toEqual(names);
    expect(APPS.filter((app) => app.entry).map((app) => app.name).sort()).toEqual(names);
    const problems: string[] = [];
    for (const app of APPS.filter((a) => a.entry)) {
      const { heapMb, limitMb } = PROCESS_MEMORY[app.name];
      const nodeOptions = environmentOf(app.service).NODE_OPTIONS;
      if (nodeOptions !== `--max-old-space-size=${heapMb}`) problems.push(`${app.name}: NODE_OPTIONS ${nodeOptions}, not --max-old-space-size=${heapMb}`);
      const limit = app.service.deploy?.resources?.limits?.memory;
      if (limit === undefined || megabytes(limit) !== limitMb) problems.push(`${app.name}: memory limit ${limit}, not ${limitMb} MB`);
    }
    expect(problems).toEqual([]);
  });

  it('keeps PostgreSQL data in a volume and runs Redis with AOF and noeviction', () => {
    const postgres = Object.values(SERVICES).find((s) => String(s.image).startsWith('postgres:'))!;
    const redis = Object.values(SERVICES).find((s) => String(s.image).startsWith('redis:'))!;
    const volumeOn = (service: Doc, target: string) =>
      (service.volumes ?? []).map((v: string | Doc) => (typeof v === 'string' ? v.split(':') : [v.source, v.target])).find(([, t]: string[]) => t === target)?.[0];
    const pgVolume = volumeOn(postgres, '/var/lib/postgresql/data');
    expect(pgVolume).toBeTruthy();
    expect(Object.keys(DOC.volumes ?? {})).toContain(pgVolume);
    const redisVolume = volumeOn(redis, '/data');
    expect(Object.keys(DOC.volumes ?? {})).toContain(redisVolume);
    const argv: string[] = redis.command;
    expect(argv[0]).toBe('redis-server');
    expect(argv[argv.indexOf('--appendonly') + 1]).toBe('yes');
    expect(argv[argv.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
  });
});

describe('docker-compose.yml start order', () => {
  it('depends only on services that exist, with conditions Compose can meet, and without a cycle', () => {
    const problems: string[] = [];
    for (const [name, service] of Object.entries(SERVICES)) {
      for (const [target, { condition }] of Object.entries(dependsOn(service))) {
        const dep = SERVICES[target];
        if (!dep) {
          problems.push(`${name} depends on ${target}, which does not exist`);
          continue;
        }
        if (condition === 'service_healthy' && (!dep.healthcheck || dep.healthcheck.disable))
          problems.push(`${name} waits for ${target} to be healthy, which has no health check`);
        if (condition === 'service_completed_successfully') {
          const oneShot = APPS.find((app) => app.name === target)?.scripts.every((s) => ENTRY_POINTS[s]?.kind === 'migrate');
          if (!oneShot) problems.push(`${name} waits for ${target} to complete, which is not a one-shot`);
          if (!['no', 'on-failure', undefined].includes(dep.restart)) problems.push(`${target} is a one-shot with restart: ${dep.restart}`);
        }
        if (condition === 'service_started' || condition === undefined)
          problems.push(`${name} only waits for ${target} to start; use service_healthy or service_completed_successfully`);
      }
    }
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (name: string, path: string[]): void => {
      if (done.has(name) || !SERVICES[name]) return;
      if (visiting.has(name)) {
        problems.push(`cycle: ${[...path, name].join(' -> ')}`);
        return;
      }
      visiting.add(name);
      for (const target of Object.keys(dependsOn(SERVICES[name]))) visit(target, [...path, name]);
      visiting.delete(name);
      done.add(name);
    };
    for (const name of Object.keys(SERVICES)) visit(name, []);
    expect(problems).toEqual([]);
  });

  it('starts nothing before what it needs: migrations done, PostgreSQL and Redis healthy, the APIs behind the gateway healthy', () => {
    const problems: string[] = [];
    const postgresName = Object.entries(SERVICES).find(([, s]) => String(s.image).startsWith('postgres:'))![0];
    const redisName = Object.entries(SERVICES).find(([, s]) => String(s.image).startsWith('redis:'))![0];
    const migrateName = APPS.find((app) => app.scripts.length > 0 && app.scripts.every((s) => ENTRY_POINTS[s]?.kind === 'migrate'))!.name;
    const wants = (app: AppService, target: string, condition: string) => {
      if (dependsOn(app.service)[target]?.condition !== condition) problems.push(`${app.name}: needs ${target}: condition: ${condition}`);
    };
    for (const app of APPS) {
      const reads = new Set(app.scripts.flatMap((s) => Object.keys(ENTRY_POINTS[s]?.spec ?? {})));
      if (reads.has('DATABASE_URL')) wants(app, postgresName, 'service_healthy');
      if (reads.has('DATABASE_URL') && app.name !== migrateName) wants(app, migrateName, 'service_completed_successfully');
      if (reads.has('REDIS_URL')) wants(app, redisName, 'service_healthy');
      if (app.entry?.script === 'services/gateway/dist/main-api.js')
        for (const dir of ['identity', 'conversation', 'notification']) wants(app, apiServiceOf(APPS, dir)!.name, 'service_healthy');
    }
    expect(problems).toEqual([]);
  });
});

describe('docker-compose.yml health checks', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startSystem();
  });
  afterAll(() => system?.stop());

  /** Runs a health check's test as Docker would (CMD: exec; CMD-SHELL: sh -c), with a deadline. */
  function runHealthcheck(test: string[], rewrite: (arg: string) => string): Promise<number | null> {
    let argv: string[];
    if (test[0] === 'CMD') argv = test.slice(1).map(rewrite);
    else if (test[0] === 'CMD-SHELL') argv = ['sh', '-c', rewrite(test[1])];
    else throw new Error(`unsupported health check ${JSON.stringify(test)}`);
    if (argv[0] === 'node') argv[0] = process.execPath;
    const child = spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`health check ${JSON.stringify(test)} did not finish within 15 s`));
      }, 15_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
      child.once('error', reject);
    });
  }

  it('every HTTP process has one that fetches /readyz on the port it listens on', () => {
    const problems: string[] = [];
    for (const app of APPS.filter((a) => a.entry?.kind === 'api')) {
      const test: string[] | undefined = app.service.healthcheck?.test;
      const urls = JSON.stringify(test ?? []).match(/https?:\/\/[^'"\s)\\]+/g) ?? [];
      if (urls.length !== 1) {
        problems.push(`${app.name}: health check ${JSON.stringify(test)} has no single URL`);
        continue;
      }
      const url = new URL(urls[0]);
      const port = listenPort(app, environmentOf(app.service));
      if (!['127.0.0.1', 'localhost'].includes(url.hostname)) problems.push(`${app.name}: health check calls ${url.hostname}, not the container itself`);
      if (Number(url.port) !== port) problems.push(`${app.name}: health check calls port ${url.port}, the process listens on ${port}`);
      if (url.pathname !== '/readyz') problems.push(`${app.name}: health check calls ${url.pathname}, not /readyz`);
    }
    expect(problems).toEqual([]);
  });

  it('each answers 0 against a running process of that kind, and 1 when nothing listens there', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const running: Record<string, string> = {
      'services/gateway/dist/main-api.js': system.url,
      'services/identity/dist/main-api.js': system.serviceUrls.identity,
      'services/conversation/dist/main-api.js': system.serviceUrls.conversation,
      'services/notification/dist/main-api.js': system.serviceUrls.notification,
      'services/webhooks/dist/main-api.js': system.serviceUrls.webhooks,
      'services/mail/dist/main-api.js': system.serviceUrls.mail,
    };
    const apis = APPS.filter((a) => a.entry?.kind === 'api');
    expect(apis.map((a) => a.entry!.script).sort()).toEqual(Object.keys(running).sort());
    for (const app of apis) {
      const test: string[] = app.service.healthcheck.test;
      const origin = new URL(JSON.stringify(test).match(/https?:\/\/[^'"\s)\\]+/)![0]).origin;
      const to = (target: string) => (arg: string) => arg.split(origin).join(target);
      expect(await runHealthcheck(test, to(running[app.entry!.script])), `${app.name} against a running process`).toBe(0);
      expect(await runHealthcheck(test, to(closed)), `${app.name} against a closed port`).not.toBe(0);
    }
  });

  it('PostgreSQL and Redis have theirs, for the user and database the services use', () => {
    const postgres = Object.values(SERVICES).find((s) => String(s.image).startsWith('postgres:'))!;
    const redis = Object.values(SERVICES).find((s) => String(s.image).startsWith('redis:'))!;
    const pgTest: string[] = postgres.healthcheck.test;
    expect(pgTest.slice(0, 2)).toEqual(['CMD', 'pg_isready']);
    const databaseUrl = new URL(environmentOf(SERVICES.migrate).DATABASE_URL);
    expect(pgTest[pgTest.indexOf('-U') + 1]).toBe(databaseUrl.username);
    expect(pgTest[pgTest.indexOf('-d') + 1]).toBe(databaseUrl.pathname.slice(1));
    expect(environmentOf(postgres).POSTGRES_DB).toBe(databaseUrl.pathname.slice(1));
    expect(redis.healthcheck.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });
});

describe('the operator\'s guide', () => {
  it('documents `docker compose up` and every variable the compose file requires', () => {
    const guide = readFileSync(join(ROOT, OPERATING_GUIDE), 'utf8');
    expect(guide.includes('docker compose up'), `${OPERATING_GUIDE} mentions \`docker compose up\``).toBe(true);
    for (const name of requiredComposeVars(TEXT)) expect(guide, name).toContain(`\`${name}\``);
  });

  it('documents in the configuration table every variable a process reads', () => {
    const documented = documentedVars();
    const read = new Set([...Object.values(ENTRY_POINTS).flatMap((entry) => Object.keys(entry.spec)), ...DIRECT_VARS]);
    expect([...read].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });
});

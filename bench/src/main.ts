/**
 * `npm run bench`: starts the system (or uses a running one, BENCH_URL), runs every scenario side
 * by side with its baseline, and writes BENCHMARKS.md. Every load is bounded by BENCH_SECONDS and
 * the whole run by BENCH_DEADLINE_SECONDS. Loopback only.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { commonVars, loadConfig, vars } from '@collab/shared';
import type { Harness, Scenario } from './harness.js';
import { cpuProfileSummaries } from './profile.js';
import { machineInfo, renderReport, type Section } from './report.js';
import { append } from './scenarios/append.js';
import { batch } from './scenarios/batch.js';
import { cascade } from './scenarios/cascade.js';
import { fiveCalls } from './scenarios/five-calls.js';
import { importDump, IMPORT_TIMEOUT_SECONDS } from './scenarios/import.js';
import { linkPreviews } from './scenarios/link-previews.js';
import { MemorySampler } from './scenarios/memory.js';
import { scaleOut } from './scenarios/scale-out.js';
import { webhooks } from './scenarios/webhooks.js';
import { ROOT, startOwnSystem, useRunningSystem, type System } from './system.js';

const SCENARIOS: Scenario[] = [fiveCalls, batch, cascade, scaleOut, webhooks, linkPreviews, importDump, append];
/** Processes profiled with BENCH_CPU_PROF: the three the five calls go through. */
const PROFILED = ['gateway', 'identity', 'conversation'];

const config = loadConfig({
  BENCH_SECONDS: vars.integer('Length of one measurement, in seconds', 10),
  BENCH_CONNECTIONS: vars.integer('Concurrent connections of the message scenarios', 50),
  BENCH_DEADLINE_SECONDS: vars.integer(
    'The whole run stops (and fails) after this long; default 150 × BENCH_SECONDS + 300, plus BENCH_IMPORT_TIMEOUT_SECONDS when the import scenario runs',
    0,
  ),
  BENCH_SCENARIOS: vars.string(`Comma-separated subset of ${SCENARIOS.map((s) => s.key).join(', ')}`, ''),
  BENCH_OUTPUT: vars.string('Where the report goes', join(ROOT, 'BENCHMARKS.md')),
  BENCH_NOTE: vars.string('A line put at the top of the report (e.g. that it is a draft)', ''),
  BENCH_LOG_LEVEL: vars.string("LOG_LEVEL of the system's processes (theirs by default)", 'info'),
  BENCH_CPU_PROF: vars.string(`Directory for CPU profiles of ${PROFILED.join(' and ')} (node --cpu-prof); empty: none`, ''),
  BENCH_URL: vars.string('Gateway of a running system to measure instead of starting one', ''),
  BENCH_CUSTOMER_ID: vars.string('Customer of the running system (with BENCH_URL)', ''),
  BENCH_CUSTOMER_SECRET: vars.string('Its secret (with BENCH_URL)', ''),
  BENCH_INTERNAL_TOKEN: vars.string("The running system's INTERNAL_TOKEN, to measure its services directly (sections 1 and 2)", ''),
  BENCH_IDENTITY_URL: vars.string('Its identity service (with BENCH_INTERNAL_TOKEN)', ''),
  BENCH_CONVERSATION_URL: vars.string('Its conversation service (with BENCH_INTERNAL_TOKEN)', ''),
  BENCH_REDIS: vars.string('`cluster`: run the started system on a private Redis Cluster of three primaries (scripts/redis-cluster.mjs) instead of REDIS_URL', ''),
  BENCH_DATABASES: vars.string('`per-service`: give each service of the started system a database of its own (collab_bench_<service>)', ''),
  DATABASE_URL: commonVars.DATABASE_URL,
  REDIS_URL: commonVars.REDIS_URL,
});
if (!['', 'cluster'].includes(config.BENCH_REDIS)) throw new Error('BENCH_REDIS must be empty or cluster');
if (!['', 'per-service'].includes(config.BENCH_DATABASES)) throw new Error('BENCH_DATABASES must be empty or per-service');
if (config.BENCH_URL && (config.BENCH_REDIS || config.BENCH_DATABASES)) throw new Error('BENCH_REDIS and BENCH_DATABASES apply to the system the harness starts, not to BENCH_URL');

const log = (message: string) => console.log(`[bench] ${message}`);
const seconds = Math.max(1, config.BENCH_SECONDS);
const selected = config.BENCH_SCENARIOS ? config.BENCH_SCENARIOS.split(',').map((key) => key.trim()) : SCENARIOS.map((s) => s.key);
const unknown = selected.filter((key) => !SCENARIOS.some((s) => s.key === key));
if (unknown.length > 0) throw new Error(`Unknown scenario(s): ${unknown.join(', ')}`);
const cpuProfileDir = config.BENCH_CPU_PROF ? resolve(config.BENCH_CPU_PROF) : '';
if (cpuProfileDir) mkdirSync(cpuProfileDir, { recursive: true });

/** The private Redis Cluster of BENCH_REDIS=cluster, stopped after the system. */
let cluster = null as { url: string; stop(): Promise<void> } | null;
let redisUrl = config.REDIS_URL;

async function connect(): Promise<System> {
  if (!config.BENCH_URL) {
    if (config.BENCH_REDIS === 'cluster') {
      const starter = (await import(join(ROOT, 'scripts', 'redis-cluster.mjs'))) as { startRedisCluster(): Promise<{ url: string; stop(): Promise<void> }> };
      cluster = await starter.startRedisCluster();
      redisUrl = cluster.url;
      log(`started a Redis Cluster: ${redisUrl}`);
    }
    const perService = config.BENCH_DATABASES === 'per-service';
    // A database of this run's own, so that two runs on one machine never drop each other's data.
    const database = `collab_bench_${randomBytes(4).toString('hex')}`;
    log(`starting the system from the build (${perService ? `databases ${database}_<service>` : `database ${database}`})`);
    return startOwnSystem({
      postgresUrl: config.DATABASE_URL,
      database,
      databasePerService: perService,
      redisUrl,
      logLevel: config.BENCH_LOG_LEVEL,
      poolSize: config.BENCH_CONNECTIONS,
      cpuProfile: cpuProfileDir ? { dir: cpuProfileDir, processes: PROFILED } : null,
    });
  }
  if (!config.BENCH_CUSTOMER_ID || !config.BENCH_CUSTOMER_SECRET) throw new Error('BENCH_URL needs BENCH_CUSTOMER_ID and BENCH_CUSTOMER_SECRET');
  const direct = config.BENCH_INTERNAL_TOKEN && config.BENCH_IDENTITY_URL && config.BENCH_CONVERSATION_URL;
  log(`measuring the running system at ${config.BENCH_URL} (database ${config.DATABASE_URL})`);
  return useRunningSystem({
    url: config.BENCH_URL,
    customer: { id: config.BENCH_CUSTOMER_ID, secret: config.BENCH_CUSTOMER_SECRET },
    databaseUrl: config.DATABASE_URL,
    poolSize: config.BENCH_CONNECTIONS,
    direct: direct
      ? { identity: config.BENCH_IDENTITY_URL, conversation: config.BENCH_CONVERSATION_URL, internalToken: config.BENCH_INTERNAL_TOKEN }
      : null,
  });
}

const system = await connect();
// The import of a million messages alone can take as long as all the other scenarios together.
const deadlineSeconds = config.BENCH_DEADLINE_SECONDS || 150 * seconds + 300 + (selected.includes(importDump.key) ? IMPORT_TIMEOUT_SECONDS : 0);
const deadline = setTimeout(() => {
  console.error(`[bench] still running after ${deadlineSeconds} s: stopping`);
  void system.stop().finally(() => process.exit(1));
}, deadlineSeconds * 1000);

const memory = new MemorySampler(system.processes);
const harness: Harness = {
  system,
  seconds,
  warmupSeconds: Math.max(1, Math.round(seconds / 5)),
  connections: config.BENCH_CONNECTIONS,
  appendix: [],
  log,
};
const sections: Section[] = [];
let failed = false;
let machine: [string, string][];
try {
  // Idle memory: the processes as started, before any load.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  for (const scenario of SCENARIOS.filter((s) => selected.includes(s.key))) {
    log(`scenario ${scenario.key}`);
    memory.scenarioStarts(scenario.key);
    try {
      sections.push(...[await scenario.run(harness)].flat());
    } catch (error) {
      failed = true;
      console.error(`[bench] scenario ${scenario.key} failed:`, error);
      sections.push({ title: scenario.key, method: '', rows: [], notes: [`Failed: ${(error as Error).message}`] });
    }
  }
  memory.stop();
  // In the issue's order: memory is scenario 5, between the cascade and the scale-out.
  const scaleOutIndex = sections.findIndex((section) => section.title.startsWith('6.'));
  sections.splice(scaleOutIndex === -1 ? sections.length : scaleOutIndex, 0, memory.section());
  machine = await machineInfo(system.sql, config.BENCH_URL ? null : redisUrl);
} finally {
  memory.stop();
  // Profiles are written when the profiled processes exit.
  await system.stop();
  await cluster?.stop();
  clearTimeout(deadline);
}

const settings: [string, string][] = [
  ['System', config.BENCH_URL ? `running system at ${config.BENCH_URL}` : 'started by the harness from the build (every process as `npm start` runs it)'],
  ['BENCH_SECONDS', `${seconds} s per measurement, ${harness.warmupSeconds} s warm-up before each`],
  ['BENCH_CONNECTIONS', String(harness.connections)],
  ['LOG_LEVEL of the processes', config.BENCH_URL ? 'theirs' : config.BENCH_LOG_LEVEL],
  ...(config.BENCH_REDIS ? [['BENCH_REDIS', 'cluster: a Redis Cluster of three primaries on this machine']] as [string, string][] : []),
  ...(config.BENCH_DATABASES ? [['BENCH_DATABASES', 'per-service: each service in its own database on the same PostgreSQL']] as [string, string][] : []),
  ['Scenarios', selected.join(', ')],
];
writeFileSync(
  config.BENCH_OUTPUT,
  renderReport({
    note: config.BENCH_NOTE,
    date: new Date(),
    command: [
      `BENCH_SECONDS=${seconds}`,
      config.BENCH_REDIS && `BENCH_REDIS=${config.BENCH_REDIS}`,
      config.BENCH_DATABASES && `BENCH_DATABASES=${config.BENCH_DATABASES}`,
      'npm run bench',
    ]
      .filter(Boolean)
      .join(' '),
    settings,
    machine,
    sections,
    analysis: readFileSync(join(ROOT, 'bench', 'ANALYSIS.md'), 'utf8'),
    appendix: [...harness.appendix, ...(cpuProfileDir ? cpuProfileSummaries(cpuProfileDir, PROFILED) : [])],
  }),
);
log(`wrote ${config.BENCH_OUTPUT}${system.logDir ? `; process logs in ${system.logDir}` : ''}`);
process.exit(failed ? 1 : 0);

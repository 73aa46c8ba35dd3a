/**
 * Scenario 7, import: a synthetic dump of the original service (BENCH_IMPORT_MESSAGES messages in
 * BENCH_IMPORT_THREADS threads, shaped like the fixture's rows) sent to POST /v1/customer/imports
 * and timed until GET /v1/customer/imports/<importID> reports it completed, with the resident
 * memory and the CPU time of every process (and of PostgreSQL's backends) sampled meanwhile. The baseline is PostgreSQL's own COPY of the same
 * number of message rows into a scratch table: the floor of writing that much.
 */
import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, vars } from '@collab/shared';
import { hs512 } from '../api.js';
import type { Harness, Scenario } from '../harness.js';
import { fmt, type Section } from '../report.js';
import { residentBytes } from './memory.js';
import { writeSyntheticDump } from './synthetic-dump.js';

const SECONDS_TARGET_PER_MILLION = 120;
const MEMORY_TARGET_BYTES = 250 * 1024 * 1024;
const POLL_MS = 250;
const count = (value: number) => value.toLocaleString('en-US');

const config = loadConfig({
  BENCH_IMPORT_MESSAGES: vars.integer('Messages of the synthetic dump of the import scenario', 1_000_000),
  BENCH_IMPORT_THREADS: vars.integer('Threads of the synthetic dump of the import scenario', 10_000),
  BENCH_IMPORT_TIMEOUT_SECONDS: vars.integer('How long the import scenario waits for its import', 1800),
});

/** PostgreSQL's COPY of the same number of message-sized rows into a temporary table. */
async function copyBaseline(harness: Harness, messages: number): Promise<number> {
  const client = await harness.system.sql.connect();
  try {
    await client.query('CREATE TEMP TABLE bench_copy (id uuid, content jsonb, created_at timestamptz)');
    const started = Date.now();
    await client.query(
      `INSERT INTO bench_copy SELECT gen_random_uuid(), jsonb_build_array(jsonb_build_object('type', 'p', 'children', jsonb_build_array(jsonb_build_object('text', 'Message ' || i)))), now()
       FROM generate_series(1, $1) AS i`,
      [messages],
    );
    return (Date.now() - started) / 1000;
  } finally {
    await client.query('DROP TABLE IF EXISTS bench_copy').catch(() => undefined);
    client.release();
  }
}

/** CPU time (user + system, in clock ticks) a process has used so far, or null when it is gone. */
function cpuTicks(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** The PostgreSQL backends serving this database on this machine (none when the server is elsewhere). */
function backendsOf(database: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (command.startsWith('postgres:') && command.split(' ').includes(database)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/**
 * CPU each process and PostgreSQL spend from now on: on a machine shared with other work the
 * wall-clock figure says little alone, the CPU seconds say what the import costs. Sampled, so a
 * backend that ends between samples loses its last moments.
 */
function cpuMeter(processes: () => { name: string; pid: number }[], database: string) {
  const first = new Map<string, number>();
  const used = new Map<string, number>();
  const take = (key: string, ticks: number | null) => {
    if (ticks === null) return;
    if (!first.has(key)) first.set(key, ticks);
    used.set(key, ticks - first.get(key)!);
  };
  const sample = () => {
    for (const { name, pid } of processes()) take(name, cpuTicks(pid));
    for (const pid of backendsOf(database)) take(`postgres:${pid}`, cpuTicks(pid));
  };
  sample();
  return {
    sample,
    /** Seconds per process, PostgreSQL's backends summed, the largest first (clock ticks of 10 ms). */
    seconds(): [string, number][] {
      const totals = new Map<string, number>();
      for (const [key, ticks] of used) {
        const name = key.startsWith('postgres:') ? 'PostgreSQL' : key;
        totals.set(name, (totals.get(name) ?? 0) + ticks / 100);
      }
      return [...totals].sort((a, b) => b[1] - a[1]);
    },
  };
}

/** How long the scenario waits for its import; the run's deadline makes room for it. */
export const IMPORT_TIMEOUT_SECONDS = config.BENCH_IMPORT_TIMEOUT_SECONDS;

export const importDump: Scenario = {
  key: 'import',
  async run(harness: Harness): Promise<Section> {
    const { system, log } = harness;
    const shape = { messages: config.BENCH_IMPORT_MESSAGES, threads: config.BENCH_IMPORT_THREADS, users: 200, groups: 20 };
    const dir = await mkdtemp(join(tmpdir(), 'bench-import-'));
    try {
      const path = join(dir, 'dump.sql');
      log(`import: writing a synthetic dump of ${shape.messages} messages in ${shape.threads} threads`);
      const dump = await writeSyntheticDump(path, system.customer, shape);
      const token = hs512({ customer_id: system.customer.id }, system.customer.secret);
      const peaks = new Map<string, number>();
      const cpu = cpuMeter(() => system.processes(), new URL(system.databaseUrl).pathname.slice(1));
      const sample = () => {
        cpu.sample();
        for (const { name, pid } of system.processes()) {
          const bytes = residentBytes(pid);
          if (bytes !== null) peaks.set(name, Math.max(bytes, peaks.get(name) ?? 0));
        }
      };
      const sampler = setInterval(sample, POLL_MS);
      const started = Date.now();
      let seconds: number;
      try {
        const posted = await fetch(`${system.url}/v1/customer/imports`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
          body: createReadStream(path) as unknown as ReadableStream,
          duplex: 'half',
        } as RequestInit);
        const accepted = (await posted.json()) as { importID?: string };
        if (posted.status !== 202 || !accepted.importID) throw new Error(`the import was not accepted: ${posted.status} ${JSON.stringify(accepted)}`);
        const deadline = started + IMPORT_TIMEOUT_SECONDS * 1000;
        for (;;) {
          const status = (await (await fetch(`${system.url}/v1/customer/imports/${accepted.importID}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
            status: string;
            error: string | null;
          };
          if (status.status === 'completed') break;
          if (status.status === 'failed') throw new Error(`the import failed: ${status.error}`);
          if (Date.now() > deadline) throw new Error('the import did not complete in time');
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
        seconds = (Date.now() - started) / 1000;
      } finally {
        clearInterval(sampler);
        sample();
      }
      const baseline = await copyBaseline(harness, shape.messages);
      const target = (SECONDS_TARGET_PER_MILLION * shape.messages) / 1_000_000;
      const largest = [...peaks].sort((a, b) => b[1] - a[1]);
      return {
        title: '9. Import of a customer dump',
        method:
          `A synthetic dump of the original service (${count(shape.messages)} messages in ${count(shape.threads)} threads, ${shape.users} users, ` +
          `${shape.groups} groups; ${count(dump.rows)} rows, ${(dump.bytes / 1024 / 1024).toFixed(1)} MB) posted to POST /v1/customer/imports, ` +
          `timed until its status is completed; resident memory and CPU time of every process (PostgreSQL: its backends serving the system's database) sampled every ${POLL_MS} ms meanwhile. ` +
          `Baseline: one INSERT … SELECT of as many message-sized rows into a temporary table.`,
        rows: [
          {
            figure: 'Import, dump sent to completed',
            value: `${seconds.toFixed(1)} s`,
            baseline: `${baseline.toFixed(1)} s`,
            ratio: fmt.ratio(seconds / Math.max(baseline, 0.001)),
            target: `< ${target.toFixed(0)} s (2 min per million messages)`,
            met: seconds < target,
          },
          ...largest.map(([name, bytes]) => ({
            figure: `Peak memory, ${name}`,
            value: `${(bytes / 1024 / 1024).toFixed(0)} MB`,
            baseline: '',
            ratio: '',
            target: '< 250 MB',
            met: bytes < MEMORY_TARGET_BYTES,
          })),
          ...cpu
            .seconds()
            .filter(([, used]) => used >= 0.5)
            .map(([name, used]) => ({ figure: `CPU during the import, ${name}`, value: `${used.toFixed(1)} s`, baseline: '', ratio: '', target: '—', met: null })),
        ],
        notes: shape.messages < 1_000_000 ? [`Run at a reduced size (BENCH_IMPORT_MESSAGES=${shape.messages}); the target scales with the message count.`] : [],
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};

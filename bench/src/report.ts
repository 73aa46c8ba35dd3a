/**
 * BENCHMARKS.md: the machine, the date, the command, then per scenario a table of figure,
 * baseline, ratio, target and whether it is met, followed by the notes that explain the figures.
 */
import { execFileSync } from 'node:child_process';
import { cpus, release, totalmem, type } from 'node:os';
import { createRedis } from '@collab/shared';
import type pg from 'pg';

export interface Row {
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  /** null: no target, or nothing to compare. */
  met: boolean | null;
}

export interface Section {
  title: string;
  /** What was measured and how (load, concurrency, baseline). */
  method: string;
  rows: Row[];
  notes: string[];
}

/** Number formatting shared by every scenario. */
export const fmt = {
  rps: (value: number) => `${value.toFixed(0)} req/s`,
  ms: (value: number) => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 2 : 0)} ms` : 'n/a'),
  s: (value: number) => `${value.toFixed(2)} s`,
  mb: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`,
  ratio: (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a'),
  percent: (value: number) => `${(value * 100).toFixed(0)} %`,
};

function firstLine(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8' }).split('\n')[0].trim();
  } catch {
    return 'unknown';
  }
}

export async function machineInfo(sql: pg.Pool, redisUrl: string | null): Promise<[string, string][]> {
  const postgres = (await sql.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  let redis = 'not measured (running system)';
  if (redisUrl) {
    const client = createRedis(redisUrl);
    try {
      redis = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown';
    } finally {
      client.disconnect();
    }
  }
  const cpu = cpus();
  return [
    ['OS', `${type()} ${release()} (${firstLine('uname', ['-m'])})`],
    ['CPU', `${cpu[0]?.model ?? 'unknown'}`],
    ['Cores', String(cpu.length)],
    ['Memory', `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`],
    ['Node', process.version],
    ['PostgreSQL', postgres],
    ['Redis', redis],
  ];
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
const verdict = (met: boolean | null) => (met === null ? '—' : met ? 'yes' : '**no**');

export function renderReport(report: {
  note: string;
  date: Date;
  command: string;
  settings: [string, string][];
  machine: [string, string][];
  sections: Section[];
  /** Hand-written reading of the gaps (bench/ANALYSIS.md), placed after the figures. */
  analysis: string;
  appendix: string[];
}): string {
  const lines: string[] = ['# Benchmarks', ''];
  if (report.note) lines.push(`> ${report.note}`, '');
  lines.push(
    `Written by \`${report.command}\` on ${report.date.toISOString()}. Every figure and its baseline come from this one run;`,
    'no test asserts any of them. Regenerate with `npm run bench` (see bench/src/main.ts for the settings).',
    '',
    '| Machine | |',
    '|---|---|',
    ...report.machine.map(([key, value]) => `| ${key} | ${cell(value)} |`),
    '',
    '| Setting | |',
    '|---|---|',
    ...report.settings.map(([key, value]) => `| ${key} | ${cell(value)} |`),
    '',
  );
  const rows = report.sections.flatMap((section) => section.rows.filter((row) => row.met !== null).map((row) => ({ section, row })));
  const unmet = rows.filter(({ row }) => row.met === false);
  lines.push(
    `**Targets met: ${rows.length - unmet.length} of ${rows.length}.**` +
      (unmet.length > 0 ? ` Not met: ${unmet.map(({ section, row }) => `${section.title}: ${row.figure}`).join('; ')}.` : ''),
    '',
  );
  for (const section of report.sections) {
    lines.push(`## ${section.title}`, '', section.method, '');
    if (section.rows.length > 0)
      lines.push(
        '| Figure | Value | Baseline | Ratio | Target | Met? |',
        '|---|---|---|---|---|---|',
        ...section.rows.map((row) =>
          `| ${[row.figure, row.value, row.baseline, row.ratio, row.target].map(cell).join(' | ')} | ${verdict(row.met)} |`,
        ),
        '',
      );
    for (const note of section.notes) lines.push(`- ${note}`);
    if (section.notes.length > 0) lines.push('');
  }
  if (report.analysis) lines.push(report.analysis.trim(), '');
  lines.push(...report.appendix);
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * What explains the figures: query plans (EXPLAIN ANALYZE, writes rolled back) and summaries of
 * the CPU profiles that `node --cpu-prof` wrote for the processes named in BENCH_CPU_PROF.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';

/** The plan of one statement as report lines; a write is executed and rolled back. */
export async function explain(sql: pg.Pool, title: string, statement: string, params: unknown[]): Promise<string[]> {
  const client = await sql.connect();
  try {
    await client.query('BEGIN');
    const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement}`, params);
    return [`### ${title}`, '', '```', ...plan.rows.map((row) => row['QUERY PLAN']), '```', ''];
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** The package (or our own code) a frame belongs to; null for node internals and V8's pseudo-frames. */
function packageOf(url: string): string | null {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  if (url.includes('/shared/dist/')) return 'shared';
  if (url.includes('/services/')) return 'service code';
  return null;
}

/**
 * Where the busy time (idle excluded) went: per package including what it calls (so `jose` counts
 * the WebCrypto work it starts), and per function by self time.
 */
function summarize(file: string, top: number): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[] };
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, hits: number) => map.set(key, (map.get(key) ?? 0) + hits);
  let busy = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (hits === 0 || functionName === '(idle)') continue;
    busy += hits;
    const packages = new Set<string>();
    for (let frame: ProfileNode | undefined = node; frame; frame = parent.get(frame.id)) {
      const pkg = packageOf(frame.callFrame.url);
      if (pkg) packages.add(pkg);
    }
    if (packages.size === 0) packages.add(url ? 'node internals only' : functionName);
    for (const pkg of packages) add(byPackage, pkg, hits);
    const place = url ? `${url.replace(/^.*\/(node_modules|shared|services)\//, '$1/')}:${lineNumber + 1}` : '';
    add(byFunction, `${functionName || '(anonymous)'} ${place}`.trim(), hits);
  }
  const lines = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, hits]) => `| ${((hits / busy) * 100).toFixed(1)} % | ${key.replaceAll('|', '\\|')} |`);
  return [
    '| Busy time in or under | Package |',
    '|---|---|',
    ...lines(byPackage),
    '',
    '| Busy time (self) | Function |',
    '|---|---|',
    ...lines(byFunction),
    '',
  ];
}

export function cpuProfileSummaries(dir: string, processes: readonly string[]): string[] {
  const out = ['## CPU profiles', '', `\`node --cpu-prof\` over the whole run (setup, warm-up and every scenario), as shares of the busy (non-idle) time; profiles in \`${dir}\`.`, ''];
  for (const name of processes) {
    const file = join(dir, `${name}.cpuprofile`);
    out.push(`### ${name}`, '', ...(existsSync(file) ? summarize(file, 15) : ['No profile was written (the process did not exit cleanly).', '']));
  }
  return out;
}

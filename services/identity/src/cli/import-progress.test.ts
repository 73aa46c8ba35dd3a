/** What `npm run import` prints: the terminal's bar and the plain lines carry counts and rate. */
import { describe, expect, it } from 'vitest';
import type { ImportView } from '../domain/import/imports.js';
import { progressLine, summary } from './import-progress.js';

const view = (fraction: number): ImportView => ({
  importID: '5d0e0caf-7ab6-49c6-a021-cf7ee84a4cba',
  status: 'active',
  progress: { bytesRead: Math.round(fraction * 10 * 1024 * 1024), dumpBytes: 10 * 1024 * 1024, fraction },
  counts: { users: { imported: 900, existing: 100 }, messages: { imported: 2000, existing: 0 } },
  skipped: [{ table: 'tasks', rows: 3, reason: 'tasks (the original task feature) are not held by this server' }],
  conflicts: [{ entity: 'user', id: 'amelia.hart', applicationID: '873dca67-39f3-44e2-ab7d-9f85b2c752d5', reason: 'the user exists here with other data' }],
  error: null,
  createdTimestamp: '2026-11-24T21:30:32.869Z',
  startedTimestamp: '2026-11-24T21:30:32.910Z',
  finishedTimestamp: null,
});

describe('import progress', () => {
  it('draws a bar on a terminal, with share read, rows per entity and rate', () => {
    expect(progressLine(view(0.5), 2, { bar: true, width: 10 })).toBe(
      '[#####-----]  50% 5.0 MB/10.0 MB  3,000 rows, 1,500 rows/s  (users 1,000, messages 2,000)',
    );
  });

  it('prints the same without the bar elsewhere', () => {
    expect(progressLine(view(1), 3, { bar: false })).toBe('100% 10.0 MB/10.0 MB  3,000 rows, 1,000 rows/s  (users 1,000, messages 2,000)');
  });

  it('sums up new and existing rows per entity, skipped tables with their reason, and conflicts', () => {
    const text = summary({ ...view(1), status: 'completed' }, 4.25);
    expect(text.split('\n')).toEqual([
      'Import 5d0e0caf-7ab6-49c6-a021-cf7ee84a4cba: completed in 4.3 s',
      'Imported (new / already there):',
      '  messages            2,000 / 0',
      '  users                 900 / 100',
      'Skipped:',
      '  tasks                           3 rows: tasks (the original task feature) are not held by this server',
      'Conflicts (kept as they are here; run again with --overwrite to replace them):',
      '  user amelia.hart (application 873dca67-39f3-44e2-ab7d-9f85b2c752d5): the user exists here with other data',
    ]);
  });
});

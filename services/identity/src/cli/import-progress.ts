/** How `npm run import` shows an import: a progress bar on a terminal, plain lines otherwise, and the final summary. */
import type { ImportView } from '../domain/import/imports.js';

const number = (value: number) => value.toLocaleString('en-US');
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export function rowsOf(view: ImportView): number {
  return Object.values(view.counts).reduce((sum, count) => sum + count.imported + count.existing, 0);
}

/** One progress line: bar (on a terminal), share of the dump read, rows so far per entity and rate. */
export function progressLine(view: ImportView, elapsedSeconds: number, options: { bar: boolean; width?: number }): string {
  const rows = rowsOf(view);
  const rate = elapsedSeconds > 0 ? Math.round(rows / elapsedSeconds) : 0;
  const percent = Math.floor(view.progress.fraction * 100);
  const width = options.width ?? 30;
  const filled = Math.round(view.progress.fraction * width);
  const bar = options.bar ? `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ` : '';
  const entities = Object.entries(view.counts)
    .map(([entity, count]) => `${entity} ${number(count.imported + count.existing)}`)
    .join(', ');
  return `${bar}${String(percent).padStart(3)}% ${megabytes(view.progress.bytesRead)}/${megabytes(view.progress.dumpBytes)}  ${number(rows)} rows, ${number(rate)} rows/s${entities ? `  (${entities})` : ''}`;
}

/** The final report: what was imported (new / already there), what was skipped and why, conflicts, the outcome. */
export function summary(view: ImportView, elapsedSeconds: number): string {
  const lines = [`Import ${view.importID}: ${view.status} in ${elapsedSeconds.toFixed(1)} s`];
  if (view.error) lines.push(`  error: ${view.error}`);
  lines.push('Imported (new / already there):');
  for (const [entity, count] of Object.entries(view.counts).sort(([a], [b]) => a.localeCompare(b)))
    lines.push(`  ${entity.padEnd(14)} ${number(count.imported).padStart(10)} / ${number(count.existing)}`);
  if (view.skipped.length > 0) {
    lines.push('Skipped:');
    for (const skipped of view.skipped) lines.push(`  ${skipped.table.padEnd(24)} ${number(skipped.rows).padStart(8)} rows: ${skipped.reason}`);
  }
  if (view.conflicts.length > 0) {
    lines.push('Conflicts (kept as they are here; run again with --overwrite to replace them):');
    for (const conflict of view.conflicts)
      lines.push(`  ${conflict.entity} ${conflict.id}${conflict.applicationID ? ` (application ${conflict.applicationID})` : ''}: ${conflict.reason}`);
  }
  return lines.join('\n');
}

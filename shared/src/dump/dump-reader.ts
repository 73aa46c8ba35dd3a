/**
 * Reads a customer dump (a psql script of `COPY … FROM stdin;` blocks, as the original service's
 * `GET /v1/customer/dbdump` streams it) line by line, so that memory stays bounded whatever its
 * size: one row at a time, never the whole table.
 *
 * A dump whose stream broke still ends with HTTP 200: the original appended a `-- <error>` comment
 * and stopped. Only a final `COMMIT;` says the dump is whole, so `checkDumpComplete` must accept a
 * dump before anything of it is written.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { parseCopyLine } from './copy-text.js';

export type DumpEvent =
  | { kind: 'table'; table: string; columns: string[] }
  | { kind: 'row'; table: string; row: Record<string, string | null> }
  | { kind: 'end'; table: string; rows: number };

export class DumpFormatError extends Error {
  constructor(message: string, readonly line: number) {
    super(`line ${line}: ${message}`);
    this.name = 'DumpFormatError';
  }
}

const COPY_LINE = /^COPY "(?:tmp_)?([^"]+)" \(([^)]*)\) FROM stdin;$/;

function columnsOf(list: string, lineNumber: number): string[] {
  return list.split(',').map((column) => {
    const match = /^\s*"([^"]+)"\s*$/.exec(column);
    if (!match) throw new DumpFormatError(`unexpected column list entry ${column}`, lineNumber);
    return match[1];
  });
}

/** The lines of a stream, without their line ends. */
export function linesOf(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Infinity });
}

/**
 * The tables and rows of a dump, in dump order. Statements outside COPY blocks (SET, BEGIN, the
 * INSERT … SELECT from the temporary tables, the dangling-key UPDATEs, comments) carry no data
 * and are passed over. `tables`, when given, limits the rows yielded to those tables (the others'
 * lines are still read, but not split).
 */
export async function* readDump(lines: AsyncIterable<string>, tables?: ReadonlySet<string>): AsyncGenerator<DumpEvent> {
  let lineNumber = 0;
  let current: { table: string; columns: string[]; rows: number; wanted: boolean } | null = null;
  for await (const line of lines) {
    lineNumber++;
    if (current) {
      if (line === '\\.') {
        yield { kind: 'end', table: current.table, rows: current.rows };
        current = null;
        continue;
      }
      current.rows++;
      if (!current.wanted) continue;
      const values = parseCopyLine(line);
      if (values.length !== current.columns.length)
        throw new DumpFormatError(`${current.table}: ${values.length} fields for ${current.columns.length} columns`, lineNumber);
      const row: Record<string, string | null> = {};
      current.columns.forEach((column, index) => (row[column] = values[index]));
      yield { kind: 'row', table: current.table, row };
      continue;
    }
    if (!line.startsWith('COPY ')) continue;
    const match = COPY_LINE.exec(line);
    if (!match) throw new DumpFormatError('unreadable COPY statement', lineNumber);
    const [, table, list] = match;
    current = { table, columns: columnsOf(list, lineNumber), rows: 0, wanted: !tables || tables.has(table) };
    yield { kind: 'table', table, columns: current.columns };
  }
  if (current) throw new DumpFormatError(`the dump ends inside the data of ${current.table}`, lineNumber);
}

export class IncompleteDumpError extends Error {
  constructor(reason: string) {
    super(`The dump is incomplete: ${reason}. Take the dump again; nothing was imported.`);
    this.name = 'IncompleteDumpError';
  }
}

/**
 * Follows the lines of a dump and tells at the end whether it is whole: its last statement is
 * `COMMIT;` and no COPY block is left open. Feed every line to `line`, then call `finish`, which
 * throws IncompleteDumpError otherwise. Keeps only the last non-blank line, so any size goes.
 */
export function dumpCompleteness() {
  let last = '';
  let inCopy = false;
  let sawBegin = false;
  return {
    line(line: string) {
      if (inCopy) {
        if (line === '\\.') inCopy = false;
        return;
      }
      if (line.startsWith('COPY ')) inCopy = true;
      if (line === 'BEGIN;') sawBegin = true;
      if (line.trim() !== '') last = line.trim();
    },
    finish() {
      if (!sawBegin) throw new IncompleteDumpError('it is not a customer dump (no BEGIN;)');
      if (inCopy) throw new IncompleteDumpError('it ends inside a COPY block');
      if (last !== 'COMMIT;') throw new IncompleteDumpError(last.startsWith('--') ? `it ends with "${last.slice(0, 200)}" instead of COMMIT;` : 'it does not end with COMMIT;');
    },
  };
}

/** Reads a whole dump and throws IncompleteDumpError unless it ends with COMMIT; (see dumpCompleteness). */
export async function checkDumpComplete(lines: AsyncIterable<string>): Promise<void> {
  const check = dumpCompleteness();
  for await (const line of lines) check.line(line);
  check.finish();
}

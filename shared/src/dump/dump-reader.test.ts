/**
 * The customer-dump reader: COPY text fields decode as PostgreSQL wrote them, rows come out one by
 * one in dump order, and a dump that does not end with COMMIT; is refused.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCopyField, encodeCopyField, formatTextArray, formatTimestamp, parseCopyLine, parseTextArray, parseTimestamp } from './copy-text.js';
import { checkDumpComplete, IncompleteDumpError, linesOf, readDump, type DumpEvent } from './dump-reader.js';

const FIXTURE = new URL('../../../../shared/fixtures/cord-dump/customer-dump.sql', import.meta.url);

async function collect(text: string): Promise<DumpEvent[]> {
  const events: DumpEvent[] = [];
  for await (const event of readDump(linesOf(Readable.from([text])))) events.push(event);
  return events;
}

const dump = (...body: string[]) => ['SET search_path = cord, public;', '', 'BEGIN;', '', ...body, '', 'COMMIT;', ''].join('\n');

describe('COPY text fields', () => {
  it('decodes \\N as null and backslash escapes as the characters they stand for', () => {
    expect(parseCopyLine('a\t\\N\tline\\nbreak\ttab\\there\tback\\\\slash')).toEqual(['a', null, 'line\nbreak', 'tab\there', 'back\\slash']);
    expect(decodeCopyField('\\r\\b\\f\\v')).toEqual('\r\b\f\v');
  });

  it('decodes octal and hex escapes as UTF-8 bytes', () => {
    expect(decodeCopyField('caf\\303\\251')).toBe('café');
    expect(decodeCopyField('\\xf0\\x9f\\x91\\x8d')).toBe('👍');
  });

  it('keeps a JSON escape that COPY doubled as the JSON escape', () => {
    // jsonb text "a\nb" (JSON escape) is written \\n in the dump.
    const json = decodeCopyField('{"text": "line\\\\nnext"}');
    expect(JSON.parse(json)).toEqual({ text: 'line\nnext' });
  });

  it('round-trips any string through encode and decode', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (value) => {
      expect(decodeCopyField(encodeCopyField(value))).toBe(value);
    }));
    fc.assert(fc.property(fc.string(), (value) => {
      expect(parseCopyLine(encodeCopyField(value))).toEqual([value]);
    }));
  });

  it('reads text arrays, quoted elements and NULL', () => {
    expect(parseTextArray('{thread-message-added}')).toEqual(['thread-message-added']);
    expect(parseTextArray('{mention,create-thread}')).toEqual(['mention', 'create-thread']);
    expect(parseTextArray('{}')).toEqual([]);
    expect(parseTextArray('{"a b","x\\"y",NULL}')).toEqual(['a b', 'x"y', null]);
    expect(parseTextArray(null)).toBeNull();
    fc.assert(fc.property(fc.array(fc.string()), (items) => {
      expect(parseTextArray(formatTextArray(items))).toEqual(items);
    }));
  });

  it('reads timestamps with any offset and fraction, to the millisecond', () => {
    expect(parseTimestamp('2026-11-24 17:17:36.39536+00')?.toISOString()).toBe('2026-11-24T17:17:36.395Z');
    expect(parseTimestamp('2024-06-03 10:00:00+02')?.toISOString()).toBe('2024-06-03T08:00:00.000Z');
    expect(parseTimestamp('2024-06-03 10:00:00.5-05:30')?.toISOString()).toBe('2024-06-03T15:30:00.500Z');
    expect(formatTimestamp(new Date('2026-11-24T17:17:36.395Z'))).toBe('2026-11-24 17:17:36.395+00');
    expect(() => parseTimestamp('yesterday')).toThrow('not a timestamp');
  });
});

describe('reading a dump', () => {
  it('yields each table, its rows by column name, and its end', async () => {
    const events = await collect(
      dump('COPY "tmp_users" ("id", "name", "metadata") FROM stdin;', 'u1\tAmelia\t{"a": 1}', 'u2\t\\N\t{}', '\\.', '', 'COPY "tmp_tasks" ("id") FROM stdin;', '\\.'),
    );
    expect(events).toEqual([
      { kind: 'table', table: 'users', columns: ['id', 'name', 'metadata'] },
      { kind: 'row', table: 'users', row: { id: 'u1', name: 'Amelia', metadata: '{"a": 1}' } },
      { kind: 'row', table: 'users', row: { id: 'u2', name: null, metadata: '{}' } },
      { kind: 'end', table: 'users', rows: 2 },
      { kind: 'table', table: 'tasks', columns: ['id'] },
      { kind: 'end', table: 'tasks', rows: 0 },
    ]);
  });

  it('refuses a row whose field count is not the column count', async () => {
    await expect(collect(dump('COPY "tmp_users" ("id", "name") FROM stdin;', 'u1', '\\.'))).rejects.toThrow('1 fields for 2 columns');
  });

  it('reads the original service\'s fixture dump: every table and row count', async () => {
    const counts: Record<string, number> = {};
    for await (const event of readDump(linesOf(createReadStream(FIXTURE)))) if (event.kind === 'end') counts[event.table] = event.rows;
    expect(Object.keys(counts)).toHaveLength(36);
    expect(counts).toMatchObject({ customers: 1, applications: 2, users: 28, orgs: 7, threads: 12, messages: 46, message_mentions: 11, message_reactions: 11, notifications: 67, org_members: 39, pages: 12, thread_participants: 33, application_webhooks: 1, user_preferences: 1, message_notifications: 54 });
    await checkDumpComplete(linesOf(createReadStream(FIXTURE)));
  });
});

describe('an incomplete dump', () => {
  it('is refused when it stops inside a COPY block', async () => {
    const truncated = ['BEGIN;', 'COPY "tmp_users" ("id") FROM stdin;', 'u1'].join('\n');
    await expect(checkDumpComplete(linesOf(Readable.from([truncated])))).rejects.toThrow(IncompleteDumpError);
    await expect(collect(truncated)).rejects.toThrow('ends inside the data of users');
  });

  it('is refused when the server appended its error comment instead of COMMIT;', async () => {
    const broken = ['BEGIN;', 'COPY "tmp_users" ("id") FROM stdin;', 'u1', '\\.', '', '-- canceling statement due to statement timeout', ''].join('\n');
    await expect(checkDumpComplete(linesOf(Readable.from([broken])))).rejects.toThrow('instead of COMMIT;');
  });

  it('is refused when the fixture is cut anywhere before its last line', async () => {
    const { readFile } = await import('node:fs/promises');
    const whole = await readFile(FIXTURE, 'utf8');
    for (const cut of [100, 5000, 150_000, whole.lastIndexOf('COMMIT;')])
      await expect(checkDumpComplete(linesOf(Readable.from([whole.slice(0, cut)])))).rejects.toThrow(IncompleteDumpError);
  });

  it('is refused when it is not a dump at all', async () => {
    await expect(checkDumpComplete(linesOf(Readable.from(['hello\n'])))).rejects.toThrow('not a customer dump');
  });
});

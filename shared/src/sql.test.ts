/** Purge pacing, and the row helpers a table's column map gives. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EntitySchema } from 'typeorm';
import { drainBatches, entityColumns, purgePace, sqlTable } from './sql.js';

describe('drainBatches with purgePace', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('pauses after each batch until the pace allows the rows removed so far', async () => {
    const batches = [500, 500, 200, 0];
    let steps = 0;
    const draining = drainBatches(async () => batches[steps++], purgePace(1000));
    let total: number | undefined;
    void draining.then((value) => (total = value));

    // 500 rows at 1000 rows/s: the second batch waits until half a second has passed.
    await vi.advanceTimersByTimeAsync(0);
    expect(steps).toBe(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(steps).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(steps).toBe(2);
    // 1000 rows: the third at one second.
    await vi.advanceTimersByTimeAsync(499);
    expect(steps).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(steps).toBe(3);
    // 1200 rows: the last (empty) batch at 1.2 s, and the total.
    await vi.advanceTimersByTimeAsync(200);
    expect(steps).toBe(4);
    expect(total).toBe(1200);
  });

  it('never pauses at a pace of 0', async () => {
    const batches = [1000, 1000, 0];
    let steps = 0;
    const total = await drainBatches(async () => batches[steps++], purgePace(0));
    expect({ steps, total }).toEqual({ steps: 3, total: 2000 });
  });
});

describe('a table from its entity', () => {
  interface Row {
    id: string;
    shortName: string | null;
    metadata: Record<string, string>;
    tags: string[];
  }
  const entity = new EntitySchema<Row>({
    name: 'Thing',
    tableName: 'things',
    columns: {
      id: { type: 'uuid', primary: true },
      shortName: { name: 'short_name', type: 'text', nullable: true },
      metadata: { type: 'jsonb' },
      tags: { type: 'text', array: true },
    },
  });
  const things = sqlTable('app.things', 't', entityColumns(entity));

  it('selects every column as its field', () => {
    expect(things.select).toBe('t.id, t.short_name AS "shortName", t.metadata, t.tags');
  });

  it('picks only the fields named, in that order', () => {
    expect(things.pick('tags', 'shortName')).toBe('t.tags, t.short_name AS "shortName"');
  });

  it('reads one field as text, under its own name or the one given', () => {
    expect(things.text('metadata')).toBe('t.metadata::text AS "metadata"');
    expect(things.text('shortName', 'short')).toBe('t.short_name::text AS "short"');
  });

  it('writes the fields given, after the parameters already there, as typed placeholders', () => {
    const params: unknown[] = ['first'];
    const written = things.write({ shortName: null, metadata: { a: 'b' }, id: undefined, tags: ['x'] }, params);
    expect(written).toEqual({
      columns: ['short_name', 'metadata', 'tags'],
      placeholders: ['$2::text', '$3::jsonb', '$4::text[]'],
      set: 'short_name = $2::text, metadata = $3::jsonb, tags = $4::text[]',
    });
    expect(params).toEqual(['first', null, '{"a":"b"}', ['x']]);
  });

  it("writes in the column map's order, whatever the order the fields are given in", () => {
    expect(things.write({ tags: [], shortName: 'a' }, []).columns).toEqual(['short_name', 'tags']);
  });

  it('refuses a field outside the column map instead of writing it as a column name', () => {
    expect(() => things.write({ ['name; DROP TABLE x' as 'id']: 'v' }, [])).toThrow('app.things has no column for the field name; DROP TABLE x');
    expect(() => things.write({ ['constructor' as 'id']: 'v' }, [])).toThrow('no column');
  });
});

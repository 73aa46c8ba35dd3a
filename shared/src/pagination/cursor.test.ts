/**
 * The pagination cursor codec: every cursor the server issues decodes back to itself, and any
 * string at all either decodes to a cursor whose every field is a value PostgreSQL takes (checked
 * here by rules independent of the codec's) or is `400 invalid_field` — never another error.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/support/error-of.js';
import { ApiError } from '../errors.js';
import { cursorField, defineCursor, type CursorCodec, type CursorField, type CursorShape } from './cursor.js';
import { pageCursors } from './cursors.js';

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const CODECS = Object.entries(pageCursors) as [string, CursorCodec<CursorShape>][];

function expectInvalidToken(fn: () => unknown): void {
  const error = errorOf(fn);
  expect({ code: error.code, status: error.status, message: error.message }).toEqual({
    code: 'invalid_field',
    status: 400,
    message: 'Pagination token is not valid',
  });
}

// ---------------------------------------------------------------------------------------------
// Values of each field kind, as the server issues them.

const textValue = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((value) => cursorField.text(value));
/** Any instant from year 1 to 9999, with 0 to 6 fraction digits, as `to_char` writes it. */
const timestampValue = fc
  .record({
    date: fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
    micros: fc.integer({ min: 0, max: 999_999 }),
    digits: fc.integer({ min: 0, max: 6 }),
  })
  .map(({ date, micros, digits }) => {
    const fraction = digits === 0 ? '' : `.${String(micros).padStart(6, '0').slice(0, digits)}`;
    return `${date.toISOString().slice(0, 19).replace('T', ' ')}${fraction}`;
  });
const bigintIdValue = fc.stringMatching(/^\d{1,18}$/);

const VALUES = new Map<CursorField, fc.Arbitrary<string>>([
  [cursorField.text, textValue],
  [cursorField.timestamp, timestampValue],
  [cursorField.bigintId, bigintIdValue],
  [cursorField.uuid, fc.uuid()],
]);

function cursors(codec: CursorCodec<CursorShape>): fc.Arbitrary<Record<string, string>> {
  return fc.record(Object.fromEntries(Object.entries(codec.shape).map(([key, kind]) => [key, VALUES.get(kind)!])));
}

// ---------------------------------------------------------------------------------------------
// What PostgreSQL takes, decided without the codec's own checks.

const BIGINT_MAX = 2n ** 63n - 1n;
const ACCEPTABLE = new Map<CursorField, (value: string) => boolean>([
  // `text` comparisons: UTF-8 without NUL; a lone surrogate does not survive a UTF-8 round trip.
  [cursorField.text, (value) => value !== '' && !value.includes('\u0000') && Buffer.from(value, 'utf8').toString('utf8') === value],
  // A real instant from year 1: the engine's own date arithmetic gives the same fields back.
  [
    cursorField.timestamp,
    (value) => {
      if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?$/.test(value) || value.startsWith('0000')) return false;
      const iso = `${value.slice(0, 19).replace(' ', 'T')}`;
      const date = new Date(`${iso}Z`);
      return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 19) === iso;
    },
  ],
  [cursorField.bigintId, (value) => /^\d+$/.test(value) && BigInt(value) <= BIGINT_MAX],
  // `uuid`: 32 hexadecimal digits in the 8-4-4-4-12 form (either case).
  [cursorField.uuid, (value) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)],
]);

// ---------------------------------------------------------------------------------------------
// Strings a client may send.

const IMPOSSIBLE_TIMESTAMPS = [
  '2024-13-45 99:99:99', '2023-02-29 00:00:00', '2024-04-31 12:00:00', '2024-01-01 24:00:00', '2024-01-01 23:59:60',
  '2024-01-01 23:60:00', '0000-01-01 00:00:00', '2024-00-10 00:00:00', '2024-01-00 00:00:00', '2024-01-01 00:00:00.1234567',
  '2024-01-01T00:00:00', '2024-01-01 00:00:00Z', '+2024-01-01 00:00:00', '99999-01-01 00:00:00', ' 2024-01-01 00:00:00',
];
const fieldNoise: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(...IMPOSSIBLE_TIMESTAMPS),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000', '\uD800', 'x\uDFFF', '9'.repeat(19), '9223372036854775808', '-1', '1.5', '1e3', '０１'),
  fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
  fc.constantFrom(null, true, 0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2, [], {}),
  timestampValue,
  textValue,
);

function tokens(codec: CursorCodec<CursorShape>): fc.Arbitrary<string> {
  const keys = Object.keys(codec.shape);
  const issued = cursors(codec).map((cursor) => codec.encode(cursor));
  return fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.base64String(),
    fc.jsonValue().map((value) => base64(JSON.stringify(value))),
    // The right keys, some replaced, removed or added.
    fc
      .tuple(cursors(codec), fc.dictionary(fc.constantFrom(...keys, 'extra', '__proto__'), fieldNoise), fc.subarray(keys))
      .map(([cursor, replaced, removed]) => {
        const json: Record<string, unknown> = { ...cursor, ...replaced };
        for (const key of removed) delete json[key];
        return base64(JSON.stringify(json));
      }),
    // An issued token with one character changed, cut short, or with `+` sent as a space.
    fc.tuple(issued, fc.nat(), fc.string({ unit: 'binary', maxLength: 1 })).map(([token, at, char]) => {
      const index = at % token.length;
      return `${token.slice(0, index)}${char}${token.slice(index + 1)}`;
    }),
    fc.tuple(issued, fc.nat()).map(([token, cut]) => token.slice(0, cut % token.length)),
    issued.map((token) => token.replaceAll('+', ' ')),
  );
}

describe('cursor codec', () => {
  it.each(CODECS)('%s: decode(encode(cursor)) is the cursor, also with "+" read from a space', (_name, codec) => {
    fc.assert(
      fc.property(cursors(codec), (cursor) => {
        const token = codec.encode(cursor);
        expect(codec.decode(token)).toEqual(cursor);
        expect(codec.decode(token.replaceAll('+', ' '))).toEqual(cursor);
      }),
      { numRuns: 300 },
    );
  });

  it.each(CODECS)('%s: any string decodes to a cursor PostgreSQL takes, or is 400 invalid_field', (_name, codec) => {
    fc.assert(
      fc.property(tokens(codec), (token) => {
        let cursor: Record<string, string>;
        try {
          cursor = codec.decode(token);
        } catch (error) {
          expect(error).toBeInstanceOf(ApiError);
          expect({ code: (error as ApiError).code, status: (error as ApiError).status }).toEqual({ code: 'invalid_field', status: 400 });
          return;
        }
        expect(Object.keys(cursor)).toEqual(Object.keys(codec.shape));
        for (const [key, kind] of Object.entries(codec.shape)) expect(ACCEPTABLE.get(kind)!(cursor[key]), `${key}: ${cursor[key]}`).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('writes the JSON the reference mints: its keys, in its order, standard base64', () => {
    const token = pageCursors.threads.encode({ nextCursorTimestamp: '2024-01-02 03:04:05.123456', externalID: 'thread>>?' });
    expect(Buffer.from(token, 'base64').toString('utf8')).toBe('{"externalID":"thread>>?","nextCursorTimestamp":"2024-01-02 03:04:05.123456"}');
    expect(token).toMatch(/[+/]/);
    expect(pageCursors.groupMembers.encode({ externalID: 'u', userID: '42' })).toBe(base64('{"userID":"42","externalID":"u"}'));
  });

  it('reads tokens the reference minted, ignoring keys it does not use', () => {
    expect(pageCursors.users.decode(base64('{"externalID":"bob","extra":1}'))).toEqual({ externalID: 'bob' });
    expect(pageCursors.messages.decode(base64('{"externalID":"m","createdAtWithMicros":"2024-02-29 23:59:59.999999"}'))).toEqual({
      externalID: 'm',
      createdAtWithMicros: '2024-02-29 23:59:59.999999',
    });
  });

  it('rejects tokens that are not base64 of a JSON object', () => {
    for (const token of ['not a token', '%%%', base64('not json'), base64('[1,2]'), base64('null'), base64('"externalID"'), base64('42')])
      expectInvalidToken(() => pageCursors.users.decode(token));
  });

  it('rejects a missing, empty or non-string field', () => {
    for (const json of ['{}', '{"externalID":""}', '{"externalID":5}', '{"externalID":null}', '{"id":"x"}'])
      expectInvalidToken(() => pageCursors.users.decode(base64(json)));
    expectInvalidToken(() => pageCursors.groupMembers.decode(base64('{"externalID":"x"}')));
  });

  it('rejects ids PostgreSQL cannot compare, bigints out of range and impossible timestamps', () => {
    for (const externalID of ['a\u0000', 'b\uD800']) expectInvalidToken(() => pageCursors.users.decode(base64(JSON.stringify({ externalID }))));
    for (const userID of ['9'.repeat(19), '-1', '1.5', 'abc', ''])
      expectInvalidToken(() => pageCursors.groupMembers.decode(base64(JSON.stringify({ userID, externalID: 'x' }))));
    for (const createdAtWithMicros of IMPOSSIBLE_TIMESTAMPS)
      expectInvalidToken(() => pageCursors.messages.decode(base64(JSON.stringify({ externalID: 'x', createdAtWithMicros }))));
  });

  it('serves a new cursor shape from its field kinds alone', () => {
    const deliveries = defineCursor({ deliveryID: cursorField.bigintId, attemptedAt: cursorField.timestamp });
    const cursor = { deliveryID: '7', attemptedAt: '2025-06-30 10:00:00.5' };
    expect(deliveries.decode(deliveries.encode(cursor))).toEqual(cursor);
    expectInvalidToken(() => deliveries.decode(deliveries.encode({ deliveryID: '7', attemptedAt: '2025-06-31 10:00:00' })));
  });
});

describe('pages', () => {
  const ROWS = ['a', 'b', 'c', 'd', 'e'];
  const codec = pageCursors.users;
  const asked: number[] = [];
  const fetchFirst = async (count: number) => {
    asked.push(count);
    return ROWS.slice(0, count);
  };
  const cursorOf = (row: string) => ({ externalID: row });

  it('page: asks for one row more, and gives a token only when that row exists', async () => {
    asked.length = 0;
    expect(await codec.page(2, fetchFirst, cursorOf)).toEqual({ rows: ['a', 'b'], token: codec.encode({ externalID: 'b' }) });
    expect(await codec.page(4, fetchFirst, cursorOf)).toEqual({ rows: ['a', 'b', 'c', 'd'], token: codec.encode({ externalID: 'd' }) });
    expect(await codec.page(5, fetchFirst, cursorOf)).toEqual({ rows: ROWS, token: null });
    expect(await codec.page(9, fetchFirst, cursorOf)).toEqual({ rows: ROWS, token: null });
    expect(asked).toEqual([3, 5, 6, 10]);
  });

  it('pageWithTokenWhenFull: asks for the page, and gives a token whenever it is full', async () => {
    asked.length = 0;
    expect(await codec.pageWithTokenWhenFull(2, fetchFirst, cursorOf)).toEqual({ rows: ['a', 'b'], token: codec.encode({ externalID: 'b' }) });
    expect(await codec.pageWithTokenWhenFull(5, fetchFirst, cursorOf)).toEqual({ rows: ROWS, token: codec.encode({ externalID: 'e' }) });
    expect(await codec.pageWithTokenWhenFull(6, fetchFirst, cursorOf)).toEqual({ rows: ROWS, token: null });
    expect(asked).toEqual([2, 5, 6]);
  });

  it('a limit of 0 reads nothing and has no token', async () => {
    asked.length = 0;
    expect(await codec.page(0, fetchFirst, cursorOf)).toEqual({ rows: [], token: null });
    expect(await codec.pageWithTokenWhenFull(0, fetchFirst, cursorOf)).toEqual({ rows: [], token: null });
    expect(asked).toEqual([]);
  });
});

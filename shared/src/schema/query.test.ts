import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/support/error-of.js';
import { ApiError } from '../errors.js';
import { pageCursors } from '../pagination/cursors.js';
import { DEFAULT_PAGE_SIZE, filterMetadata, q } from './query.js';


function expectError(fn: () => unknown, code: string, message: string): void {
  const error = errorOf(fn);
  expect({ code: error.code, status: error.status, message: error.message }).toEqual({ code, status: 400, message });
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('LimitParam', () => {
  const limit = q.limit();

  it('defaults to 1000 when absent or empty', () => {
    expect(DEFAULT_PAGE_SIZE).toBe(1000);
    expect(limit.parse(undefined)).toBe(1000);
    expect(limit.parse('')).toBe(1000);
  });

  it('reads digits', () => {
    expect(limit.parse('1')).toBe(1);
    expect(limit.parse('10')).toBe(10);
    expect(limit.parse('007')).toBe(7);
    expect(limit.parse('1000')).toBe(1000);
  });

  it('returns 0 for 0 (an empty page)', () => {
    expect(limit.parse('0')).toBe(0);
  });

  it('clamps values above 1000 to 1000', () => {
    expect(limit.parse('1001')).toBe(1000);
    expect(limit.parse('5000')).toBe(1000);
    expect(limit.parse('99999999999999999999999')).toBe(1000);
  });

  it('rejects anything but digits with invalid_field "Limit must be a whole number from 0."', () => {
    for (const raw of ['abc', '10abc', '-1', '1.5', '2.9', '+5', ' 5', '5 ', '1e3', '0x10', '١٢', 'Infinity', 'NaN']) {
      expectError(() => limit.parse(raw), 'invalid_field', 'Limit must be a whole number from 0.');
    }
  });

  it('rejects a repeated parameter (an array) and other non-strings', () => {
    for (const raw of [['1', '2'], ['1'], [], { a: '1' }, 5]) {
      expectError(() => limit.parse(raw), 'invalid_field', 'Limit must be a whole number from 0.');
    }
  });
});

describe('TokenParam', () => {
  const users = q.token(pageCursors.users);

  it('is null when absent or empty', () => {
    expect(users.parse(undefined)).toBeNull();
    expect(users.parse('')).toBeNull();
  });

  it("decodes with its endpoint's cursor codec (see pagination/cursor.test.ts)", () => {
    expect(users.parse(pageCursors.users.encode({ externalID: 'alice' }))).toEqual({ externalID: 'alice' });
    expectError(() => users.parse(base64('{"userID":"1"}')), 'invalid_field', 'Pagination token is not valid');
  });

  it('rejects a repeated parameter as not a string', () => {
    const token = pageCursors.users.encode({ externalID: 'x' });
    expectError(() => users.parse([token, token]), 'invalid_field', 'Pagination token should be of type string.');
    expectError(() => users.parse({ a: token }), 'invalid_field', 'Pagination token should be of type string.');
  });
});

describe('FilterParam', () => {
  const seen: unknown[] = [];
  const threads = q.filter({
    metadata: filterMetadata,
    location: (value: unknown) => {
      seen.push(value);
      return value;
    },
    resolvedStatus: (value: unknown) => {
      if (value !== 'any' && value !== 'resolved' && value !== 'unresolved')
        throw new ApiError('invalid_field', '"resolvedStatus" must be set to "any", "resolved", or "unresolved"');
      return value;
    },
  });
  const messages = q.filter({ authorID: (value: unknown) => String(value), groupID: (value: unknown) => String(value) });

  it('is empty when absent or empty', () => {
    expect(threads.parse(undefined)).toEqual({});
    expect(threads.parse('')).toEqual({});
    expect(threads.parse('{}')).toEqual({});
  });

  it('parses supported keys with their parsers', () => {
    expect(threads.parse('{"metadata":{"a":1},"resolvedStatus":"resolved"}')).toEqual({
      metadata: { a: 1 },
      resolvedStatus: 'resolved',
    });
    expect(messages.parse('{"authorID":"alice","groupID":"g"}')).toEqual({ authorID: 'alice', groupID: 'g' });
  });

  it('rejects values that are not JSON objects', () => {
    for (const raw of ['not json', '{', '[]', '[{"metadata":{}}]', '1', '"x"', 'null', 'true', ['{}', '{}'], 5]) {
      expectError(() => threads.parse(raw), 'invalid_field', 'The filter object must be a valid JSON object.');
    }
  });

  it('rejects unknown keys by name', () => {
    expectError(() => threads.parse('{"foo":1}'), 'invalid_field', 'The filter object does not support "foo" as a field.');
    expectError(
      () => threads.parse('{"metadata":{},"__proto__":{"polluted":true}}'),
      'invalid_field',
      'The filter object does not support "__proto__" as a field.',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects recognised keys that the endpoint does not support', () => {
    expectError(() => threads.parse('{"authorID":"alice"}'), 'invalid_field', 'The filter object does not support "authorID" as a field.');
    expectError(() => threads.parse('{"viewer":"alice"}'), 'invalid_field', 'The filter object does not support "viewer" as a field.');
    expectError(() => messages.parse('{"resolvedStatus":"any"}'), 'invalid_field', 'The filter object does not support "resolvedStatus" as a field.');
  });

  it('tolerates groupID and organizationID on endpoints that do not use them', () => {
    expect(threads.parse('{"groupID":"g","organizationID":"o","metadata":{"a":"b"}}')).toEqual({ metadata: { a: 'b' } });
  });

  it('treats falsy values as absent without calling the key parser', () => {
    seen.length = 0;
    expect(threads.parse('{"location":"","metadata":null,"resolvedStatus":0}')).toEqual({});
    expect(threads.parse('{"location":false}')).toEqual({});
    expect(seen).toEqual([]);
    expect(messages.parse('{"authorID":"","groupID":null}')).toEqual({});
  });

  it('passes key parser errors through', () => {
    expectError(() => threads.parse('{"metadata":{"a":{}}}'), 'invalid_field', '"metadata" must be valid JSON.');
    expectError(() => threads.parse('{"metadata":[1]}'), 'invalid_field', '"metadata" must be valid JSON.');
    expectError(
      () => threads.parse('{"resolvedStatus":"open"}'),
      'invalid_field',
      '"resolvedStatus" must be set to "any", "resolved", or "unresolved"',
    );
  });
});

describe('EnumParam', () => {
  const failure = { code: 'invalid_request' as const, message: "sortDirection value is invalid: must be 'ascending' or 'descending'" };
  const direction = q.enum(['ascending', 'descending'], failure);

  it('is undefined when absent or empty', () => {
    expect(direction.parse(undefined)).toBeUndefined();
    expect(direction.parse('')).toBeUndefined();
  });

  it('matches case-insensitively and returns the canonical value', () => {
    expect(direction.parse('ascending')).toBe('ascending');
    expect(direction.parse('DESCENDING')).toBe('descending');
    expect(direction.parse('Ascending')).toBe('ascending');
    const mixed = q.enum(['camelCase', 'other'], failure);
    expect(mixed.parse('camelcase')).toBe('camelCase');
    expect(mixed.parse('CAMELCASE')).toBe('camelCase');
  });

  it('answers the configured error for anything else', () => {
    for (const raw of ['up', 'asc', ' ascending', ['ascending', 'ascending'], 1]) {
      const error = errorOf(() => direction.parse(raw));
      expect({ code: error.code, status: error.status, message: error.message }).toEqual({
        code: 'invalid_request',
        status: 400,
        message: failure.message,
      });
    }
  });
});

describe('QuerySchema', () => {
  it('parses each declared parameter and ignores unknown ones', () => {
    const query = q.object({ limit: q.limit(), token: q.token(pageCursors.users) });
    expect(query.parse({ limit: '5', other: 'x' })).toEqual({ limit: 5, token: null });
    expect(query.parse({})).toEqual({ limit: 1000, token: null });
    expect(errorOf(() => query.parse({ limit: 'x' })).message).toBe('Limit must be a whole number from 0.');
  });
});

import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/support/error-of.js';
import { ApiError } from '../errors.js';
import { formatPath, listWords } from './path.js';
import { s } from './builders.js';
import type { Infer, Schema } from './schema.js';

/** Runs `fn` and returns the ApiError it throws (fails the test when it throws nothing else). */

function expectError(fn: () => unknown, code: string, message: string, status = 400): void {
  const error = errorOf(fn);
  expect({ code: error.code, status: error.status, message: error.message }).toEqual({ code, status, message });
}

/** A request body as the server sees it: parsed from JSON text. */
const json = (text: string): unknown => JSON.parse(text);

describe('path helpers', () => {
  it('lists words with commas and a final "and"', () => {
    expect(listWords([])).toBe('');
    expect(listWords(['a'])).toBe('a');
    expect(listWords(['a', 'b'])).toBe('a and b');
    expect(listWords(['a', 'b', 'c'])).toBe('a, b and c');
  });

  it('joins object keys with "." and array indexes with "/"', () => {
    expect(formatPath([])).toBe('');
    expect(formatPath(['name'])).toBe('name');
    expect(formatPath(['createThread', 'url'])).toBe('createThread.url');
    expect(formatPath(['users', 3, 'id'])).toBe('users/3/id');
    expect(formatPath(['content', 0, 'children', 1, 'text'])).toBe('content/0/children/1/text');
  });
});

describe('object: top level', () => {
  const body = s.object({ name: s.string(), email: s.email().optional() });

  it('returns the validated value', () => {
    expect(body.parse({ name: 'Alice' })).toEqual({ name: 'Alice' });
    expect(body.parse({ email: 'a@b.co', name: 'Alice' })).toEqual({ email: 'a@b.co', name: 'Alice' });
  });

  it('answers invalid_request when the body is not a JSON object', () => {
    for (const value of [null, [], [{ name: 'x' }], 'text', 1, true, undefined]) {
      const error = errorOf(() => body.parse(value));
      expect(error.code, JSON.stringify(value)).toBe('invalid_request');
      expect(error.status).toBe(400);
    }
  });
});

describe('object: missing_field', () => {
  const three = s.object({ a: s.string(), b: s.string(), c: s.string(), d: s.string().optional() });

  it('names one missing field', () => {
    expectError(() => three.parse({ b: 'x', c: 'x' }), 'missing_field', 'Missing required field: a.');
  });

  it('names two missing fields with "and"', () => {
    expectError(() => three.parse({ b: 'x' }), 'missing_field', 'Missing required fields: a and c.');
  });

  it('names every missing field in one message, in declaration order', () => {
    expectError(() => three.parse({}), 'missing_field', 'Missing required fields: a, b and c.');
    expectError(() => three.parse({ d: 'x' }), 'missing_field', 'Missing required fields: a, b and c.');
  });

  it('reports missing fields before unexpected or invalid ones', () => {
    expectError(() => three.parse({ zzz: 1, b: 1 }), 'missing_field', 'Missing required fields: a and c.');
  });

  it('counts a key whose value is null as present, then type-checks it', () => {
    expectError(
      () => three.parse({ a: null, b: 'x', c: 'x' }),
      'invalid_field',
      'Input type for a is not valid, expected string.',
    );
  });

  it('does not treat inherited keys as present', () => {
    const body = s.object({ toString: s.string(), constructor: s.string() });
    expectError(() => body.parse({}), 'missing_field', 'Missing required fields: toString and constructor.');
  });

  describe('with alternatives (a field and its alias, one of which is required)', () => {
    const aliased = s.object(
      { a: s.string().optional(), aAlias: s.string().optional(), b: s.string(), c: s.string().optional(), cAlias: s.string().optional() },
      { alternatives: [['a', 'aAlias'], ['c', 'cAlias']] },
    );

    it('names a missing group by its first key, in that key\'s place among the missing fields', () => {
      expectError(() => aliased.parse({}), 'missing_field', 'Missing required fields: a, b and c.');
      expectError(() => aliased.parse({ aAlias: 'x' }), 'missing_field', 'Missing required fields: b and c.');
    });

    it('accepts either key of each group', () => {
      expect(aliased.parse({ aAlias: 'x', b: 'y', c: 'z' })).toEqual({ aAlias: 'x', b: 'y', c: 'z' });
      expect(aliased.parse({ a: 'x', b: 'y', cAlias: 'z' })).toEqual({ a: 'x', b: 'y', cAlias: 'z' });
    });
  });
});

describe('object: unexpected_field', () => {
  it('uses the reference wording with required and optional lists', () => {
    const body = s.object({ a: s.string(), b: s.string(), c: s.string().optional(), d: s.string().optional() });
    expectError(
      () => body.parse({ a: 'x', b: 'x', foo: 1 }),
      'unexpected_field',
      'foo is not a valid field name for this request. Expected 2 required fields: a and b. 2 optional fields: c and d.',
    );
  });

  it('matches the API document example for optional fields only', () => {
    const body = s.object({ name: s.string().optional(), status: s.string().optional(), members: s.string().optional() });
    expectError(
      () => body.parse({ foo: 1 }),
      'unexpected_field',
      'foo is not a valid field name for this request. Expected 3 optional fields: name, status and members.',
    );
  });

  it('uses the singular and omits an empty part', () => {
    expectError(
      () => s.object({ permanently_delete: s.boolean() }).parse({ permanently_delete: true, x: 1 }),
      'unexpected_field',
      'x is not a valid field name for this request. Expected 1 required field: permanently_delete.',
    );
    expectError(
      () => s.object({ name: s.string().optional() }).parse({ x: 1 }),
      'unexpected_field',
      'x is not a valid field name for this request. Expected 1 optional field: name.',
    );
  });

  it('rejects any key when the object takes no fields', () => {
    const error = errorOf(() => s.object({}).parse({ x: 1 }));
    expect(error.code).toBe('unexpected_field');
    expect(error.message).toMatch(/^x is not a valid field name for this request\./);
  });
});

describe('object: invalid_field', () => {
  const body = s.object({
    name: s.string().optional(),
    count: s.integer().optional(),
    url: s.uri().optional(),
  });

  it('names the field and the expected type', () => {
    expectError(() => body.parse({ name: 1 }), 'invalid_field', 'Input type for name is not valid, expected string.');
    expectError(() => body.parse({ count: 1.5 }), 'invalid_field', 'Input type for count is not valid, expected integer.');
    const error = errorOf(() => body.parse({ url: 'not a url' }));
    expect(error.code).toBe('invalid_field');
    expect(error.message).toMatch(/^Input type for url is not valid, expected .+\.$/);
  });
});

describe('object: evaluation order of received keys', () => {
  const body = s.object({ a: s.string().optional(), b: s.string().optional() });

  it('reports whichever of unexpected or invalid comes first in the body', () => {
    expect(errorOf(() => body.parse(json('{"x": 1, "a": 1}'))).code).toBe('unexpected_field');
    expect(errorOf(() => body.parse(json('{"a": 1, "x": 1}'))).code).toBe('invalid_field');
    expect(errorOf(() => body.parse(json('{"b": "ok", "a": 2, "x": 1}'))).message).toBe(
      'Input type for a is not valid, expected string.',
    );
    expect(errorOf(() => body.parse(json('{"b": 2, "a": 2}'))).message).toBe(
      'Input type for b is not valid, expected string.',
    );
    expect(errorOf(() => body.parse(json('{"y": 1, "x": 1}'))).message).toMatch(/^y is not a valid field name/);
  });
});

describe('object: nested paths', () => {
  const message = s.object({
    content: s.array(s.unknown()),
    createThread: s
      .object({
        url: s.string(),
        name: s.string(),
        location: s.flatObject(),
        groupID: s.string().optional(),
      })
      .optional(),
  });
  const batch = s.object({
    users: s.array(s.object({ id: s.externalId(), email: s.email().optional() })).optional(),
  });

  it('names a nested missing field by its path', () => {
    expectError(
      () => message.parse({ content: [], createThread: { name: 'n', location: {} } }),
      'missing_field',
      'Missing required field: createThread.url.',
    );
    expectError(
      () => message.parse({ content: [], createThread: {} }),
      'missing_field',
      'Missing required fields: createThread.url, createThread.name and createThread.location.',
    );
    expectError(
      () => batch.parse({ users: [{ id: 1 }, { id: 2 }, { id: 3 }, { email: 'a@b.co' }] }),
      'missing_field',
      'Missing required field: users/3/id.',
    );
  });

  it('names a nested invalid or unexpected field by its path', () => {
    expectError(
      () => message.parse({ content: [], createThread: { url: 1, name: 'n', location: {} } }),
      'invalid_field',
      'Input type for createThread.url is not valid, expected string.',
    );
    expectError(
      () => batch.parse({ users: [{ id: 'a' }, { id: 'b', email: 'nope' }] }),
      'invalid_field',
      'Input type for users/1/email is not valid, expected email.',
    );
    const error = errorOf(() => message.parse({ content: [], createThread: { url: 'u', name: 'n', location: {}, x: 1 } }));
    expect(error.code).toBe('unexpected_field');
    expect(error.message).toBe(
      'createThread.x is not a valid field name for this request. Expected 3 required fields: url, name and location. 1 optional field: groupID.',
    );
  });

  it('rejects a nested value that is not an object as invalid_field, not invalid_request', () => {
    expectError(
      () => message.parse({ content: [], createThread: 'x' }),
      'invalid_field',
      'Input type for createThread is not valid, expected object.',
    );
    expectError(() => batch.parse({ users: [null] }), 'invalid_field', 'Input type for users/0 is not valid, expected object.');
  });

  it('returns nested values', () => {
    expect(batch.parse({ users: [{ id: 7 }, { id: 'x', email: 'a@b.co' }] })).toEqual({
      users: [{ id: '7' }, { id: 'x', email: 'a@b.co' }],
    });
  });
});

describe('nullable and optional', () => {
  it('accepts null for a nullable field and says "or null" on a type mismatch', () => {
    const body = s.object({ name: s.string().nullable().optional() });
    expect(body.parse({ name: null })).toEqual({ name: null });
    expect(body.parse({ name: 'x' })).toEqual({ name: 'x' });
    expect(body.parse({})).toEqual({});
    expectError(() => body.parse({ name: 5 }), 'invalid_field', 'Input type for name is not valid, expected string or null.');
  });

  it('rejects null for a field that is not nullable', () => {
    const body = s.object({ name: s.string().optional() });
    expectError(() => body.parse({ name: null }), 'invalid_field', 'Input type for name is not valid, expected string.');
  });

  it('keeps a field optional whichever order optional() and nullable() are applied in', () => {
    const body = s.object({ a: s.string().optional().nullable(), b: s.string().nullable().optional() });
    expect(body.parse({})).toEqual({});
    expect(body.parse({ a: null, b: null })).toEqual({ a: null, b: null });
    expect(body.jsonSchema().required).toBeUndefined();
    // The inferred type agrees: both keys may be omitted (a type error here if not).
    const empty: Infer<typeof body> = {};
    expect(body.parse(empty)).toEqual({});
  });

  it('keeps the path of an error inside a nullable object', () => {
    const body = s.object({
      logoConfig: s.object({ width: s.integer({ minimum: 0, maximum: 240 }).optional() }).nullable().optional(),
    });
    expect(body.parse({ logoConfig: null })).toEqual({ logoConfig: null });
    expectError(
      () => body.parse({ logoConfig: 3 }),
      'invalid_field',
      'Input type for logoConfig is not valid, expected object or null.',
    );
    expectError(
      () => body.parse({ logoConfig: { width: 500 } }),
      'invalid_field',
      'Input type for logoConfig.width is not valid, expected integer from 0 to 240.',
    );
    expect(errorOf(() => body.parse({ logoConfig: { x: 1 } })).code).toBe('unexpected_field');
  });

  it('keeps the path of an error inside a nullable array', () => {
    const body = s.object({ ids: s.array(s.string()).nullable() });
    expectError(() => body.parse({ ids: ['a', 1] }), 'invalid_field', 'Input type for ids/1 is not valid, expected string.');
    expectError(() => body.parse({ ids: 'a' }), 'invalid_field', 'Input type for ids is not valid, expected array or null.');
  });

  it('answers a request field as stored: always present, nullable as asked, strings without their format', () => {
    const email = s.email().nullable().optional().asAnswer();
    expect(email.isOptional).toBe(false);
    expect(email.jsonSchema()).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(email.parse('not an e-mail')).toBe('not an e-mail');
    expect(s.uri().optional().nullable().asAnswer().jsonSchema()).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(s.string({ maxLength: 3 }).optional().asAnswer().jsonSchema()).toEqual({ type: 'string', maxLength: 3 });
    expect(s.enum(['active', 'deleted']).optional().asAnswer().jsonSchema()).toEqual({ type: 'string', enum: ['active', 'deleted'] });
  });
});

describe('strings and formats', () => {
  it('checks minLength and maxLength', () => {
    const body = s.object({ name: s.string({ minLength: 1 }), code: s.string({ maxLength: 3 }).optional() });
    expect(body.parse({ name: 'x', code: 'abc' })).toEqual({ name: 'x', code: 'abc' });
    expect(errorOf(() => body.parse({ name: '' })).code).toBe('invalid_field');
    expect(errorOf(() => body.parse({ name: 'x', code: 'abcd' })).code).toBe('invalid_field');
  });

  it('counts lengths in code points, as its JSON Schema maxLength means', () => {
    const code = s.string({ minLength: 2, maxLength: 3 });
    expect(code.parse('😀😀😀')).toBe('😀😀😀');
    expect(() => code.parse('😀')).toThrow(ApiError);
    expect(() => code.parse('😀😀😀😀')).toThrow(ApiError);
  });

  it('accepts an empty e-mail and rejects a malformed one', () => {
    const email = s.email();
    expect(email.parse('')).toBe('');
    expect(email.parse('a@b.co')).toBe('a@b.co');
    expectError(() => email.parse('nope', ['email']), 'invalid_field', 'Input type for email is not valid, expected email.');
  });

  it('validates identifiers', () => {
    const body = s.object({ id: s.identifier() });
    expect(body.parse({ id: 'a b/c' })).toEqual({ id: 'a b/c' });
    for (const id of ['', 'cord:x', 'a\u0000', 'a'.repeat(321), 5]) {
      expectError(() => body.parse({ id }), 'invalid_field', 'Input type for id is not valid, expected identifier.');
    }
  });

  it('validates URIs: absolute, with a scheme, RFC 3986 characters only', () => {
    const body = s.object({ iconURL: s.uri().nullable() });
    expect(body.parse({ iconURL: 'https://x.test/a%20b.png' })).toEqual({ iconURL: 'https://x.test/a%20b.png' });
    expect(body.parse({ iconURL: null })).toEqual({ iconURL: null });
    for (const iconURL of ['https://x.test/a b.png', 'x.test/a.png', 'https://x.test/é']) {
      expect(errorOf(() => body.parse({ iconURL })).code).toBe('invalid_field');
    }
  });

  it('parses date-time strings and rejects numbers', () => {
    const at = s.dateTime();
    expect(at.parse('2024-05-01T12:00:00Z')).toEqual(new Date('2024-05-01T12:00:00Z'));
    expect(errorOf(() => at.parse(1714564800000, ['at'])).code).toBe('invalid_field');
    expect(errorOf(() => at.parse('2024-02-30T12:00:00Z', ['at'])).code).toBe('invalid_field');
    expect(errorOf(() => at.parse('2024-05-01T12:00:00', ['at'])).code).toBe('invalid_field');
  });
});

describe('numbers and booleans', () => {
  it('checks type, integer-ness and range', () => {
    const width = s.integer({ minimum: 0, maximum: 240 });
    expect(width.parse(0)).toBe(0);
    expect(width.parse(240)).toBe(240);
    for (const value of [-1, 241, 1.5, '1', null, true]) {
      expectError(() => width.parse(value, ['width']), 'invalid_field', 'Input type for width is not valid, expected integer from 0 to 240.');
    }
    expect(s.number().parse(1.5)).toBe(1.5);
    expect(errorOf(() => s.number().parse(Number.NaN, ['n'])).code).toBe('invalid_field');
    expect(errorOf(() => s.number().parse(Number.POSITIVE_INFINITY, ['n'])).code).toBe('invalid_field');
  });

  it('accepts only true and false as booleans', () => {
    const flag = s.boolean();
    expect(flag.parse(false)).toBe(false);
    for (const value of ['true', 1, 0, null]) {
      expectError(() => flag.parse(value, ['flag']), 'invalid_field', 'Input type for flag is not valid, expected boolean.');
    }
  });
});

describe('enum', () => {
  const status = s.enum(['active', 'deleted']);

  it('accepts listed values only, case-sensitively', () => {
    expect(status.parse('active')).toBe('active');
    expect(status.parse('deleted')).toBe('deleted');
    for (const value of ['Active', 'inactive', '', 1, null]) {
      expectError(() => status.parse(value, ['status']), 'invalid_field', 'Input type for status is not valid, expected "active" or "deleted".');
    }
  });

  it('lists three values with commas and "or"', () => {
    expect(s.enum(['any', 'resolved', 'unresolved']).expected).toBe('"any", "resolved" or "unresolved"');
  });
});

describe('externalId', () => {
  const id = s.externalId();

  it('converts numbers with JavaScript number-to-string rules', () => {
    expect(id.parse(104)).toBe('104');
    expect(id.parse(json('1.50'))).toBe('1.5');
    expect(id.parse(1.5)).toBe('1.5');
    expect(id.parse(0)).toBe('0');
    expect(id.parse(-3)).toBe('-3');
    expect(id.parse(json('1e3'))).toBe('1000');
    expect(id.parse(json('1e21'))).toBe('1e+21');
  });

  it('accepts strings of 1 to 128 characters, kept exactly as sent', () => {
    expect(id.parse('x')).toBe('x');
    expect(id.parse('1.50')).toBe('1.50');
    expect(id.parse(' 007 ')).toBe(' 007 ');
    expect(id.parse('a'.repeat(128))).toBe('a'.repeat(128));
    expect(id.parse('😀'.repeat(128))).toBe('😀'.repeat(128));
    for (const value of ['', 'a'.repeat(129), '😀'.repeat(129)]) {
      expect(errorOf(() => id.parse(value, ['id'])).code).toBe('invalid_field');
    }
  });

  it('rejects other types', () => {
    for (const value of [null, true, {}, ['1'], Number.NaN]) {
      expectError(
        () => id.parse(value, ['members', 0]),
        'invalid_field',
        'Input type for members/0 is not valid, expected string of 1 to 128 characters, or number.',
      );
    }
  });
});

describe('flatObject', () => {
  const body = s.object({ metadata: s.flatObject().optional() });

  it('accepts string, number and boolean values, and the empty object', () => {
    expect(body.parse({ metadata: {} })).toEqual({ metadata: {} });
    expect(body.parse({ metadata: { a: 'x', b: 1.5, c: false, '': 'empty key' } })).toEqual({
      metadata: { a: 'x', b: 1.5, c: false, '': 'empty key' },
    });
  });

  it('rejects null, nested objects and arrays as values, and non-objects', () => {
    for (const metadata of [{ a: null }, { a: {} }, { a: [] }, { a: [1] }, { a: 'x', b: { c: 1 } }, null, [], 'x', 1]) {
      expectError(
        () => body.parse({ metadata }),
        'invalid_field',
        'Input type for metadata is not valid, expected object whose values are strings, numbers or booleans.',
      );
    }
  });

  it('rejects non-finite numbers (which JSON cannot carry anyway)', () => {
    expect(errorOf(() => body.parse({ metadata: { a: Number.NaN } })).code).toBe('invalid_field');
    expect(json('{"a": 1}')).toEqual({ a: 1 });
    expect(() => json('{"a": NaN}')).toThrow(SyntaxError);
  });
});

describe('arrays', () => {
  it('checks maxItems and minItems and validates each item with its index', () => {
    const list = s.object({ ids: s.array(s.string(), { maxItems: 2 }) });
    expect(list.parse({ ids: [] })).toEqual({ ids: [] });
    expect(list.parse({ ids: ['a', 'b'] })).toEqual({ ids: ['a', 'b'] });
    expectError(() => list.parse({ ids: ['a', 'b', 'c'] }), 'invalid_field', 'Input type for ids is not valid, expected array of at most 2 items.');
    expectError(() => list.parse({ ids: ['a', 2] }), 'invalid_field', 'Input type for ids/1 is not valid, expected string.');
    expectError(() => list.parse({ ids: { 0: 'a' } }), 'invalid_field', 'Input type for ids is not valid, expected array of at most 2 items.');
    const atLeastOne = s.array(s.string(), { minItems: 1 });
    expect(errorOf(() => atLeastOne.parse([], ['x'])).code).toBe('invalid_field');
  });
});

describe('prototype-polluting keys (__proto__, constructor)', () => {
  const body = s.object({ name: s.string().optional(), metadata: s.flatObject().optional() });

  it('rejects them as unexpected fields', () => {
    for (const text of ['{"__proto__": {"polluted": true}}', '{"constructor": {"prototype": {"polluted": true}}}', '{"prototype": 1}']) {
      const error = errorOf(() => body.parse(json(text)));
      expect(error.code, text).toBe('unexpected_field');
      expect(error.message, text).toMatch(/^(__proto__|constructor|prototype) is not a valid field name for this request\./);
    }
  });

  it('rejects them in nested objects too, by path', () => {
    const nested = s.object({ createThread: s.object({ name: s.string().optional() }).optional() });
    const error = errorOf(() => nested.parse(json('{"createThread": {"__proto__": {"polluted": true}}}')));
    expect(error.code).toBe('unexpected_field');
    expect(error.message).toMatch(/^createThread\.__proto__ is not a valid field name/);
  });

  it('never changes a prototype', () => {
    const parsed = body.parse(json('{"name": "x", "metadata": {"__proto__": "kept as a key", "constructor": 1}}'));
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed.metadata!)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(parsed.metadata)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('literals, unions and records (the shapes of answers)', () => {
  it('accepts exactly the literal value', () => {
    expect(s.literal(true).parse(true)).toBe(true);
    expectError(() => s.literal(true).parse(false, ['success']), 'invalid_field', 'Input type for success is not valid, expected true.');
    expectError(() => s.literal('file').parse('File', ['type']), 'invalid_field', 'Input type for type is not valid, expected "file".');
    expect(s.literal('file').jsonSchema()).toEqual({ const: 'file' });
  });

  it('takes the first option of a union that accepts the value, and names them all when none does', () => {
    const attachment = s.union([
      s.object({ type: s.literal('file'), size: s.integer() }),
      s.object({ type: s.literal('link_preview'), url: s.string() }),
    ]);
    const parsed: { type: 'file'; size: number } | { type: 'link_preview'; url: string } = attachment.parse({ type: 'link_preview', url: 'x' });
    expect(parsed).toEqual({ type: 'link_preview', url: 'x' });
    expect(attachment.parse({ type: 'file', size: 3 })).toEqual({ type: 'file', size: 3 });
    expectError(() => attachment.parse({ type: 'file', url: 'x' }, ['a']), 'invalid_field', 'Input type for a is not valid, expected object or object.');
    expect(attachment.jsonSchema()).toEqual({ oneOf: [expect.objectContaining({ type: 'object' }), expect.objectContaining({ type: 'object' })] });
  });

  it('checks every value of a record by its key', () => {
    const counts = s.record(s.object({ imported: s.integer() }));
    expect(counts.parse({ users: { imported: 2 }, groups: { imported: 0 } })).toEqual({ users: { imported: 2 }, groups: { imported: 0 } });
    expectError(() => counts.parse({ users: { imported: 'x' } }, ['counts']), 'invalid_field', 'Input type for counts.users.imported is not valid, expected integer.');
    expectError(() => counts.parse([], ['counts']), 'invalid_field', 'Input type for counts is not valid, expected object.');
    expect(counts.jsonSchema()).toEqual({ type: 'object', additionalProperties: expect.objectContaining({ type: 'object', required: ['imported'] }) });
  });
});

describe('jsonSchema() (JSON Schema 2020-12)', () => {
  it('describes an object with required keys and no additional properties', () => {
    const body = s.object({
      name: s.string({ minLength: 1 }),
      email: s.email().nullable().optional(),
      status: s.enum(['active', 'deleted']).optional(),
      members: s.array(s.externalId(), { maxItems: 10 }).optional(),
      metadata: s.flatObject().optional(),
      width: s.integer({ minimum: 0, maximum: 240 }).optional(),
      at: s.dateTime().optional(),
      ok: s.boolean().optional(),
    });
    expect(body.jsonSchema()).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1 },
        email: { anyOf: [{ type: 'string', format: 'email' }, { type: 'null' }] },
        status: { type: 'string', enum: ['active', 'deleted'] },
        members: {
          type: 'array',
          maxItems: 10,
          items: { anyOf: [{ type: 'string', minLength: 1, maxLength: 128 }, { type: 'number' }] },
        },
        metadata: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
        width: { type: 'integer', minimum: 0, maximum: 240 },
        at: { type: 'string', format: 'date-time' },
        ok: { type: 'boolean' },
      },
      required: ['name'],
      additionalProperties: false,
    });
  });

  it('omits an empty required list and nests objects', () => {
    const body = s.object({ createThread: s.object({ url: s.string() }).optional() });
    const schema = body.jsonSchema();
    expect(schema).not.toHaveProperty('required');
    expect(schema.properties).toEqual({
      createThread: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'], additionalProperties: false },
    });
  });

  it('describes identifiers by length and the cord: prefix', () => {
    const schema = s.identifier().jsonSchema();
    expect(schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 320 });
    const pattern = new RegExp(schema.pattern as string, 'u');
    expect(pattern.test('alice')).toBe(true);
    expect(pattern.test('cord:x')).toBe(false);
  });

  it('refers to a named schema by its component, and defines it there', () => {
    const pagination = s.object({ token: s.string().nullable() }).named('Pagination').describe('The next page.');
    expect(pagination.name).toBe('Pagination');
    expect(s.object({ pagination }).jsonSchema().properties).toEqual({ pagination: { $ref: '#/components/schemas/Pagination' } });
    expect(pagination.definitionJsonSchema()).toMatchObject({ type: 'object', required: ['token'], description: 'The next page.' });
    expect(pagination.parse({ token: null })).toEqual({ token: null });
  });

  it('carries descriptions', () => {
    expect(s.string().describe('The name').jsonSchema()).toEqual({ type: 'string', description: 'The name' });
  });

  it('produces JSON-serialisable output that only uses 2020-12 keywords', () => {
    const keywords = new Set([
      'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'format',
      'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minItems', 'maxItems', 'description',
      'const', 'oneOf',
    ]);
    const visit = (schema: unknown): void => {
      if (Array.isArray(schema)) return schema.forEach(visit);
      if (typeof schema !== 'object' || schema === null) return;
      for (const [key, value] of Object.entries(schema)) {
        expect(keywords.has(key), key).toBe(true);
        if (key === 'properties') Object.values(value as object).forEach(visit);
        else if (key === 'items' || key === 'additionalProperties' || key === 'anyOf' || key === 'oneOf') visit(value);
      }
    };
    const all: Schema<unknown>[] = [
      s.object({
        a: s.string().nullable(),
        b: s.array(s.object({ c: s.uri().optional() })).optional(),
        d: s.unknown().optional(),
        e: s.uuid().optional(),
        f: s.union([s.literal('x'), s.record(s.integer())]).optional(),
      }),
    ];
    for (const schema of all) {
      const out = schema.jsonSchema();
      expect(JSON.parse(JSON.stringify(out))).toEqual(out);
      visit(out);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/support/error-of.js';
import { ApiError } from '../errors.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH, parseJsonObject } from './json-body.js';


const body = (text: string) => Buffer.from(text, 'utf8');
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** A JSON object whose deepest value sits `depth` levels down (the outer object is level 1). */
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

function expectInvalidRequest(raw: Buffer | undefined): ApiError {
  const error = errorOf(() => parseJsonObject(raw));
  expect(error.code).toBe('invalid_request');
  expect(error.status).toBe(400);
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

describe('parseJsonObject', () => {
  it('parses a JSON object', () => {
    expect(parseJsonObject(body('{"name":"x","n":1,"list":[1,{"a":null}]}'))).toEqual({ name: 'x', n: 1, list: [1, { a: null }] });
    expect(parseJsonObject(body('{}'))).toEqual({});
    expect(parseJsonObject(body(' \n\t{ "a" : 1 }\r\n '))).toEqual({ a: 1 });
    expect(parseJsonObject(body('{"name":"Zoë 😀"}'))).toEqual({ name: 'Zoë 😀' });
  });

  it('ignores a leading UTF-8 byte-order mark, as Express does', () => {
    expect(parseJsonObject(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body('{"a":1}')]))).toEqual({ a: 1 });
    expectInvalidRequest(Buffer.from([0xef, 0xbb, 0xbf]));
    expectInvalidRequest(body('{"a":1}\ufeff'));
  });

  it('rejects bytes that are not valid UTF-8 instead of reading them as U+FFFD', () => {
    const inside = (bytes: number[]) => Buffer.concat([body('{"name":"a'), Buffer.from(bytes), body('b"}')]);
    for (const bytes of [[0xc3, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff], [0x80]])
      expect(expectInvalidRequest(inside(bytes)).message).toBe('Request body is not valid UTF-8.');
    // A multi-byte sequence cut short at the end of the body.
    expect(expectInvalidRequest(Buffer.concat([body('{"name":"a"}'), Buffer.from([0xe2, 0x82])])).message).toBe('Request body is not valid UTF-8.');
  });

  it('reads valid UTF-8 of every length as sent', () => {
    expect(parseJsonObject(body('{"name":"é 漢字 😀 \u00e9"}'))).toEqual({ name: 'é 漢字 😀 é' });
  });

  it('rejects an absent, empty or whitespace-only body', () => {
    expectInvalidRequest(undefined);
    expectInvalidRequest(Buffer.alloc(0));
    expectInvalidRequest(body(' '));
    expectInvalidRequest(body('\n\t\r  '));
  });

  it('rejects malformed JSON', () => {
    for (const text of ['{', '{"a":}', "{'a':1}", '{"a":1,}', '{a:1}', '{"a":1} x', '{"a":1}{"b":2}', 'nope', '{"a":NaN}', '{"a":undefined}']) {
      expectInvalidRequest(body(text));
    }
  });

  it('rejects JSON that is not an object', () => {
    for (const text of ['[]', '[{"a":1}]', 'null', '1', '-1.5', '"text"', 'true', 'false']) {
      expectInvalidRequest(body(text));
    }
  });

  it('accepts nesting of exactly 100 levels', () => {
    expect(MAX_JSON_DEPTH).toBe(100);
    const ok = parseJsonObject(body(`{"a":${nestedArrays(99)}}`));
    expect(Object.keys(ok)).toEqual(['a']);
    expect(parseJsonObject(body(nestedObject(100)))).toBeTypeOf('object');
  });

  it('rejects nesting of 101 levels', () => {
    const error = expectInvalidRequest(body(`{"a":${nestedArrays(100)}}`));
    expect(error.message).toMatch(/100/);
    expectInvalidRequest(body(nestedObject(101)));
  });

  it('rejects a 100,000-deep body quickly and without a RangeError', () => {
    const text = `{"a":${nestedArrays(100_000)}}`;
    let thrown: unknown;
    try {
      parseJsonObject(body(text));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).not.toBeInstanceOf(RangeError);
    expect((thrown as ApiError).code).toBe('invalid_request');
    // Unbalanced deep input (never closed) is rejected the same way.
    expect(errorOf(() => parseJsonObject(body(`{"a":${'['.repeat(100_000)}`))).code).toBe('invalid_request');
  });

  it('does not count brackets inside strings', () => {
    const brackets = '['.repeat(500) + '{'.repeat(500);
    expect(parseJsonObject(body(JSON.stringify({ text: brackets })))).toEqual({ text: brackets });
    const escaped = JSON.stringify({ text: `\\"${'['.repeat(200)}`, other: `"${'{'.repeat(200)}"` });
    expect(parseJsonObject(body(escaped))).toEqual(JSON.parse(escaped));
    const keys = JSON.stringify({ [`${'['.repeat(150)}`]: 1 });
    expect(parseJsonObject(body(keys))).toEqual(JSON.parse(keys));
  });
});

describe('jsonDepthExceeds', () => {
  it('counts object and array nesting outside strings', () => {
    expect(jsonDepthExceeds('{}', 1)).toBe(false);
    expect(jsonDepthExceeds('{"a":[]}', 1)).toBe(true);
    expect(jsonDepthExceeds('{"a":[]}', 2)).toBe(false);
    expect(jsonDepthExceeds('[[],[],[[]]]', 2)).toBe(true);
    expect(jsonDepthExceeds('[[],[],[[]]]', 3)).toBe(false);
    expect(jsonDepthExceeds(nestedArrays(100), 100)).toBe(false);
    expect(jsonDepthExceeds(nestedArrays(101), 100)).toBe(true);
  });

  it('measures depth, not the number of brackets', () => {
    const wide = `[${Array.from({ length: 1000 }, () => '[]').join(',')}]`;
    expect(jsonDepthExceeds(wide, 2)).toBe(false);
  });

  it('ignores brackets in strings, including after escaped quotes and backslashes', () => {
    expect(jsonDepthExceeds('{"a":"[[[[{{{{"}', 1)).toBe(false);
    expect(jsonDepthExceeds('{"a":"\\"[[[["}', 1)).toBe(false);
    expect(jsonDepthExceeds('{"a\\"[[":"x"}', 1)).toBe(false);
    // An escaped backslash ends before the closing quote; the bracket after it is real.
    expect(jsonDepthExceeds('{"a":"\\\\",  "b":[]}', 1)).toBe(true);
    expect(jsonDepthExceeds('{"a":"\\\\\\"[", "b":1}', 1)).toBe(false);
  });
});

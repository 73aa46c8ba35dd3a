import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { jsonBodyFingerprint, parseIdempotencyKey } from './idempotency.js';

describe('parseIdempotencyKey', () => {
  it('takes 1 to 255 printable ASCII characters', () => {
    for (const key of ['a', ' spaced key ~', 'x'.repeat(255), '550e8400-e29b-41d4-a716-446655440000']) expect(parseIdempotencyKey(key)).toBe(key);
  });

  it('refuses anything else with invalid_field naming the header', () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'caf\u00e9', 'line\nbreak', ['a', 'b']]) {
      const error = (() => {
        try {
          parseIdempotencyKey(key);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('invalid_field');
      expect((error as ApiError).message).toContain('Idempotency-Key');
    }
  });
});

describe('jsonBodyFingerprint', () => {
  const of = (text: string) => jsonBodyFingerprint(Buffer.from(text));

  it('is the same for the same JSON object whatever its key order and spacing', () => {
    expect(of('{"a": 1, "b": {"c": [1, {"d": 2, "e": 3}]}}')).toBe(of('{"b":{"c":[1,{"e":3,"d":2}]},"a":1}'));
  });

  it('differs when a value, an array order or a key differs', () => {
    const base = of('{"a": [1, 2], "b": "x"}');
    expect(of('{"a": [2, 1], "b": "x"}')).not.toBe(base);
    expect(of('{"a": [1, 2], "b": "y"}')).not.toBe(base);
    expect(of('{"a": [1, 2], "c": "x"}')).not.toBe(base);
  });

  it('hashes the bytes of a body that is not a JSON object, so that a repeat of it is the same request', () => {
    expect(of('not json')).toBe(of('not json'));
    expect(of('not json')).not.toBe(of('not json either'));
    expect(jsonBodyFingerprint(undefined)).toBe(of(''));
  });
});

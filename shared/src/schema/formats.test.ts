import { describe, expect, it } from 'vitest';
import { isEmail, isIdentifier, isJwtShaped, isServerGeneratedId, isUri, isUuid, parseDateTime } from './formats.js';

describe('isIdentifier', () => {
  it('accepts ordinary customer IDs, including spaces, @, /, emoji and JSON text', () => {
    for (const id of ['a', 'alice', 'user 1', 'a@b.c', 'a/b', '😀', '{"x":1}', 'cord', 'CORD:x', 'x cord:']) {
      expect(isIdentifier(id), id).toBe(true);
    }
  });

  it('rejects the empty string', () => {
    expect(isIdentifier('')).toBe(false);
  });

  it('accepts 320 code points and rejects 321', () => {
    expect(isIdentifier('a'.repeat(320))).toBe(true);
    expect(isIdentifier('a'.repeat(321))).toBe(false);
  });

  it('counts code points, not UTF-16 units', () => {
    const emoji = '😀'; // two UTF-16 units, one code point
    expect(emoji.repeat(320).length).toBe(640);
    expect(isIdentifier(emoji.repeat(320))).toBe(true);
    expect(isIdentifier(emoji.repeat(321))).toBe(false);
    expect(isIdentifier(`${'a'.repeat(319)}${emoji}`)).toBe(true);
  });

  it('rejects the reserved cord: prefix (case-sensitive)', () => {
    expect(isIdentifier('cord:x')).toBe(false);
    expect(isIdentifier('cord:')).toBe(false);
    expect(isIdentifier('cord:123e4567-e89b-12d3-a456-426614174000')).toBe(false);
  });

  it('rejects characters of category Other (\\p{C})', () => {
    const others = {
      NUL: '\u0000',
      'line feed': '\n',
      tab: '\t',
      DEL: '\u007f',
      'C1 control': '\u0085',
      'zero-width space': '\u200b',
      'byte-order mark': '\ufeff',
      'right-to-left mark': '\u200f',
      'lone high surrogate': '\ud800',
      'lone low surrogate': '\udc00',
      'private use': '\ue000',
      'supplementary private use': '\u{f0000}',
      unassigned: '\u0378',
    };
    for (const [name, char] of Object.entries(others)) {
      expect(isIdentifier(`a${char}b`), name).toBe(false);
      expect(isIdentifier(char), name).toBe(false);
    }
  });
});

describe('isServerGeneratedId and isUuid', () => {
  it('accepts cord:<uuid> only', () => {
    expect(isServerGeneratedId('cord:123e4567-e89b-12d3-a456-426614174000')).toBe(true);
    expect(isServerGeneratedId('123e4567-e89b-12d3-a456-426614174000')).toBe(false);
    expect(isServerGeneratedId('cord:not-a-uuid')).toBe(false);
  });

  it('accepts UUIDs in either case and rejects anything else', () => {
    expect(isUuid('123E4567-E89B-12D3-A456-426614174000')).toBe(true);
    expect(isUuid('123e4567e89b12d3a456426614174000')).toBe(false);
    expect(isUuid(' 123e4567-e89b-12d3-a456-426614174000')).toBe(false);
  });
});

describe('isUri', () => {
  it('accepts absolute URIs of any scheme', () => {
    for (const uri of [
      'https://example.com/a.png',
      'http://example.com',
      'HTTPS://EXAMPLE.COM/X',
      'ftp://files.example.com/pub/file.txt',
      'mailto:x@y',
      'urn:isbn:0451450523',
      'https://example.com/path?q=1&r=a,b;c#frag',
      "https://example.com/~user/!$&'()*+,;=:@",
      'https://user:pass@example.com:8443/a',
      'https://[::1]:8080/x',
      'data:image/png;base64,iVBORw0KGgo=',
    ]) {
      expect(isUri(uri), uri).toBe(true);
    }
  });

  it('accepts percent-encoded characters, such as %20 for a space', () => {
    expect(isUri('https://example.com/my%20picture.png')).toBe(true);
    expect(isUri('https://example.com/caf%C3%A9')).toBe(true);
    expect(isUri('https://example.com/%2f%2F')).toBe(true);
  });

  it('rejects relative references and strings without a scheme', () => {
    for (const uri of ['', 'example.com', '/a/b', '//example.com/x', 'picture.png', '1http://x', '-a:b', ':x']) {
      expect(isUri(uri), uri).toBe(false);
    }
  });

  it('rejects a raw space and other characters outside RFC 3986', () => {
    for (const char of [' ', '"', '<', '>', '{', '}', '|', '\\', '^', '`', '\t', '\n', '\u0000']) {
      expect(isUri(`https://example.com/a${char}b`), JSON.stringify(char)).toBe(false);
    }
  });

  it('rejects raw non-ASCII characters', () => {
    expect(isUri('https://example.com/café')).toBe(false);
    expect(isUri('https://exämple.com/')).toBe(false);
    expect(isUri('https://example.com/😀')).toBe(false);
  });

  it('rejects malformed percent escapes', () => {
    for (const uri of ['https://example.com/%', 'https://example.com/%2', 'https://example.com/%zz', 'https://example.com/%g0x', 'https://example.com/100%']) {
      expect(isUri(uri), uri).toBe(false);
    }
  });
});

describe('isEmail', () => {
  it('accepts addresses matching the ajv-formats full pattern', () => {
    for (const email of ['a@b.co', 'alice@example.com', 'first.last+tag@sub.example.org', "o'brien@example.ie", 'UPPER@EXAMPLE.COM', 'a@b-c.d']) {
      expect(isEmail(email), email).toBe(true);
    }
  });

  it('rejects malformed addresses (the empty-string exception lives in the schema, not here)', () => {
    for (const email of ['', 'alice', 'alice@', '@example.com', 'a@b', 'a b@example.com', 'a..b@example.com', '.a@example.com', 'a@-b.com', 'a@b-.com', 'a@b..com', 'a@@b.com', 'alice@example.com ']) {
      expect(isEmail(email), email).toBe(false);
    }
  });
});

describe('parseDateTime (RFC 3339)', () => {
  it('parses UTC and offset date-times to the right instant', () => {
    expect(parseDateTime('2024-05-01T12:34:56Z')?.toISOString()).toBe('2024-05-01T12:34:56.000Z');
    expect(parseDateTime('2024-05-01T12:34:56.789Z')?.toISOString()).toBe('2024-05-01T12:34:56.789Z');
    expect(parseDateTime('2024-05-01T12:34:56+02:00')?.toISOString()).toBe('2024-05-01T10:34:56.000Z');
    expect(parseDateTime('2024-05-01T00:30:00-05:30')?.toISOString()).toBe('2024-05-01T06:00:00.000Z');
    expect(parseDateTime('2024-05-01T12:34:56.123456Z')?.toISOString()).toBe('2024-05-01T12:34:56.123Z');
  });

  it('accepts T, t or a space between date and time, and z for UTC', () => {
    const expected = '2024-05-01T12:34:56.000Z';
    expect(parseDateTime('2024-05-01t12:34:56Z')?.toISOString()).toBe(expected);
    expect(parseDateTime('2024-05-01 12:34:56Z')?.toISOString()).toBe(expected);
    expect(parseDateTime('2024-05-01T12:34:56z')?.toISOString()).toBe(expected);
  });

  it('requires a time-zone designator', () => {
    expect(parseDateTime('2024-05-01T12:34:56')).toBeNull();
    expect(parseDateTime('2024-05-01T12:34:56.789')).toBeNull();
  });

  it('rejects other shapes', () => {
    for (const value of [
      '',
      '2024-05-01',
      '12:34:56Z',
      '2024-5-1T12:34:56Z',
      '2024-05-01T12:34Z',
      '2024-05-01T12:34:56+0200',
      '2024-05-01T12:34:56+02',
      '2024-05-01T12:34:56.Z',
      '2024-05-01X12:34:56Z',
      '2024-05-01T12:34:56Z ',
      ' 2024-05-01T12:34:56Z',
      '1714566896000',
      'May 1, 2024 12:34:56 UTC',
    ]) {
      expect(parseDateTime(value), value).toBeNull();
    }
  });

  it('rejects dates that do not exist', () => {
    for (const value of [
      '2024-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-04-31T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-00-10T00:00:00Z',
      '2024-01-00T00:00:00Z',
      '2024-01-32T00:00:00Z',
      '1900-02-29T00:00:00Z',
    ]) {
      expect(parseDateTime(value), value).toBeNull();
    }
  });

  it('accepts 29 February in leap years, including years below 100', () => {
    expect(parseDateTime('2024-02-29T00:00:00Z')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(parseDateTime('2000-02-29T00:00:00Z')).not.toBeNull();
    expect(parseDateTime('0004-02-29T00:00:00Z')).not.toBeNull();
    expect(parseDateTime('0000-02-29T00:00:00Z')).not.toBeNull();
    expect(parseDateTime('0001-02-29T00:00:00Z')).toBeNull();
  });

  it('rejects impossible times and offsets', () => {
    for (const value of [
      '2024-05-01T24:00:00Z',
      '2024-05-01T12:60:00Z',
      '2024-05-01T12:00:61Z',
      '2024-05-01T12:00:00+24:00',
      '2024-05-01T12:00:00+02:60',
    ]) {
      expect(parseDateTime(value), value).toBeNull();
    }
  });

  it('accepts a leap second only at 23:59 UTC', () => {
    expect(parseDateTime('2016-12-31T23:59:60Z')).not.toBeNull();
    expect(parseDateTime('2016-12-31T18:59:60-05:00')).not.toBeNull();
    expect(parseDateTime('2016-12-31T12:00:60Z')).toBeNull();
    expect(parseDateTime('2016-12-31T23:59:60+01:00')).toBeNull();
  });
});

describe('isJwtShaped', () => {
  it('accepts three base64url segments (the signature may be empty)', () => {
    expect(isJwtShaped('eyJhbGciOiJIUzUxMiJ9.eyJhcHBfaWQiOiJ4In0.c2lnbmF0dXJl_-')).toBe(true);
    expect(isJwtShaped('a.b.')).toBe(true);
  });

  it('rejects anything else', () => {
    for (const value of ['', 'a.b', 'a.b.c.d', '.b.c', 'a..c', 'a.b.c ', 'a b.c.d', 'a+b.c.d', 'a/b.c.d', 'a=.b.c']) {
      expect(isJwtShaped(value), value).toBe(false);
    }
  });
});

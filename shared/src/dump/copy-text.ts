/**
 * PostgreSQL's COPY text format, one field at a time: what the original service's customer dump
 * (`GET /v1/customer/dbdump`, a psql script of COPY blocks) holds and what this server's export
 * writes back. Fields are tab-separated, `\N` is NULL, and backslash escapes stand for the
 * characters that would end a field or a line.
 */

const DECODE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };

/** Splits one data line into its fields, decoded; `null` for `\N`. */
export function parseCopyLine(line: string): (string | null)[] {
  const fields: (string | null)[] = [];
  for (const raw of line.split('\t')) fields.push(raw === '\\N' ? null : decodeCopyField(raw));
  return fields;
}

/** Undoes COPY's backslash escapes: `\n`, `\t`, `\\` …, octal `\NNN` and hex `\xHH` (bytes, read as UTF-8). */
export function decodeCopyField(raw: string): string {
  if (!raw.includes('\\')) return raw;
  let out = '';
  // Octal and hex escapes name bytes; consecutive ones may form one UTF-8 character.
  let bytes: number[] = [];
  const flushBytes = () => {
    if (bytes.length > 0) out += Buffer.from(bytes).toString('utf8');
    bytes = [];
  };
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i];
    if (char !== '\\' || i === raw.length - 1) {
      flushBytes();
      out += char;
      continue;
    }
    const next = raw[i + 1];
    if (next >= '0' && next <= '7') {
      let digits = '';
      while (digits.length < 3 && raw[i + 1] >= '0' && raw[i + 1] <= '7') digits += raw[++i];
      bytes.push(parseInt(digits, 8) & 0xff);
      continue;
    }
    if (next === 'x' && /[0-9a-fA-F]/.test(raw[i + 2] ?? '')) {
      let digits = '';
      i++;
      while (digits.length < 2 && /[0-9a-fA-F]/.test(raw[i + 1] ?? '')) digits += raw[++i];
      bytes.push(parseInt(digits, 16));
      continue;
    }
    flushBytes();
    // Any other escaped character stands for itself (PostgreSQL's rule).
    out += DECODE[next] ?? next;
    i++;
  }
  flushBytes();
  return out;
}

/** Escapes a value for a COPY text field (`\N` for null). */
export function encodeCopyField(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r\b\f\v]/g, (char) => {
    switch (char) {
      case '\\':
        return '\\\\';
      case '\t':
        return '\\t';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\b':
        return '\\b';
      case '\f':
        return '\\f';
      default:
        return '\\v';
    }
  });
}

/**
 * A one-dimensional text array literal (`{a,b}`, `{"a b","x\"y"}`, `NULL` elements) as strings;
 * null stays null. Only the shapes the dump holds (text[] columns) are needed.
 */
export function parseTextArray(value: string | null | undefined): (string | null)[] | null {
  if (value === null || value === undefined) return null;
  if (!value.startsWith('{') || !value.endsWith('}')) throw new Error(`not an array literal: ${value.slice(0, 40)}`);
  const body = value.slice(1, -1);
  if (body === '') return [];
  const items: (string | null)[] = [];
  let i = 0;
  while (i <= body.length) {
    if (body[i] === '"') {
      let item = '';
      i++;
      while (i < body.length && body[i] !== '"') {
        if (body[i] === '\\') i++;
        item += body[i++];
      }
      items.push(item);
      i += 2; // closing quote and comma
    } else {
      const end = body.indexOf(',', i);
      const item = body.slice(i, end === -1 ? body.length : end);
      items.push(item === 'NULL' ? null : item);
      i = end === -1 ? body.length + 1 : end + 1;
    }
  }
  return items;
}

/** A text array literal as PostgreSQL writes it: elements quoted only when they need it. */
export function formatTextArray(items: readonly string[] | null): string | null {
  if (items === null) return null;
  const quoted = items.map((item) =>
    item === '' || /[{},"\\\s]/.test(item) || item.toUpperCase() === 'NULL' ? `"${item.replace(/["\\]/g, (c) => `\\${c}`)}"` : item,
  );
  return `{${quoted.join(',')}}`;
}

/**
 * A `timestamptz` as the dump writes it (`2026-11-24 17:17:36.39536+00`, any offset, up to
 * microseconds) as a Date; milliseconds are what this server keeps. Null (or a column the dump
 * does not have) stays null.
 */
export function parseTimestamp(value: string | null | undefined): Date | null {
  if (value === null || value === undefined) return null;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?([+-]\d{2})(?::?(\d{2}))?(?::?(\d{2}))?$/.exec(value);
  if (!match) throw new Error(`not a timestamp: ${value}`);
  const [, date, time, fraction = '', hours, minutes = '00'] = match;
  const millis = (fraction + '000').slice(1, 4);
  const parsed = new Date(`${date}T${time}.${millis}${hours}:${minutes}`);
  if (Number.isNaN(parsed.getTime())) throw new Error(`not a timestamp: ${value}`);
  return parsed;
}

/** A Date as PostgreSQL writes a `timestamptz` in UTC (`2026-11-24 17:17:36.395+00`). */
export function formatTimestamp(value: Date | null): string | null {
  if (value === null) return null;
  return `${value.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

/** `t`/`f` as a boolean (null stays null). */
export function parseBoolean(value: string | null | undefined): boolean | null {
  if (value === null || value === undefined) return null;
  if (value === 't') return true;
  if (value === 'f') return false;
  throw new Error(`not a boolean: ${value}`);
}

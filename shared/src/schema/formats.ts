/**
 * String formats used by request schemas.
 * Each is a pure predicate so that the same rule serves validation and tests.
 */

const RESERVED_ID_PREFIX = 'cord:';
const OTHER_CATEGORY = /\p{C}/u;

/** Customer-chosen identifiers: 1–320 code points, no `cord:` prefix, no \p{C} characters. */
export function isIdentifier(value: string): boolean {
  const length = [...value].length;
  return (
    length >= 1 &&
    length <= 320 &&
    !value.startsWith(RESERVED_ID_PREFIX) &&
    !OTHER_CATEGORY.test(value)
  );
}

/** `cord:<uuid>`: how a server-generated object is addressed. */
export function isServerGeneratedId(value: string): boolean {
  return value.startsWith(RESERVED_ID_PREFIX) && isUuid(value.slice(RESERVED_ID_PREFIX.length));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

// Absolute URI with a scheme, RFC 3986 characters only, `%` always followed by two hex digits.
const URI_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const URI_CHARS = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;
export function isUri(value: string): boolean {
  return URI_SCHEME.test(value) && URI_CHARS.test(value);
}

// ajv-formats "full" e-mail pattern.
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;
export function isEmail(value: string): boolean {
  return EMAIL.test(value);
}

// RFC 3339 date-time; the time-zone designator is mandatory; `T`, `t` or a space separates.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}
export function parseDateTime(value: string): Date | null {
  const match = DATE_TIME.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  // Computed by hand: Date.UTC maps the years 0–99 to 1900–1999 (0000-02-29 exists, 1900-02-29 not).
  if (month < 1 || month > 12 || day < 1) return null;
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1])) return null;
  const sign = match[8] === '-' ? -1 : 1;
  const offsetHours = match[8] === undefined ? 0 : Number(match[9]);
  const offsetMinutes = match[8] === undefined ? 0 : Number(match[10]);
  if (offsetHours > 23 || offsetMinutes > 59) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  if (second === 60) {
    // A leap second exists only as 23:59:60 UTC (as ajv-formats checks it).
    const utcMinutes = (((hour * 60 + minute - sign * (offsetHours * 60 + offsetMinutes)) % 1440) + 1440) % 1440;
    if (utcMinutes !== 23 * 60 + 59) return null;
  }
  const date = new Date(value.replace(' ', 'T').replace(/:60(?=[.Zz+-])/, ':59'));
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A JSON-looking JWT: three base64url segments. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
export function isJwtShaped(value: string): boolean {
  return JWT_SHAPE.test(value);
}

/**
 * Text PostgreSQL can store exactly as sent: JSON strings may carry U+0000 and unpaired UTF-16
 * surrogates, which `text` and `jsonb` columns reject (or silently replace).
 */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !UNPAIRED_SURROGATE.test(value);
}
export const STORABLE_TEXT_WORDS = 'text without NUL characters or unpaired surrogates';

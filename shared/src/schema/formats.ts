/**
 * String formats used by request schemas (behavior.md §2.1, §3.2, §3.3, §1).
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
export function parseDateTime(value: string): Date | null {
  const match = DATE_TIME.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  if (match[9] !== undefined && (Number(match[9]) > 23 || Number(match[10]) > 59)) return null;
  const date = new Date(value.replace(' ', 'T').replace(/:60(?=[.Zz+-])/, ':59'));
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A JSON-looking JWT: three base64url segments. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
export function isJwtShaped(value: string): boolean {
  return JWT_SHAPE.test(value);
}

/**
 * Pagination cursors: where a page of a keyset-paginated list ends, handed to the client as an
 * opaque `token` (standard base64 of a small JSON object whose values are strings) and read back
 * from the next request.
 *
 * A token comes back from the client, so decoding trusts nothing in it: every field must be a
 * value of its kind that the server could have issued, checked here before it reaches SQL. Any
 * other token is `400 invalid_field` "Pagination token is not valid", never
 * a database error.
 */
import { ApiError } from '../errors.js';
import { isStorableText, isUuid } from '../schema/formats.js';
import { isPlainObject } from '../schema/object-schemas.js';

/** A field kind: whether a string from a token is a value of that kind. */
export type CursorField = (value: string) => boolean;

const POSTGRES_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?$/;

/**
 * `YYYY-MM-DD HH:MM:SS[.ffffff]` naming a real instant. A well-shaped but impossible value (month
 * 13, 30 February, hour 24 or 99, second 60, year 0) would reach PostgreSQL and fail there; four
 * digits from year 1 keep it within PostgreSQL's range.
 */
function isPostgresTimestamp(value: string): boolean {
  const match = POSTGRES_TIMESTAMP.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  // Set field by field: Date.UTC would read the years 0–99 as 1900–1999. Overflowing fields roll
  // over into the next unit, so an impossible value reads back different.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second);
  return (
    year >= 1 &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second
  );
}

/** The field kinds a cursor is made of. */
export const cursorField: Record<'text' | 'timestamp' | 'bigintId' | 'uuid', CursorField> = {
  /** An entity's id: non-empty text PostgreSQL can compare (no NUL, no unpaired surrogate). */
  text: (value) => value !== '' && isStorableText(value),
  /** A PostgreSQL `timestamp` with microseconds, as `to_char(…, 'YYYY-MM-DD HH24:MI:SS.US')` writes it. */
  timestamp: isPostgresTimestamp,
  /** An internal `bigint` id: at most 18 digits always fits in a bigint. */
  bigintId: (value) => /^\d{1,18}$/.test(value),
  /** A row's `uuid` id, compared as one. */
  uuid: isUuid,
};

/** The keys of a cursor's token JSON, in the order they are written, with the kind of each. */
export type CursorShape = Record<string, CursorField>;
export type Cursor<S extends CursorShape> = { [K in keyof S]: string };
export type CursorOf<C> = C extends CursorCodec<infer S> ? Cursor<S> : never;

export interface Page<T> {
  rows: T[];
  /** The token of the next page, or null. */
  token: string | null;
}

const INVALID_TOKEN_MESSAGE = 'Pagination token is not valid';

export class CursorCodec<S extends CursorShape> {
  constructor(readonly shape: S) {}

  /** The token for a cursor: its fields in the shape's order, JSON, standard base64. */
  encode(cursor: Cursor<S>): string {
    const json = Object.fromEntries(Object.keys(this.shape).map((key) => [key, cursor[key]]));
    return Buffer.from(JSON.stringify(json), 'utf8').toString('base64');
  }

  /**
   * The cursor a token carries, with only the shape's keys. Clients paste tokens into query strings
   * unencoded, so a space is read as the `+` it was. Unknown keys are ignored.
   */
  decode(token: string): Cursor<S> {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(token.replaceAll(' ', '+'), 'base64').toString('utf8'));
    } catch {
      throw new ApiError('invalid_field', INVALID_TOKEN_MESSAGE);
    }
    if (!isPlainObject(decoded)) throw new ApiError('invalid_field', INVALID_TOKEN_MESSAGE);
    const cursor: Record<string, string> = {};
    for (const [key, isValid] of Object.entries(this.shape)) {
      const value = Object.hasOwn(decoded, key) ? decoded[key] : undefined;
      if (typeof value !== 'string' || !isValid(value)) throw new ApiError('invalid_field', INVALID_TOKEN_MESSAGE);
      cursor[key] = value;
    }
    return cursor as Cursor<S>;
  }

  /**
   * A page of at most `limit` rows and the next page's token. `fetch` is asked for one row more
   * than the page: the token exists only when that extra row does, so the last page has none.
   * A `limit` of 0 reads nothing.
   */
  async page<T>(limit: number, fetch: (count: number) => Promise<T[]>, cursorOf: (row: T) => Cursor<S>): Promise<Page<T>> {
    const fetched = limit === 0 ? [] : await fetch(limit + 1);
    const rows = fetched.slice(0, limit);
    return { rows, token: fetched.length > limit ? this.encode(cursorOf(rows[rows.length - 1])) : null };
  }

  /**
   * A page of at most `limit` rows with a token whenever the page is full, so that the last page
   * may be empty (GET /v1/messages pages this way, and its clients count on it).
   */
  async pageWithTokenWhenFull<T>(limit: number, fetch: (count: number) => Promise<T[]>, cursorOf: (row: T) => Cursor<S>): Promise<Page<T>> {
    const rows = limit === 0 ? [] : await fetch(limit);
    return { rows, token: limit > 0 && rows.length === limit ? this.encode(cursorOf(rows[rows.length - 1])) : null };
  }
}

/** The cursor of a paged endpoint: its token's keys, in the order written, with the kind of each. */
export function defineCursor<const S extends CursorShape>(shape: S): CursorCodec<S> {
  return new CursorCodec(shape);
}

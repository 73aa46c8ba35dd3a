/**
 * Query-string parameters: `limit`, pagination `token`, `filter`, enums, text and search text.
 * Unknown query parameters are ignored.
 */
import { ApiError, type ErrorCode } from '../errors.js';
import type { Cursor, CursorCodec, CursorShape } from '../pagination/cursor.js';
import type { JsonSchema } from './schema.js';
import { isStorableText, STORABLE_TEXT_WORDS } from './formats.js';
import { FlatObjectSchema, isPlainObject } from './object-schemas.js';

export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 1000;

export abstract class QueryParam<Out> {
  declare readonly _output: Out;
  constructor(readonly description: string) {}
  abstract parse(raw: unknown): Out;
  abstract jsonSchema(): JsonSchema;
}

/** A given `limit`: digits only, clamped to 1000. */
function pageSize(raw: unknown): number {
  // Says what is allowed: `-1` and `1.5` are numbers, but not page sizes.
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new ApiError('invalid_field', 'Limit must be a whole number from 0.');
  return Math.min(Number(raw), MAX_PAGE_SIZE);
}

/** `limit`: digits only, default 1000, clamped to 1000. */
export class LimitParam extends QueryParam<number> {
  parse(raw: unknown): number {
    return raw === undefined || raw === '' ? DEFAULT_PAGE_SIZE : pageSize(raw);
  }
  jsonSchema(): JsonSchema {
    return { type: 'integer', minimum: 0, default: DEFAULT_PAGE_SIZE };
  }
}

/**
 * `limit` of a list the API document answers whole: absent, the list is not paged (undefined);
 * given, as `limit`.
 */
export class OptionalLimitParam extends QueryParam<number | undefined> {
  parse(raw: unknown): number | undefined {
    return raw === undefined || raw === '' ? undefined : pageSize(raw);
  }
  jsonSchema(): JsonSchema {
    return { type: 'integer', minimum: 0, maximum: MAX_PAGE_SIZE };
  }
}

/**
 * Pagination `token`: decoded and checked by the endpoint's cursor codec, so the handler gets a
 * typed cursor whose every field is safe to query with.
 */
export class TokenParam<S extends CursorShape> extends QueryParam<Cursor<S> | null> {
  constructor(
    description: string,
    readonly codec: CursorCodec<S>,
  ) {
    super(description);
  }
  parse(raw: unknown): Cursor<S> | null {
    if (raw === undefined || raw === '') return null;
    if (typeof raw !== 'string')
      throw new ApiError('invalid_field', 'Pagination token should be of type string.');
    return this.codec.decode(raw);
  }
  jsonSchema(): JsonSchema {
    return { type: 'string' };
  }
}

/** Every key a filter may hold, on any list; others are rejected by name. */
const RECOGNISED_FILTER_KEYS = [
  'location',
  'metadata',
  'authorID',
  'firstMessageTimestamp',
  'mostRecentMessageTimestamp',
  'groupID',
  'organizationID',
  'resolvedStatus',
  'viewer',
] as const;
/** Never rejected; ignored by endpoints that do not use them. */
const ALWAYS_TOLERATED = new Set(['groupID', 'organizationID']);

export type FilterKeyParser<T> = (value: unknown) => T;
type FilterOutput<P extends Record<string, FilterKeyParser<unknown>>> = {
  [K in keyof P]?: ReturnType<P[K]>;
};

/** `filter`: URI-encoded JSON object with endpoint-specific keys. */
export class FilterParam<P extends Record<string, FilterKeyParser<unknown>>> extends QueryParam<
  FilterOutput<P>
> {
  constructor(
    description: string,
    private readonly keys: P,
  ) {
    super(description);
  }
  parse(raw: unknown): FilterOutput<P> {
    if (raw === undefined || raw === '') return {};
    let parsed: unknown;
    try {
      parsed = typeof raw === 'string' ? JSON.parse(raw) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!isPlainObject(parsed))
      throw new ApiError('invalid_field', 'The filter object must be a valid JSON object.');
    const output: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(parsed)) {
      const recognised = (RECOGNISED_FILTER_KEYS as readonly string[]).includes(key);
      const supported = Object.hasOwn(this.keys, key);
      if (!supported && !(recognised && ALWAYS_TOLERATED.has(key)))
        throw new ApiError('invalid_field', `The filter object does not support "${key}" as a field.`);
      // Falsy values are treated as absent.
      if (!supported || !value) continue;
      output[key] = this.keys[key](value);
    }
    return output as FilterOutput<P>;
  }
  jsonSchema(): JsonSchema {
    return {
      type: 'string',
      description: `URI-encoded JSON object with the optional keys ${Object.keys(this.keys).join(', ')}.`,
    };
  }
}

/** An enumerated query value, compared case-insensitively. */
export class EnumParam<const V extends readonly string[]> extends QueryParam<V[number] | undefined> {
  constructor(
    description: string,
    private readonly values: V,
    private readonly failure: { code: ErrorCode; message: string },
  ) {
    super(description);
  }
  parse(raw: unknown): V[number] | undefined {
    if (raw === undefined || raw === '') return undefined;
    const value = typeof raw === 'string' ? raw.toLowerCase() : undefined;
    const match = this.values.find((candidate) => candidate.toLowerCase() === value);
    if (match === undefined) throw new ApiError(this.failure.code, this.failure.message);
    return match;
  }
  jsonSchema(): JsonSchema {
    return { type: 'string', enum: [...this.values] };
  }
}

/** A text value as given (undefined when absent); the handler decides what a bad one means. */
export class TextParam extends QueryParam<string | undefined> {
  parse(raw: unknown): string | undefined {
    return typeof raw === 'string' ? raw : undefined;
  }
  jsonSchema(): JsonSchema {
    return { type: 'string' };
  }
}

/** Text to search for: trimmed, undefined when absent or blank, refused when the database could not compare it. */
export class SearchParam extends QueryParam<string | undefined> {
  constructor(
    description: string,
    private readonly name: string,
  ) {
    super(description);
  }
  parse(raw: unknown): string | undefined {
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string' || !isStorableText(raw))
      throw new ApiError('invalid_field', `"${this.name}" must be one ${STORABLE_TEXT_WORDS}.`);
    return raw.trim() || undefined;
  }
  jsonSchema(): JsonSchema {
    return { type: 'string' };
  }
}

export type QueryShape = Record<string, QueryParam<unknown>>;
export type InferQuery<S extends QueryShape> = { [K in keyof S]: S[K]['_output'] };

export class QuerySchema<S extends QueryShape> {
  constructor(readonly shape: S) {}
  parse(query: Record<string, unknown>): InferQuery<S> {
    const output: Record<string, unknown> = {};
    for (const [key, param] of Object.entries(this.shape)) output[key] = param.parse(query[key]);
    return output as InferQuery<S>;
  }
}

const flatObject = new FlatObjectSchema();
/** Filter `metadata`: a flat JSON object, matched by containment. */
export const filterMetadata: FilterKeyParser<Record<string, string | number | boolean>> = (value) => {
  try {
    return flatObject.parse(value, ['metadata']);
  } catch {
    throw new ApiError('invalid_field', '"metadata" must be valid JSON.');
  }
};

export const q = {
  limit: (description = 'Page size; default and maximum 1000.') => new LimitParam(description),
  optionalLimit: (description: string) => new OptionalLimitParam(description),
  token: <S extends CursorShape>(codec: CursorCodec<S>, description = 'Token of the next page, from pagination.token.') =>
    new TokenParam(description, codec),
  filter: <P extends Record<string, FilterKeyParser<unknown>>>(keys: P, description = 'Filter.') =>
    new FilterParam(description, keys),
  enum: <const V extends readonly string[]>(
    values: V,
    failure: { code: ErrorCode; message: string },
    description = '',
  ) => new EnumParam(description, values, failure),
  text: (description: string) => new TextParam(description),
  search: (name: string, description: string) => new SearchParam(description, name),
  object: <S extends QueryShape>(shape: S) => new QuerySchema(shape),
};

/** Filter `location`: a flat object (exact match) or `{value, partialMatch}` (containment when true). */
export const filterLocation: FilterKeyParser<{ value: Record<string, string | number | boolean>; partialMatch: boolean }> = (
  value,
) => {
  const fail = () =>
    new ApiError('invalid_field', '"location" must be valid JSON. It must be a flat object or {"value": {...}, "partialMatch": true|false}.');
  if (!isPlainObject(value)) throw fail();
  if ('value' in value && ('partialMatch' in value || Object.keys(value).length === 1) && isPlainObject(value.value)) {
    if ('partialMatch' in value && typeof value.partialMatch !== 'boolean') throw fail();
    try {
      return { value: flatObject.parse(value.value, ['location']), partialMatch: value.partialMatch === true };
    } catch {
      throw fail();
    }
  }
  try {
    return { value: flatObject.parse(value, ['location']), partialMatch: false };
  } catch {
    throw fail();
  }
};

/** Filter keys naming an entity (`authorID`, `groupID`): a string. */
export const filterId =
  (name: string): FilterKeyParser<string> =>
  (value) => {
    if (typeof value !== 'string') throw new ApiError('invalid_field', `"${name}" is not valid.`);
    return value;
  };

export interface TimeRange {
  from?: Date;
  to?: Date;
}

/** Filter timestamp ranges `{from?, to?}`, each a string or number a JavaScript Date accepts. */
export const filterTimeRange =
  (name: string): FilterKeyParser<TimeRange> =>
  (value) => {
    if (!isPlainObject(value)) throw new ApiError('invalid_field', `"${name}" must be valid JSON object.`);
    const keys = Object.keys(value);
    if (keys.length === 0 || keys.some((key) => key !== 'from' && key !== 'to'))
      throw new ApiError('invalid_field', `"${name}" must have "from", "to" or both, and nothing else.`);
    const range: TimeRange = {};
    for (const key of ['from', 'to'] as const) {
      if (!(key in value)) continue;
      const raw = value[key];
      const date = typeof raw === 'string' || typeof raw === 'number' ? new Date(raw) : null;
      if (!date || Number.isNaN(date.getTime()))
        throw new ApiError('invalid_field', `"${key}" value on "${name}" must be a valid date`);
      range[key] = date;
    }
    return range;
  };

export const filterResolvedStatus: FilterKeyParser<'any' | 'resolved' | 'unresolved'> = (value) => {
  if (value !== 'any' && value !== 'resolved' && value !== 'unresolved')
    throw new ApiError('invalid_field', '"resolvedStatus" must be set to "any", "resolved", or "unresolved"');
  return value;
};

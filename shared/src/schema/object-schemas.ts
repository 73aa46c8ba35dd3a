/** The schemas of JSON containers: objects with known keys, flat objects, arrays, records and unions. */
import { formatPath, listWords, plural, type Path } from './path.js';
import { isStorableText, STORABLE_TEXT_WORDS } from './formats.js';
import { NullableSchema, OptionalSchema, Schema, type Infer, type JsonSchema } from './schema.js';
import { ApiError } from '../errors.js';

export type FlatJson = Record<string, string | number | boolean>;

/** EntityMetadata / FlatJsonObject / Location: scalar values only. */
export class FlatObjectSchema extends Schema<FlatJson> {
  readonly expected = 'object whose values are strings, numbers or booleans';
  parse(value: unknown, path: Path = []): FlatJson {
    if (!isPlainObject(value)) this.invalid(path);
    for (const [key, entry] of Object.entries(value)) {
      const type = typeof entry;
      if (type !== 'string' && type !== 'boolean' && !(type === 'number' && Number.isFinite(entry)))
        this.invalid(path);
      if (!isStorableText(key) || (type === 'string' && !isStorableText(entry as string)))
        this.invalid(path, `object of ${STORABLE_TEXT_WORDS}`);
    }
    return value as FlatJson;
  }
  protected baseJsonSchema(): JsonSchema {
    return {
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'boolean'] },
    };
  }
}

export class ArraySchema<Item> extends Schema<Item[]> {
  constructor(
    private readonly item: Schema<Item>,
    private readonly options: { minItems?: number; maxItems?: number } = {},
  ) {
    super();
  }
  get expected(): string {
    const { minItems, maxItems } = this.options;
    if (maxItems !== undefined) return `array of at most ${maxItems} items`;
    if (minItems) return `array of at least ${minItems} ${plural(minItems, 'item')}`;
    return 'array';
  }
  parse(value: unknown, path: Path = []): Item[] {
    if (!Array.isArray(value)) this.invalid(path);
    const { minItems, maxItems } = this.options;
    if (maxItems !== undefined && value.length > maxItems) this.invalid(path);
    if (minItems !== undefined && value.length < minItems) this.invalid(path);
    return value.map((entry, index) => this.item.parse(entry, [...path, index]));
  }
  protected baseJsonSchema(): JsonSchema {
    const schema: JsonSchema = { type: 'array', items: this.item.jsonSchema() };
    if (this.options.minItems !== undefined) schema.minItems = this.options.minItems;
    if (this.options.maxItems !== undefined) schema.maxItems = this.options.maxItems;
    return schema;
  }
}

export type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends OptionalSchema<unknown> | NullableSchema<unknown, OptionalSchema<unknown>> ? K : never;
}[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type InferShape<S extends Shape> = Simplify<
  { [K in RequiredKeys<S>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }
>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A JSON object with known keys. Evaluation order: all missing required
 * keys at once (`missing_field`), then the received keys in their order, where the first
 * unknown key gives `unexpected_field` and the first invalid value `invalid_field`.
 */
export class ObjectSchema<S extends Shape> extends Schema<InferShape<S>> {
  readonly expected = 'object';
  /**
   * `alternatives`: groups of optional keys of which at least one must be present (a field and its
   * alias, e.g. `groupID` / `organizationID`); a missing group is reported by its first key, in
   * that key's place among the missing ones.
   */
  constructor(
    readonly shape: S,
    private readonly options: { alternatives?: readonly (readonly string[])[] } = {},
  ) {
    super();
  }

  get requiredKeys(): string[] {
    return Object.keys(this.shape).filter((key) => !this.shape[key].isOptional);
  }

  get optionalKeys(): string[] {
    return Object.keys(this.shape).filter((key) => this.shape[key].isOptional);
  }

  parse(value: unknown, path: Path = []): InferShape<S> {
    if (!isPlainObject(value)) {
      if (path.length === 0) throw new ApiError('invalid_request', 'Request body must be a JSON object.');
      this.invalid(path);
    }
    const missing = this.missingKeys(value);
    if (missing.length > 0) {
      const names = missing.map((key) => formatPath([...path, key]));
      throw new ApiError(
        'missing_field',
        `Missing required ${plural(names.length, 'field')}: ${listWords(names)}.`,
      );
    }
    const output: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (!Object.hasOwn(this.shape, key)) throw this.unexpectedField([...path, key]);
      output[key] = this.shape[key].parse(value[key], [...path, key]);
    }
    return output as InferShape<S>;
  }

  /**
   * The required keys the value lacks, in the order the shape declares them; a group of
   * alternatives none of which is present counts as its first key, in that key's place.
   */
  private missingKeys(value: Record<string, unknown>): string[] {
    const groups = new Map((this.options.alternatives ?? []).map((group) => [group[0], group]));
    return Object.keys(this.shape).filter((key) => {
      const group = groups.get(key);
      if (group) return !group.some((alternative) => Object.hasOwn(value, alternative));
      return !this.shape[key].isOptional && !Object.hasOwn(value, key);
    });
  }

  private unexpectedField(path: Path): ApiError {
    const parts: string[] = [];
    const required = this.requiredKeys;
    const optional = this.optionalKeys;
    if (required.length > 0)
      parts.push(`${required.length} required ${plural(required.length, 'field')}: ${listWords(required)}.`);
    if (optional.length > 0)
      parts.push(`${optional.length} optional ${plural(optional.length, 'field')}: ${listWords(optional)}.`);
    const expected = parts.length > 0 ? ` Expected ${parts.join(' ')}` : ' Expected no fields.';
    return new ApiError(
      'unexpected_field',
      `${formatPath(path)} is not a valid field name for this request.${expected}`,
    );
  }

  protected baseJsonSchema(): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    for (const [key, schema] of Object.entries(this.shape)) properties[key] = schema.jsonSchema();
    const schema: JsonSchema = { type: 'object', properties, additionalProperties: false };
    if (this.requiredKeys.length > 0) schema.required = this.requiredKeys;
    const alternatives = this.options.alternatives ?? [];
    if (alternatives.length > 0)
      schema.allOf = alternatives.map((group) => ({ anyOf: group.map((key) => ({ required: [key] })) }));
    return schema;
  }
}

/**
 * One of several shapes, tried in order; the first that accepts the value gives it. Described as
 * `oneOf`, so the shapes must not overlap (give each a distinct literal or required key).
 */
export class UnionSchema<Out> extends Schema<Out> {
  constructor(private readonly options: readonly Schema<Out>[]) {
    super();
  }
  get expected(): string {
    return this.options.map((option) => option.expected).join(' or ');
  }
  parse(value: unknown, path: Path = []): Out {
    for (const option of this.options) {
      try {
        return option.parse(value, path);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
      }
    }
    this.invalid(path);
  }
  protected baseJsonSchema(): JsonSchema {
    return { oneOf: this.options.map((option) => option.jsonSchema()) };
  }
}

/** An object of any keys whose values all have one shape, e.g. counts keyed by table. */
export class RecordSchema<Value> extends Schema<Record<string, Value>> {
  constructor(private readonly value: Schema<Value>) {
    super();
  }
  get expected(): string {
    return 'object';
  }
  parse(value: unknown, path: Path = []): Record<string, Value> {
    if (!isPlainObject(value)) this.invalid(path);
    const output: Record<string, Value> = {};
    for (const [key, entry] of Object.entries(value)) output[key] = this.value.parse(entry, [...path, key]);
    return output;
  }
  protected baseJsonSchema(): JsonSchema {
    return { type: 'object', additionalProperties: this.value.jsonSchema() };
  }
}

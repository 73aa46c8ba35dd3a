/**
 * A small schema library: each schema validates a request value with the four validation
 * codes (`invalid_request`, `missing_field`, `unexpected_field`, `invalid_field`) and their
 * messages, and describes itself as JSON Schema (2020-12, the dialect of
 * OpenAPI 3.1). Hand-written because the contract fixes the evaluation order (missing fields
 * first, then received keys in order) and the message wording, which general-purpose
 * validators do not produce.
 */
import { ApiError } from '../errors.js';
import { isEmail, isIdentifier, isJwtShaped, isStorableText, isUri, isUuid, parseDateTime, STORABLE_TEXT_WORDS } from './formats.js';
import { formatPath, listWords, plural, type Path } from './path.js';

export type JsonSchema = Record<string, unknown>;

export abstract class Schema<Out> {
  declare readonly _output: Out;
  /** What a valid value looks like, for `Input type for x is not valid, expected <this>.` */
  abstract readonly expected: string;
  protected descriptionText?: string;
  private componentName?: string;

  abstract parse(value: unknown, path?: Path): Out;
  protected abstract baseJsonSchema(): JsonSchema;

  /** The JSON Schema of values: a `$ref` to the OpenAPI components when the schema is named. */
  jsonSchema(): JsonSchema {
    if (this.componentName) return { $ref: `#/components/schemas/${this.componentName}` };
    return this.definitionJsonSchema();
  }

  /** The schema itself, also when it is named: what the OpenAPI components hold under its name. */
  definitionJsonSchema(): JsonSchema {
    const schema = this.baseJsonSchema();
    return this.descriptionText ? { ...schema, description: this.descriptionText } : schema;
  }

  /**
   * Documents the schema once, as `#/components/schemas/<name>` of the OpenAPI document, and
   * refers to it wherever it appears: an object several answers share gets one name in generated
   * clients. The document must then list it among its components.
   */
  named(name: string): this {
    this.componentName = name;
    return this;
  }

  get name(): string | undefined {
    return this.componentName;
  }

  describe(text: string): this {
    this.descriptionText = text;
    return this;
  }

  /** Whether an object may omit the key (true for `.optional()`, also under `.nullable()`). */
  get isOptional(): boolean {
    return false;
  }

  optional(): OptionalSchema<Out> {
    return new OptionalSchema(this);
  }

  nullable(): NullableSchema<Out, this> {
    return new NullableSchema<Out, this>(this);
  }

  protected invalid(path: Path, expected: string = this.expected): never {
    throw invalidField(path, expected);
  }
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

export function invalidField(path: Path, expected: string): ApiError {
  return new ApiError(
    'invalid_field',
    `Input type for ${formatPath(path)} is not valid, expected ${expected}.`,
  );
}

export class OptionalSchema<Out> extends Schema<Out> {
  constructor(readonly inner: Schema<Out>) {
    super();
  }
  override get isOptional(): boolean {
    return true;
  }
  get expected(): string {
    return this.inner.expected;
  }
  parse(value: unknown, path: Path = []): Out {
    return this.inner.parse(value, path);
  }
  protected baseJsonSchema(): JsonSchema {
    return this.inner.jsonSchema();
  }
}

/**
 * `x.nullable()`: null or what `x` accepts. `x.optional().nullable()` stays optional, like
 * `x.nullable().optional()`.
 */
export class NullableSchema<Out, Inner extends Schema<Out> = Schema<Out>> extends Schema<Out | null> {
  constructor(readonly inner: Inner) {
    super();
  }
  override get isOptional(): boolean {
    return this.inner.isOptional;
  }
  get expected(): string {
    return `${this.inner.expected} or null`;
  }
  parse(value: unknown, path: Path = []): Out | null {
    if (value === null) return null;
    try {
      return this.inner.parse(value, path);
    } catch (error) {
      // Restate the inner schema's own type mismatch at this path with "or null"; errors about
      // nested paths (`logoConfig.width`, `ids/1`) and specific semantic messages pass unchanged.
      if (error instanceof ApiError && error.message === invalidField(path, this.inner.expected).message)
        this.invalid(path);
      throw error;
    }
  }
  protected baseJsonSchema(): JsonSchema {
    return { anyOf: [this.inner.jsonSchema(), { type: 'null' }] };
  }
}

type StringFormat = 'uri' | 'email' | 'identifier' | 'uuid' | 'jwt';
const FORMAT_CHECKS: Record<StringFormat, (value: string) => boolean> = {
  uri: isUri,
  // An empty e-mail is accepted and means "not provided".
  email: (value) => value === '' || isEmail(value),
  identifier: isIdentifier,
  uuid: isUuid,
  jwt: isJwtShaped,
};
const FORMAT_WORDS: Record<StringFormat, string> = {
  uri: 'a valid URL (characters outside RFC 3986 must be percent-encoded)',
  email: 'email',
  identifier: 'identifier',
  uuid: 'UUID',
  jwt: 'JWT',
};

export class StringSchema extends Schema<string> {
  constructor(
    private readonly options: { minLength?: number; maxLength?: number; format?: StringFormat } = {},
  ) {
    super();
  }
  get expected(): string {
    const { format, minLength, maxLength } = this.options;
    if (format) return FORMAT_WORDS[format];
    if (minLength !== undefined && maxLength !== undefined)
      return `string of ${minLength} to ${maxLength} characters`;
    if (minLength) return `string of at least ${minLength} ${plural(minLength, 'character')}`;
    if (maxLength !== undefined) return `string of at most ${maxLength} characters`;
    return 'string';
  }
  parse(value: unknown, path: Path = []): string {
    if (typeof value !== 'string') this.invalid(path);
    const { format, minLength, maxLength } = this.options;
    if (format && !FORMAT_CHECKS[format](value)) this.invalid(path);
    if (!isStorableText(value)) this.invalid(path, STORABLE_TEXT_WORDS);
    // Lengths in code points, as JSON Schema's minLength/maxLength (and ajv) count them.
    if (minLength !== undefined && codePointLength(value) < minLength) this.invalid(path);
    if (maxLength !== undefined && codePointLength(value) > maxLength) this.invalid(path);
    return value;
  }
  protected baseJsonSchema(): JsonSchema {
    const { format, minLength, maxLength } = this.options;
    const schema: JsonSchema = { type: 'string' };
    if (minLength !== undefined) schema.minLength = minLength;
    if (maxLength !== undefined) schema.maxLength = maxLength;
    if (format === 'identifier') {
      schema.minLength = 1;
      schema.maxLength = 320;
      schema.pattern = '^(?!cord:)';
    } else if (format) schema.format = format;
    return schema;
  }
}

/** RFC 3339 date-time strings, parsed to Date. */
export class DateTimeSchema extends Schema<Date> {
  readonly expected = 'date-time string (RFC 3339, with a time zone)';
  parse(value: unknown, path: Path = []): Date {
    const date = typeof value === 'string' ? parseDateTime(value) : null;
    if (!date) this.invalid(path);
    return date;
  }
  protected baseJsonSchema(): JsonSchema {
    return { type: 'string', format: 'date-time' };
  }
}

export class NumberSchema extends Schema<number> {
  constructor(private readonly options: { integer?: boolean; minimum?: number; maximum?: number } = {}) {
    super();
  }
  get expected(): string {
    const { integer, minimum, maximum } = this.options;
    const kind = integer ? 'integer' : 'number';
    if (minimum !== undefined && maximum !== undefined) return `${kind} from ${minimum} to ${maximum}`;
    return kind;
  }
  parse(value: unknown, path: Path = []): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) this.invalid(path);
    const { integer, minimum, maximum } = this.options;
    if (integer && !Number.isInteger(value)) this.invalid(path);
    if (minimum !== undefined && value < minimum) this.invalid(path);
    if (maximum !== undefined && value > maximum) this.invalid(path);
    return value;
  }
  protected baseJsonSchema(): JsonSchema {
    const { integer, minimum, maximum } = this.options;
    const schema: JsonSchema = { type: integer ? 'integer' : 'number' };
    if (minimum !== undefined) schema.minimum = minimum;
    if (maximum !== undefined) schema.maximum = maximum;
    return schema;
  }
}

export class BooleanSchema extends Schema<boolean> {
  readonly expected = 'boolean';
  parse(value: unknown, path: Path = []): boolean {
    if (typeof value !== 'boolean') this.invalid(path);
    return value;
  }
  protected baseJsonSchema(): JsonSchema {
    return { type: 'boolean' };
  }
}

export class EnumSchema<const Values extends readonly string[]> extends Schema<Values[number]> {
  constructor(private readonly values: Values) {
    super();
  }
  get expected(): string {
    return listWords(this.values.map((v) => `"${v}"`)).replace(/ and (?=[^ ]+$)/, ' or ');
  }
  parse(value: unknown, path: Path = []): Values[number] {
    if (typeof value !== 'string' || !this.values.includes(value)) this.invalid(path);
    return value;
  }
  protected baseJsonSchema(): JsonSchema {
    return { type: 'string', enum: [...this.values] };
  }
}

/**
 * A customer ID given as `string | number` in a body: a string of 1–128
 * characters or any number, returned as its string form (`1.50` → `"1.5"`): a number and its
 * string name the same entity.
 */
export class ExternalIdSchema extends Schema<string> {
  /** `identifier`: the id of a new entity, which must also be addressable by path. */
  constructor(private readonly options: { identifier?: boolean } = {}) {
    super();
  }
  get expected(): string {
    return this.options.identifier ? 'identifier' : 'string of 1 to 128 characters, or number';
  }
  parse(value: unknown, path: Path = []): string {
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value === 'string' && value.length >= 1 && codePointLength(value) <= 128) {
      if (this.options.identifier && !isIdentifier(value)) this.invalid(path);
      if (!isStorableText(value)) this.invalid(path, STORABLE_TEXT_WORDS);
      return value;
    }
    this.invalid(path);
  }
  protected baseJsonSchema(): JsonSchema {
    return { anyOf: [{ type: 'string', minLength: 1, maxLength: 128 }, { type: 'number' }] };
  }
}

/** Length in Unicode code points (a surrogate pair counts once, a lone surrogate once). */
export function codePointLength(value: string): number {
  let length = value.length;
  for (let index = 0; index < value.length - 1; index++) {
    const unit = value.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        index++;
      }
    }
  }
  return length;
}

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

/** Exactly one JSON scalar, e.g. the `success: true` of an answer. */
export class LiteralSchema<const Value extends string | number | boolean> extends Schema<Value> {
  constructor(private readonly value: Value) {
    super();
  }
  get expected(): string {
    return JSON.stringify(this.value);
  }
  parse(value: unknown, path: Path = []): Value {
    if (value !== this.value) this.invalid(path);
    return this.value;
  }
  protected baseJsonSchema(): JsonSchema {
    return { const: this.value };
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

/** Any JSON value, for fields whose shape is the business of another layer. */
export class UnknownSchema extends Schema<unknown> {
  readonly expected = 'any JSON value';
  parse(value: unknown): unknown {
    return value;
  }
  protected baseJsonSchema(): JsonSchema {
    return {};
  }
}

/** The schema builders, used as `s.object({...})`. */
export const s = {
  string: (options?: ConstructorParameters<typeof StringSchema>[0]) => new StringSchema(options),
  identifier: () => new StringSchema({ format: 'identifier' }),
  uri: () => new StringSchema({ format: 'uri' }),
  email: () => new StringSchema({ format: 'email' }),
  uuid: () => new StringSchema({ format: 'uuid' }),
  jwt: () => new StringSchema({ format: 'jwt' }),
  dateTime: () => new DateTimeSchema(),
  number: () => new NumberSchema(),
  integer: (options?: { minimum?: number; maximum?: number }) =>
    new NumberSchema({ ...options, integer: true }),
  boolean: () => new BooleanSchema(),
  enum: <const V extends readonly string[]>(values: V) => new EnumSchema(values),
  externalId: (options?: { identifier?: boolean }) => new ExternalIdSchema(options),
  flatObject: () => new FlatObjectSchema(),
  array: <T>(item: Schema<T>, options?: { minItems?: number; maxItems?: number }) =>
    new ArraySchema(item, options),
  object: <S extends Shape>(shape: S, options?: { alternatives?: readonly (readonly (keyof S & string)[])[] }) =>
    new ObjectSchema(shape, options),
  unknown: () => new UnknownSchema(),
  literal: <const V extends string | number | boolean>(value: V) => new LiteralSchema(value),
  union: <const T extends readonly Schema<unknown>[]>(options: T) =>
    new UnionSchema<Infer<T[number]>>(options as unknown as readonly Schema<Infer<T[number]>>[]),
  record: <T>(value: Schema<T>) => new RecordSchema(value),
};

/** The schemas of single JSON values: strings and their formats, dates, numbers, booleans, enums, ids, literals. */
import { isEmail, isIdentifier, isJwtShaped, isStorableText, isUri, isUuid, parseDateTime, STORABLE_TEXT_WORDS } from './formats.js';
import { listWords, plural, type Path } from './path.js';
import { Schema, type JsonSchema } from './schema.js';

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
  override asAnswer(): Schema<string> {
    const { format, ...lengths } = this.options;
    return format ? new StringSchema(lengths) : this;
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

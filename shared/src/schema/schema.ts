/**
 * A small schema library: each schema validates a request value with the four validation
 * codes (`invalid_request`, `missing_field`, `unexpected_field`, `invalid_field`) and their
 * messages, and describes itself as JSON Schema (2020-12, the dialect of
 * OpenAPI 3.1). Hand-written because the contract fixes the evaluation order (missing fields
 * first, then received keys in order) and the message wording, which general-purpose
 * validators do not produce.
 */
import { ApiError } from '../errors.js';
import { formatPath, type Path } from './path.js';

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

  /**
   * The value as an answer gives it back once stored, for a response schema built from request
   * fields: the key is always present (not optional), and a string has no format, since a stored
   * value may have come another way than this request (an import does not check formats).
   */
  asAnswer(): Schema<Out> {
    return this;
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
  override asAnswer(): Schema<Out> {
    return this.inner.asAnswer();
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
  override asAnswer(): Schema<Out | null> {
    return this.inner.asAnswer().nullable();
  }
  protected baseJsonSchema(): JsonSchema {
    return { anyOf: [this.inner.jsonSchema(), { type: 'null' }] };
  }
}

import { ArraySchema, FlatObjectSchema, ObjectSchema, RecordSchema, UnionSchema, type Shape } from './object-schemas.js';
import { BooleanSchema, DateTimeSchema, EnumSchema, ExternalIdSchema, LiteralSchema, NumberSchema, StringSchema, UnknownSchema } from './scalar-schemas.js';
import type { Infer, Schema } from './schema.js';

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

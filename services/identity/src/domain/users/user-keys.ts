/**
 * Which column each key of a user's request is stored in and answered from: a key named as a
 * column is that column; every other key is listed here, as an alias of a column or as accepted
 * but stored nowhere (null, answered as null). A request key that is neither a column nor listed
 * does not compile.
 */
import { userFields, type identityRoutes, type RouteBody } from '@collab/shared';
import { USER_FIELDS, type UserFields } from '../../repositories/users.repository.js';

/** PUT /v1/users/<ID> body after validation: both generations' keys. */
export type UserInput = RouteBody<typeof identityRoutes.upsertUser>;

export type UserKey = keyof typeof userFields;
type Column = keyof UserFields;
/** The columns whose type can hold what the key is given. */
type ColumnTaking<K extends UserKey> = { [C in Column]-?: UserInput[K] extends UserFields[C] ? C : never }[Column];

const OTHER_KEYS: { [K in Exclude<UserKey, Column>]: ColumnTaking<K> | null } = {
  short_name: 'shortName',
  first_name: null,
  last_name: null,
  profilePictureURL: 'profilePictureUrl',
  profile_picture_url: 'profilePictureUrl',
};

/** The column the key is stored in and answered from; null when it is stored nowhere. */
export function columnOf(key: UserKey): Column | null {
  return Object.hasOwn(OTHER_KEYS, key) ? OTHER_KEYS[key as keyof typeof OTHER_KEYS] : (key as Column);
}

/**
 * The request keys of each writable column, in the request schema's order (the first that gives
 * a value wins), and the columns in the column map's order.
 */
export const COLUMN_KEYS: readonly (readonly [Column, readonly UserKey[]])[] = USER_FIELDS.map((column) => [
  column,
  (Object.keys(userFields) as UserKey[]).filter((key) => columnOf(key) === column),
]);

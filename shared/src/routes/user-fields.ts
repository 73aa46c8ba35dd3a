/**
 * The fields of a user, as PUT and POST /v1/users and the user items of POST /v1/batch take them
 * (both generations' keys). The answers follow this schema too: GET /v1/users and
 * GET /v1/users/<ID> give every key between `id` and `createdTimestamp` (`userAnswerFields`), so
 * a field added here is answered (and documented) without more edits. The order of the keys is
 * the order an unexpected-field error lists them in.
 */
import { s } from '../schema/index.js';

const nullableString = () => s.string().nullable().optional();

export const userFields = {
  name: nullableString(),
  email: s.email().nullable().optional(),
  shortName: nullableString(),
  short_name: nullableString(),
  profilePictureURL: s.uri().nullable().optional(),
  profile_picture_url: s.uri().nullable().optional(),
  // Deprecated: accepted, stored nowhere, always answered as null.
  first_name: nullableString(),
  last_name: nullableString(),
  status: s.enum(['active', 'deleted']).optional(),
  metadata: s.flatObject().optional(),
};

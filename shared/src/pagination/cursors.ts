/**
 * The cursor of each paged endpoint. Tokens issued before a client switched servers are still in
 * its hands and must keep working, so each token's JSON keeps its keys in their order: changing a
 * shape here breaks them.
 */
import { cursorField, defineCursor } from './cursor.js';

export const pageCursors = {
  /** GET /v1/users: the last user's id. */
  users: defineCursor({ externalID: cursorField.text }),
  /** GET /v1/groups with a limit: the last group's internal id (groups are listed in creation order). */
  groups: defineCursor({ internalID: cursorField.bigintId }),
  /** GET /v1/groups/<ID>/members and /v1/organizations/<ID>/members: the last member's internal and public ids. */
  groupMembers: defineCursor({ userID: cursorField.bigintId, externalID: cursorField.text }),
  /** GET /v1/threads: the last thread's id and its latest activity. */
  threads: defineCursor({ externalID: cursorField.text, nextCursorTimestamp: cursorField.timestamp }),
  /** GET /v1/messages: the last message's id and creation time. */
  messages: defineCursor({ externalID: cursorField.text, createdAtWithMicros: cursorField.timestamp }),
  /** GET /v1/users/<ID>/notifications: the last notification's id and creation time. */
  notifications: defineCursor({ externalID: cursorField.text, createdAtWithMicros: cursorField.timestamp }),
  /** GET /v1/webhooks/deliveries: the last delivery's id and creation time (a log of this server's own). */
  deliveries: defineCursor({ id: cursorField.uuid, createdAtWithMicros: cursorField.timestamp }),
};

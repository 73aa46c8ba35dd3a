/**
 * The deletion cascade: identity calls this on every service that holds
 * data tied to a group, a user or an application once its own deletion has committed (from its
 * outbox, again and again until every service answered). The call makes the data unreadable at
 * once and enqueues its purge; it is idempotent, so calling it again changes nothing.
 */
import { s } from '../schema/index.js';

export const cascadeContract = {
  method: 'POST',
  path: '/internal/cascade',
  request: s.object({ kind: s.enum(['group', 'user', 'application']), id: s.string({ minLength: 1 }) }),
  response: s.object({ success: s.boolean() }),
} as const;

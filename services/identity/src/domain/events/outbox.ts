/**
 * Identity's outbox: a deletion of a group, a user or an application is recorded in the
 * transaction that deletes identity's own rows, so the other services are told exactly when that
 * transaction committed: a deletion that rolls back hides nothing, and one that commits is carried
 * into every dependent service by the relay (relay.ts), retried until each has it.
 */
import { s, type Queryable } from '@collab/shared';
import { defineOutbox, type NewOutboxEntry } from '@collab/shared/storage';
import { IDENTITY_SCHEMA } from '../../entities/index.js';

/** Identity's outbox: one topic per kind of deletion; the entry's application id is the tenant. */
export const deletionOutbox = defineOutbox(IDENTITY_SCHEMA, {
  'group.deleted': s.object({ groupId: s.string({ minLength: 1 }) }),
  'user.deleted': s.object({ userId: s.string({ minLength: 1 }) }),
  /** The application itself is gone: its id is the entry's applicationId. */
  'application.deleted': s.object({}),
});

/**
 * How long the relay leaves a recorded deletion to the DELETE request that runs it right after
 * its commit. The relay takes it over at once when that run failed (after the retry delay), and
 * after this long when the API process died in between; both never run it at the same time.
 */
const REQUEST_RUNS_DELETION_MS = 30_000;

/** Records a deletion in the transaction that deletes identity's rows; returns its outbox id for `processNow`. */
export async function recordDeletion(tx: Queryable, deletion: NewOutboxEntry<typeof deletionOutbox.topics>): Promise<string> {
  const [id] = await deletionOutbox.record(tx, [deletion], { relayAfterMs: REQUEST_RUNS_DELETION_MS });
  return id;
}

/**
 * Where a deletion in identity reaches the data other services own: a
 * deleted group's threads and messages, a deleted user's messages, files and notifications,
 * everything of a deleted application. Identity records the deletion in its outbox in the
 * transaction that deletes its own rows, so the other services are told exactly when that
 * transaction committed: a deletion that rolls back hides nothing, and one that commits is
 * carried into every dependent service, retried until each has it. The DELETE request runs its
 * entry at once, so it answers once nothing deleted can be read (a 503 when a service cannot be
 * reached: the relay of the identity worker finishes it later). Each dependent service makes the
 * data unreadable when called and purges it with BullMQ jobs; calling it twice changes nothing.
 */
import { ApiError, cascadeContract, createInternalClient, s, unavailable, type InternalClient, type Logger, type Queryable } from '@collab/shared';
import { defineOutbox, type NewOutboxEntry, type OutboxHandlers, type OutboxProcessor } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
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

/** The calls into the dependent services. */
export interface DeletionCascade {
  groupDeleted(applicationId: string, groupId: string, requestId: string): Promise<void>;
  userDeleted(applicationId: string, userId: string, requestId: string): Promise<void>;
  applicationDeleted(applicationId: string, requestId: string): Promise<void>;
}

export function dependentServicesCascade(services: InternalClient[]): DeletionCascade {
  const reach = async (applicationId: string, kind: 'group' | 'user' | 'application', id: string, requestId: string) => {
    const body = cascadeContract.request.parse({ kind, id });
    try {
      await Promise.all(
        services.map(async (service) =>
          cascadeContract.response.parse(await service.call('POST', cascadeContract.path, { applicationId, requestId, body })),
        ),
      );
    } catch (error) {
      if (error instanceof ApiError && error.status >= 500) throw error;
      throw unavailable('The deletion could not reach every service. Try again.');
    }
  };
  return {
    groupDeleted: (applicationId, groupId, requestId) => reach(applicationId, 'group', groupId, requestId),
    userDeleted: (applicationId, userId, requestId) => reach(applicationId, 'user', userId, requestId),
    applicationDeleted: (applicationId, requestId) => reach(applicationId, 'application', applicationId, requestId),
  };
}

/** Each recorded deletion carried into the dependent services. */
export function deletionHandlers(cascade: DeletionCascade): OutboxHandlers<typeof deletionOutbox.topics> {
  return {
    'group.deleted': ({ applicationId, requestId, payload }) => cascade.groupDeleted(applicationId, payload.groupId, requestId),
    'user.deleted': ({ applicationId, requestId, payload }) => cascade.userDeleted(applicationId, payload.userId, requestId),
    'application.deleted': ({ applicationId, requestId }) => cascade.applicationDeleted(applicationId, requestId),
  };
}

/** Where the dependent services listen, and the credential identity presents to them. */
export interface DependentServicesConfig {
  CONVERSATION_URL: string;
  NOTIFICATION_URL: string;
  WEBHOOKS_URL: string;
  MAIL_URL: string;
  INTERNAL_TOKEN: string;
}

/** What runs identity's recorded deletions: the API process (right after a DELETE) and the worker's relay. */
export function deletionProcessor(db: DataSource, config: DependentServicesConfig, logger: Logger): OutboxProcessor {
  const dependents = [
    ['conversation', config.CONVERSATION_URL],
    ['notification', config.NOTIFICATION_URL],
    ['webhooks', config.WEBHOOKS_URL],
    ['mail', config.MAIL_URL],
  ] as const;
  const services = dependents.map(([service, baseUrl]) =>
    createInternalClient({
      baseUrl,
      internalToken: config.INTERNAL_TOKEN,
      service,
      timeoutMs: 10_000,
    }),
  );
  return deletionOutbox.processor(db, deletionHandlers(dependentServicesCascade(services)), logger);
}

/**
 * Where a deletion recorded in identity's outbox (outbox.ts) reaches the data other services own:
 * a deleted group's threads and messages, a deleted user's messages, files and notifications,
 * everything of a deleted application. The DELETE request runs its entry at once, so it answers
 * once nothing deleted can be read (a 503 when a service cannot be reached: the relay of the
 * identity worker finishes it later). Each dependent service makes the data unreadable when
 * called and purges it with BullMQ jobs; calling it twice changes nothing.
 */
import { ApiError, cascadeContract, createInternalClient, unavailable, type InternalClient, type Logger } from '@collab/shared';
import type { OutboxHandlers, OutboxProcessor } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { deletionOutbox } from './outbox.js';

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

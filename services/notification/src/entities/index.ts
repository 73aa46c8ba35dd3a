/** The notification schema as TypeORM entities. User ids are the customer's external ids. */
import { EntitySchema } from 'typeorm';

export const NOTIFICATION_SCHEMA = 'notification';

export interface NotificationRow {
  internalId: string;
  applicationId: string;
  externalId: string;
  recipientId: string;
  actorId: string;
  template: string;
  url: string;
  iconUrl: string | null;
  extraClassnames: string | null;
  metadata: Record<string, string | number | boolean>;
  readStatus: 'unread' | 'read';
  createdAt: Date;
  /** Set when a deletion cascade reached it: invisible at once, removed by a purge job. */
  purgingAt?: Date | null;
}

export const NotificationEntity = new EntitySchema<NotificationRow>({
  name: 'Notification',
  tableName: 'notifications',
  schema: NOTIFICATION_SCHEMA,
  columns: {
    internalId: { name: 'internal_id', type: 'bigint', primary: true, generated: 'increment' },
    applicationId: { name: 'application_id', type: 'uuid' },
    externalId: { name: 'external_id', type: 'text', collation: 'C' },
    recipientId: { name: 'recipient_id', type: 'text', collation: 'C' },
    actorId: { name: 'actor_id', type: 'text', collation: 'C' },
    template: { type: 'text' },
    url: { type: 'text' },
    iconUrl: { name: 'icon_url', type: 'text', nullable: true },
    extraClassnames: { name: 'extra_classnames', type: 'text', nullable: true },
    metadata: { type: 'jsonb', default: () => "'{}'" },
    readStatus: { name: 'read_status', type: 'text', default: 'unread' },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
    purgingAt: { name: 'purging_at', type: 'timestamptz', nullable: true },
  },
  uniques: [{ name: 'notifications_application_external_id_key', columns: ['applicationId', 'externalId'] }],
  indices: [
    { name: 'notifications_recipient_idx', columns: ['applicationId', 'recipientId', 'createdAt', 'internalId'] },
    { name: 'notifications_actor_idx', columns: ['applicationId', 'actorId'] },
    { name: 'notifications_purging_idx', columns: ['applicationId'], synchronize: false },
  ],
});

/**
 * An application deletion that reached this service (the deletion cascade): kept until its purge
 * job removed everything of the application, so that a job lost with Redis is queued again.
 * `requestId` tells a request made again (a retried DELETE) from the one a job read.
 */
export interface ApplicationPurgeRow {
  applicationId: string;
  requestId: string;
  requestedAt: Date;
}

export const ApplicationPurgeEntity = new EntitySchema<ApplicationPurgeRow>({
  name: 'ApplicationPurge',
  tableName: 'application_purges',
  schema: NOTIFICATION_SCHEMA,
  columns: {
    applicationId: { name: 'application_id', type: 'uuid', primary: true },
    requestId: { name: 'request_id', type: 'text' },
    requestedAt: { name: 'requested_at', type: 'timestamptz', default: () => 'now()' },
  },
});

export const notificationEntities = [NotificationEntity, ApplicationPurgeEntity];

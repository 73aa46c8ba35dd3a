/**
 * The notification schema as TypeORM entities. User ids are the customer's external ids; messages
 * and threads are the conversation service's internal references (never its tables).
 */
import type { ReplyAction } from '@collab/shared';
import { applicationPurgeEntity, idempotencyKeyEntity, outboxEntity } from '@collab/shared/storage';
import { EntitySchema } from 'typeorm';

export const NOTIFICATION_SCHEMA = 'notification';

/**
 * `external`: sent with POST /v1/notifications. The others come from activity: `reply` (a new
 * message or a new mention), `thread_action` (a resolve or reopen), `reaction`.
 */
export type NotificationKind = 'external' | 'reply' | 'thread_action' | 'reaction';

export interface NotificationRow {
  internalId: string;
  applicationId: string;
  externalId: string;
  kind: NotificationKind;
  recipientId: string;
  /** The sender: the actor of an external notification, the message's author, the acting or the reacting user. */
  actorId: string;
  /** An external notification's. */
  template: string | null;
  url: string | null;
  /** The message (the action message of a thread action) and its thread, for every other kind. */
  messageRef: string | null;
  threadRef: string | null;
  replyActions: ReplyAction[] | null;
  threadActionType: 'resolve' | 'unresolve' | null;
  reaction: string | null;
  /** Rows with the same key (a message's reactions) show as one item of their recipient. */
  aggregationKey: string | null;
  /** The conversation outbox entry that caused an activity notification: a recipient gets one per entry. */
  sourceId: string | null;
  iconUrl: string | null;
  extraClassnames: string | null;
  metadata: Record<string, string | number | boolean>;
  readStatus: 'unread' | 'read';
  createdAt: Date;
  /** Set when a deletion cascade reached it: invisible at once, removed by a purge job. */
  purgingAt?: Date | null;
}

/** What each kind stores (as the migration that added the kinds wrote it). */
const KIND_CHECK = `(kind = 'external' AND template IS NOT NULL AND url IS NOT NULL)
  OR (kind = 'reply' AND message_ref IS NOT NULL AND thread_ref IS NOT NULL AND reply_actions IS NOT NULL)
  OR (kind = 'thread_action' AND message_ref IS NOT NULL AND thread_ref IS NOT NULL AND thread_action_type IS NOT NULL)
  OR (kind = 'reaction' AND message_ref IS NOT NULL AND thread_ref IS NOT NULL AND reaction IS NOT NULL AND aggregation_key IS NOT NULL)`;

export const NotificationEntity = new EntitySchema<NotificationRow>({
  name: 'Notification',
  tableName: 'notifications',
  schema: NOTIFICATION_SCHEMA,
  columns: {
    internalId: { name: 'internal_id', type: 'bigint', primary: true, generated: 'increment' },
    applicationId: { name: 'application_id', type: 'uuid' },
    externalId: { name: 'external_id', type: 'text', collation: 'C' },
    kind: { type: 'text' },
    recipientId: { name: 'recipient_id', type: 'text', collation: 'C' },
    actorId: { name: 'actor_id', type: 'text', collation: 'C' },
    template: { type: 'text', nullable: true },
    url: { type: 'text', nullable: true },
    messageRef: { name: 'message_ref', type: 'text', nullable: true },
    threadRef: { name: 'thread_ref', type: 'text', nullable: true },
    replyActions: { name: 'reply_actions', type: 'jsonb', nullable: true },
    threadActionType: { name: 'thread_action_type', type: 'text', nullable: true },
    reaction: { type: 'text', nullable: true },
    aggregationKey: { name: 'aggregation_key', type: 'text', nullable: true },
    sourceId: { name: 'source_id', type: 'uuid', nullable: true },
    iconUrl: { name: 'icon_url', type: 'text', nullable: true },
    extraClassnames: { name: 'extra_classnames', type: 'text', nullable: true },
    metadata: { type: 'jsonb', default: () => "'{}'" },
    readStatus: { name: 'read_status', type: 'text', default: 'unread' },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
    purgingAt: { name: 'purging_at', type: 'timestamptz', nullable: true },
  },
  uniques: [
    { name: 'notifications_application_external_id_key', columns: ['applicationId', 'externalId'] },
    { name: 'notifications_source_recipient_key', columns: ['applicationId', 'sourceId', 'recipientId'] },
  ],
  checks: [{ name: 'notifications_kind_check', expression: KIND_CHECK }],
  indices: [
    { name: 'notifications_recipient_idx', columns: ['applicationId', 'recipientId', 'createdAt', 'internalId'] },
    { name: 'notifications_actor_idx', columns: ['applicationId', 'actorId'] },
    { name: 'notifications_purging_idx', columns: ['applicationId'], synchronize: false },
  ],
});

/** Application deletions that reached this service, kept until their purge job removed everything. */
export const ApplicationPurgeEntity = applicationPurgeEntity(NOTIFICATION_SCHEMA);

export const notificationEntities = [
  NotificationEntity,
  ApplicationPurgeEntity,
  outboxEntity(NOTIFICATION_SCHEMA),
  // The Idempotency-Keys of notification creations, stored with the write.
  idempotencyKeyEntity(NOTIFICATION_SCHEMA),
];

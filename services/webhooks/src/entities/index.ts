/**
 * The webhooks schema as TypeORM entities: the webhooks each application registered, the events
 * recorded for delivery, and one delivery per (event, URL) with its attempts (the delivery log).
 */
import type { WebhookEventType } from '@collab/shared';
import { applicationPurgeEntity } from '@collab/shared/storage';
import { EntitySchema } from 'typeorm';

export const WEBHOOKS_SCHEMA = 'webhooks';

export interface RegistrationRow {
  id: string;
  applicationId: string;
  url: string;
  events: WebhookEventType[];
  createdAt: Date;
}

export const RegistrationEntity = new EntitySchema<RegistrationRow>({
  name: 'Registration',
  tableName: 'registrations',
  schema: WEBHOOKS_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    url: { type: 'text' },
    events: { type: 'text', array: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
  // One registration per exact URL string: registering it again updates its event types.
  uniques: [{ name: 'registrations_application_url_key', columns: ['applicationId', 'url'] }],
});

/** An event as it happened: the payload is the snapshot every delivery of it sends. */
export interface EventRow {
  id: string;
  applicationId: string;
  type: WebhookEventType;
  payload: Record<string, unknown>;
  createdAt: Date;
}

export const EventEntity = new EntitySchema<EventRow>({
  name: 'Event',
  tableName: 'events',
  schema: WEBHOOKS_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    type: { type: 'text' },
    payload: { type: 'jsonb' },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
  indices: [{ name: 'events_created_idx', columns: ['createdAt'] }],
});

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  id: string;
  eventId: string;
  applicationId: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  /** The body of the last attempt, exactly as sent and signed. */
  lastBody: string | null;
  createdAt: Date;
  lastAttemptAt: Date | null;
  /** When the next attempt is due; null once the delivery succeeded or failed for good. */
  nextAttemptAt: Date | null;
  /** The job sending an attempt right now: only it may record the outcome, or run it again after a crash. */
  sendingJob: string | null;
}

export const DeliveryEntity = new EntitySchema<DeliveryRow>({
  name: 'Delivery',
  tableName: 'deliveries',
  schema: WEBHOOKS_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    eventId: { name: 'event_id', type: 'uuid' },
    applicationId: { name: 'application_id', type: 'uuid' },
    url: { type: 'text' },
    status: { type: 'text' },
    attempts: { type: 'integer', default: 0 },
    lastStatusCode: { name: 'last_status_code', type: 'integer', nullable: true },
    lastError: { name: 'last_error', type: 'text', nullable: true },
    lastBody: { name: 'last_body', type: 'text', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' },
    lastAttemptAt: { name: 'last_attempt_at', type: 'timestamptz', nullable: true },
    nextAttemptAt: { name: 'next_attempt_at', type: 'timestamptz', nullable: true },
    sendingJob: { name: 'sending_job', type: 'text', nullable: true },
  },
  // An event goes once to each distinct URL, however many registrations name it.
  uniques: [{ name: 'deliveries_event_url_key', columns: ['eventId', 'url'] }],
  indices: [
    { name: 'deliveries_log_idx', columns: ['applicationId', 'createdAt', 'id'] },
    { name: 'deliveries_due_idx', columns: ['nextAttemptAt'] },
  ],
  foreignKeys: [{ target: 'Event', columnNames: ['eventId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

/** One attempt of a delivery as it ended: kept with its delivery, so the log shows why each try failed. */
export interface DeliveryAttemptRow {
  deliveryId: string;
  /** The delivery's attempt count when it was made: 1 for the first. */
  attempt: number;
  applicationId: string;
  startedAt: Date;
  durationMs: number;
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
}

export const DeliveryAttemptEntity = new EntitySchema<DeliveryAttemptRow>({
  name: 'DeliveryAttempt',
  tableName: 'delivery_attempts',
  schema: WEBHOOKS_SCHEMA,
  columns: {
    deliveryId: { name: 'delivery_id', type: 'uuid', primary: true },
    attempt: { type: 'integer', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    startedAt: { name: 'started_at', type: 'timestamptz' },
    durationMs: { name: 'duration_ms', type: 'integer' },
    status: { type: 'text' },
    statusCode: { name: 'status_code', type: 'integer', nullable: true },
    error: { type: 'text', nullable: true },
  },
  // Removed with their delivery (log retention, replays never remove, application purges).
  foreignKeys: [{ target: 'Delivery', columnNames: ['deliveryId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

export const ApplicationPurgeEntity = applicationPurgeEntity(WEBHOOKS_SCHEMA);

export const webhooksEntities = [RegistrationEntity, EventEntity, DeliveryEntity, DeliveryAttemptEntity, ApplicationPurgeEntity];

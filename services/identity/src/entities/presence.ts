/** Durable presence: a user's last time at a location of a group (decision 50). */
import { EntitySchema } from 'typeorm';
import { IDENTITY_SCHEMA } from './schema.js';

export interface DurablePresenceRow {
  groupId: string;
  userId: string;
  /** The location as JSON with sorted keys: one row per (group, user, location). */
  locationKey: string;
  applicationId: string;
  location: Record<string, string | number | boolean>;
  lastPresentAt: Date;
}

/** Goes with its user or group (foreign keys), and so with their application. */
export const DurablePresenceEntity = new EntitySchema<DurablePresenceRow>({
  name: 'DurablePresence',
  tableName: 'durable_presence',
  schema: IDENTITY_SCHEMA,
  columns: {
    groupId: { name: 'group_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'bigint', primary: true },
    locationKey: { name: 'location_key', type: 'text', primary: true, collation: 'C' },
    applicationId: { name: 'application_id', type: 'uuid' },
    location: { type: 'jsonb' },
    lastPresentAt: { name: 'last_present_at', type: 'timestamptz' },
  },
  indices: [{ name: 'durable_presence_user_idx', columns: ['userId'] }],
  foreignKeys: [
    { target: 'Group', columnNames: ['groupId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
    { target: 'User', columnNames: ['userId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
  ],
});

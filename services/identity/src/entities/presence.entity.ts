/** Durable presence (decision 50): one row per (group, user, location), with when it was last set. */
import { EntitySchema } from 'typeorm';
import { IDENTITY_SCHEMA } from './schema.js';

export interface DurablePresenceRow {
  groupId: string;
  userId: string;
  /** The location's canonical JSON (keys sorted): the row's identity. */
  locationKey: string;
  applicationId: string;
  location: Record<string, string | number | boolean>;
  lastPresentAt: Date;
}

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
  // Removed with the user or the group (and so with the application).
  foreignKeys: [
    { target: 'Group', columnNames: ['groupId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
    { target: 'User', columnNames: ['userId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
  ],
});

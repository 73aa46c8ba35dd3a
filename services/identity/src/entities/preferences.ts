import { EntitySchema } from 'typeorm';
import { IDENTITY_SCHEMA } from './schema.js';

/**
 * A user's notification channels (the original's `notification_channels` preference), one row
 * per user who set them; no row reads as both channels on. Goes with its user.
 */
export interface UserPreferencesRow {
  userId: string;
  applicationId: string;
  sendViaEmail: boolean;
  sendViaSlack: boolean;
  updatedAt: Date;
}

export const UserPreferencesEntity = new EntitySchema<UserPreferencesRow>({
  name: 'UserPreferences',
  tableName: 'user_preferences',
  schema: IDENTITY_SCHEMA,
  columns: {
    userId: { name: 'user_id', type: 'bigint', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    sendViaEmail: { name: 'send_via_email', type: 'boolean', default: true },
    sendViaSlack: { name: 'send_via_slack', type: 'boolean', default: true },
    updatedAt: { name: 'updated_at', type: 'timestamptz', default: () => 'now()' },
  },
  foreignKeys: [{ target: 'User', columnNames: ['userId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

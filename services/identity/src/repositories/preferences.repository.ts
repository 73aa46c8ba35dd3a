/** All SQL about users' notification preferences. Every method takes the application id first. */
import { countAffected, rows, type Queryable } from '@collab/shared';
import { preferencesTable, usersTable } from './tables.js';

export interface NotificationChannels {
  sendViaEmail: boolean;
  sendViaSlack: boolean;
}

/** A user's stored channels by the user's id, for the import and the export. */
export interface UserChannels extends NotificationChannels {
  userID: string;
}

/** What a user who never set them has. */
export const DEFAULT_CHANNELS: NotificationChannels = { sendViaEmail: true, sendViaSlack: true };

export const preferencesRepository = {
  /** The user's channels (defaults when never set), or null when there is no such user. */
  async find(db: Queryable, applicationId: string, userId: string): Promise<NotificationChannels | null> {
    const [row] = await rows<NotificationChannels>(
      db,
      `SELECT COALESCE(p.send_via_email, true) AS "sendViaEmail", COALESCE(p.send_via_slack, true) AS "sendViaSlack"
       FROM identity.users u LEFT JOIN identity.user_preferences p ON p.user_id = u.internal_id
       WHERE u.application_id = $1 AND u.external_id = $2`,
      [applicationId, userId],
    );
    return row ?? null;
  },

  /**
   * Writes the channels given in one statement; a channel not given keeps its stored (or default)
   * value. False when there is no such user.
   */
  async merge(db: Queryable, applicationId: string, userId: string, channels: Partial<NotificationChannels>): Promise<boolean> {
    const found = await countAffected(
      db,
      `INSERT INTO identity.user_preferences AS p (user_id, application_id, send_via_email, send_via_slack)
       SELECT u.internal_id, u.application_id, COALESCE($3, true), COALESCE($4, true)
       FROM identity.users u WHERE u.application_id = $1 AND u.external_id = $2
       ON CONFLICT (user_id) DO UPDATE SET send_via_email = COALESCE($3, p.send_via_email),
         send_via_slack = COALESCE($4, p.send_via_slack), updated_at = now()`,
      [applicationId, userId, channels.sendViaEmail ?? null, channels.sendViaSlack ?? null],
    );
    return found > 0;
  },

  /**
   * Imported channels (users of the rows' application); a user's stored ones are replaced only
   * when overwriting. Answers how many were written.
   */
  async importMany(db: Queryable, applicationId: string, items: UserChannels[], overwrite: boolean): Promise<number> {
    const written = await countAffected(
      db,
      `INSERT INTO identity.user_preferences AS p (user_id, application_id, send_via_email, send_via_slack)
       SELECT u.internal_id, u.application_id, r."sendViaEmail", r."sendViaSlack"
       FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS ("userID" text, "sendViaEmail" boolean, "sendViaSlack" boolean)) WITH ORDINALITY AS r
       JOIN identity.users u ON u.application_id = $1 AND u.external_id = r."userID"
       ORDER BY r.ordinality
       ON CONFLICT (user_id) DO ${overwrite ? 'UPDATE SET send_via_email = EXCLUDED.send_via_email, send_via_slack = EXCLUDED.send_via_slack, updated_at = now()' : 'NOTHING'}`,
      [applicationId, JSON.stringify(items)],
    );
    return written;
  },

  /** A page of stored channels in user order, after the user's internal id `after`. */
  async page(db: Queryable, applicationId: string, after: string, limit: number): Promise<(UserChannels & { internalId: string })[]> {
    return rows<UserChannels & { internalId: string }>(
      db,
      `SELECT ${preferencesTable.as('userId', 'internalId')}, ${usersTable.as('externalId', 'userID')}, ${preferencesTable.pick('sendViaEmail', 'sendViaSlack')}
       FROM identity.user_preferences p JOIN identity.users u ON u.internal_id = p.user_id
       WHERE p.application_id = $1 AND p.user_id > $2::bigint
       ORDER BY p.user_id LIMIT $3`,
      [applicationId, after, limit],
    );
  },

  /**
   * What a mail needs of the users named: address, status, e-mail channel (default on) and
   * whether each is a member of the group (external id) the mail's thread is in.
   */
  async mailRecipients(db: Queryable, applicationId: string, userIds: readonly string[], groupId: string): Promise<MailRecipient[]> {
    return rows<MailRecipient>(
      db,
      `SELECT ${usersTable.as('externalId', 'id')}, ${usersTable.pick('name', 'shortName', 'email', 'status')},
              COALESCE(p.send_via_email, true) AS "sendViaEmail",
              EXISTS (SELECT 1 FROM identity.group_members m JOIN identity.groups g ON g.internal_id = m.group_id
                      WHERE m.user_id = u.internal_id AND g.application_id = $1 AND g.external_id = $3) AS "inGroup"
       FROM identity.users u LEFT JOIN identity.user_preferences p ON p.user_id = u.internal_id
       WHERE u.application_id = $1 AND u.external_id = ANY($2::text[])`,
      [applicationId, [...new Set(userIds)], groupId],
    );
  },
};

export interface MailRecipient {
  id: string;
  name: string | null;
  shortName: string | null;
  email: string | null;
  status: 'active' | 'deleted';
  sendViaEmail: boolean;
  inGroup: boolean;
}

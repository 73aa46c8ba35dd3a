/**
 * All SQL of exporting identity's part of a customer dump: the customer, its applications, and
 * one page at a time (keyset on internal ids) of an application's users, groups and memberships.
 */
import { rows, type Queryable } from '@collab/shared';
import type { ApplicationRow } from '../entities/index.js';

export const exportRepository = {
  async applications(db: Queryable, customerId: string): Promise<ApplicationRow[]> {
    return rows<ApplicationRow>(
      db,
      `SELECT id, customer_id AS "customerId", name, secret_encrypted AS "secretEncrypted", plaintext_secret AS "plaintextSecret", icon_url AS "iconUrl",
         event_webhook_url AS "eventWebhookUrl", event_webhook_subscriptions AS "eventWebhookSubscriptions", redirect_uri AS "redirectUri",
         email_settings AS "emailSettings", created_at AS "createdAt"
       FROM identity.applications WHERE customer_id = $1 ORDER BY created_at, id`,
      [customerId],
    );
  },

  async users(db: Queryable, applicationId: string, after: string, limit: number) {
    return rows<{
      internalId: string;
      externalId: string;
      name: string | null;
      email: string | null;
      shortName: string | null;
      profilePictureUrl: string | null;
      status: string;
      metadata: string;
      createdAt: Date;
    }>(
      db,
      `SELECT internal_id::text AS "internalId", external_id AS "externalId", name, email, short_name AS "shortName",
         profile_picture_url AS "profilePictureUrl", status, metadata::text AS metadata, created_at AS "createdAt"
       FROM identity.users WHERE application_id = $1 AND internal_id > $2 ORDER BY internal_id LIMIT $3`,
      [applicationId, after, limit],
    );
  },

  async groups(db: Queryable, applicationId: string, after: string, limit: number) {
    return rows<{ internalId: string; externalId: string; name: string; status: string; metadata: string; createdAt: Date }>(
      db,
      `SELECT internal_id::text AS "internalId", external_id AS "externalId", name, status, metadata::text AS metadata, created_at AS "createdAt"
       FROM identity.groups WHERE application_id = $1 AND internal_id > $2 ORDER BY internal_id LIMIT $3`,
      [applicationId, after, limit],
    );
  },

  /** In the order members were added, which the groups' member lists follow. */
  async memberships(db: Queryable, applicationId: string, after: string, limit: number) {
    return rows<{ seq: string; userId: string; groupId: string }>(
      db,
      `SELECT gm.added_seq::text AS seq, u.external_id AS "userId", g.external_id AS "groupId"
       FROM identity.group_members gm
       JOIN identity.users u ON u.internal_id = gm.user_id
       JOIN identity.groups g ON g.internal_id = gm.group_id
       WHERE gm.application_id = $1 AND gm.added_seq > $2 ORDER BY gm.added_seq LIMIT $3`,
      [applicationId, after, limit],
    );
  },
};

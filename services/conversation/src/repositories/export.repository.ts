/**
 * All SQL of exporting this service's part of a customer dump: one page of one table's rows of one
 * application, in keyset order (internal ids, or the primary key), nothing being purged.
 */
import type { Queryable } from '@collab/shared';

type Timestamp = Date | null;

export const exportRepository = {
  async threads(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return (await db.query(
      `SELECT internal_id::text AS ref, external_id AS "externalId", group_id AS "groupId", name, url, location::text AS location,
         metadata::text AS metadata, extra_classnames AS "extraClassnames", resolved_at AS "resolvedAt", created_at AS "createdAt"
       FROM conversation.threads WHERE application_id = $1 AND purging_at IS NULL AND internal_id > $2 ORDER BY internal_id LIMIT $3`,
      [applicationId, after ?? '0', limit],
    )) as {
      ref: string;
      externalId: string;
      groupId: string;
      name: string;
      url: string;
      location: string;
      metadata: string;
      extraClassnames: string | null;
      resolvedAt: Timestamp;
      createdAt: Date;
    }[];
  },

  async messages(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return (await db.query(
      `SELECT m.internal_id::text AS ref, m.external_id AS "externalId", m.thread_id::text AS "threadRef", t.group_id AS "groupId",
         m.author_id AS "authorId", m.type, m.content, m.url, m.icon_url AS "iconUrl", m.translation_key AS "translationKey",
         m.extra_classnames AS "extraClassnames", m.metadata::text AS metadata, m.skip_link_previews AS "skipLinkPreviews",
         m.created_at AS "createdAt", m.updated_at AS "updatedAt", m.deleted_at AS "deletedAt"
       FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND t.purging_at IS NULL AND m.internal_id > $2 ORDER BY m.internal_id LIMIT $3`,
      [applicationId, after ?? '0', limit],
    )) as {
      ref: string;
      externalId: string;
      threadRef: string;
      groupId: string;
      authorId: string;
      type: string;
      content: unknown;
      url: string | null;
      iconUrl: string | null;
      translationKey: string | null;
      extraClassnames: string | null;
      metadata: string;
      skipLinkPreviews: boolean;
      createdAt: Date;
      updatedAt: Timestamp;
      deletedAt: Timestamp;
    }[];
  },

  async reactions(db: Queryable, applicationId: string, after: [string, string, string] | null, limit: number) {
    return (await db.query(
      `SELECT r.message_id::text AS "messageRef", r.user_id AS "userId", r.reaction, r.reacted_at AS "reactedAt"
       FROM conversation.message_reactions r JOIN conversation.messages m ON m.internal_id = r.message_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND (r.message_id, r.user_id, r.reaction) > ($2::bigint, $3, $4)
       ORDER BY r.message_id, r.user_id, r.reaction LIMIT $5`,
      [applicationId, ...(after ?? ['0', '', '']), limit],
    )) as { messageRef: string; userId: string; reaction: string; reactedAt: Date }[];
  },

  async mentions(db: Queryable, applicationId: string, after: [string, string] | null, limit: number) {
    return (await db.query(
      `SELECT x.message_id::text AS "messageRef", x.user_id AS "userId"
       FROM conversation.message_mentions x JOIN conversation.messages m ON m.internal_id = x.message_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND (x.message_id, x.user_id) > ($2::bigint, $3)
       ORDER BY x.message_id, x.user_id LIMIT $4`,
      [applicationId, ...(after ?? ['0', '']), limit],
    )) as { messageRef: string; userId: string }[];
  },

  /** In the order the threads list them (seq), so that an import keeps it. */
  async participants(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return (await db.query(
      `SELECT p.seq::text AS seq, p.thread_id::text AS "threadRef", t.group_id AS "groupId", p.user_id AS "userId",
         p.last_seen_at AS "lastSeenAt", p.subscribed
       FROM conversation.thread_participants p JOIN conversation.threads t ON t.internal_id = p.thread_id
       WHERE t.application_id = $1 AND t.purging_at IS NULL AND p.seq > $2 ORDER BY p.seq LIMIT $3`,
      [applicationId, after ?? '0', limit],
    )) as { seq: string; threadRef: string; groupId: string; userId: string; lastSeenAt: Timestamp; subscribed: boolean }[];
  },

  async files(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return (await db.query(
      `SELECT id, owner_id AS "ownerId", name, mime_type AS "mimeType", size::text AS size, upload_status AS "uploadStatus", created_at AS "createdAt"
       FROM conversation.files WHERE application_id = $1 AND purging_at IS NULL AND id > $2 ORDER BY id LIMIT $3`,
      [applicationId, after ?? '00000000-0000-0000-0000-000000000000', limit],
    )) as { id: string; ownerId: string; name: string; mimeType: string; size: string; uploadStatus: string; createdAt: Date }[];
  },

  /** In the order messages list them (seq). */
  async attachments(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return (await db.query(
      `SELECT a.seq::text AS seq, a.message_id::text AS "messageRef", a.file_id AS "fileId", f.created_at AS "createdAt"
       FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id JOIN conversation.messages m ON m.internal_id = a.message_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND f.purging_at IS NULL AND a.seq > $2 ORDER BY a.seq LIMIT $3`,
      [applicationId, after ?? '0', limit],
    )) as { seq: string; messageRef: string; fileId: string; createdAt: Date }[];
  },

  /** The distinct locations of each group's threads (the original's `pages`). */
  async locations(db: Queryable, applicationId: string, after: [string, string] | null, limit: number) {
    return (await db.query(
      `SELECT group_id AS "groupId", location::text AS location FROM conversation.threads
       WHERE application_id = $1 AND purging_at IS NULL AND (group_id, location::text) > ($2, $3)
       GROUP BY group_id, location::text ORDER BY group_id, location::text LIMIT $4`,
      [applicationId, ...(after ?? ['', '']), limit],
    )) as { groupId: string; location: string }[];
  },
};

/** All SQL about messages, their reactions, mentions and attachments. Tenant first. */
import type { FileRow, LinkPreviewRow, MessageRow, ReactionRow } from '../entities/index.js';
import type { Db } from './db.js';

const MESSAGE_COLUMNS = `m.internal_id AS "internalId", m.application_id AS "applicationId", m.external_id AS "externalId",
  m.thread_id AS "threadId", m.author_id AS "authorId", m.type, m.content, m.url, m.icon_url AS "iconUrl",
  m.translation_key AS "translationKey", m.extra_classnames AS "extraClassnames", m.metadata,
  m.skip_link_previews AS "skipLinkPreviews", m.created_at AS "createdAt", m.updated_at AS "updatedAt",
  m.deleted_at AS "deletedAt"`;

export type NewMessage = Omit<MessageRow, 'internalId' | 'applicationId'>;
export type MessageFields = Partial<Omit<MessageRow, 'internalId' | 'applicationId' | 'threadId'>>;
const FIELD_COLUMNS: Record<keyof MessageFields, string> = {
  externalId: 'external_id',
  authorId: 'author_id',
  type: 'type',
  content: 'content',
  url: 'url',
  iconUrl: 'icon_url',
  translationKey: 'translation_key',
  extraClassnames: 'extra_classnames',
  metadata: 'metadata',
  skipLinkPreviews: 'skip_link_previews',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  deletedAt: 'deleted_at',
  purgingAt: 'purging_at',
};
const asParam = (key: string, value: unknown) => (key === 'content' || key === 'metadata' ? JSON.stringify(value) : value);

export interface MessageListFilter {
  metadata?: Record<string, unknown>;
  location?: { value: Record<string, unknown>; partialMatch: boolean };
  authorId?: string;
  groupId?: string;
}

export interface MessageCursor {
  createdAtMicros: string;
  externalId: string;
}

function listConditions(filter: MessageListFilter): { where: string; params: unknown[] } {
  const conditions = ['m.application_id = $1', 'm.purging_at IS NULL', 't.purging_at IS NULL'];
  const params: unknown[] = [];
  const add = (sql: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(sql(`$${params.length + 1}`));
  };
  if (filter.metadata) add((p) => `m.metadata @> ${p}::jsonb`, JSON.stringify(filter.metadata));
  if (filter.authorId !== undefined) add((p) => `m.author_id = ${p}`, filter.authorId);
  if (filter.groupId !== undefined) add((p) => `t.group_id = ${p}`, filter.groupId);
  if (filter.location)
    add((p) => (filter.location!.partialMatch ? `t.location @> ${p}::jsonb` : `t.location = ${p}::jsonb`), JSON.stringify(filter.location.value));
  return { where: conditions.join(' AND '), params };
}

export const messagesRepository = {
  async find(db: Db, applicationId: string, externalId: string, forUpdate = false): Promise<MessageRow | null> {
    const rows: MessageRow[] = await db.query(
      `SELECT ${MESSAGE_COLUMNS} FROM conversation.messages m WHERE m.application_id = $1 AND m.external_id = $2 AND m.purging_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
      [applicationId, externalId],
    );
    return rows[0] ?? null;
  },

  async exists(db: Db, applicationId: string, externalId: string): Promise<boolean> {
    const rows: unknown[] = await db.query(`SELECT 1 FROM conversation.messages WHERE application_id = $1 AND external_id = $2`, [
      applicationId,
      externalId,
    ]);
    return rows.length > 0;
  },

  async insert(db: Db, applicationId: string, message: NewMessage): Promise<MessageRow> {
    const keys = Object.keys(message) as (keyof NewMessage)[];
    const columns = ['application_id', ...keys.map((key) => (key === 'threadId' ? 'thread_id' : FIELD_COLUMNS[key as keyof MessageFields]))];
    const rows: MessageRow[] = await db.query(
      `INSERT INTO conversation.messages AS m (${columns.join(', ')})
       VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING ${MESSAGE_COLUMNS}`,
      [applicationId, ...keys.map((key) => asParam(key, message[key]))],
    );
    return rows[0];
  },

  async update(db: Db, applicationId: string, internalId: string, fields: MessageFields): Promise<void> {
    const keys = Object.keys(fields) as (keyof MessageFields)[];
    if (keys.length === 0) return;
    await db.query(
      `UPDATE conversation.messages SET ${keys.map((key, i) => `${FIELD_COLUMNS[key]} = $${i + 3}`).join(', ')}
       WHERE application_id = $1 AND internal_id = $2`,
      [applicationId, internalId, ...keys.map((key) => asParam(key, fields[key]))],
    );
  },

  async delete(db: Db, applicationId: string, internalId: string): Promise<void> {
    await db.query(`DELETE FROM conversation.messages WHERE application_id = $1 AND internal_id = $2`, [applicationId, internalId]);
  },

  async inThread(db: Db, applicationId: string, threadId: string, direction: 'ascending' | 'descending'): Promise<MessageRow[]> {
    const order = direction === 'ascending' ? 'ASC' : 'DESC';
    return db.query(
      `SELECT ${MESSAGE_COLUMNS} FROM conversation.messages m WHERE m.application_id = $1 AND m.thread_id = $2 AND m.purging_at IS NULL
       ORDER BY m.created_at ${order}, m.internal_id ${order}`,
      [applicationId, threadId],
    );
  },

  /** Oldest first, ties by id (behavior.md §6.2), strictly after the cursor. */
  async listPage(
    db: Db,
    applicationId: string,
    filter: MessageListFilter,
    page: { after: MessageCursor | null; limit: number },
  ): Promise<(MessageRow & { cursor: string })[]> {
    const { where, params } = listConditions(filter);
    const all: unknown[] = [applicationId, ...params];
    let keyset = '';
    if (page.after) {
      all.push(page.after.createdAtMicros, page.after.externalId);
      const ts = `($${all.length - 1}::timestamp AT TIME ZONE 'UTC')`;
      keyset = ` AND (m.created_at > ${ts} OR (m.created_at = ${ts} AND m.external_id > $${all.length}))`;
    }
    all.push(page.limit);
    return db.query(
      `SELECT ${MESSAGE_COLUMNS}, to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS cursor
       FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
       WHERE ${where}${keyset} ORDER BY m.created_at ASC, m.external_id ASC LIMIT $${all.length}`,
      all,
    );
  },

  async count(db: Db, applicationId: string, filter: MessageListFilter): Promise<number> {
    const { where, params } = listConditions(filter);
    const rows: { count: string }[] = await db.query(
      `SELECT count(*) AS count FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id WHERE ${where}`,
      [applicationId, ...params],
    );
    return Number(rows[0].count);
  },

  async reactionsOf(db: Db, messageIds: readonly string[]): Promise<ReactionRow[]> {
    if (messageIds.length === 0) return [];
    return db.query(
      `SELECT message_id AS "messageId", user_id AS "userId", reaction, reacted_at AS "reactedAt"
       FROM conversation.message_reactions WHERE message_id = ANY($1::bigint[]) ORDER BY reacted_at, user_id, reaction`,
      [[...new Set(messageIds)]],
    );
  },

  /** Adds reactions; an existing one keeps its time unless a timestamp was given (api.md). */
  async addReactions(
    db: Db,
    messageId: string,
    reactions: readonly { userId: string; reaction: string; at: Date; explicitTime: boolean }[],
  ): Promise<void> {
    for (const item of reactions) {
      await db.query(
        `INSERT INTO conversation.message_reactions (message_id, user_id, reaction, reacted_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (message_id, user_id, reaction) DO UPDATE SET reacted_at = CASE WHEN $5 THEN EXCLUDED.reacted_at ELSE message_reactions.reacted_at END`,
        [messageId, item.userId, item.reaction, item.at, item.explicitTime],
      );
    }
  },

  async removeReactions(db: Db, messageId: string, reactions: readonly { userId: string; reaction: string }[]): Promise<void> {
    for (const item of reactions) {
      await db.query(`DELETE FROM conversation.message_reactions WHERE message_id = $1 AND user_id = $2 AND reaction = $3`, [
        messageId,
        item.userId,
        item.reaction,
      ]);
    }
  },

  async replaceMentions(db: Db, messageId: string, userIds: readonly string[]): Promise<void> {
    await db.query(`DELETE FROM conversation.message_mentions WHERE message_id = $1 AND NOT (user_id = ANY($2::text[]))`, [
      messageId,
      [...userIds],
    ]);
    if (userIds.length === 0) return;
    await db.query(
      `INSERT INTO conversation.message_mentions (message_id, user_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
      [messageId, [...new Set(userIds)]],
    );
  },

  async attachmentsOf(db: Db, messageIds: readonly string[]): Promise<(FileRow & { messageId: string })[]> {
    if (messageIds.length === 0) return [];
    return db.query(
      `SELECT a.message_id AS "messageId", f.id, f.application_id AS "applicationId", f.owner_id AS "ownerId", f.name,
              f.mime_type AS "mimeType", f.size, f.created_at AS "createdAt"
       FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
       WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL ORDER BY a.seq`,
      [[...new Set(messageIds)]],
    );
  },

  async attach(db: Db, messageId: string, fileIds: readonly string[]): Promise<void> {
    for (const fileId of fileIds)
      await db.query(`INSERT INTO conversation.message_attachments (message_id, file_id) VALUES ($1, $2)`, [messageId, fileId]);
  },

  async detach(db: Db, messageId: string, fileIds: readonly string[]): Promise<void> {
    if (fileIds.length === 0) return;
    await db.query(`DELETE FROM conversation.message_attachments WHERE message_id = $1 AND file_id = ANY($2::uuid[])`, [
      messageId,
      [...fileIds],
    ]);
  },

  async linkPreviewsOf(db: Db, messageIds: readonly string[]): Promise<LinkPreviewRow[]> {
    if (messageIds.length === 0) return [];
    return db.query(
      `SELECT id, message_id AS "messageId", url, image_url AS "imageUrl", title, description, hidden
       FROM conversation.message_link_previews WHERE message_id = ANY($1::bigint[]) AND NOT hidden ORDER BY url, id`,
      [[...new Set(messageIds)]],
    );
  },

  async hideLinkPreviews(db: Db, messageId: string, previewIds: readonly string[]): Promise<void> {
    if (previewIds.length === 0) return;
    await db.query(`UPDATE conversation.message_link_previews SET hidden = true WHERE message_id = $1 AND id::text = ANY($2::text[])`, [
      messageId,
      [...previewIds],
    ]);
  },
};

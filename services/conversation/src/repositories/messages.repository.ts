/** All SQL about messages, their reactions, mentions and attachments. Tenant first. */
import { entityColumns, sqlTable } from '@collab/shared';
import { MessageEntity, type FileRow, type LinkPreviewRow, type MessageRow, type ParticipantRow, type ReactionRow } from '../entities/index.js';
import type { Db } from './db.js';

export interface ViewDetails {
  reactions: ReactionRow[];
  attachments: (FileRow & { messageId: string })[];
  previews: LinkPreviewRow[];
  participants: ParticipantRow[];
}
/** A row as the query's JSON brings it: these timestamps as epoch milliseconds. */
type Timed<Row, Key extends keyof Row> = Omit<Row, Key> & { [K in Key]: null extends Row[K] ? number | null : number };
interface ViewDetailsJson {
  reactions: Timed<ReactionRow, 'reactedAt'>[];
  attachments: Timed<FileRow & { messageId: string }, 'createdAt'>[];
  previews: LinkPreviewRow[];
  participants: Timed<ParticipantRow, 'lastSeenAt'>[];
}

const MESSAGE_COLUMNS = `m.internal_id AS "internalId", m.application_id AS "applicationId", m.external_id AS "externalId",
  m.thread_id AS "threadId", m.author_id AS "authorId", m.type, m.content, m.url, m.icon_url AS "iconUrl",
  m.translation_key AS "translationKey", m.extra_classnames AS "extraClassnames", m.metadata,
  m.skip_link_previews AS "skipLinkPreviews", m.created_at AS "createdAt", m.updated_at AS "updatedAt",
  m.deleted_at AS "deletedAt"`;

export type NewMessage = Omit<MessageRow, 'internalId' | 'applicationId'>;
export type MessageFields = Partial<Omit<MessageRow, 'internalId' | 'applicationId' | 'threadId'>>;
/** conversation.messages: its columns are those of its entity. */
const messagesTable = sqlTable('conversation.messages', 'm', entityColumns(MessageEntity));

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

function insertStatement(applicationId: string, message: NewMessage): [string, unknown[]] {
  const params: unknown[] = [];
  const written = messagesTable.write({ applicationId, ...message }, params);
  return [
    `INSERT INTO conversation.messages AS m (${written.columns.join(', ')})
     VALUES (${written.placeholders.join(', ')}) RETURNING ${MESSAGE_COLUMNS}`,
    params,
  ];
}

export const messagesRepository = {
  async find(db: Db, applicationId: string, externalId: string, forUpdate = false): Promise<MessageRow | null> {
    const rows: MessageRow[] = await db.query(
      `SELECT ${MESSAGE_COLUMNS} FROM conversation.messages m WHERE m.application_id = $1 AND m.external_id = $2 AND m.purging_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
      [applicationId, externalId],
    );
    return rows[0] ?? null;
  },

  /** A message by its internal id, unless it is being purged (events name messages so). */
  async findByInternalId(db: Db, applicationId: string, internalId: string): Promise<MessageRow | null> {
    const rows: MessageRow[] = await db.query(
      `SELECT ${MESSAGE_COLUMNS} FROM conversation.messages m WHERE m.application_id = $1 AND m.internal_id = $2 AND m.purging_at IS NULL`,
      [applicationId, internalId],
    );
    return rows[0] ?? null;
  },

  /** Messages by internal id whose message and thread are both not being purged, in no particular order. */
  async findByInternalIds(db: Db, applicationId: string, internalIds: readonly string[]): Promise<MessageRow[]> {
    if (internalIds.length === 0) return [];
    return db.query(
      `SELECT ${MESSAGE_COLUMNS} FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
       WHERE m.application_id = $1 AND m.internal_id = ANY($2::bigint[]) AND m.purging_at IS NULL AND t.purging_at IS NULL`,
      [applicationId, [...new Set(internalIds)]],
    );
  },

  /** The reactions a message has now. */
  async reactionsOf(db: Db, messageId: string): Promise<{ userId: string; reaction: string }[]> {
    return db.query(`SELECT user_id AS "userId", reaction FROM conversation.message_reactions WHERE message_id = $1`, [messageId]);
  },

  /** Whether the thread has any message yet (a new message is then the one that starts it). */
  async exists(db: Db, applicationId: string, externalId: string): Promise<boolean> {
    const rows: unknown[] = await db.query(`SELECT 1 FROM conversation.messages WHERE application_id = $1 AND external_id = $2`, [
      applicationId,
      externalId,
    ]);
    return rows.length > 0;
  },

  async insert(db: Db, applicationId: string, message: NewMessage): Promise<MessageRow> {
    const rows: MessageRow[] = await db.query(...insertStatement(applicationId, message));
    return rows[0];
  },

  /**
   * Inserts a message and, in the same statement, recomputes its thread's activity as
   * threadsRepository.refreshActivity does (the statement cannot see its own insert, hence the
   * GREATEST with the new message). The caller holds the thread's row lock, so the messages of
   * concurrent creates are all visible here.
   */
  async insertWithActivity(db: Db, applicationId: string, message: NewMessage): Promise<MessageRow> {
    const [insert, params] = insertStatement(applicationId, message);
    const rows: MessageRow[] = await db.query(
      `WITH inserted AS (${insert}),
       activity AS (
         UPDATE conversation.threads t SET last_activity_at = GREATEST(
           (SELECT max(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id), inserted."createdAt")
         FROM inserted WHERE t.application_id = $1 AND t.internal_id = inserted."threadId"
       )
       SELECT * FROM inserted`,
      params,
    );
    return rows[0];
  },

  async update(db: Db, applicationId: string, internalId: string, fields: MessageFields): Promise<void> {
    const params: unknown[] = [applicationId, internalId];
    const { set } = messagesTable.write(fields, params);
    if (!set) return;
    await db.query(`UPDATE conversation.messages SET ${set} WHERE application_id = $1 AND internal_id = $2`, params);
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

  /** Adds reactions; an existing one keeps its time unless a timestamp was given (api.md). */
  async addReactions(
    db: Db,
    messageId: string,
    reactions: readonly { userId: string; reaction: string; at: Date; explicitTime: boolean }[],
  ): Promise<void> {
    // As if added one by one: a reaction named twice ends with its last given timestamp, if any.
    const byKey = new Map<string, (typeof reactions)[number]>();
    for (const item of reactions) {
      const key = `${item.userId}\u0000${item.reaction}`;
      if (item.explicitTime || !byKey.get(key)?.explicitTime) byKey.set(key, item);
    }
    const unique = [...byKey.values()];
    for (const explicitTime of [true, false]) {
      const items = unique.filter((item) => item.explicitTime === explicitTime);
      if (items.length === 0) continue;
      await db.query(
        `INSERT INTO conversation.message_reactions (message_id, user_id, reaction, reacted_at)
         SELECT $1, r.user_id, r.reaction, r.reacted_at FROM unnest($2::text[], $3::text[], $4::timestamptz[]) AS r(user_id, reaction, reacted_at)
         ON CONFLICT (message_id, user_id, reaction) DO ${explicitTime ? 'UPDATE SET reacted_at = EXCLUDED.reacted_at' : 'NOTHING'}`,
        [messageId, items.map((item) => item.userId), items.map((item) => item.reaction), items.map((item) => item.at)],
      );
    }
  },

  async removeReactions(db: Db, messageId: string, reactions: readonly { userId: string; reaction: string }[]): Promise<void> {
    if (reactions.length === 0) return;
    await db.query(
      `DELETE FROM conversation.message_reactions r USING unnest($2::text[], $3::text[]) AS x(user_id, reaction)
       WHERE r.message_id = $1 AND r.user_id = x.user_id AND r.reaction = x.reaction`,
      [messageId, reactions.map((item) => item.userId), reactions.map((item) => item.reaction)],
    );
  },

  /** Makes these users the message's mentions; returns those it did not mention before. */
  async replaceMentions(db: Db, messageId: string, userIds: readonly string[]): Promise<string[]> {
    await db.query(`DELETE FROM conversation.message_mentions WHERE message_id = $1 AND NOT (user_id = ANY($2::text[]))`, [
      messageId,
      [...userIds],
    ]);
    return messagesRepository.addMentions(db, messageId, userIds);
  },

  /** Adds mentions; returns the users that were not mentioned yet. */
  async addMentions(db: Db, messageId: string, userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const rows: { userId: string }[] = await db.query(
      `INSERT INTO conversation.message_mentions (message_id, user_id) SELECT $1, unnest($2::text[])
       ON CONFLICT DO NOTHING RETURNING user_id AS "userId"`,
      [messageId, [...new Set(userIds)]],
    );
    return rows.map((row) => row.userId);
  },

  /**
   * What a message view shows besides the message rows, in one round trip: the reactions,
   * attachments and visible link previews of these messages, and the participants of their threads,
   * each in the order the API lists them. Timestamps travel as epoch milliseconds, truncated as pg
   * truncates microseconds, so they equal what the rows' own columns would give.
   */
  async viewDetailsOf(db: Db, messageIds: readonly string[], threadIds: readonly string[]): Promise<ViewDetails> {
    if (messageIds.length === 0 && threadIds.length === 0) return { reactions: [], attachments: [], previews: [], participants: [] };
    const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)`;
    const rows: ViewDetailsJson[] = await db.query(
      `SELECT
       (SELECT COALESCE(json_agg(json_build_object('messageId', message_id::text, 'userId', user_id, 'reaction', reaction,
           'reactedAt', ${ms('reacted_at')}) ORDER BY reacted_at, user_id, reaction), '[]')
        FROM conversation.message_reactions WHERE message_id = ANY($1::bigint[])) AS reactions,
       (SELECT COALESCE(json_agg(json_build_object('messageId', a.message_id::text, 'id', f.id, 'applicationId', f.application_id,
           'ownerId', f.owner_id, 'name', f.name, 'mimeType', f.mime_type, 'size', f.size::text, 'uploadStatus', f.upload_status, 'createdAt', ${ms('f.created_at')})
           ORDER BY a.seq), '[]')
        FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
        WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL) AS attachments,
       (SELECT COALESCE(json_agg(json_build_object('id', id, 'messageId', message_id::text, 'url', url, 'imageUrl', image_url,
           'title', title, 'description', description, 'hidden', hidden, 'seq', seq::text) ORDER BY seq), '[]')
        FROM conversation.message_link_previews WHERE message_id = ANY($1::bigint[]) AND NOT hidden) AS previews,
       (SELECT COALESCE(json_agg(json_build_object('threadId', thread_id::text, 'userId', user_id, 'lastSeenAt', ${ms('last_seen_at')},
           'subscribed', subscribed, 'seq', seq::text) ORDER BY seq), '[]')
        FROM conversation.thread_participants WHERE thread_id = ANY($2::bigint[])) AS participants`,
      [[...new Set(messageIds)], [...new Set(threadIds)]],
    );
    const { reactions, attachments, previews, participants } = rows[0];
    const date = (value: number | null) => (value === null ? null : new Date(value));
    return {
      reactions: reactions.map((row) => ({ ...row, reactedAt: new Date(row.reactedAt) })),
      attachments: attachments.map((row) => ({ ...row, createdAt: new Date(row.createdAt) })),
      previews,
      participants: participants.map((row) => ({ ...row, lastSeenAt: date(row.lastSeenAt) })),
    };
  },

  async attachmentsOf(db: Db, messageIds: readonly string[]): Promise<(FileRow & { messageId: string })[]> {
    if (messageIds.length === 0) return [];
    return db.query(
      `SELECT a.message_id AS "messageId", f.id, f.application_id AS "applicationId", f.owner_id AS "ownerId", f.name,
              f.mime_type AS "mimeType", f.size, f.upload_status AS "uploadStatus", f.created_at AS "createdAt"
       FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
       WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL ORDER BY a.seq`,
      [[...new Set(messageIds)]],
    );
  },

  /** Attaches in the order given (the attachments' order is their `seq`). */
  async attach(db: Db, messageId: string, fileIds: readonly string[]): Promise<void> {
    if (fileIds.length === 0) return;
    await db.query(
      `INSERT INTO conversation.message_attachments (message_id, file_id)
       SELECT $1, file_id FROM unnest($2::uuid[]) WITH ORDINALITY AS input(file_id, position) ORDER BY position`,
      [messageId, [...fileIds]],
    );
  },

  async detach(db: Db, messageId: string, fileIds: readonly string[]): Promise<void> {
    if (fileIds.length === 0) return;
    await db.query(`DELETE FROM conversation.message_attachments WHERE message_id = $1 AND file_id = ANY($2::uuid[])`, [
      messageId,
      [...fileIds],
    ]);
  },

  async hideLinkPreviews(db: Db, messageId: string, previewIds: readonly string[]): Promise<void> {
    if (previewIds.length === 0) return;
    await db.query(`UPDATE conversation.message_link_previews SET hidden = true WHERE message_id = $1 AND id::text = ANY($2::text[])`, [
      messageId,
      [...previewIds],
    ]);
  },
};

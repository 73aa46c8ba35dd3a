/** All SQL about message rows. Tenant first: every method takes the application id. */
import { rows, type Queryable } from '@collab/shared';
import type { MessageRef, MessageRow, ThreadRef } from '../entities/index.js';
import { messagesTable } from './tables.js';

/** What a write of a message may set: every column but its ids, its thread and its purge mark. */
export type MessageFields = Partial<Omit<MessageRow, 'internalId' | 'applicationId' | 'threadRef' | 'purgingAt'>>;
/** A new message: what it must be given; a column not given takes its default. */
export type NewMessage = Pick<MessageRow, 'externalId' | 'threadRef' | 'authorId' | 'content' | 'createdAt'> & MessageFields;

export interface MessageListFilter {
  metadata?: Record<string, unknown>;
  location?: { value: Record<string, unknown>; partialMatch: boolean };
  authorId?: string;
  groupId?: string;
  threadId?: string;
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
  if (filter.threadId !== undefined) add((p) => `t.external_id = ${p}`, filter.threadId);
  if (filter.location)
    add((p) => (filter.location!.partialMatch ? `t.location @> ${p}::jsonb` : `t.location = ${p}::jsonb`), JSON.stringify(filter.location.value));
  return { where: conditions.join(' AND '), params };
}

function insertStatement(applicationId: string, message: NewMessage): [string, unknown[]] {
  const params: unknown[] = [];
  const written = messagesTable.write({ applicationId, ...message }, params);
  return [
    `INSERT INTO conversation.messages AS m (${written.columns.join(', ')})
     VALUES (${written.placeholders.join(', ')}) RETURNING ${messagesTable.select}`,
    params,
  ];
}

/**
 * The repository's statements that the bench's raw-SQL baselines issue too, exported so that
 * they issue the very same text.
 */
export const messagesStatements = {
  /**
   * Inserts the message and moves its thread's latest activity, in one statement, with its
   * parameters; answers the message's internal id, and its thread's subscribers (in the order they
   * subscribed) and whether it had messages, both as they were before the insert.
   */
  insertWithActivity(applicationId: string, message: NewMessage): [string, unknown[]] {
    const [insert, params] = insertStatement(applicationId, message);
    return [
      `WITH inserted AS (${insert}),
       activity AS (
         UPDATE conversation.threads t SET last_activity_at = GREATEST(
           (SELECT max(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id), inserted."createdAt")
         FROM inserted WHERE t.application_id = $1 AND t.internal_id = inserted."threadRef"
       )
       SELECT inserted."internalId",
         ARRAY(SELECT p.user_id FROM conversation.thread_participants p
           WHERE p.thread_id = inserted."threadRef" AND p.subscribed ORDER BY p.seq) AS "subscribersBefore",
         EXISTS (SELECT 1 FROM conversation.messages m WHERE m.thread_id = inserted."threadRef") AS "hadMessages"
       FROM inserted`,
      params,
    ];
  },
  /**
   * Appends $4 to the one text node of message $3 of thread $2 (external ids) when its content is
   * exactly one markdown node with one text child; answers the message's internal id, new content,
   * skipLinkPreviews and type, or no row. The thread is looked up in the UPDATE itself so that an append
   * is one round trip.
   * Concurrent appends each wait for the row and append to its latest text. CASE, not AND: SQL does
   * not promise the order of AND, and jsonb_array_length fails on a non-array. In a WITH: TypeORM
   * answers a bare UPDATE … RETURNING with [rows, rowCount].
   */
  appendText: `WITH appended AS (UPDATE conversation.messages m
     SET content = jsonb_build_array(jsonb_build_object('type', 'markdown', 'children',
       jsonb_build_array(jsonb_build_object('text', (m.content #>> '{0,children,0,text}') || $4::text))))
     WHERE m.application_id = $1 AND m.external_id = $3 AND m.purging_at IS NULL
       AND m.thread_id = (SELECT t.internal_id FROM conversation.threads t WHERE t.application_id = $1 AND t.external_id = $2 AND t.purging_at IS NULL)
       AND CASE WHEN jsonb_typeof(m.content) = 'array' AND jsonb_typeof(m.content #> '{0,children}') = 'array'
         THEN jsonb_array_length(m.content) = 1 AND m.content #>> '{0,type}' = 'markdown'
           AND jsonb_array_length(m.content #> '{0,children}') = 1
           AND jsonb_typeof(m.content #> '{0,children,0,text}') = 'string'
           AND NOT jsonb_exists(m.content #> '{0,children,0}', 'type')
         ELSE false END
     RETURNING ${messagesTable.pick('internalId', 'content', 'skipLinkPreviews', 'type')})
   SELECT * FROM appended`,
  /** The messages of thread $2, oldest or newest first. */
  inThread: (direction: 'ascending' | 'descending') => {
    const order = direction === 'ascending' ? 'ASC' : 'DESC';
    return `SELECT ${messagesTable.select} FROM conversation.messages m WHERE m.application_id = $1 AND m.thread_id = $2 AND m.purging_at IS NULL
       ORDER BY m.created_at ${order}, m.internal_id ${order}`;
  },
};

export const messagesRepository = {
  async find(db: Queryable, applicationId: string, externalId: string, forUpdate = false): Promise<MessageRow | null> {
    const [row] = await rows<MessageRow>(
      db,
      `SELECT ${messagesTable.select} FROM conversation.messages m WHERE m.application_id = $1 AND m.external_id = $2 AND m.purging_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
      [applicationId, externalId],
    );
    return row ?? null;
  },

  /** A message by its internal id, unless it is being purged (events name messages so). */
  async findByInternalId(db: Queryable, applicationId: string, internalId: string): Promise<MessageRow | null> {
    const [row] = await rows<MessageRow>(
      db,
      `SELECT ${messagesTable.select} FROM conversation.messages m WHERE m.application_id = $1 AND m.internal_id = $2 AND m.purging_at IS NULL`,
      [applicationId, internalId],
    );
    return row ?? null;
  },

  /** Messages by internal id whose message and thread are both not being purged, in no particular order. */
  async findByInternalIds(db: Queryable, applicationId: string, internalIds: readonly string[]): Promise<MessageRow[]> {
    if (internalIds.length === 0) return [];
    return rows<MessageRow>(
      db,
      `SELECT ${messagesTable.select} FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
       WHERE m.application_id = $1 AND m.internal_id = ANY($2::bigint[]) AND m.purging_at IS NULL AND t.purging_at IS NULL`,
      [applicationId, [...new Set(internalIds)]],
    );
  },

  /**
   * Of these messages, those that exist within the application with their thread (neither being
   * purged), and whether each is soft-deleted: only the two columns, since a caller may ask about
   * every message a user was ever notified of.
   */
  async states(db: Queryable, applicationId: string, internalIds: readonly string[]): Promise<{ internalId: MessageRef; deleted: boolean }[]> {
    if (internalIds.length === 0) return [];
    return rows<{ internalId: MessageRef; deleted: boolean }>(
      db,
      `SELECT ${messagesTable.pick('internalId')}, m.deleted_at IS NOT NULL AS deleted
       FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
       WHERE m.application_id = $1 AND m.internal_id = ANY($2::bigint[]) AND m.purging_at IS NULL AND t.purging_at IS NULL`,
      [applicationId, [...new Set(internalIds)]],
    );
  },

  /**
   * What a mail shows before a message (original-extras §5.4): how many messages of its thread,
   * not deleted, come before it, and the first and the last of them; null when it is gone.
   */
  async excerpt(db: Queryable, applicationId: string, internalId: string): Promise<{ earlierCount: number; first: MessageRef | null; previous: MessageRef | null } | null> {
    const [row] = await rows<{ earlierCount: number; first: MessageRef | null; previous: MessageRef | null }>(
      db,
      `WITH current AS (
         SELECT thread_id, created_at, internal_id FROM conversation.messages WHERE application_id = $1 AND internal_id = $2 AND purging_at IS NULL),
       earlier AS (
         SELECT m.internal_id, m.created_at FROM conversation.messages m JOIN current c ON m.thread_id = c.thread_id
         WHERE m.application_id = $1 AND m.deleted_at IS NULL AND m.purging_at IS NULL AND (m.created_at, m.internal_id) < (c.created_at, c.internal_id))
       SELECT (SELECT count(*)::int FROM earlier) AS "earlierCount",
         (SELECT internal_id::text FROM earlier ORDER BY created_at, internal_id LIMIT 1) AS first,
         (SELECT internal_id::text FROM earlier ORDER BY created_at DESC, internal_id DESC LIMIT 1) AS previous
       FROM current`,
      [applicationId, internalId],
    );
    return row ?? null;
  },

  /** Whether the thread has any message yet (a new message is then the one that starts it). */
  async exists(db: Queryable, applicationId: string, externalId: string): Promise<boolean> {
    const found = await rows<unknown>(db, `SELECT 1 FROM conversation.messages WHERE application_id = $1 AND external_id = $2`, [
      applicationId,
      externalId,
    ]);
    return found.length > 0;
  },

  async insert(db: Queryable, applicationId: string, message: NewMessage): Promise<MessageRow> {
    const [row] = await rows<MessageRow>(db, ...insertStatement(applicationId, message));
    return row;
  },

  /**
   * Inserts a message and, in the same statement, recomputes its thread's activity as
   * threadsRepository.refreshActivity does (the statement cannot see its own insert, hence the
   * GREATEST with the new message). The caller holds the thread's row lock, so the messages of
   * concurrent creates are all visible here. What the new message is decided by comes with it: the
   * thread's subscribers and whether it had messages, read by the same statement, so before its
   * insert (a statement does not see its own writes).
   */
  async insertWithActivity(
    db: Queryable,
    applicationId: string,
    message: NewMessage,
  ): Promise<{ internalId: MessageRef; subscribersBefore: string[]; hadMessages: boolean }> {
    const [statement, params] = messagesStatements.insertWithActivity(applicationId, message);
    const [row] = await rows<{ internalId: MessageRef; subscribersBefore: string[]; hadMessages: boolean }>(db, statement, params);
    return row;
  },

  async update(db: Queryable, applicationId: string, internalId: MessageRef, fields: MessageFields): Promise<void> {
    const params: unknown[] = [applicationId, internalId];
    const { set } = messagesTable.write(fields, params);
    if (!set) return;
    await db.query(`UPDATE conversation.messages SET ${set} WHERE application_id = $1 AND internal_id = $2`, params);
  },

  /**
   * Appends `text` to the one text node of a message whose content is exactly one markdown node
   * with one text child, in one statement: the row lock the UPDATE takes serialises concurrent
   * appends, and each reads the text the previous one committed, so none is lost. The text node is
   * rebuilt (its other properties dropped). Null when the message is not appendable (or gone).
   */
  async appendText(
    db: Queryable,
    applicationId: string,
    threadId: string,
    messageId: string,
    text: string,
  ): Promise<Pick<MessageRow, 'internalId' | 'content' | 'skipLinkPreviews' | 'type'> | null> {
    const [row] = await rows<Pick<MessageRow, 'internalId' | 'content' | 'skipLinkPreviews' | 'type'>>(db, messagesStatements.appendText, [
      applicationId,
      threadId,
      messageId,
      text,
    ]);
    return row ?? null;
  },

  async delete(db: Queryable, applicationId: string, internalId: MessageRef): Promise<void> {
    await db.query(`DELETE FROM conversation.messages WHERE application_id = $1 AND internal_id = $2`, [applicationId, internalId]);
  },

  async inThread(db: Queryable, applicationId: string, thread: ThreadRef, direction: 'ascending' | 'descending'): Promise<MessageRow[]> {
    return rows<MessageRow>(db, messagesStatements.inThread(direction), [applicationId, thread]);
  },

  /** Oldest first, ties by external id, strictly after the cursor. */
  async listPage(
    db: Queryable,
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
    return rows<MessageRow & { cursor: string }>(
      db,
      `SELECT ${messagesTable.select}, to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS cursor
       FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
       WHERE ${where}${keyset} ORDER BY m.created_at ASC, m.external_id ASC LIMIT $${all.length}`,
      all,
    );
  },

  async count(db: Queryable, applicationId: string, filter: MessageListFilter): Promise<number> {
    const { where, params } = listConditions(filter);
    const [row] = await rows<{ count: string }>(
      db,
      `SELECT count(*) AS count FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id WHERE ${where}`,
      [applicationId, ...params],
    );
    return Number(row.count);
  },
};

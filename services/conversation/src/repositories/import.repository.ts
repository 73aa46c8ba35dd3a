/**
 * All SQL of importing a customer dump into this service's tables. Rows arrive in batches as a
 * JSON array (jsonb_to_recordset: no bind-parameter limit), de-duplicated by the caller; every
 * statement is tenant-scoped, and a row already stored is kept unless `overwrite` is set, so that
 * importing again or resuming changes nothing. Nothing here records events: imported history
 * already happened and must not be delivered to webhooks again.
 */
import { countAffected, rows, type ImportedRow, type Queryable } from '@collab/shared';
import { messagesTable, threadsTable } from './tables.js';

const onConflict = (overwrite: boolean, key: string, set: string) => (overwrite ? `ON CONFLICT (${key}) DO UPDATE SET ${set}` : `ON CONFLICT (${key}) DO NOTHING`);

/**
 * The distinct threads or messages a batch names. Joined on them as well as on the rows, the
 * planner probes their primary key for those few instead of reading every one of the application's
 * (it cannot tell how many rows a JSON array holds).
 */
const refsOf = <Row>(batch: Row[], ref: (row: Row) => string) => [...new Set(batch.map(ref))];

interface Ref {
  externalId: string;
  ref: string;
  live: boolean;
}

/** A thread's or message's external id and internal id (as text), as Ref names them. */
const refColumns = (table: typeof threadsTable | typeof messagesTable) => `${table.pick('externalId')}, ${table.alias}.internal_id::text AS ref`;

/**
 * The references of the rows an INSERT … RETURNING wrote, and of the others given that were
 * already stored (only those are read again: on a first import, none). Rows being purged name
 * nothing.
 */
async function withStored(
  db: Queryable,
  table: typeof threadsTable | typeof messagesTable,
  applicationId: string,
  batch: { id: string }[],
  written: Ref[],
) {
  const refs = written.filter((row) => row.live).map(({ externalId, ref }) => ({ externalId, ref }));
  const returned = new Set(written.map((row) => row.externalId));
  const others = batch.map((row) => row.id).filter((id) => !returned.has(id));
  if (others.length === 0) return refs;
  const { name, alias } = table;
  const stored = await rows<Omit<Ref, 'live'>>(
    db,
    `SELECT ${refColumns(table)} FROM ${name} ${alias}
     WHERE ${alias}.application_id = $1 AND ${alias}.external_id = ANY($2::text[]) AND ${alias}.purging_at IS NULL`,
    [applicationId, others],
  );
  return [...refs, ...stored];
}

export const importRepository = {
  /** Inserts the threads and answers the internal id of every one given, new or already stored. */
  async threads(db: Queryable, applicationId: string, batch: ImportedRow<'threads'>[], overwrite: boolean) {
    const written = await rows<Ref>(
      db,
      `INSERT INTO conversation.threads AS t (application_id, external_id, group_id, name, url, location, metadata, extra_classnames, resolved_at, created_at, last_activity_at)
       SELECT $1, r.id, r."groupID", r.name, r.url, COALESCE(r.location, '{}'), COALESCE(r.metadata, '{}'), r."extraClassnames", r."resolvedTimestamp", r."createdTimestamp", r."createdTimestamp"
       FROM jsonb_to_recordset($2::jsonb) AS r(id text, "groupID" text, name text, url text, location jsonb, metadata jsonb, "extraClassnames" text, "resolvedTimestamp" timestamptz, "createdTimestamp" timestamptz)
       ${onConflict(
         overwrite,
         'application_id, external_id',
         `group_id = EXCLUDED.group_id, name = EXCLUDED.name, url = EXCLUDED.url, location = EXCLUDED.location, metadata = EXCLUDED.metadata,
          extra_classnames = EXCLUDED.extra_classnames, resolved_at = EXCLUDED.resolved_at, created_at = EXCLUDED.created_at,
          last_activity_at = GREATEST(t.last_activity_at, EXCLUDED.created_at)`,
       )}
       RETURNING ${refColumns(threadsTable)}, t.purging_at IS NULL AS live`,
      [applicationId, JSON.stringify(batch)],
    );
    return { inserted: written.length, refs: await withStored(db, threadsTable, applicationId, batch, written) };
  },

  /**
   * Inserts the messages into their threads (named by internal id, and only this application's)
   * and moves each thread's last activity to its latest message. Answers every given message's
   * internal id.
   */
  async messages(db: Queryable, applicationId: string, batch: ImportedRow<'messages'>[], overwrite: boolean) {
    const written = await rows<Ref>(
      db,
      `WITH written AS (
       INSERT INTO conversation.messages AS m (application_id, external_id, thread_id, author_id, type, content, url, icon_url, translation_key,
         extra_classnames, metadata, skip_link_previews, created_at, updated_at, deleted_at)
       SELECT $1, r.id, t.internal_id, r."authorID", r.type, r.content, r.url, r."iconURL", r."translationKey",
         r."extraClassnames", COALESCE(r.metadata, '{}'), r."skipLinkPreviews", r."createdTimestamp", r."updatedTimestamp", r."deletedTimestamp"
       FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS (id text, "threadRef" bigint, "authorID" text, type text, content jsonb, url text, "iconURL" text,
         "translationKey" text, "extraClassnames" text, metadata jsonb, "skipLinkPreviews" boolean, "createdTimestamp" timestamptz,
         "updatedTimestamp" timestamptz, "deletedTimestamp" timestamptz)) WITH ORDINALITY AS r
       JOIN conversation.threads t ON t.internal_id = r."threadRef" AND t.application_id = $1 AND t.internal_id = ANY($3::bigint[])
       ORDER BY r.ordinality
       ${onConflict(
         overwrite,
         'application_id, external_id',
         `thread_id = EXCLUDED.thread_id, author_id = EXCLUDED.author_id, type = EXCLUDED.type, content = EXCLUDED.content, url = EXCLUDED.url,
          icon_url = EXCLUDED.icon_url, translation_key = EXCLUDED.translation_key, extra_classnames = EXCLUDED.extra_classnames,
          metadata = EXCLUDED.metadata, skip_link_previews = EXCLUDED.skip_link_previews, created_at = EXCLUDED.created_at,
          updated_at = EXCLUDED.updated_at, deleted_at = EXCLUDED.deleted_at`,
       )}
       RETURNING m.thread_id, m.created_at, m.external_id, m.internal_id, m.purging_at),
     -- The latest of the messages this batch wrote: a thread's activity only moves forward, so the
     -- thread's earlier messages need not be read again (that made each batch slower than the last).
     latest AS (SELECT thread_id, max(created_at) AS at FROM written GROUP BY thread_id),
     -- Two batches of one thread can be written at once: each locks its threads in the order of
     -- their ids, so that neither waits for a thread the other holds while holding one it wants.
     locked AS (
       SELECT t.internal_id, latest.at FROM conversation.threads t JOIN latest ON t.internal_id = latest.thread_id
       WHERE t.last_activity_at < latest.at ORDER BY t.internal_id FOR NO KEY UPDATE OF t),
     moved AS (
       UPDATE conversation.threads t SET last_activity_at = GREATEST(t.last_activity_at, locked.at)
       FROM locked WHERE t.internal_id = locked.internal_id)
     SELECT external_id AS "externalId", internal_id::text AS ref, purging_at IS NULL AS live FROM written`,
      [applicationId, JSON.stringify(batch), refsOf(batch, (row) => row.threadRef)],
    );
    return { inserted: written.length, refs: await withStored(db, messagesTable, applicationId, batch, written) };
  },

  async reactions(db: Queryable, applicationId: string, batch: ImportedRow<'reactions'>[], overwrite: boolean): Promise<number> {
    return countAffected(
      db,
      `INSERT INTO conversation.message_reactions (message_id, user_id, reaction, reacted_at)
       SELECT m.internal_id, r."userID", r.reaction, r.timestamp
       FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS ("messageRef" bigint, "userID" text, reaction text, timestamp timestamptz)) WITH ORDINALITY AS r
       JOIN conversation.messages m ON m.internal_id = r."messageRef" AND m.application_id = $1 AND m.internal_id = ANY($3::bigint[])
       ORDER BY r.ordinality
       ${onConflict(overwrite, 'message_id, user_id, reaction', 'reacted_at = EXCLUDED.reacted_at')}`,
      [applicationId, JSON.stringify(batch), refsOf(batch, (row) => row.messageRef)],
    );
  },

  async mentions(db: Queryable, applicationId: string, batch: ImportedRow<'mentions'>[]): Promise<number> {
    return countAffected(
      db,
      `INSERT INTO conversation.message_mentions (message_id, user_id)
       SELECT m.internal_id, r."userID"
       FROM jsonb_to_recordset($2::jsonb) AS r("messageRef" bigint, "userID" text)
       JOIN conversation.messages m ON m.internal_id = r."messageRef" AND m.application_id = $1 AND m.internal_id = ANY($3::bigint[])
       ON CONFLICT (message_id, user_id) DO NOTHING`,
      [applicationId, JSON.stringify(batch), refsOf(batch, (row) => row.messageRef)],
    );
  },

  /**
   * Files of the dump, with the dump's ids; an id this application does not hold yet is inserted
   * (an id held by another application is left alone). Overwriting replaces the metadata and the
   * status (the bytes then follow again).
   */
  async files(db: Queryable, applicationId: string, batch: ImportedRow<'files'>[], overwrite: boolean): Promise<number> {
    return countAffected(
      db,
      `INSERT INTO conversation.files AS f (id, application_id, owner_id, name, mime_type, size, upload_status, created_at)
       SELECT r.id, $1, r."ownerID", r.name, r."mimeType", r.size, r."uploadStatus", r."createdTimestamp"
       FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, "ownerID" text, name text, "mimeType" text, size bigint, "uploadStatus" text, "createdTimestamp" timestamptz)
       ${
         overwrite
           ? `ON CONFLICT (id) DO UPDATE SET owner_id = EXCLUDED.owner_id, name = EXCLUDED.name, mime_type = EXCLUDED.mime_type, size = EXCLUDED.size,
                upload_status = EXCLUDED.upload_status, created_at = EXCLUDED.created_at WHERE f.application_id = $1`
           : 'ON CONFLICT (id) DO NOTHING'
       }`,
      [applicationId, JSON.stringify(batch)],
    );
  },

  /**
   * One piece of an imported file's bytes (kept if already stored: the same piece again is the
   * same bytes); the last one marks the file uploaded. Only this application's files.
   */
  async fileChunk(db: Queryable, applicationId: string, chunk: { fileID: string; seq: number; data: Buffer; last: boolean }): Promise<number> {
    const inserted = await countAffected(
      db,
      `INSERT INTO conversation.file_chunks (file_id, seq, data)
       SELECT f.id, $3, $4 FROM conversation.files f WHERE f.id = $2 AND f.application_id = $1 AND octet_length($4::bytea) > 0
       ON CONFLICT (file_id, seq) DO NOTHING`,
      [applicationId, chunk.fileID, chunk.seq, chunk.data],
    );
    if (chunk.last)
      await db.query(`UPDATE conversation.files SET upload_status = 'uploaded' WHERE id = $2 AND application_id = $1 AND upload_status <> 'uploaded'`, [
        applicationId,
        chunk.fileID,
      ]);
    return inserted;
  },

  /** Attachments in the dump's order (their `seq`), of this application's messages and files. */
  async attachments(db: Queryable, applicationId: string, batch: ImportedRow<'attachments'>[]): Promise<number> {
    return countAffected(
      db,
      `INSERT INTO conversation.message_attachments (message_id, file_id)
       SELECT m.internal_id, f.id
       FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS ("messageRef" bigint, "fileID" uuid)) WITH ORDINALITY AS r
       JOIN conversation.messages m ON m.internal_id = r."messageRef" AND m.application_id = $1 AND m.internal_id = ANY($3::bigint[])
       JOIN conversation.files f ON f.id = r."fileID" AND f.application_id = $1
       ORDER BY r.ordinality
       ON CONFLICT (message_id, file_id) DO NOTHING`,
      [applicationId, JSON.stringify(batch), refsOf(batch, (row) => row.messageRef)],
    );
  },

  /** Participants keep the dump's order: the order in which threads list them. */
  async participants(db: Queryable, applicationId: string, batch: ImportedRow<'participants'>[], overwrite: boolean): Promise<number> {
    return countAffected(
      db,
      `INSERT INTO conversation.thread_participants (thread_id, user_id, last_seen_at, subscribed)
       SELECT t.internal_id, r."userID", r."lastSeenTimestamp", r.subscribed
       FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS ("threadRef" bigint, "userID" text, "lastSeenTimestamp" timestamptz, subscribed boolean)) WITH ORDINALITY AS r
       JOIN conversation.threads t ON t.internal_id = r."threadRef" AND t.application_id = $1 AND t.internal_id = ANY($3::bigint[])
       ORDER BY r.ordinality
       ${onConflict(overwrite, 'thread_id, user_id', 'last_seen_at = EXCLUDED.last_seen_at, subscribed = EXCLUDED.subscribed')}`,
      [applicationId, JSON.stringify(batch), refsOf(batch, (row) => row.threadRef)],
    );
  },
};

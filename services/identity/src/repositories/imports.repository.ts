/**
 * All SQL of dump imports: the import records and their stored dumps, the mapping of the dump's
 * ids, and identity's own part of the data (customers, applications, users, groups, memberships).
 * Rows arrive in batches as JSON (jsonb_to_recordset: no bind-parameter limit).
 */
import { countAffected, rows, type Queryable } from '@collab/shared';
import type { ImportMappingRow, ImportRecordRow } from '../entities/index.js';
import { groupsTable, importFileChunksTable, importMappingsTable, importsTable, usersTable } from './tables.js';

export type MappingKind = 'user' | 'group' | 'thread' | 'message' | 'reaction';
export type Mapping = Pick<ImportMappingRow, 'originalId' | 'applicationId' | 'externalId' | 'ref' | 'parentRef'>;

/** What identity holds of a user or group, as the dump gives it, for the comparison that finds conflicts. */
export interface ImportedUser {
  applicationId: string;
  id: string;
  name: string | null;
  email: string | null;
  shortName: string | null;
  profilePictureURL: string | null;
  status: 'active' | 'deleted';
  metadata: unknown;
  createdTimestamp: Date;
}
export interface ImportedGroup {
  applicationId: string;
  id: string;
  name: string;
  status: 'active' | 'deleted';
  metadata: unknown;
  createdTimestamp: Date;
}

export const importsRepository = {
  async create(db: Queryable, record: { id: string; customerId: string; overwrite: boolean; withFiles: boolean }): Promise<void> {
    await db.query(`INSERT INTO identity.imports (id, customer_id, overwrite, with_files, dump_bytes) VALUES ($1, $2, $3, $4, 0)`, [
      record.id,
      record.customerId,
      record.overwrite,
      record.withFiles,
    ]);
  },

  async addFileChunk(db: Queryable, importId: string, fileId: string, seq: number, data: Buffer): Promise<void> {
    await db.query(`INSERT INTO identity.import_file_chunks (import_id, file_id, seq, data) VALUES ($1, $2, $3, $4)`, [importId, fileId, seq, data]);
  },

  /** How many bytes of each of these files were given with the import (files not given are absent). */
  async fileSizes(db: Queryable, importId: string, fileIds: string[]): Promise<Map<string, number>> {
    if (fileIds.length === 0) return new Map();
    const found = await rows<{ fileId: string; bytes: string }>(
      db,
      `SELECT ${importFileChunksTable.pick('fileId')}, sum(octet_length(fc.data))::text AS bytes FROM identity.import_file_chunks fc
       WHERE fc.import_id = $1 AND fc.file_id = ANY($2::uuid[]) GROUP BY fc.file_id`,
      [importId, fileIds],
    );
    return new Map(found.map((row) => [row.fileId, Number(row.bytes)]));
  },

  async fileChunk(db: Queryable, importId: string, fileId: string, seq: number): Promise<Buffer | null> {
    const [row] = await rows<{ data: Buffer }>(db, `SELECT data FROM identity.import_file_chunks WHERE import_id = $1 AND file_id = $2 AND seq = $3`, [
      importId,
      fileId,
      seq,
    ]);
    return row?.data ?? null;
  },

  async addChunk(db: Queryable, importId: string, seq: number, data: Buffer): Promise<void> {
    await db.query(`INSERT INTO identity.import_chunks (import_id, seq, data) VALUES ($1, $2, $3)`, [importId, seq, data]);
    await db.query(`UPDATE identity.imports SET dump_bytes = dump_bytes + $2 WHERE id = $1`, [importId, data.length]);
  },

  async chunk(db: Queryable, importId: string, seq: number): Promise<Buffer | null> {
    const [row] = await rows<{ data: Buffer }>(db, `SELECT data FROM identity.import_chunks WHERE import_id = $1 AND seq = $2`, [importId, seq]);
    return row?.data ?? null;
  },

  /**
   * The first chunk of the stored dump holding one of `markers`, also when a marker begins in the
   * chunk before (the last bytes of that chunk are searched together with this one's first); null
   * when none does. Searched by PostgreSQL, so that the chunks before are not sent at all.
   */
  async firstChunkWith(db: Queryable, importId: string, markers: readonly string[]): Promise<number | null> {
    const overlap = Math.max(...markers.map((marker) => Buffer.byteLength(marker)));
    const [row] = await rows<{ seq: number }>(
      db,
      `SELECT seq FROM (
         SELECT seq, data, lag(substring(data FROM greatest(octet_length(data) - $3 + 1, 1))) OVER (ORDER BY seq) AS tail
         FROM identity.import_chunks WHERE import_id = $1) c
       WHERE EXISTS (SELECT 1 FROM unnest($2::bytea[]) AS m(marker)
                     WHERE position(marker IN data) > 0 OR position(marker IN coalesce(tail, ''::bytea) || substring(data FROM 1 FOR $3)) > 0)
       ORDER BY seq LIMIT 1`,
      [importId, markers.map((marker) => Buffer.from(marker)), overlap],
    );
    return row?.seq ?? null;
  },

  async find(db: Queryable, importId: string): Promise<ImportRecordRow | null> {
    const [row] = await rows<ImportRecordRow>(db, `SELECT ${importsTable.select} FROM identity.imports i WHERE i.id = $1`, [importId]);
    return row ?? null;
  },

  async findOfCustomer(db: Queryable, customerId: string, importId: string): Promise<ImportRecordRow | null> {
    const [row] = await rows<ImportRecordRow>(db, `SELECT ${importsTable.select} FROM identity.imports i WHERE i.customer_id = $1 AND i.id = $2`, [
      customerId,
      importId,
    ]);
    return row ?? null;
  },

  /** Imports not finished, for re-queueing their job when Redis lost it. */
  async unfinished(db: Queryable): Promise<{ id: string; customerId: string }[]> {
    return rows<{ id: string; customerId: string }>(db, `SELECT ${importsTable.pick('id', 'customerId')} FROM identity.imports i WHERE i.state IN ('waiting', 'active') ORDER BY i.created_at`);
  },

  async start(db: Queryable, importId: string): Promise<void> {
    await db.query(`UPDATE identity.imports SET state = 'active', started_at = COALESCE(started_at, now()) WHERE id = $1`, [importId]);
  },

  /** Progress so far: what is counted, and the tables finished (a resumed run passes over them). */
  async progress(db: Queryable, importId: string, update: Pick<ImportRecordRow, 'bytesRead' | 'tablesDone' | 'counts' | 'skipped' | 'conflicts'>): Promise<void> {
    await db.query(
      `UPDATE identity.imports SET bytes_read = $2, tables_done = $3, counts = $4, skipped = $5, conflicts = $6 WHERE id = $1`,
      [importId, update.bytesRead, update.tablesDone, JSON.stringify(update.counts), JSON.stringify(update.skipped), JSON.stringify(update.conflicts)],
    );
  },

  /** Ends the import; its stored dump goes (what remains is its report). */
  async finish(db: Queryable, importId: string, outcome: { state: 'completed' } | { state: 'failed'; error: string }): Promise<void> {
    await db.query(`UPDATE identity.imports SET state = $2, error = $3, finished_at = now() WHERE id = $1`, [
      importId,
      outcome.state,
      outcome.state === 'failed' ? outcome.error : null,
    ]);
    await db.query(`DELETE FROM identity.import_chunks WHERE import_id = $1`, [importId]);
    await db.query(`DELETE FROM identity.import_file_chunks WHERE import_id = $1`, [importId]);
  },

  async saveMappings(db: Queryable, customerId: string, kind: MappingKind, mappings: Mapping[]): Promise<void> {
    if (mappings.length === 0) return;
    const unique = [...new Map(mappings.map((mapping) => [mapping.originalId, mapping])).values()];
    await db.query(
      `INSERT INTO identity.import_mappings (customer_id, kind, original_id, application_id, external_id, ref, parent_ref)
       SELECT $1, $2, r."originalId", r."applicationId", r."externalId", r.ref, r."parentRef"
       FROM jsonb_to_recordset($3::jsonb) AS r("originalId" uuid, "applicationId" uuid, "externalId" text, ref text, "parentRef" text)
       ON CONFLICT (customer_id, kind, original_id) DO UPDATE SET application_id = EXCLUDED.application_id, external_id = EXCLUDED.external_id,
         ref = EXCLUDED.ref, parent_ref = EXCLUDED.parent_ref`,
      [customerId, kind, JSON.stringify(unique)],
    );
  },

  async mappings(db: Queryable, customerId: string, kind: MappingKind, originalIds: string[]): Promise<Mapping[]> {
    if (originalIds.length === 0) return [];
    return rows<Mapping>(
      db,
      `SELECT ${importMappingsTable.pick('originalId', 'applicationId', 'externalId', 'ref', 'parentRef')}
       FROM identity.import_mappings im WHERE im.customer_id = $1 AND im.kind = $2 AND im.original_id = ANY($3::uuid[])`,
      [customerId, kind, [...new Set(originalIds)]],
    );
  },

  /** A customer as stored: its sealed secret, to compare with the dump's. */
  async insertCustomer(db: Queryable, customer: { id: string; secretEncrypted: string; createdAt: Date }): Promise<void> {
    await db.query(`INSERT INTO identity.customers (id, secret_encrypted, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, [
      customer.id,
      customer.secretEncrypted,
      customer.createdAt,
    ]);
  },

  async insertApplication(
    db: Queryable,
    application: {
      id: string;
      customerId: string;
      name: string;
      secretEncrypted: string;
      iconUrl: string | null;
      eventWebhookUrl: string | null;
      eventWebhookSubscriptions: string[] | null;
      redirectUri: string | null;
      emailSettings: Record<string, unknown>;
      createdAt: Date;
    },
    overwrite: boolean,
  ): Promise<void> {
    await db.query(
      `INSERT INTO identity.applications (id, customer_id, name, secret_encrypted, icon_url, event_webhook_url, event_webhook_subscriptions, redirect_uri,
         email_settings, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (id) DO ${
         overwrite
           ? `UPDATE SET name = EXCLUDED.name, secret_encrypted = EXCLUDED.secret_encrypted, plaintext_secret = NULL, icon_url = EXCLUDED.icon_url,
              event_webhook_url = EXCLUDED.event_webhook_url, event_webhook_subscriptions = EXCLUDED.event_webhook_subscriptions,
              redirect_uri = EXCLUDED.redirect_uri, email_settings = EXCLUDED.email_settings, created_at = EXCLUDED.created_at WHERE applications.customer_id = EXCLUDED.customer_id`
           : 'NOTHING'
       }`,
      [
        application.id,
        application.customerId,
        application.name,
        application.secretEncrypted,
        application.iconUrl,
        application.eventWebhookUrl,
        application.eventWebhookSubscriptions,
        application.redirectUri,
        JSON.stringify(application.emailSettings),
        application.createdAt,
      ],
    );
  },

  /**
   * Inserts the users that are not stored yet (with `overwrite`, replaces those that are) and
   * answers the stored state of those already there before, for the comparison that finds conflicts.
   */
  async users(db: Queryable, items: ImportedUser[], overwrite: boolean): Promise<{ inserted: string[]; existing: ImportedUser[] }> {
    const json = JSON.stringify(items);
    const existing = await rows<ImportedUser>(
      db,
      `SELECT ${usersTable.pick('applicationId')}, ${usersTable.as('externalId', 'id')}, ${usersTable.pick('name', 'email', 'shortName')},
         ${usersTable.as('profilePictureUrl', 'profilePictureURL')}, ${usersTable.pick('status', 'metadata')}, ${usersTable.as('createdAt', 'createdTimestamp')}
       FROM jsonb_to_recordset($1::jsonb) AS r("applicationId" uuid, id text)
       JOIN identity.users u ON u.application_id = r."applicationId" AND u.external_id = r.id`,
      [json],
    );
    const inserted = await rows<{ id: string }>(
      db,
      `INSERT INTO identity.users AS u (application_id, external_id, name, email, short_name, profile_picture_url, status, metadata, created_at)
       SELECT r."applicationId", r.id, r.name, r.email, r."shortName", r."profilePictureURL", r.status, COALESCE(r.metadata, '{}'), r."createdTimestamp"
       FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS ("applicationId" uuid, id text, name text, email text, "shortName" text, "profilePictureURL" text,
         status text, metadata jsonb, "createdTimestamp" timestamptz)) WITH ORDINALITY AS r
       ORDER BY r.ordinality
       ON CONFLICT (application_id, external_id) DO ${
         overwrite
           ? `UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email, short_name = EXCLUDED.short_name, profile_picture_url = EXCLUDED.profile_picture_url,
              status = EXCLUDED.status, metadata = EXCLUDED.metadata, created_at = EXCLUDED.created_at`
           : 'NOTHING'
       }
       RETURNING ${usersTable.as('externalId', 'id')}`,
      [json],
    );
    return { inserted: inserted.map((row) => row.id), existing };
  },

  async groups(db: Queryable, items: ImportedGroup[], overwrite: boolean): Promise<{ inserted: string[]; existing: ImportedGroup[] }> {
    const json = JSON.stringify(items);
    const existing = await rows<ImportedGroup>(
      db,
      `SELECT ${groupsTable.pick('applicationId')}, ${groupsTable.as('externalId', 'id')}, ${groupsTable.pick('name', 'status', 'metadata')},
         ${groupsTable.as('createdAt', 'createdTimestamp')}
       FROM jsonb_to_recordset($1::jsonb) AS r("applicationId" uuid, id text)
       JOIN identity.groups g ON g.application_id = r."applicationId" AND g.external_id = r.id`,
      [json],
    );
    const inserted = await rows<{ id: string }>(
      db,
      `INSERT INTO identity.groups AS g (application_id, external_id, name, status, metadata, created_at)
       SELECT r."applicationId", r.id, r.name, r.status, COALESCE(r.metadata, '{}'), r."createdTimestamp"
       FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS ("applicationId" uuid, id text, name text, status text, metadata jsonb, "createdTimestamp" timestamptz))
         WITH ORDINALITY AS r
       ORDER BY r.ordinality
       ON CONFLICT (application_id, external_id) DO ${
         overwrite ? 'UPDATE SET name = EXCLUDED.name, status = EXCLUDED.status, metadata = EXCLUDED.metadata, created_at = EXCLUDED.created_at' : 'NOTHING'
       }
       RETURNING ${groupsTable.as('externalId', 'id')}`,
      [json],
    );
    return { inserted: inserted.map((row) => row.id), existing };
  },

  /** Memberships in the dump's order (groups list their members in the order they were added). */
  async memberships(db: Queryable, items: { applicationId: string; groupID: string; userID: string }[]): Promise<number> {
    const inserted = await countAffected(
      db,
      `INSERT INTO identity.group_members (group_id, user_id, application_id)
       SELECT g.internal_id, u.internal_id, r."applicationId"
       FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS ("applicationId" uuid, "groupID" text, "userID" text)) WITH ORDINALITY AS r
       JOIN identity.groups g ON g.application_id = r."applicationId" AND g.external_id = r."groupID"
       JOIN identity.users u ON u.application_id = r."applicationId" AND u.external_id = r."userID"
       ORDER BY r.ordinality
       ON CONFLICT (group_id, user_id) DO NOTHING`,
      [JSON.stringify(items)],
    );
    return inserted;
  },
};

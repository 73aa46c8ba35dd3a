/**
 * Uploaded files: metadata and bytes in 1 MiB chunks. Reads take the application, or (a signed
 * download link) the id alone; writes take the FileRef that the insert for an application returned.
 */
import type { Queryable } from '@collab/shared';
import type { FileRef, FileRow } from '../entities/index.js';

const FILE_COLUMNS = `f.id, f.application_id AS "applicationId", f.owner_id AS "ownerId", f.name, f.mime_type AS "mimeType",
  f.size, f.upload_status AS "uploadStatus", f.created_at AS "createdAt"`;

/** Only well-formed UUIDs reach a `::uuid` cast: anything else names no file (and must not fail the query). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const fileIds = (ids: readonly string[]) => [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];

export const filesRepository = {
  async findMany(db: Queryable, applicationId: string, ids: readonly string[]): Promise<FileRow[]> {
    const wanted = fileIds(ids);
    if (wanted.length === 0) return [];
    return db.query(`SELECT ${FILE_COLUMNS} FROM conversation.files f WHERE f.application_id = $1 AND f.id = ANY($2::uuid[]) AND f.purging_at IS NULL`, [
      applicationId,
      wanted,
    ]);
  },

  /** Creates the application's file; its FileRef is what the file's later writes take. */
  async insert(db: Queryable, file: Omit<FileRow, 'id' | 'createdAt' | 'uploadStatus'> & { id: string }): Promise<FileRef> {
    await db.query(
      `INSERT INTO conversation.files (id, application_id, owner_id, name, mime_type, size) VALUES ($1, $2, $3, $4, $5, $6)`,
      [file.id, file.applicationId, file.ownerId, file.name, file.mimeType, file.size],
    );
    return file.id as FileRef;
  },

  async insertChunk(db: Queryable, fileId: FileRef, seq: number, data: Buffer): Promise<void> {
    await db.query(`INSERT INTO conversation.file_chunks (file_id, seq, data) VALUES ($1, $2, $3)`, [fileId, seq, data]);
  },

  async chunk(db: Queryable, fileId: FileRef, seq: number): Promise<Buffer | null> {
    const rows: { data: Buffer }[] = await db.query(`SELECT data FROM conversation.file_chunks WHERE file_id = $1 AND seq = $2`, [
      fileId,
      seq,
    ]);
    return rows[0]?.data ?? null;
  },

  /** Download links are signed per file id; the file is looked up by id alone. */
  async findById(db: Queryable, id: string): Promise<FileRow | null> {
    if (!UUID.test(id)) return null;
    const rows: FileRow[] = await db.query(`SELECT ${FILE_COLUMNS} FROM conversation.files f WHERE f.id = $1 AND f.purging_at IS NULL`, [id]);
    return rows[0] ?? null;
  },

  async updateUploaded(db: Queryable, fileId: FileRef, file: Pick<FileRow, 'ownerId' | 'name' | 'mimeType' | 'size'>): Promise<void> {
    await db.query(`UPDATE conversation.files SET owner_id = $2, name = $3, mime_type = $4, size = $5 WHERE id = $1`, [
      fileId,
      file.ownerId,
      file.name,
      file.mimeType,
      file.size,
    ]);
  },
};

/**
 * Uploaded files: metadata and bytes in 1 MiB chunks. Reads take the application, or (a signed
 * download link) the id alone; writes take the FileRef that the insert for an application returned.
 */
import { rows, type Queryable } from '@collab/shared';
import type { FileChunkRow, FileRef, FileRow } from '../entities/index.js';
import { chunksTable, filesTable } from './tables.js';


/** Only well-formed UUIDs reach a `::uuid` cast: anything else names no file (and must not fail the query). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const fileIds = (ids: readonly string[]) => [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];

export const filesRepository = {
  async findMany(db: Queryable, applicationId: string, ids: readonly string[]): Promise<FileRow[]> {
    const wanted = fileIds(ids);
    if (wanted.length === 0) return [];
    return rows<FileRow>(
      db,
      `SELECT ${filesTable.select} FROM conversation.files f WHERE f.application_id = $1 AND f.id = ANY($2::uuid[]) AND f.purging_at IS NULL`,
      [applicationId, wanted],
    );
  },

  /** Creates the application's file; its FileRef is what the file's later writes take. */
  async insert(db: Queryable, file: Omit<FileRow, 'id' | 'createdAt' | 'uploadStatus'> & { id: string }): Promise<FileRef> {
    const ref = file.id as FileRef;
    const params: unknown[] = [];
    const written = filesTable.write({ ...file, id: ref }, params);
    await db.query(`INSERT INTO conversation.files (${written.columns.join(', ')}) VALUES (${written.placeholders.join(', ')})`, params);
    return ref;
  },

  async insertChunk(db: Queryable, fileId: FileRef, seq: number, data: Buffer): Promise<void> {
    const params: unknown[] = [];
    const written = chunksTable.write({ fileId, seq, data }, params);
    await db.query(`INSERT INTO conversation.file_chunks (${written.columns.join(', ')}) VALUES (${written.placeholders.join(', ')})`, params);
  },

  async chunk(db: Queryable, fileId: FileRef, seq: number): Promise<Buffer | null> {
    const [row] = await rows<Pick<FileChunkRow, 'data'>>(db, `SELECT ${chunksTable.pick('data')} FROM conversation.file_chunks c WHERE c.file_id = $1 AND c.seq = $2`, [
      fileId,
      seq,
    ]);
    return row?.data ?? null;
  },

  /** Download links are signed per file id; the file is looked up by id alone. */
  async findById(db: Queryable, id: string): Promise<FileRow | null> {
    if (!UUID.test(id)) return null;
    const [row] = await rows<FileRow>(db, `SELECT ${filesTable.select} FROM conversation.files f WHERE f.id = $1 AND f.purging_at IS NULL`, [id]);
    return row ?? null;
  },

  async updateUploaded(db: Queryable, fileId: FileRef, file: Pick<FileRow, 'ownerId' | 'name' | 'mimeType' | 'size'>): Promise<void> {
    const params: unknown[] = [fileId];
    const { set } = filesTable.write({ ownerId: file.ownerId, name: file.name, mimeType: file.mimeType, size: file.size }, params);
    await db.query(`UPDATE conversation.files SET ${set} WHERE id = $1`, params);
  },
};

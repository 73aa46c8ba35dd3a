/**
 * The files of a dump: each `files` row becomes a file here with the same id, attached to its
 * messages as `message_attachments` says. Its bytes come from the directory given with the import
 * (`DIR/<files.id>`); a file whose bytes were not given, or are missing or of another size, is
 * imported as a failed upload and named in the import's report.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { encodeCopyField, linesOf, readDump } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { request } from '../support/client.js';
import { FIXTURE_APPS } from '../support/fixture-reads.js';
import { FIXTURE_CUSTOMER, FIXTURE_DUMP, systemWithImporter, type Importer } from '../support/imports.js';
import type { TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

/** In the fixture: amelia.hart, and two of her thread roadmap-q3's messages (app1). */
const AMELIA = '23992c89-e737-4f0f-8441-9973d93a8794';
const MESSAGES = { 'nw-msg-0001': '7430cae1-ef8f-4a34-a695-d06ed06bad0a', 'nw-msg-0004': '02d7c543-48f1-47e7-b74c-75da26ff7e21' };
const THREAD = 'roadmap-q3';

interface DumpFile {
  id: string;
  name: string;
  mimeType: string;
  /** What the dump's row says. */
  size: number;
}

let system: TestSystem;
let importer: Importer;
let dir: string;

systemWithImporter(async (started) => {
  ({ system, importer } = started);
  dir = await mkdtemp(join(tmpdir(), 'import-files-'));
}, { beforeStop: () => (dir ? rm(dir, { recursive: true, force: true }) : undefined) });

/** The fixture with these files (uploaded, as the original had them) attached, in order, to one message. */
async function dumpWithFiles(name: string, messageId: string, files: DumpFile[]): Promise<string> {
  const fixture = await readFile(FIXTURE_DUMP, 'utf8');
  const rows = (table: string, lines: (string | null)[][]) => (text: string) => {
    const copy = text.indexOf(`COPY "tmp_${table}" `);
    const dataStart = text.indexOf('\n', copy) + 1;
    return text.slice(0, dataStart) + lines.map((values) => `${values.map(encodeCopyField).join('\t')}\n`).join('') + text.slice(dataStart);
  };
  // Columns as the fixture's COPY lines name them.
  const withFiles = rows(
    'files',
    files.map((file) => [file.id, AMELIA, file.mimeType, '2026-11-24 17:20:00+00', file.name, String(file.size), 'uploaded', 'cord-files', FIXTURE_APPS.app1.id]),
  );
  const withAttachments = rows(
    'message_attachments',
    files.map((file) => [randomUUID(), messageId, 'file', JSON.stringify({ fileID: file.id }), '2026-11-24 17:20:01+00']),
  );
  const path = join(dir, name);
  await writeFile(path, withAttachments(withFiles(fixture)));
  return path;
}

async function messageAttachments(messageId: string): Promise<any[]> {
  const token = await serverToken(FIXTURE_APPS.app1.id, FIXTURE_APPS.app1.secret);
  const response = await request(system.url, 'GET', `/v1/threads/${THREAD}/messages/${messageId}`, { token });
  expect(response.status).toBe(200);
  return response.body.attachments;
}

/** The rows of these tables in the customer's export (GET /v1/customer/dbdump). */
async function exportedRows(tables: string[]): Promise<Record<string, Record<string, string | null>[]>> {
  const response = await fetch(`${system.url}/v1/customer/dbdump`, { headers: { authorization: `Bearer ${await customerToken(FIXTURE_CUSTOMER.id, FIXTURE_CUSTOMER.secret)}` } });
  expect(response.status).toBe(200);
  const rows: Record<string, Record<string, string | null>[]> = Object.fromEntries(tables.map((table) => [table, []]));
  for await (const event of readDump(linesOf(Readable.from([await response.text()])), new Set(tables))) if (event.kind === 'row') rows[event.table].push(event.row);
  return rows;
}

const failedUploadsOf = (report: { skipped: { table: string; reason: string }[] }) => report.skipped.filter((entry) => entry.table === 'files');

describe('importing a dump with files', () => {
  it('attaches the files with their bytes from the directory given, and reports the blobs missing or of another size', async () => {
    const whole = { id: randomUUID(), name: 'roadmap.pdf', mimeType: 'application/pdf', bytes: randomBytes(1024 * 1024 + 4321) };
    const missing = { id: randomUUID(), name: 'missing.png', mimeType: 'image/png', size: 10 };
    const resized = { id: randomUUID(), name: 'resized.txt', mimeType: 'text/plain', bytes: Buffer.from('shorter than the dump says') };
    const blobs = await mkdtemp(join(dir, 'blobs-'));
    await writeFile(join(blobs, whole.id), whole.bytes);
    await writeFile(join(blobs, resized.id), resized.bytes);
    const dump = await dumpWithFiles('with-blobs.sql', MESSAGES['nw-msg-0001'], [
      { ...whole, size: whole.bytes.length },
      missing,
      { ...resized, size: resized.bytes.length + 5 },
    ]);

    const report = await importer.run(dump, { files: blobs });
    expect(report.status).toBe('completed');
    expect(report.counts.files).toEqual({ imported: 3, existing: 0 });
    expect(report.counts.attachments).toEqual({ imported: 3, existing: 0 });
    expect(failedUploadsOf(report).map((entry) => entry.reason).sort()).toEqual(
      [`imported as a failed upload: no blob ${missing.id} in the files directory`, `imported as a failed upload: blob ${resized.id} has 26 bytes, the dump says 31`].sort(),
    );

    const attachments = await messageAttachments('nw-msg-0001');
    expect(attachments.map(({ url: _url, ...attachment }) => attachment)).toEqual([
      { type: 'file', id: `cord:${whole.id}`, name: 'roadmap.pdf', mimeType: 'application/pdf', size: whole.bytes.length, uploadStatus: 'uploaded' },
      { type: 'file', id: `cord:${missing.id}`, name: 'missing.png', mimeType: 'image/png', size: 10, uploadStatus: 'failed' },
      { type: 'file', id: `cord:${resized.id}`, name: 'resized.txt', mimeType: 'text/plain', size: 31, uploadStatus: 'failed' },
    ]);
    const downloaded = await fetch(attachments[0].url);
    expect(downloaded.status).toBe(200);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(whole.bytes)).toBe(true);
    // A failed upload has no bytes to give.
    expect((await fetch(attachments[1].url)).status).toBe(404);

    // Again: nothing changes, the bytes are not stored twice.
    const again = await importer.run(dump, { files: blobs });
    expect(again.counts.files).toEqual({ imported: 0, existing: 3 });
    expect(again.counts.attachments).toEqual({ imported: 0, existing: 3 });
    const { rows } = await system.sql.query(`SELECT count(*)::int AS chunks, sum(octet_length(data))::int AS bytes FROM conversation.file_chunks WHERE file_id = $1`, [whole.id]);
    expect(rows[0]).toEqual({ chunks: 2, bytes: whole.bytes.length });
    expect(await messageAttachments('nw-msg-0001')).toHaveLength(3);

    // The export lists them as the original did: the rows, with their status (bytes are not in a SQL dump).
    const exported = await exportedRows(['files', 'message_attachments']);
    const ours: string[] = [whole.id, missing.id, resized.id];
    expect(exported.files.filter((row) => ours.includes(row.id!)).map((row) => [row.id, row.size, row.uploadStatus])).toEqual(
      expect.arrayContaining([
        [whole.id, String(whole.bytes.length), 'uploaded'],
        [missing.id, '10', 'failed'],
        [resized.id, '31', 'failed'],
      ]),
    );
    const attachedHere = exported.message_attachments.map((row) => JSON.parse(row.data!).fileID);
    expect(attachedHere).toEqual(expect.arrayContaining([whole.id, missing.id, resized.id]));
  });

  it('without a directory of blobs, keeps every file as a failed upload and says why', async () => {
    const file = { id: randomUUID(), name: 'notes.txt', mimeType: 'text/plain', size: 12 };
    const dump = await dumpWithFiles('without-blobs.sql', MESSAGES['nw-msg-0004'], [file]);

    const report = await importer.run(dump);
    expect(report.status).toBe('completed');
    expect(report.counts.files).toEqual({ imported: 1, existing: 0 });
    expect(failedUploadsOf(report)).toEqual([
      { table: 'files', rows: 1, reason: 'imported as failed uploads: no file blobs were given (npm run import -- <dump> --files DIR)' },
    ]);
    const attachments = await messageAttachments('nw-msg-0004');
    expect(attachments).toEqual([
      { type: 'file', id: `cord:${file.id}`, name: 'notes.txt', url: expect.any(String), mimeType: 'text/plain', size: 12, uploadStatus: 'failed' },
    ]);
    expect((await fetch(attachments[0].url)).status).toBe(404);
  });
});

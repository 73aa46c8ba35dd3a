/** Importing a customer dump into a test system, as `npm run import` does, and waiting for it. */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createProducer } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { createIdentityDataSource } from '../../services/identity/src/data-source.js';
import { blobsInDirectory } from '../../services/identity/src/domain/import/dump-store.js';
import { findImport, startImport, type ImportView } from '../../services/identity/src/domain/import/imports.js';
import { waitForBackgroundWork } from './queues.js';
import { systemForFile, type FileSystemOptions, type TestSystem } from './system.js';

export const FIXTURE_DIR = new URL('../../../shared/fixtures/cord-dump/', import.meta.url);
export const FIXTURE_DUMP = new URL('customer-dump.sql', FIXTURE_DIR);
/** The customer the fixture dump belongs to. */
export const FIXTURE_CUSTOMER = { id: 'c0ffee00-0000-4000-8000-000000000001', secret: 'cordref-c0ffee-customer-secret' };

/** `files`: the directory of the dump's file blobs (`npm run import -- <dump> --files DIR`). */
export type ImportOptions = { overwrite?: boolean; customerId?: string; files?: string };

export interface Importer {
  db: DataSource;
  /** Stores the dump and queues its import; answers the import's id. */
  start(dump: URL | string, options?: ImportOptions): Promise<string>;
  /** Imports the dump and answers its report once the system has no work left. */
  run(dump: URL | string, options?: ImportOptions): Promise<ImportView>;
  find(importId: string): Promise<ImportView | null>;
  close(): Promise<void>;
}

/**
 * A test file's system (as systemForFile) and an importer into it; the importer closes before the
 * system stops.
 */
export function systemWithImporter(started: (ready: { system: TestSystem; importer: Importer }) => unknown, options: FileSystemOptions = {}): void {
  let importer: Importer | undefined;
  systemForFile(
    async (system) => {
      importer = await importerFor(system);
      await started({ system, importer });
    },
    {
      ...options,
      beforeStop: async () => {
        await options.beforeStop?.();
        await importer?.close();
      },
    },
  );
}

export async function importerFor(system: TestSystem): Promise<Importer> {
  const db = createIdentityDataSource(system.env.DATABASE_URL, 2);
  await db.initialize();
  const queue = createProducer('identity-import', { redisUrl: system.env.REDIS_URL, prefix: system.env.REDIS_PREFIX });
  const start: Importer['start'] = (dump, options = {}) =>
    startImport({ db, queue }, createReadStream(dump), {
      customerId: options.customerId ?? FIXTURE_CUSTOMER.id,
      overwrite: options.overwrite ?? false,
      requestId: randomUUID(),
      ...(options.files ? { files: blobsInDirectory(dump instanceof URL ? dump.pathname : dump, options.files) } : {}),
    });
  const find = (importId: string) => findImport(db, importId);
  return {
    db,
    start,
    find,
    async run(dump, options) {
      const importId = await start(dump, options);
      await waitForBackgroundWork(system, 120_000);
      return (await find(importId))!;
    },
    async close() {
      await queue.close();
      await db.destroy();
    },
  };
}

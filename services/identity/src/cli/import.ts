/**
 * `npm run import -- <dump.sql> [--overwrite] [--files DIR]`: imports a customer dump of the
 * original service (the body of its GET /v1/customer/dbdump) into the customer it belongs to,
 * created if needed. With `--files DIR`, the bytes of each of the dump's files are read from
 * `DIR/<files.id>` (the original's file bucket downloaded as it is keyed, by file id) and stored
 * with the dump; a file without its bytes is imported as a failed upload and named in the summary.
 * The dump is checked whole (it must end with COMMIT;) before anything is written, stored, and
 * imported by an identity worker (the identity-import queue), which must be running; this command
 * shows the import's progress until it ends, then its summary. Ctrl-C stops only the display: the
 * import goes on, and running the command again imports nothing twice.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { checkDumpComplete, createProducer, IncompleteDumpError, linesOf, readDump, runMain } from '@collab/shared';
import { loadIdentityCliConfig } from '../config.js';
import { createIdentityDataSource } from '../data-source.js';
import { blobsInDirectory } from '../domain/import/dump-store.js';
import { findImport, startImport } from '../domain/import/imports.js';
import { progressLine, summary } from './import-progress.js';

const USAGE = 'usage: npm run import -- <dump.sql> [--overwrite] [--files DIR]';
const POLL_MS = 500;
const PLAIN_EVERY_MS = 5000;

function usage(): never {
  console.error(USAGE);
  process.exit(2);
}

/** The customer the dump belongs to: its only `customers` row. */
async function customerOf(path: string): Promise<string> {
  for await (const event of readDump(linesOf(createReadStream(path)), new Set(['customers'])))
    if (event.kind === 'row' && event.row.id) return event.row.id;
  throw new IncompleteDumpError('it holds no customers row');
}

runMain('import', async () => {
  const args = process.argv.slice(2);
  const overwrite = args.includes('--overwrite');
  const filesAt = args.indexOf('--files');
  const filesDir = filesAt >= 0 ? args[filesAt + 1] : undefined;
  if (filesAt >= 0 && (!filesDir || filesDir.startsWith('-'))) usage();
  const paths = args.filter((arg, index) => arg !== '--overwrite' && (filesAt < 0 || (index !== filesAt && index !== filesAt + 1)));
  if (paths.length !== 1 || paths[0].startsWith('-')) usage();
  const [path] = paths;
  await access(path).catch(() => {
    console.error(`${path}: no such file`);
    process.exit(2);
  });
  if (filesDir && !(await stat(filesDir).then((found) => found.isDirectory(), () => false))) {
    console.error(`${filesDir}: no such directory`);
    process.exit(2);
  }
  const config = loadIdentityCliConfig(['REDIS_URL', 'REDIS_PREFIX']);
  try {
    await checkDumpComplete(linesOf(createReadStream(path)));
  } catch (error) {
    if (!(error instanceof IncompleteDumpError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const customerId = await customerOf(path);

  const db = createIdentityDataSource(config.DATABASE_URL, 2);
  await db.initialize();
  const queue = createProducer('identity-import', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  try {
    const importId = await startImport({ db, queue }, createReadStream(path), {
      customerId,
      overwrite,
      requestId: randomUUID(),
      ...(filesDir ? { files: blobsInDirectory(path, filesDir) } : {}),
    });
    console.log(`Import ${importId} of ${path} into customer ${customerId} queued${overwrite ? ' (overwriting)' : ''}.`);
    const tty = Boolean(process.stdout.isTTY);
    const started = Date.now();
    let lastPlain = 0;
    for (;;) {
      const view = (await findImport(db, importId))!;
      const elapsed = (Date.now() - started) / 1000;
      const finished = view.status === 'completed' || view.status === 'failed';
      if (view.status === 'waiting' && !tty && Date.now() - lastPlain >= PLAIN_EVERY_MS) {
        console.log('waiting for an identity worker to take the import');
        lastPlain = Date.now();
      } else if (tty) {
        process.stdout.write(`\r${progressLine(view, elapsed, { bar: true })}\u001b[K`);
      } else if (view.status !== 'waiting' && (finished || Date.now() - lastPlain >= PLAIN_EVERY_MS)) {
        console.log(progressLine(view, elapsed, { bar: false }));
        lastPlain = Date.now();
      }
      if (finished) {
        if (tty) process.stdout.write('\n');
        console.log(summary(view, elapsed));
        process.exitCode = view.status === 'completed' ? 0 : 1;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    await queue.close();
    await db.destroy();
  }
});

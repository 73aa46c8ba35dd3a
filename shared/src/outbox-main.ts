/**
 * `npm run outbox -- failed` lists the outbox entries kept as failed (refused by the service they
 * go to), with their reasons; `npm run outbox -- retry <id>...|--all` makes them due again, once
 * the cause is fixed (e.g. a service upgraded to accept them). Reads the same database variables
 * as the services.
 */
import pg from 'pg';
import { commonVars, loadConfig, SERVICE_DATABASE_VARS, serviceDatabaseVar, withServiceDatabase } from './config.js';
import { runMain } from './lifecycle.js';
import { failedOutboxEntries, retryFailedOutboxEntries } from './outbox/failed.js';
import { isUuid } from './schema/formats.js';

/** The services that record work in an outbox; each one's schema is named after it. */
const OUTBOX_SERVICES = ['identity', 'conversation', 'notification'] as const;

const USAGE = 'usage: npm run outbox -- failed | retry <entry id>... | retry --all';

/** A mistyped command: what was wrong and the usage, no stack. */
function refuse(problem: string | null): never {
  console.error(problem ? `${problem}\n${USAGE}` : USAGE);
  process.exit(2);
}

runMain('outbox', async () => {
  const [command, ...args] = process.argv.slice(2);
  const retryAll = args.length === 1 && args[0] === '--all';
  if (command !== 'failed' && !(command === 'retry' && args.length > 0)) refuse(null);
  if (command === 'retry' && !retryAll) {
    const invalid = args.filter((id) => !isUuid(id));
    if (invalid.length > 0) refuse(`not an entry id: ${invalid.join(', ')}`);
  }
  const config = loadConfig({
    DATABASE_URL: commonVars.DATABASE_URL,
    ...Object.fromEntries(OUTBOX_SERVICES.map((service) => [SERVICE_DATABASE_VARS[service], serviceDatabaseVar(service)])),
  });
  let found = 0;
  for (const service of OUTBOX_SERVICES) {
    const pool = new pg.Pool({ connectionString: withServiceDatabase(config, service).DATABASE_URL, max: 1 });
    const db = { query: async (sql: string, parameters?: unknown[]) => (await pool.query(sql, parameters)).rows };
    try {
      if (command === 'failed') {
        const rows = await failedOutboxEntries(db, service);
        for (const entry of rows)
          console.log(
            `${service}\t${entry.id}\t${entry.topic}\tapplication ${entry.applicationId}\tattempts ${entry.attempts}\t${entry.createdAt.toISOString()}\t${entry.lastError}`,
          );
        found += rows.length;
      } else found += await retryFailedOutboxEntries(db, service, retryAll ? 'all' : args);
    } finally {
      await pool.end();
    }
  }
  if (command === 'failed') console.log(found === 0 ? 'No failed outbox entries.' : `${found} failed outbox entries.`);
  else console.log(`${found} failed outbox entries queued again.`);
});

/**
 * Scenario 4, cascade: deleting a group that holds 100,000 messages. How long until its threads
 * are invisible (the DELETE's own latency, against deleting an empty group), how fast the purge
 * jobs remove the rows (against a `pg` script issuing the purge's batched DELETE itself), and what
 * another application's reads see meanwhile (against the same reads while the system is idle).
 */
import { messageBody } from '../api.js';
import { seedConversations, type Harness, type Scenario } from '../harness.js';
import { describeLoad, httpLoad, startHttpLoad, type HttpLoad } from '../load.js';
import { explain } from '../profile.js';
import { fmt, type Section } from '../report.js';

const MESSAGES = 100_000;
const THREADS = 10;
/** The purge's batch (PURGE_BATCH_SIZE's default), for the baseline. */
const BATCH = 1000;
/** The purge's pace (PURGE_ROWS_PER_SECOND's default): it should keep to it, not fall behind. */
const PACE = 10_000;
const RATE_TARGET = 0.9 * PACE;
const P99_TARGET = 1.5;
const INVISIBLE_TARGET = 3;
const PURGE_TIMEOUT_MS = 180_000;
/** The other tenant's reads: paced, so that p99 shows latency rather than queueing. */
const READ_RATE = 100;
const READ_CONNECTIONS = 5;
const EMPTY_GROUPS = 3;

/** Bulk test data: the rows message creation writes, without 100,000 requests (as test/resilience does). */
async function fillThreads(harness: Harness, applicationId: string, threadIds: string[]): Promise<void> {
  await harness.system.sql.query(
    `INSERT INTO conversation.messages (application_id, external_id, thread_id, author_id, content, created_at)
     SELECT $1, 'bulk-' || t.external_id || '-' || n, t.internal_id, 'user-0', '[{"type":"p","children":[{"text":"bulk"}]}]', now()
     FROM conversation.threads t, generate_series(1, $3::int) n WHERE t.application_id = $1 AND t.external_id = ANY($2::text[])`,
    [applicationId, threadIds, MESSAGES / threadIds.length - 1],
  );
}

async function countMessages(harness: Harness, applicationId: string, threadIds: string[]): Promise<number> {
  const { rows } = await harness.system.sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
     WHERE t.application_id = $1 AND t.external_id = ANY($2::text[])`,
    [applicationId, threadIds],
  );
  return rows[0].n;
}

async function untilPurged(harness: Harness, applicationId: string, threadIds: string[]): Promise<void> {
  const deadline = Date.now() + PURGE_TIMEOUT_MS;
  while ((await countMessages(harness, applicationId, threadIds)) > 0) {
    if (Date.now() > deadline) throw new Error('the purge did not finish in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The purge's statements (purge.repository.ts, deleteBatch in shared/src/sql.ts). */
const PURGE = {
  mark: `UPDATE conversation.threads SET purging_at = now() WHERE application_id = $1 AND group_id = $2 AND purging_at IS NULL`,
  /** Messages marked themselves (a deleted user's): none here, but the job asks first. */
  ownMarked: `DELETE FROM conversation.messages WHERE internal_id IN (
    SELECT internal_id FROM conversation.messages WHERE application_id = $1 AND purging_at IS NOT NULL LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  ofMarkedThreads: `DELETE FROM conversation.messages WHERE internal_id IN (
    SELECT internal_id FROM conversation.messages WHERE thread_id IN (
      SELECT internal_id FROM conversation.threads WHERE application_id = $1 AND purging_at IS NOT NULL)
    LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  threads: `DELETE FROM conversation.threads WHERE application_id = $1 AND purging_at IS NOT NULL`,
};

/** The purge's batched DELETE issued in a loop by one connection, as the job does, minus BullMQ, TypeORM and the first probe. */
async function rawPurge(harness: Harness, applicationId: string): Promise<void> {
  const { sql } = harness.system;
  while (((await sql.query(PURGE.ofMarkedThreads, [applicationId, BATCH])).rowCount ?? 0) > 0);
  await sql.query(PURGE.threads, [applicationId]);
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

export const cascade: Scenario = {
  key: 'cascade',
  async run(harness: Harness): Promise<Section> {
    const { system } = harness;
    // The doomed group (and empty groups to compare the DELETE with), a raw-SQL twin, and a bystander.
    const doomed = await seedConversations(harness, 'bench cascade', 1, THREADS);
    const twin = await seedConversations(harness, 'bench cascade sql', 1, THREADS);
    const bystander = await seedConversations(harness, 'bench bystander', 1, 1);
    for (let i = 1; i < 20; i++)
      await bystander.app.api.ok('POST', `/v1/threads/${bystander.threadIds[0]}/messages`, messageBody(bystander.userIds[0], `message ${i}`));
    for (let i = 0; i < EMPTY_GROUPS; i++) await doomed.app.api.ok('PUT', `/v1/groups/empty-${i}`, { name: 'Empty', members: doomed.userIds });
    await fillThreads(harness, doomed.app.id, doomed.threadIds);
    await fillThreads(harness, twin.app.id, twin.threadIds);
    await system.sql.query('ANALYZE conversation.messages');

    const reads: HttpLoad = {
      baseUrl: system.url,
      path: `/v1/threads/${bystander.threadIds[0]}/messages`,
      headers: bystander.app.api.headers,
      connections: READ_CONNECTIONS,
      rate: READ_RATE,
      seconds: harness.seconds,
    };
    await httpLoad({ ...reads, seconds: harness.warmupSeconds });
    const idle = await httpLoad(reads);
    harness.log(`bystander reads, idle: ${describeLoad(idle)}`);

    const emptyDeletes: number[] = [];
    for (let i = 0; i < EMPTY_GROUPS; i++) emptyDeletes.push(await timed(() => doomed.app.api.ok('DELETE', `/v1/groups/empty-${i}`)));
    const emptyDelete = [...emptyDeletes].sort((a, b) => a - b)[Math.floor(EMPTY_GROUPS / 2)];

    await system.sql.query(PURGE.mark, [twin.app.id, twin.groupId]);
    harness.appendix.push(
      '## Query plans of the purge',
      '',
      `EXPLAIN (ANALYZE, BUFFERS) of one batch of the purge job, on ${MESSAGES.toLocaleString('en')} marked messages (rolled back).`,
      '',
      ...(await explain(system.sql, 'purge: messages marked themselves (the first probe of every batch)', PURGE.ownMarked, [twin.app.id, BATCH])),
      ...(await explain(system.sql, 'purge: messages of marked threads', PURGE.ofMarkedThreads, [twin.app.id, BATCH])),
    );
    // The baseline runs under the same reads of the other application as the purge does.
    const rawReads = startHttpLoad({ ...reads, seconds: PURGE_TIMEOUT_MS / 1000 });
    const rawMs = await timed(() => rawPurge(harness, twin.app.id)).finally(() => rawReads.stop());
    await rawReads.done;
    const rawRate = MESSAGES / (rawMs / 1000);
    harness.log(`raw purge: ${MESSAGES} messages in ${fmt.ms(rawMs)}`);
    // The purge below starts from a table as clean as the script's was, not one full of its dead rows.
    await system.sql.query('VACUUM (ANALYZE) conversation.messages');

    // Reads run from before the DELETE until the purge is over.
    const during = startHttpLoad({ ...reads, seconds: PURGE_TIMEOUT_MS / 1000 });
    let invisibleMs: number;
    let purgeMs: number;
    let stillVisible: number;
    try {
      invisibleMs = await timed(() => doomed.app.api.ok('DELETE', `/v1/groups/${doomed.groupId}`));
      stillVisible = (await doomed.app.api.call('GET', `/v1/threads/${doomed.threadIds[0]}`)).status;
      purgeMs = await timed(() => untilPurged(harness, doomed.app.id, doomed.threadIds));
    } finally {
      during.stop();
    }
    const purging = await during.done;
    const rate = MESSAGES / (purgeMs / 1000);
    harness.log(`purge: ${MESSAGES} messages in ${fmt.ms(purgeMs)}; bystander reads meanwhile: ${describeLoad(purging)}`);

    return {
      title: '4. Cascade',
      method:
        `\`DELETE /v1/groups/<ID>\` of a group with ${THREADS} threads holding ${MESSAGES.toLocaleString('en')} messages (bulk-inserted). ` +
        `Invisible: the DELETE's latency (it answers once nothing of the group can be read), against deleting an empty group ` +
        `(median of ${EMPTY_GROUPS}). Purge: from the DELETE's answer until no message of the group is left (polled every 50 ms), ` +
        `paced by the worker at PURGE_ROWS_PER_SECOND (default ${PACE.toLocaleString('en')}), against a \`pg\` script issuing the purge's batched DELETE (${BATCH} rows, unpaced) on a twin group, under the same reads. Another application reads a ` +
        `thread of 20 messages at ${READ_RATE} req/s over ${READ_CONNECTIONS} connections, idle for ${harness.seconds} s and during the purge.`,
      rows: [
        {
          figure: 'time until invisible',
          value: fmt.ms(invisibleMs),
          baseline: `${fmt.ms(emptyDelete)} empty group`,
          ratio: fmt.ratio(invisibleMs / emptyDelete),
          target: `≈ one request (≤ ${fmt.ratio(INVISIBLE_TARGET)})`,
          met: invisibleMs / emptyDelete <= INVISIBLE_TARGET && stillVisible === 404,
        },
        {
          figure: 'purge rate',
          value: `${rate.toFixed(0)} rows/s`,
          baseline: `${rawRate.toFixed(0)} rows/s SQL script (unpaced)`,
          ratio: fmt.ratio(rate / rawRate),
          target: `≥ ${RATE_TARGET.toLocaleString('en')} rows/s (its pace: ${PACE.toLocaleString('en')})`,
          met: rate >= RATE_TARGET,
        },
        {
          figure: 'other application: read p99',
          value: fmt.ms(purging.p99),
          baseline: `${fmt.ms(idle.p99)} idle`,
          ratio: fmt.ratio(purging.p99 / idle.p99),
          target: `≤ ${fmt.ratio(P99_TARGET)}`,
          met: purging.p99 / idle.p99 <= P99_TARGET && purging.failed === 0,
        },
        {
          figure: 'other application: read p50',
          value: fmt.ms(purging.p50),
          baseline: `${fmt.ms(idle.p50)} idle`,
          ratio: fmt.ratio(purging.p50 / idle.p50),
          target: '—',
          met: null,
        },
      ],
      notes: [
        `Right after the DELETE answered, a thread of the group answered ${stillVisible}.`,
        `The purge took ${fmt.s(purgeMs / 1000)} (SQL script: ${fmt.s(rawMs / 1000)}); the reads during it: ${describeLoad(purging)}.`,
      ],
    };
  },
};

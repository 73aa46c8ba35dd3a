/**
 * The deletion cascade's purge, the same in every service that holds data of users, groups or
 * applications: a deletion makes what it reaches unreadable at once (marking rows, or recording
 * an application's deletion) and queues a purge job; the job deletes in bounded batches, each its
 * own short transaction, until nothing is left, so running it twice, or again after a crash, ends
 * the same way. Each service declares only its own statements: how a deleted group or user marks
 * its rows, and its tables in the order they are emptied.
 */
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import type { CascadeTarget } from '../http/cascade-route.js';
import { purgeOrder } from '../db.js';
import type { Logger } from '../logger.js';
import { ENQUEUE_TIMEOUT_MS, type QueueName } from '../queues/index.js';
import { deleteBatch, drainBatches, purgePace, rows, type PurgeSettings, type Queryable } from '../sql.js';
import { applicationPurgeRequests } from './requests.js';

/** The jobs of every `<service>-purge` queue, and their data. */
export type PurgeJobName = 'marked.purge' | 'application.purge';
export interface PurgeJobData {
  applicationId: string;
  requestId: string;
}

/** What the cascade needs of the service's purge queue's producer. */
export interface PurgeProducer {
  add(name: PurgeJobName, data: PurgeJobData, options: object, limits: { timeoutMs?: number }): Promise<unknown>;
}

/** One table a purge empties; rows a deletion marked carry `purging_at`. */
export interface PurgeTable {
  /** The count's name in the job's result and log line. */
  name: string;
  /** The table, schema-qualified. */
  table: string;
  /** Its key column. */
  key: string;
  /** Rows per batch are the purge's batch size divided by this (at least one): rows that carry bytes go fewer at a time. */
  batchDivisor?: number;
  /** Deletes up to `limit` rows the cascade reached; by default the rows marked themselves. */
  deleteMarked?: (db: Queryable, applicationId: string, limit: number) => Promise<number>;
}

export interface PurgeDefinition {
  /** The service's schema: it holds `application_purges` and names the purge's lock. */
  schema: string;
  /** Marks what a deleted group or user owns here; a kind left out owns nothing here (none: `{}`). */
  mark: Partial<Record<'group' | 'user', (tx: Queryable, applicationId: string, id: string) => Promise<unknown>>>;
  /** The tables a purge empties, in this order (children first). */
  tables: PurgeTable[];
}

export type PurgeResult = Record<string, number>;

// Over 80 lines: a factory whose functions (cascade, job, pending scan) share the schema, the marking statements and the tables.
export function definePurge({ schema, mark, tables }: PurgeDefinition) {
  const requests = applicationPurgeRequests(schema);
  const marked = 'application_id = $1 AND purging_at IS NOT NULL';
  const marksRows = Object.keys(mark).length > 0;

  /** Drains every table in order, at one pace over them all; returns the rows removed per table. */
  async function drainTables(
    { batchSize, rowsPerSecond }: PurgeSettings,
    step: (table: PurgeTable, limit: number) => Promise<number>,
  ): Promise<PurgeResult> {
    const pace = purgePace(rowsPerSecond);
    const counts: PurgeResult = {};
    for (const table of tables) {
      const limit = Math.max(1, batchSize / (table.batchDivisor ?? 1));
      counts[table.name] = await drainBatches(() => step(table, limit), pace);
    }
    return counts;
  }

  return {
    /**
     * Applies a deletion: marks (or records) and queues the purge in one transaction, so that when
     * Redis cannot take the job the marks roll back and a DELETE that answers 503 hides nothing;
     * the job waits for the commit (purgeOrder).
     */
    async applyCascade(ctx: { db: DataSource; purgeQueue: PurgeProducer }, applicationId: string, target: CascadeTarget, requestId: string) {
      const markTarget = target.kind === 'application' ? null : mark[target.kind];
      // A kind of target that owns nothing here: nothing to hide, nothing to purge.
      if (target.kind !== 'application' && !markTarget) return;
      const enqueueLimits = { timeoutMs: ENQUEUE_TIMEOUT_MS };
      await ctx.db.transaction(async (tx) => {
        await purgeOrder.whileMarking(tx, schema, applicationId);
        // An application's data is unreachable as soon as identity forgets it (no token verifies),
        // so it needs no marking: its deletion is recorded until the purge removed everything it owns.
        if (!markTarget) {
          await requests.request(tx, applicationId, requestId);
          await ctx.purgeQueue.add('application.purge', { applicationId, requestId }, {}, enqueueLimits);
          return;
        }
        await markTarget(tx, applicationId, target.id);
        await ctx.purgeQueue.add('marked.purge', { applicationId, requestId }, {}, enqueueLimits);
      });
    },

    /**
     * Whether a write of the application's data may land, asked inside the writing transaction
     * before it writes: work arriving from another service (its outbox's relay) after the
     * application's deletion reached this service would outlive the purge. The shared lock makes
     * a purge job wait for this transaction, so what it writes before the deletion was recorded
     * is purged with the rest.
     */
    async admitsWrites(tx: Queryable, applicationId: string): Promise<boolean> {
      await purgeOrder.whileMarking(tx, schema, applicationId);
      return !(await requests.deleted(tx, applicationId));
    },

    /**
     * The handlers of the purge queue. Identity tells the service of a deletion only once it has
     * committed, so what a job purges is gone for good.
     */
    jobs(db: DataSource, settings: PurgeSettings): Record<PurgeJobName, (data: PurgeJobData, job: Job, log: Logger) => Promise<PurgeResult>> {
      const report = (log: Logger, counts: PurgeResult) => {
        log.info(counts, 'purged');
        return counts;
      };
      return {
        'marked.purge': async ({ applicationId }, _job, log) => {
          // A service where users and groups own nothing has no marks to purge (applyCascade queues none).
          if (!marksRows) return report(log, {});
          await purgeOrder.afterMarkings(db, schema, applicationId);
          return report(
            log,
            await drainTables(settings, (table, limit) =>
              table.deleteMarked
                ? table.deleteMarked(db, applicationId, limit)
                : deleteBatch(db, table.table, table.key, marked, [applicationId], limit),
            ),
          );
        },
        'application.purge': async ({ applicationId }, _job, log) => {
          await purgeOrder.afterMarkings(db, schema, applicationId);
          const request = await requests.find(db, applicationId);
          const counts = report(
            log,
            await drainTables(settings, (table, limit) =>
              deleteBatch(db, table.table, table.key, 'application_id = $1', [applicationId], limit),
            ),
          );
          if (request) await requests.complete(db, applicationId, request);
          return counts;
        },
      };
    },

    /**
     * The purges Postgres records as pending, whose job may have been lost with Redis: a
     * `marked.purge` for every application with rows still marked (index-only reads of the
     * partial `*_purging_idx` indexes), an `application.purge` for every recorded deletion.
     */
    async pendingJobs(db: Queryable) {
      const data = (applicationId: string) => ({ applicationId, requestId: 'pending-work' });
      const markedRows = marksRows
        ? await rows<{ applicationId: string }>(
            db,
            tables.map(({ table }) => `SELECT DISTINCT application_id AS "applicationId" FROM ${table} WHERE purging_at IS NOT NULL`).join(' UNION '),
          )
        : [];
      return [
        ...markedRows.map(({ applicationId }) => ({
          name: 'marked.purge' as const,
          data: data(applicationId),
          key: `pending-marked-${applicationId}`,
        })),
        ...(await requests.pending(db)).map((applicationId) => ({
          name: 'application.purge' as const,
          data: data(applicationId),
          key: `pending-application-${applicationId}`,
        })),
      ];
    },
  };
}

/** A service's purge queue. */
export type PurgeQueueName = Extract<QueueName, `${string}-purge`>;

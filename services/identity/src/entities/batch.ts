/** The record of a POST /v1/batch, kept until its retention ends. */
import type { ErrorBody } from '@collab/shared';
import { EntitySchema } from 'typeorm';
import { IDENTITY_SCHEMA } from './schema.js';

export type BatchState = 'waiting' | 'active' | 'completed' | 'failed';

/**
 * A POST /v1/batch, recorded before the request answers: its
 * job is queued again from here when Redis lost it, and GET /v1/batch/<jobID> reads its outcome
 * here. Finished rows are pruned after their retention (BATCH_RETENTION_HOURS).
 */
export interface BatchRow {
  /** The job's id, the `jobID` of a 202. */
  jobId: string;
  applicationId: string;
  /**
   * The validated request body, until the batch is finished: it holds users' names and e-mails,
   * which must not outlive their deletion in a batch kept for its outcome.
   */
  payload: Record<string, unknown> | null;
  state: BatchState;
  /** The batch message, once completed. */
  message: string | null;
  /** `{error, message}`, once failed. */
  error: ErrorBody | null;
  createdAt: Date;
  /** When it completed or failed; null while it is still to be applied. */
  finishedAt: Date | null;
}

export const BatchEntity = new EntitySchema<BatchRow>({
  name: 'Batch',
  tableName: 'batches',
  schema: IDENTITY_SCHEMA,
  columns: {
    jobId: { name: 'job_id', type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    payload: { type: 'jsonb', nullable: true },
    state: { type: 'text', default: 'waiting' },
    message: { type: 'text', nullable: true },
    error: { type: 'jsonb', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
    finishedAt: { name: 'finished_at', type: 'timestamptz', nullable: true },
  },
  // finished_at serves both the unfinished rows (IS NULL) and the pruning of old finished ones.
  indices: [
    { name: 'batches_application_idx', columns: ['applicationId'] },
    { name: 'batches_finished_idx', columns: ['finishedAt'] },
  ],
  checks: [
    { name: 'batches_state_check', expression: `state IN ('waiting', 'active', 'completed', 'failed')` },
    { name: 'batches_finished_check', expression: `(finished_at IS NULL) = (state IN ('waiting', 'active'))` },
    { name: 'batches_payload_check', expression: `(payload IS NULL) = (finished_at IS NOT NULL)` },
  ],
  foreignKeys: [{ target: 'Application', columnNames: ['applicationId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

/** /v1/batch handlers: parse, call one use case, shape the response. */
import { applicationOf, identityRoutes as routes, routeBody, routeParams, type HandlerMap } from '@collab/shared';
import * as batches from '../../domain/batch/batch.js';

export function batchHandlers(ctx: batches.BatchContext): HandlerMap {
  return {
    [routes.batch.id]: async (req, res) => {
      const body = routeBody(routes.batch, req);
      const accepted = (jobID: string) => ({ success: true, message: 'Batch accepted.', jobID });
      const outcome = await batches.submitBatch(ctx, applicationOf(req), body, {
        requestId: req.ctx.requestId,
        // Stored with the batch's record: a retry after a crash gets the job to follow.
        recordWrite: (tx, jobId) => req.idempotency.record(tx, { status: 202, body: accepted(jobId) }),
        forgetWrite: (tx) => req.idempotency.forget(tx),
      });
      if (outcome.kind === 'accepted') {
        res.statusCode = 202;
        return accepted(outcome.jobId);
      }
      return { success: true, message: outcome.message };
    },

    [routes.getBatch.id]: (req) => {
      const { jobID } = routeParams(routes.getBatch, req);
      return batches.batchStatus(ctx, applicationOf(req), jobID);
    },
  };
}

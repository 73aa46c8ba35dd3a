/** /v1/batch handlers (decisions.md 24): parse, call one use case, shape the response. */
import { applicationOf, identityRoutes as routes, routeBody, routeParams, type HandlerMap } from '@collab/shared';
import * as batches from '../../domain/batch/batch.js';

export function batchHandlers(ctx: batches.BatchContext): HandlerMap {
  return {
    [routes.batch.id]: async (req, res) => {
      const body = routeBody(routes.batch, req);
      const outcome = await batches.submitBatch(ctx, applicationOf(req), body, req.ctx.requestId);
      if (outcome.kind === 'accepted') {
        res.status(202);
        return { success: true, message: 'Batch accepted.', jobID: outcome.jobId };
      }
      return { success: true, message: outcome.message };
    },

    [routes.getBatch.id]: (req) => {
      const { jobID } = routeParams(routes.getBatch, req);
      return batches.batchStatus(ctx, applicationOf(req), jobID);
    },
  };
}

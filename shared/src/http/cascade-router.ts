/** The receiving end of the deletion cascade, mounted at /internal by every dependent service. */
import express, { type Router } from 'express';
import { cascadeContract } from '../contracts/cascade.js';
import { ApiError, unavailable } from '../errors.js';
import type { Infer } from '../schema/index.js';

export type CascadeTarget = Infer<typeof cascadeContract.request>;

export function cascadeRouter(
  apply: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>,
): Router {
  const router = express.Router();
  router.post('/cascade', express.json({ limit: '64kb' }), async (req, res) => {
    const applicationId = req.ctx.applicationId;
    if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
    const target = cascadeContract.request.parse(req.body);
    try {
      await apply(applicationId, target, req.ctx.requestId);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      // Postgres or Redis (the queue) down: identity's outbox calls again later.
      req.log.warn({ err: (error as Error).message }, 'cascade not applied');
      throw unavailable('The deletion could not be applied. Try again.');
    }
    res.json({ success: true });
  });
  return router;
}

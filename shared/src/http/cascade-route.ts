/** The receiving end of the deletion cascade, served at /internal/cascade by every dependent service. */
import { cascadeContract } from '../contracts/cascade.js';
import { ApiError, unavailable } from '../errors.js';
import type { Infer } from '../schema/index.js';
import { internalApplicationOf, internalRoute, SMALL_INTERNAL_BODY_BYTES, type InternalRoute } from './internal-routes.js';

export type CascadeTarget = Infer<typeof cascadeContract.request>;

export function cascadeRoute(apply: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>): InternalRoute {
  return internalRoute('POST', cascadeContract.path, SMALL_INTERNAL_BODY_BYTES, async (req) => {
    const applicationId = internalApplicationOf(req);
    const target = cascadeContract.request.parse(req.body);
    try {
      await apply(applicationId, target, req.ctx.requestId);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      // Postgres or Redis (the queue) down: identity's outbox calls again later.
      req.log.warn({ err: (error as Error).message }, 'cascade not applied');
      throw unavailable('The deletion could not be applied. Try again.');
    }
    return { success: true };
  });
}

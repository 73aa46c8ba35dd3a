/**
 * The notification service's internal API (contracts in @collab/shared `notificationInternal`):
 * notifications from activity, its part of a dump import and export, and this service's side of the deletion cascade.
 */
import { ApiError, cascadeRouter, exportRouter, importRouter, MAX_INTERNAL_BODY_BYTES, notificationInternal, type CascadeTarget } from '@collab/shared';
import express, { type Router } from 'express';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';
import { createActivityNotifications } from '../domain/notifications/activity.js';
import type { NotificationContext } from '../domain/context.js';

export function internalRouter(
  ctx: NotificationContext,
  cascade: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>,
): Router {
  const router = express.Router();
  // A message may notify every member of a large group.
  router.post(
    notificationInternal.createActivity.path.replace('/internal', ''),
    express.json({ limit: MAX_INTERNAL_BODY_BYTES }),
    async (req, res) => {
      const applicationId = req.ctx.applicationId;
      if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
      const { activities } = notificationInternal.createActivity.request.parse(req.body);
      res.json({ created: await createActivityNotifications(ctx, applicationId, activities) });
    },
  );
  // Its part of a customer dump's import and export.
  router.use(importRouter(importHandlers(ctx)));
  router.use(exportRouter(exportHandlers(ctx)));
  router.use(cascadeRouter(cascade));
  return router;
}

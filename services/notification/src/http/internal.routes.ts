/**
 * The notification service's internal API (contracts in @collab/shared `notificationInternal`):
 * notifications from activity, its part of a dump import and export, and this service's side of the deletion cascade.
 */
import {
  cascadeRoute,
  exportRoutes,
  importRoutes,
  internalApplicationOf,
  internalRoute,
  MAX_INTERNAL_BODY_BYTES,
  notificationInternal,
  type CascadeTarget,
  type InternalRoute,
} from '@collab/shared';
import type { NotificationContext } from '../domain/context.js';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';
import { createActivityNotifications } from '../domain/notifications/activity.js';

export function internalRoutes(
  ctx: NotificationContext,
  cascade: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>,
): InternalRoute[] {
  return [
    // A message may notify every member of a large group.
    internalRoute('POST', notificationInternal.createActivity.path, MAX_INTERNAL_BODY_BYTES, async (req) => {
      const { activities } = notificationInternal.createActivity.request.parse(req.body);
      return { created: await createActivityNotifications(ctx, internalApplicationOf(req), activities) };
    }),
    // Its part of a customer dump's import and export.
    ...importRoutes(importHandlers(ctx)),
    ...exportRoutes(exportHandlers(ctx)),
    cascadeRoute(cascade),
  ];
}

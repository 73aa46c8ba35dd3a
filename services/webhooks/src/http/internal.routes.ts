/** The webhooks service's internal API (contracts in @collab/shared `webhooksInternal`) and its side of the deletion cascade. */
import {
  ApiError,
  cascadeRoute,
  exportRoutes,
  importRoutes,
  internalApplicationOf,
  internalRoute,
  isPlainObject,
  MAX_INTERNAL_BODY_BYTES,
  SMALL_INTERNAL_BODY_BYTES,
  webhooksInternal,
  type CascadeTarget,
  type InternalRoute,
} from '@collab/shared';
import type { WebhooksContext } from '../domain/context.js';
import { recordEvents, targetUrls } from '../domain/events/record-events.js';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';

export function internalRoutes(
  ctx: WebhooksContext,
  cascade: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>,
): InternalRoute[] {
  return [
    internalRoute('POST', webhooksInternal.recordEvents.path, MAX_INTERNAL_BODY_BYTES, async (req) => {
      const { events } = webhooksInternal.recordEvents.request.parse(req.body);
      const valid = events.map((event) => {
        if (!isPlainObject(event.payload)) throw new ApiError('invalid_field', 'An event payload must be an object.');
        return { ...event, payload: event.payload as Record<string, unknown> };
      });
      return { deliveries: await recordEvents(ctx, internalApplicationOf(req), valid, req.ctx.requestId) };
    }),
    internalRoute('GET', '/internal/targets/:type', SMALL_INTERNAL_BODY_BYTES, async (req) => {
      const urls = await targetUrls(ctx, internalApplicationOf(req), req.params.type, req.ctx.requestId);
      return { subscribed: urls.length > 0 };
    }),
    // Its part of a customer dump's import and export: registered webhooks.
    ...importRoutes(importHandlers(ctx)),
    ...exportRoutes(exportHandlers(ctx)),
    // A deleted application's registrations, queued deliveries and log go with it (webhooksPurge).
    cascadeRoute(cascade),
  ];
}

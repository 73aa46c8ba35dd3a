/** The webhooks service's internal API (contracts in @collab/shared `webhooksInternal`) and its side of the deletion cascade. */
import { ApiError, cascadeRouter, exportRouter, importRouter, isPlainObject, MAX_INTERNAL_BODY_BYTES, webhooksInternal, type CascadeTarget } from '@collab/shared';
import express, { type Router } from 'express';
import type { WebhooksContext } from '../domain/context.js';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';
import { recordEvents, targetUrls } from '../domain/events/record-events.js';
export function internalRouter(
  ctx: WebhooksContext,
  cascade: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>,
): Router {
  const router = express.Router();
  router.post(webhooksInternal.recordEvents.path.replace('/internal', ''), express.json({ limit: MAX_INTERNAL_BODY_BYTES }), async (req, res) => {
    const applicationId = req.ctx.applicationId;
    if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
    const { events } = webhooksInternal.recordEvents.request.parse(req.body);
    const valid = events.map((event) => {
      if (!isPlainObject(event.payload)) throw new ApiError('invalid_field', 'An event payload must be an object.');
      return { ...event, payload: event.payload as Record<string, unknown> };
    });
    res.json({ deliveries: await recordEvents(ctx, applicationId, valid, req.ctx.requestId) });
  });
  router.get('/targets/:type', async (req, res) => {
    const applicationId = req.ctx.applicationId;
    if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
    const urls = await targetUrls(ctx, applicationId, String(req.params.type), req.ctx.requestId);
    res.json({ subscribed: urls.length > 0 });
  });
  // Its part of a customer dump's import and export: registered webhooks.
  router.use(importRouter(importHandlers(ctx)));
  router.use(exportRouter(exportHandlers(ctx)));
  // A deleted application's registrations, queued deliveries and log go with it (webhooksPurge).
  router.use(cascadeRouter(cascade));
  return router;
}

/** Builds the webhooks service's Express app; never listens, so tests mount it directly. */
import { createServiceApp, routesOf, type Logger, type ReadinessCheck } from '@collab/shared';
import type { Router } from 'express';
import type { WebhooksContext } from './domain/context.js';
import { webhooksHandlers } from './http/routes/webhooks.routes.js';

export function createWebhooksApp(
  ctx: WebhooksContext,
  options: { logger: Logger; internalToken: string; internal: Router; readiness: ReadinessCheck[]; isDraining?: () => boolean },
) {
  return createServiceApp({
    service: 'webhooks',
    logger: options.logger,
    internalToken: options.internalToken,
    routes: routesOf('webhooks'),
    handlers: webhooksHandlers(ctx),
    internal: options.internal,
    readiness: options.readiness,
    isDraining: options.isDraining,
  });
}

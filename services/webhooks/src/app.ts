/** Builds the webhooks service's request handler; never listens, so tests serve it themselves. */
import { createServiceApp, routesOf, type ServiceAppWiring } from '@collab/shared';
import type { WebhooksContext } from './domain/context.js';
import { webhooksHandlers } from './http/routes/webhooks.routes.js';

export function createWebhooksApp(ctx: WebhooksContext, wiring: ServiceAppWiring) {
  return createServiceApp({ ...wiring, service: 'webhooks', routes: routesOf('webhooks'), handlers: webhooksHandlers(ctx) });
}

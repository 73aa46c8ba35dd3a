/** Builds the mail service's request handler; never listens, so tests serve it themselves. */
import { createServiceApp, routesOf, type ServiceAppWiring } from '@collab/shared';
import type { MailServiceContext } from './domain/context.js';
import { inboundHandlers } from './http/routes/inbound.routes.js';
import { mailLinkHandlers } from './http/routes/mail-links.routes.js';

export function createMailApp(ctx: MailServiceContext, wiring: ServiceAppWiring) {
  return createServiceApp({ ...wiring, service: 'mail', routes: routesOf('mail'), handlers: { ...mailLinkHandlers(ctx), ...inboundHandlers(ctx) } });
}

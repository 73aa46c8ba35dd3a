/** Builds the conversation service's request handler; never listens, so tests serve it themselves. */
import { createServiceApp, routesOf, type ServiceAppWiring } from '@collab/shared';
import type { ConversationContext } from './domain/context.js';
import { clientHandlers } from './http/routes/client.routes.js';
import { fileHandlers } from './http/routes/files.routes.js';
import { messageHandlers } from './http/routes/messages.routes.js';
import { threadHandlers } from './http/routes/threads.routes.js';

export function createConversationApp(ctx: ConversationContext, wiring: ServiceAppWiring) {
  const handlers = { ...threadHandlers(ctx), ...messageHandlers(ctx), ...fileHandlers(ctx), ...clientHandlers(ctx) };
  return createServiceApp({ ...wiring, service: 'conversation', routes: routesOf('conversation'), handlers });
}

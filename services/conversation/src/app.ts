/** Builds the conversation service's Express app; never listens, so tests mount it directly. */
import { createServiceApp, routesOf, type IdempotencyStore, type Logger, type ReadinessCheck } from '@collab/shared';
import type { Router } from 'express';
import type { ConversationContext } from './domain/context.js';
import { fileHandlers } from './http/routes/files.routes.js';
import { messageHandlers } from './http/routes/messages.routes.js';
import { threadHandlers } from './http/routes/threads.routes.js';

export function createConversationApp(
  ctx: ConversationContext,
  options: {
    logger: Logger;
    internalToken: string;
    internal: Router;
    readiness: ReadinessCheck[];
    isDraining?: () => boolean;
    idempotency: IdempotencyStore;
  },
) {
  return createServiceApp({
    service: 'conversation',
    logger: options.logger,
    internalToken: options.internalToken,
    routes: routesOf('conversation'),
    handlers: { ...threadHandlers(ctx), ...messageHandlers(ctx), ...fileHandlers(ctx) },
    internal: options.internal,
    readiness: options.readiness,
    isDraining: options.isDraining,
    idempotency: options.idempotency,
  });
}

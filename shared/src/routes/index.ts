import { conversationRoutes } from './conversation.routes.js';
import { identityRoutes } from './identity.routes.js';
import { notificationRoutes } from './notification.routes.js';
import { mailRoutes } from './mail.routes.js';
import { preferencesRoutes } from './preferences.routes.js';
import { clientConversationRoutes, clientIdentityRoutes, clientNotificationRoutes } from './client.routes.js';
import { presenceRoutes } from './presence.routes.js';
import { webhooksRoutes } from './webhooks.routes.js';
import type { RouteDef, ServiceName } from './route.js';

export * from './route.js';
export * from './match.js';
export { identityRoutes, batchBody, BATCH_LIMITS } from './identity.routes.js';
export { conversationRoutes } from './conversation.routes.js';
export { notificationRoutes, TEMPLATE_PLACEHOLDER } from './notification.routes.js';
export { clientConversationRoutes, clientIdentityRoutes, clientMessageView, clientNotificationRoutes, clientUserView, threadSummaryView } from './client.routes.js';
export { presenceRoutes, presenceQuery, userLocationView } from './presence.routes.js';
export { webhooksRoutes, webhookRegistrationRoutes } from './webhooks.routes.js';
export { preferencesRoutes, NOTIFICATION_CHANNELS } from './preferences.routes.js';
export { mailRoutes } from './mail.routes.js';
export * from './message-content.js';
export * from './views.js';
export * from './webhook-views.js';
export * from './user-fields.js';

/** Every public route of the API. */
export const ROUTES: readonly RouteDef[] = [
  ...Object.values(identityRoutes),
  ...Object.values(preferencesRoutes),
  ...Object.values(presenceRoutes),
  ...Object.values(clientIdentityRoutes),
  ...Object.values(clientConversationRoutes),
  ...Object.values(clientNotificationRoutes),
  ...Object.values(conversationRoutes),
  ...Object.values(notificationRoutes),
  ...Object.values(webhooksRoutes),
  ...Object.values(mailRoutes),
];

export function routesOf(service: ServiceName): RouteDef[] {
  return ROUTES.filter((route) => route.service === service);
}

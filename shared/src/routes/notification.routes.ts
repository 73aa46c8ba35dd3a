/** Public routes owned by the notification service. */
import { pageCursors } from '../pagination/index.js';
import { q, s } from '../schema/index.js';
import { defineRoute, param } from './route.js';
import { notificationView, pageOf, successView, successWith } from './views.js';

export const notificationRoutes = {
  createNotification: defineRoute({
    id: 'notifications.create',
    method: 'POST',
    path: '/v1/notifications',
    service: 'notification',
    auth: 'app',
    idempotent: true,
    tag: 'Notifications',
    summary: 'Send a notification from one user to another',
    // `actor_id` and `recipient_id` are required; their camelCase aliases are accepted instead
    // (decisions.md 15, behavior.md §14.1), so the handler checks that one of each is present.
    body: s.object({
      actor_id: s.identifier().optional(),
      actorID: s.identifier().optional(),
      recipient_id: s.identifier().optional(),
      recipientID: s.identifier().optional(),
      template: s.string(),
      url: s.uri(),
      type: s.enum(['url']),
      iconUrl: s.uri().nullable().optional(),
      metadata: s.flatObject().optional(),
      extraClassnames: s.string().nullable().optional(),
    }),
    response: { 200: successWith('notificationID') },
  }),
  listUserNotifications: defineRoute({
    id: 'notifications.listForUser',
    method: 'GET',
    path: '/v1/users/:userID/notifications',
    service: 'notification',
    auth: 'app',
    tag: 'Notifications',
    summary: "A user's notifications, newest first",
    params: { userID: param.identifier('userID', 'invalid_request') },
    query: q.object({ limit: q.limit(), token: q.token(pageCursors.notifications) }),
    response: { 200: pageOf('notifications', notificationView) },
  }),
  deleteNotification: defineRoute({
    id: 'notifications.delete',
    method: 'DELETE',
    path: '/v1/notifications/:notificationID',
    service: 'notification',
    auth: 'app',
    tag: 'Notifications',
    summary: 'Delete a notification',
    params: { notificationID: param.identifierOrServerId('notificationID', 'invalid_field') },
    response: { 200: successView },
  }),
};

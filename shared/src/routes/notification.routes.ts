/** Public routes owned by the notification service. */
import { ApiError } from '../errors.js';
import { pageCursors } from '../pagination/index.js';
import { q, s, StringSchema, type JsonSchema, type Path } from '../schema/index.js';
import { defineRoute, param } from './route.js';
import { notificationView, pageOf, successView, successWith } from './views.js';

/** `{{actor}}` and `{{recipient}}` in a notification's template, with optional spaces inside the braces. */
export const TEMPLATE_PLACEHOLDER = /\{\{\s*(actor|recipient)\s*\}\}/g;
const ACTOR_PLACEHOLDER = /\{\{\s*actor\s*\}\}/;

/**
 * A notification's template: a string with at least one `{{actor}}`. Checked in its place among
 * the body's keys, with a message of its own; JSON Schema says it as a pattern.
 */
class TemplateSchema extends StringSchema {
  override parse(value: unknown, path: Path = []): string {
    const template = super.parse(value, path);
    if (!ACTOR_PLACEHOLDER.test(template)) throw new ApiError('invalid_field', 'Invalid template: must contain {{actor}} variable');
    return template;
  }
  protected override baseJsonSchema(): JsonSchema {
    return { ...super.baseJsonSchema(), pattern: ACTOR_PLACEHOLDER.source };
  }
}

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
    // `actor_id` and `recipient_id` are required; their camelCase aliases are accepted instead.
    body: s.object(
      {
        actor_id: s.identifier().optional(),
        actorID: s.identifier().optional(),
        recipient_id: s.identifier().optional(),
        recipientID: s.identifier().optional(),
        template: new TemplateSchema(),
        url: s.uri(),
        type: s.enum(['url']),
        iconUrl: s.uri().nullable().optional(),
        metadata: s.flatObject().optional(),
        extraClassnames: s.string().nullable().optional(),
      },
      { alternatives: [['actor_id', 'actorID'], ['recipient_id', 'recipientID']] },
    ),
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

/**
 * A user's notification preferences (the original's `notification_channels`), owned by identity.
 * Kept apart from identity.routes.ts: one small resource, one file.
 */
import { s } from '../schema/index.js';
import { defineRoute, param } from './route.js';
import { successView } from './views.js';

/** The one preference key the original offers. */
export const NOTIFICATION_CHANNELS = 'notification_channels';

const channels = {
  sendViaEmail: s.boolean().optional(),
  sendViaSlack: s.boolean().optional(),
};

export const preferencesRoutes = {
  getPreferences: defineRoute({
    id: 'users.getPreferences',
    method: 'GET',
    path: '/v1/users/:userID/preferences',
    service: 'identity',
    auth: 'app',
    tag: 'Users',
    summary: "A user's notification preferences (both channels on until set)",
    params: { userID: param.identifier('userID', 'invalid_request') },
    response: { 200: s.object({ notification_channels: s.object({ sendViaEmail: s.boolean(), sendViaSlack: s.boolean() }) }) },
  }),
  updatePreferences: defineRoute({
    id: 'users.updatePreferences',
    method: 'PUT',
    path: '/v1/users/:userID/preferences',
    service: 'identity',
    auth: 'app',
    tag: 'Users',
    summary: "Update a user's notification preferences; a channel not sent keeps its value",
    params: { userID: param.identifier('userID') },
    body: s.object({ key: s.literal(NOTIFICATION_CHANNELS), value: s.object(channels) }),
    response: { 200: successView },
  }),
};

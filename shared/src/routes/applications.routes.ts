/** The application routes of the identity service, under /v1/applications and the alias /v1/projects. */
import { s } from '../schema/index.js';
import { DEFAULT_SUBSCRIPTIONS, WEBHOOK_EVENT_TYPES } from '../webhooks/events.js';
import { defineRoute, param } from './route.js';
import { successView, successWith } from './views.js';
import { applicationView } from './webhook-views.js';

const applicationParam = {
  applicationID: param.uuid('applicationID', 'invalid_request', 'Application ID is invalid'),
};

const applicationFields = {
  iconURL: s.uri().nullable().optional(),
  eventWebhookURL: s.uri().nullable().optional(),
  eventWebhookSubscriptions: s
    .array(s.enum(WEBHOOK_EVENT_TYPES))
    .nullable()
    .optional()
    .describe(`Event types eventWebhookURL receives; null (never set) means ${DEFAULT_SUBSCRIPTIONS.join(' and ')}.`),
  redirectURI: s.string().nullable().optional(),
  emailSettings: s
    .object({
      name: s.string().nullable().optional(),
      imageURL: s.uri().nullable().optional(),
      sender: s.email().nullable().optional(),
      logoConfig: s
        .object({
          width: s.integer({ minimum: 0, maximum: 240 }).optional(),
          height: s.integer({ minimum: 0, maximum: 120 }).optional(),
        })
        .nullable()
        .optional(),
      enableEmailNotifications: s.boolean().optional(),
    })
    .optional(),
};
const createApplicationBody = s.object({ name: s.string({ minLength: 1 }), ...applicationFields });
const updateApplicationBody = s.object({ name: s.string({ minLength: 1 }).optional(), ...applicationFields });
const deleteApplicationBody = s.object({ secret: s.string({ minLength: 1 }) });

/** The new secret, and until when server tokens signed with the previous one still work (null: no longer). */
const rotatedSecret = s.object({
  ...successWith('applicationID').shape,
  secret: s.string(),
  previousSecretExpires: s.dateTime().nullable(),
});

/** The application routes exist under /v1/applications and the alias /v1/projects. */
export function applicationRoutes(prefix: 'applications' | 'projects') {
  const base = `/v1/${prefix}` as const;
  const tag = 'Applications';
  return {
    create: defineRoute({
      id: `${prefix}.create`,
      method: 'POST',
      path: base,
      service: 'identity',
      auth: 'customer',
      idempotent: true,
      tag,
      summary: 'Create an application',
      body: createApplicationBody,
      response: { 200: s.object({ ...successWith('applicationID').shape, secret: s.string() }) },
    }),
    list: defineRoute({
      id: `${prefix}.list`,
      method: 'GET',
      path: base,
      service: 'identity',
      auth: 'customer',
      tag,
      summary: 'List applications',
      response: { 200: s.array(applicationView) },
    }),
    get: defineRoute({
      id: `${prefix}.get`,
      method: 'GET',
      path: `${base}/:applicationID`,
      service: 'identity',
      auth: 'customer',
      tag,
      summary: 'Get an application',
      params: applicationParam,
      response: { 200: applicationView },
    }),
    update: defineRoute({
      id: `${prefix}.update`,
      method: 'PUT',
      path: `${base}/:applicationID`,
      service: 'identity',
      auth: 'customer',
      tag,
      summary: 'Update an application',
      params: applicationParam,
      body: updateApplicationBody,
      response: { 200: successView },
    }),
    delete: defineRoute({
      id: `${prefix}.delete`,
      method: 'DELETE',
      path: `${base}/:applicationID`,
      service: 'identity',
      auth: 'customer',
      tag,
      summary: 'Delete an application and everything it owns',
      params: applicationParam,
      body: deleteApplicationBody,
      response: { 200: successView },
    }),
    rotateSecret: defineRoute({
      id: `${prefix}.rotateSecret`,
      method: 'POST',
      path: `${base}/:applicationID/secret`,
      service: 'identity',
      auth: 'customer',
      tag,
      summary:
        'Issue a new secret, answered only here; the previous one keeps working for server tokens for SECRET_ROTATION_GRACE_HOURS',
      params: applicationParam,
      response: { 200: rotatedSecret },
    }),
  };
}

/** Public routes owned by the webhooks service: registered webhooks and the delivery log. */
import { pageCursors } from '../pagination/cursors.js';
import { q, s } from '../schema/index.js';
import { defineRoute, prefixKeys, type PathParam } from './route.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/events.js';
import { pageOf, successView, successWith } from './views.js';
import { DELIVERY_STATUSES, deliveryAttemptView, deliveryDetailsView, deliveryView, webhookView } from './webhook-views.js';

/**
 * The application in the path of the registration routes is never read: a registration always
 * belongs to the application of the token; clients send whatever id they hold there.
 */
const applicationPathParam: Record<'applicationID', PathParam> = {
  applicationID: { format: 'any', label: 'applicationID', code: 'invalid_request' },
};

const webhookBody = s.object({
  url: s.uri(),
  events: s.array(s.enum(WEBHOOK_EVENT_TYPES)),
});

function registrationRoutes(prefix: 'applications' | 'projects') {
  const base = `/v1/${prefix}/:applicationID/webhooks` as const;
  const tag = 'Webhooks';
  return {
    create: defineRoute({
      id: `${prefix}.webhooks.create`,
      method: 'POST',
      path: base,
      service: 'webhooks',
      auth: 'app',
      tag,
      summary: 'Register a webhook URL for event types (upsert on the URL)',
      params: applicationPathParam,
      body: webhookBody,
      response: { 201: successWith('webhookID') },
    }),
    list: defineRoute({
      id: `${prefix}.webhooks.list`,
      method: 'GET',
      path: base,
      service: 'webhooks',
      auth: 'app',
      tag,
      summary: "The application's registered webhooks",
      params: applicationPathParam,
      response: { 200: s.array(webhookView) },
    }),
    delete: defineRoute({
      id: `${prefix}.webhooks.delete`,
      method: 'DELETE',
      path: `${base}/:webhookID`,
      service: 'webhooks',
      auth: 'app',
      tag,
      summary: 'Remove a registered webhook',
      params: { ...applicationPathParam, webhookID: { format: 'any', label: 'webhookID', code: 'invalid_request' } },
      response: { 200: successWith('deleted') },
    }),
  };
}

/** The registration routes, once under each prefix. */
export const webhookRegistrationRoutes = [registrationRoutes('applications'), registrationRoutes('projects')] as const;

const deliveryParam: Record<'deliveryID', PathParam> = {
  deliveryID: { format: 'uuid', label: 'deliveryID', code: 'not_found', message: 'Delivery not found.' },
};

export const webhooksRoutes = {
  ...prefixKeys('applicationWebhooks', webhookRegistrationRoutes[0]),
  ...prefixKeys('projectWebhooks', webhookRegistrationRoutes[1]),
  listDeliveries: defineRoute({
    id: 'webhooks.deliveries.list',
    method: 'GET',
    path: '/v1/webhooks/deliveries',
    service: 'webhooks',
    auth: 'app',
    tag: 'Webhooks',
    summary: 'The delivery log of outgoing webhook events, newest first',
    query: q.object({
      limit: q.limit(),
      token: q.token(pageCursors.deliveries),
      filter: q.filter({
        status: (value: unknown) => s.enum(DELIVERY_STATUSES).parse(value, ['status']),
        type: (value: unknown) => s.enum(WEBHOOK_EVENT_TYPES).parse(value, ['type']),
        url: (value: unknown) => s.string({ minLength: 1 }).parse(value, ['url']),
      }),
    }),
    response: { 200: pageOf('deliveries', deliveryView) },
  }),
  getDelivery: defineRoute({
    id: 'webhooks.deliveries.get',
    method: 'GET',
    path: '/v1/webhooks/deliveries/:deliveryID',
    service: 'webhooks',
    auth: 'app',
    tag: 'Webhooks',
    summary: 'One delivery, with the body of its last attempt',
    params: deliveryParam,
    response: { 200: deliveryDetailsView },
  }),
  listDeliveryAttempts: defineRoute({
    id: 'webhooks.deliveries.attempts',
    method: 'GET',
    path: '/v1/webhooks/deliveries/:deliveryID/attempts',
    service: 'webhooks',
    auth: 'app',
    tag: 'Webhooks',
    summary: "A delivery's attempts, newest first: status, answer or error, start and duration",
    params: deliveryParam,
    query: q.object({ limit: q.limit('How many of the latest attempts; default and maximum 1000.') }),
    response: { 200: s.object({ attempts: s.array(deliveryAttemptView) }) },
  }),
  retryDelivery: defineRoute({
    id: 'webhooks.deliveries.retry',
    method: 'POST',
    path: '/v1/webhooks/deliveries/:deliveryID/retry',
    service: 'webhooks',
    auth: 'app',
    tag: 'Webhooks',
    summary: 'Send a delivery again now (same event ID, next attempt number)',
    params: deliveryParam,
    response: { 200: successView },
  }),
};

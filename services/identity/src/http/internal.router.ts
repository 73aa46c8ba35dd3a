/**
 * Identity's internal API for the gateway (contracts in @collab/shared `identityInternal`).
 * An unknown id answers 404 `not_found`; the caller decides what that means for its client.
 */
import { ApiError, clientSessionContract, identityLookup, identityMailContext, isUuid, MAX_INTERNAL_BODY_BYTES } from '@collab/shared';
import express, { type Router } from 'express';
import { clientSession } from '../domain/client/client-session.js';
import type { IdentityContext } from '../domain/context.js';
import { mailContext } from '../domain/preferences/preferences.js';
import { openPreviousSecret, openSecret } from '../domain/secrets.js';
import { applicationsRepository } from '../repositories/applications.repository.js';
import { customersRepository } from '../repositories/customers.repository.js';
import { sessionsRepository } from '../repositories/sessions.repository.js';
import { lookupRepository } from '../repositories/lookup.repository.js';

const CUSTOMER_LIST_LIMIT = 500;

function uuidParam(value: string | string[] | undefined): string {
  if (typeof value !== 'string' || !isUuid(value)) throw new ApiError('not_found');
  return value.toLowerCase();
}

export function internalRouter(ctx: IdentityContext): Router {
  const router = express.Router();

  router.get('/applications/:applicationId/credentials', async (req, res) => {
    const application = await applicationsRepository.findById(ctx.db, uuidParam(req.params.applicationId));
    if (!application) throw new ApiError('not_found', 'No such application.');
    // The gateway verifies tokens with the plaintext secret; only it holds INTERNAL_TOKEN.
    const secret = openSecret(ctx.secretBox, 'application', application);
    // Sent only during a rotation's grace period: a gateway older than rotation refuses unknown keys.
    const previous = openPreviousSecret(ctx.secretBox, application);
    res.json({
      id: application.id,
      name: application.name,
      customerId: application.customerId,
      secret,
      ...(previous && { previousSecret: previous.secret, previousSecretExpiresAt: previous.expiresAt.toISOString() }),
      eventWebhookURL: application.eventWebhookUrl,
      eventWebhookSubscriptions: application.eventWebhookSubscriptions,
    });
  });

  // The console's operator page: customers and their application counts, never a secret.
  router.get('/customers', async (_req, res) => {
    const customers = await customersRepository.listWithApplicationCounts(ctx.db, CUSTOMER_LIST_LIMIT);
    res.json({
      customers: customers.map((customer) => ({ ...customer, createdAt: customer.createdAt.toISOString() })),
      total: await customersRepository.count(ctx.db),
    });
  });

  router.get('/customers/:customerId/credentials', async (req, res) => {
    const customer = await customersRepository.find(ctx.db, uuidParam(req.params.customerId));
    if (!customer) throw new ApiError('not_found', 'No such customer.');
    res.json({ id: customer.id, secret: openSecret(ctx.secretBox, 'customer', customer) });
  });

  router.get('/sessions/:sessionId', async (req, res) => {
    const session = await sessionsRepository.find(ctx.db, uuidParam(req.params.sessionId));
    if (!session) throw new ApiError('not_found', 'No such session.');
    res.json({
      id: session.id,
      applicationId: session.applicationId,
      expiresAt: session.expiresAt ? session.expiresAt.toISOString() : null,
    });
  });

  // The viewer of a client token, after applying its details (domain/client/client-session.ts).
  router.post(clientSessionContract.path.replace('/internal', ''), express.json({ limit: MAX_INTERNAL_BODY_BYTES }), async (req, res) => {
    const applicationId = uuidParam(req.ctx.applicationId);
    res.json(await clientSession(ctx, applicationId, clientSessionContract.request.parse(req.body)));
  });

  // A public request of up to 10 MB may name that many ids; the lookup must take them all.
  router.post('/lookup', express.json({ limit: MAX_INTERNAL_BODY_BYTES }), async (req, res) => {
    const applicationId = req.ctx.applicationId;
    if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
    const { userIds, groupId } = identityLookup.request.parse(req.body);
    res.type('application/json').send(await lookupRepository.lookup(ctx.db, applicationId, userIds, groupId || null));
  });

  router.post(identityMailContext.path.replace('/internal', ''), express.json(), async (req, res) => {
    const applicationId = req.ctx.applicationId;
    if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
    const { userIds, groupId } = identityMailContext.request.parse(req.body);
    const context = await mailContext(ctx, applicationId, userIds, groupId);
    if (!context) throw new ApiError('not_found', 'No such application.');
    res.json(context);
  });

  return router;
}

/**
 * Identity's internal API for the gateway and the other services (contracts in @collab/shared
 * `identityInternal`). An unknown id answers 404 `not_found`; the caller decides what that means
 * for its client.
 */
import {
  ApiError,
  clientSessionContract,
  identityLookup,
  identityMailContext,
  internalApplicationOf,
  internalRoute,
  isUuid,
  JsonText,
  MAX_INTERNAL_BODY_BYTES,
  SMALL_INTERNAL_BODY_BYTES,
  type InternalRoute,
} from '@collab/shared';
import { clientSession } from '../domain/client/client-session.js';
import type { IdentityContext } from '../domain/context.js';
import { mailContext } from '../domain/preferences/preferences.js';
import { openPreviousSecret, openSecret } from '../domain/secrets.js';
import { applicationsRepository } from '../repositories/applications.repository.js';
import { customersRepository } from '../repositories/customers.repository.js';
import { lookupRepository } from '../repositories/lookup.repository.js';
import { sessionsRepository } from '../repositories/sessions.repository.js';

const CUSTOMER_LIST_LIMIT = 500;

function uuidParam(value: string | undefined): string {
  if (typeof value !== 'string' || !isUuid(value)) throw new ApiError('not_found');
  return value.toLowerCase();
}

export function internalRoutes(ctx: IdentityContext): InternalRoute[] {
  return [
    internalRoute('GET', '/internal/applications/:applicationId/credentials', SMALL_INTERNAL_BODY_BYTES, async (req) => {
      const application = await applicationsRepository.findById(ctx.db, uuidParam(req.params.applicationId));
      if (!application) throw new ApiError('not_found', 'No such application.');
      // The gateway verifies tokens with the plaintext secret; only it holds INTERNAL_TOKEN.
      const secret = openSecret(ctx.secretBox, 'application', application);
      // Sent only during a rotation's grace period: a gateway older than rotation refuses unknown keys.
      const previous = openPreviousSecret(ctx.secretBox, application);
      return {
        id: application.id,
        name: application.name,
        customerId: application.customerId,
        secret,
        ...(previous && { previousSecret: previous.secret, previousSecretExpiresAt: previous.expiresAt.toISOString() }),
        eventWebhookURL: application.eventWebhookUrl,
        eventWebhookSubscriptions: application.eventWebhookSubscriptions,
      };
    }),

    // The console's operator page: customers and their application counts, never a secret.
    internalRoute('GET', '/internal/customers', SMALL_INTERNAL_BODY_BYTES, async () => {
      const customers = await customersRepository.listWithApplicationCounts(ctx.db, CUSTOMER_LIST_LIMIT);
      return {
        customers: customers.map((customer) => ({ ...customer, createdAt: customer.createdAt.toISOString() })),
        total: await customersRepository.count(ctx.db),
      };
    }),

    internalRoute('GET', '/internal/customers/:customerId/credentials', SMALL_INTERNAL_BODY_BYTES, async (req) => {
      const customer = await customersRepository.find(ctx.db, uuidParam(req.params.customerId));
      if (!customer) throw new ApiError('not_found', 'No such customer.');
      return { id: customer.id, secret: openSecret(ctx.secretBox, 'customer', customer) };
    }),

    internalRoute('GET', '/internal/sessions/:sessionId', SMALL_INTERNAL_BODY_BYTES, async (req) => {
      const session = await sessionsRepository.find(ctx.db, uuidParam(req.params.sessionId));
      if (!session) throw new ApiError('not_found', 'No such session.');
      return { id: session.id, applicationId: session.applicationId, expiresAt: session.expiresAt ? session.expiresAt.toISOString() : null };
    }),

    // The viewer of a client token, after applying its details (domain/client/client-session.ts).
    internalRoute('POST', clientSessionContract.path, MAX_INTERNAL_BODY_BYTES, async (req) =>
      clientSession(ctx, uuidParam(req.ctx.applicationId), clientSessionContract.request.parse(req.body)),
    ),

    // A public request of up to 10 MB may name that many ids; the lookup must take them all.
    internalRoute('POST', identityLookup.path, MAX_INTERNAL_BODY_BYTES, async (req) => {
      const applicationId = internalApplicationOf(req);
      const { userIds, groupId } = identityLookup.request.parse(req.body);
      return new JsonText(await lookupRepository.lookup(ctx.db, applicationId, userIds, groupId || null));
    }),

    // The recipients of a mail may be many.
    internalRoute('POST', identityMailContext.path, MAX_INTERNAL_BODY_BYTES, async (req) => {
      const { userIds, groupId } = identityMailContext.request.parse(req.body);
      const context = await mailContext(ctx, internalApplicationOf(req), userIds, groupId);
      if (!context) throw new ApiError('not_found', 'No such application.');
      return context;
    }),
  ];
}

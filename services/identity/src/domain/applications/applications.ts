/** Application use cases; every call is scoped to the calling customer. */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  requireAllowedAddress,
  requireHttpUrl,
  type applicationView as applicationAnswer,
  type identityRoutes,
  type RecordWrite,
  type RouteBody,
  type ViewAnswer,
} from '@collab/shared';
import type { ApplicationRow } from '../../entities/index.js';
import { applicationsRepository, type ApplicationFields } from '../../repositories/applications.repository.js';
import { recordDeletion } from '../events/outbox.js';
import type { IdentityContext } from '../context.js';
import { forgetPresence } from '../presence/presence.js';
import { generateSecret, openSecret, sealSecret, secretsEqual } from '../secrets.js';
import { verifyWebhookUrl } from './url-verification.js';

/** PUT /v1/applications/<ID> body after validation (a creation's is the same with a name). */
export type ApplicationInput = RouteBody<typeof identityRoutes.applicationUpdate>;

function fieldsFrom(input: ApplicationInput): ApplicationFields {
  const fields: ApplicationFields = {};
  if (input.name !== undefined) fields.name = input.name;
  if (input.iconURL !== undefined) fields.iconUrl = input.iconURL;
  if (input.eventWebhookURL !== undefined) fields.eventWebhookUrl = input.eventWebhookURL;
  if (input.eventWebhookSubscriptions !== undefined) fields.eventWebhookSubscriptions = input.eventWebhookSubscriptions;
  if (input.redirectURI !== undefined) fields.redirectUri = input.redirectURI;
  if (input.emailSettings !== undefined) fields.emailSettings = input.emailSettings;
  return fields;
}

/** The application as listed; the secret is never part of it. */
export function applicationView(application: ApplicationRow): ViewAnswer<typeof applicationAnswer> {
  return {
    id: application.id,
    name: application.name,
    iconURL: application.iconUrl,
    eventWebhookURL: application.eventWebhookUrl,
    eventWebhookSubscriptions: application.eventWebhookSubscriptions,
    redirectURI: application.redirectUri,
    emailSettings: application.emailSettings,
    createdTimestamp: application.createdAt.toISOString(),
  };
}

function applicationNotFound(applicationId: string): ApiError {
  return new ApiError('application_not_found', `Application ${applicationId} not found.`);
}

/** Checks what the request schema cannot: the webhook URL's scheme. */
function validateInput(input: ApplicationInput): void {
  if (input.eventWebhookURL) requireHttpUrl(input.eventWebhookURL, 'eventWebhookURL');
}

/** Creates the application; its eventWebhookURL is stored without a handshake
 * (only a change of the URL on update is verified). */
export async function createApplication(
  ctx: IdentityContext,
  customerId: string,
  input: ApplicationInput & { name: string },
  recordWrite: RecordWrite<{ id: string; secret: string }>,
) {
  validateInput(input);
  // Stored without a handshake, so at least not with an address no delivery could reach.
  if (input.eventWebhookURL) await requireAllowedAddress(ctx.outbound, input.eventWebhookURL, 'eventWebhookURL');
  const id = randomUUID();
  const secret = generateSecret();
  const secretEncrypted = sealSecret(ctx.secretBox, 'application', id, secret);
  await ctx.db.transaction(async (tx) => {
    await applicationsRepository.insert(tx, customerId, { ...fieldsFrom(input), name: input.name, id, secretEncrypted });
    // The request's answer, stored with the application (Idempotency-Key).
    await recordWrite(tx, { id, secret });
  });
  // The only time the plaintext leaves identity other than to the gateway.
  return { id, secret };
}

export async function listApplications(ctx: IdentityContext, customerId: string) {
  return (await applicationsRepository.list(ctx.db, customerId)).map(applicationView);
}

export async function getApplication(ctx: IdentityContext, customerId: string, applicationId: string) {
  const application = await applicationsRepository.find(ctx.db, customerId, applicationId);
  if (!application) throw applicationNotFound(applicationId);
  return applicationView(application);
}

export async function assertApplicationExists(ctx: IdentityContext, customerId: string, applicationId: string) {
  await getApplication(ctx, customerId, applicationId);
}

export async function updateApplication(
  ctx: IdentityContext,
  customerId: string,
  applicationId: string,
  input: ApplicationInput,
) {
  validateInput(input);
  const application = await applicationsRepository.find(ctx.db, customerId, applicationId);
  if (!application) throw applicationNotFound(applicationId);
  // A new URL must pass the handshake before anything of the request is written, so a URL
  // that fails it leaves every field as it was. The same URL, or null, is not called.
  const url = input.eventWebhookURL;
  if (url && url !== application.eventWebhookUrl)
    await verifyWebhookUrl(ctx.outbound, ctx.logger, application.id, openSecret(ctx.secretBox, 'application', application), url);
  await applicationsRepository.update(ctx.db, customerId, application.id, fieldsFrom(input));
  // The webhooks service caches the URL and its subscriptions with the secret.
  await ctx.publishInvalidation({ kind: 'application', id: application.id });
}

/**
 * Issues a new secret for the application and answers it (the only time it leaves identity other
 * than to the gateway and the webhooks service). Server tokens signed with the secret it replaces
 * keep working for `graceHours` (the deployment's SECRET_ROTATION_GRACE_HOURS unless an operator
 * says otherwise), so that the customer's servers can switch without an outage; events are signed
 * with the new secret at once, as the caches of the gateway and the webhooks service are told now.
 */
export async function rotateApplicationSecret(
  ctx: IdentityContext,
  customerId: string,
  applicationId: string,
  graceHours = ctx.secretRotationGraceHours,
) {
  const application = await applicationsRepository.find(ctx.db, customerId, applicationId);
  if (!application) throw applicationNotFound(applicationId);
  const secret = generateSecret();
  const sealed = sealSecret(ctx.secretBox, 'application', application.id, secret);
  const previousSecretExpiresAt = await applicationsRepository.rotateSecret(ctx.db, customerId, application.id, sealed, graceHours);
  // Deleted meanwhile (a concurrent DELETE won).
  if (previousSecretExpiresAt === undefined) throw applicationNotFound(applicationId);
  await ctx.publishInvalidation({ kind: 'application', id: application.id });
  return { id: application.id, secret, previousSecretExpiresAt };
}

/** Stops accepting the previous secret of the application now; false when none was accepted. */
export async function expirePreviousSecret(ctx: IdentityContext, customerId: string, applicationId: string): Promise<boolean> {
  const expired = await applicationsRepository.expirePreviousSecret(ctx.db, customerId, applicationId);
  if (expired) await ctx.publishInvalidation({ kind: 'application', id: applicationId });
  return expired;
}

/**
 * Deletes the application when the secret matches. Identity's rows go at once, and the deletion
 * is recorded in the same transaction for the other services, which purge the rest (their data
 * cannot be read once no token of the application verifies); then it is carried into them at
 * once, a 503 when one cannot be reached (the identity worker's relay finishes it later).
 */
export async function deleteApplication(
  ctx: IdentityContext,
  customerId: string,
  applicationId: string,
  secret: string,
  requestId: string,
) {
  const application = await applicationsRepository.find(ctx.db, customerId, applicationId);
  if (!application) throw applicationNotFound(applicationId);
  // The reference's code, with a message that says what was wrong: the customer may see its own
  // applications, so naming the secret tells nothing to anyone else.
  if (!secretsEqual(secret, openSecret(ctx.secretBox, 'application', application)))
    throw new ApiError('application_not_found', `The secret is not the current secret of application ${applicationId}: nothing was deleted.`);
  await removeApplication(ctx, application, requestId);
}

/**
 * Deletes an application whoever asked (the API once the secret matched, or the operator CLI for
 * a customer who lost it), by the one path that reaches every service's data.
 */
export async function removeApplication(ctx: IdentityContext, application: ApplicationRow, requestId: string) {
  // Caches are keyed by the stored (lower-case) id, whatever case the path used.
  const id = application.id;
  const deletion = await ctx.db.transaction(async (tx) => {
    if (!(await applicationsRepository.delete(tx, application.customerId, id))) throw applicationNotFound(id);
    return recordDeletion(tx, { topic: 'application.deleted', applicationId: id, requestId, payload: {} });
  });
  // Committed: no token of the application verifies any more, whatever the other services answer.
  await ctx.publishInvalidation({ kind: 'application', id });
  await ctx.publishInvalidation({ kind: 'sessions-of-application', id });
  await forgetPresence(ctx, id, 'application');
  await ctx.deletions.processNow(deletion);
}

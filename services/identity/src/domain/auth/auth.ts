/** Access tokens: POST /v1/authorize, GET /v1/verify, and revocation. */
import { randomUUID } from 'node:crypto';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  ApiError,
  authorizeTokenApplicationId,
  signAccessToken,
  unverifiedPayload,
  verifySignedTokenWithAny,
} from '@collab/shared';
import { applicationsRepository } from '../../repositories/applications.repository.js';
import { sessionsRepository } from '../../repositories/sessions.repository.js';
import type { IdentityContext } from '../context.js';
import { openPreviousSecret, openSecret } from '../secrets.js';

/** Checks the signed app token, opens a 24-hour session and signs an access token for it. */
export async function authorize(ctx: IdentityContext, signedAppToken: string) {
  const payload = unverifiedPayload(signedAppToken, 'invalid_app_token', 'signed_app_token');
  const applicationId = authorizeTokenApplicationId(payload);
  const application = await applicationsRepository.findById(ctx.db, applicationId);
  if (!application) throw new ApiError('application_not_found', `Application ${applicationId} not found.`);
  // Signed with the current secret, or with the previous one during a rotation's grace period.
  const previous = openPreviousSecret(ctx.secretBox, application);
  const secrets = [openSecret(ctx.secretBox, 'application', application), ...(previous ? [previous.secret] : [])];
  await verifySignedTokenWithAny(signedAppToken, secrets, 'invalid_app_token');

  const issuedAt = new Date();
  const expiresAt = new Date(issuedAt.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000);
  const sessionId = randomUUID();
  await sessionsRepository.insert(ctx.db, { id: sessionId, applicationId, issuedAt, expiresAt });
  return {
    access_token: await signAccessToken(sessionId, ctx.accessTokenSecret, issuedAt),
    expires: expiresAt.toISOString(),
  };
}

export async function verifyApplication(ctx: IdentityContext, applicationId: string) {
  const application = await applicationsRepository.findById(ctx.db, applicationId);
  if (!application) throw new ApiError('application_not_found', `Application ${applicationId} not found.`);
  return { success: true, application_id: application.id, application_name: application.name };
}

/** Revokes one session, or all sessions of an application. */
export async function revokeSession(ctx: IdentityContext, sessionId: string): Promise<boolean> {
  const id = sessionId.toLowerCase();
  const revoked = await sessionsRepository.revoke(ctx.db, id);
  await ctx.publishInvalidation({ kind: 'session', id });
  return revoked;
}

export async function revokeApplicationSessions(ctx: IdentityContext, applicationId: string): Promise<number> {
  const count = await sessionsRepository.revokeAllOfApplication(ctx.db, applicationId);
  await ctx.publishInvalidation({ kind: 'sessions-of-application', id: applicationId });
  return count;
}

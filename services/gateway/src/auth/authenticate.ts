/**
 * Verifies the bearer token of a request for the route's token kind,
 * and answers who the caller is: an application (server or access token) or a customer; or, for
 * the inbound-mail route, the parser's Basic credentials (the mail the reply names is the tenant).
 */
import {
  accessTokenSession,
  ApiError,
  bearerToken,
  clientSessionContract,
  clientTokenClaims,
  customerTokenCustomerId,
  serverTokenApplicationId,
  TOKEN_CLOCK_TOLERANCE_SECONDS,
  unverifiedPayload,
  verifySignedToken,
  verifySignedTokenWithAny,
  verifyClientToken,
  type ApplicationCredentials,
  type AuthKind,
  type InternalClient,
  type Viewer,
} from '@collab/shared';
import type { CredentialStore } from '@collab/shared';
import { credentialsMatch, parseBasic, type OperatorCredentials } from '../admin/queue-dashboard.js';
import { signedTokenValidUntil, VerifiedTokens } from './verified-tokens.js';

export interface Caller {
  applicationId?: string;
  customerId?: string;
  /** The user a client token names, and the groups they may read. */
  viewer?: Viewer;
}

/**
 * The secrets a server token of the application may be signed with: the current one, and the
 * previous one until its grace period ends (checked here, so that a cached entry does not extend it).
 */
export function acceptedSecrets(application: ApplicationCredentials, now = Date.now()): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = application;
  if (!previousSecret || !previousSecretExpiresAt || !(Date.parse(previousSecretExpiresAt) > now)) return [secret];
  return [secret, previousSecret];
}

/**
 * accessTokenSession refuses an access token from `exp` plus the tolerance on. Without a readable
 * `exp` the token is not cached (0): it is then verified at every request, as before.
 */
function accessTokenValidUntil(token: string): number {
  try {
    const { exp } = unverifiedPayload(token, 'invalid_access_token');
    return typeof exp === 'number' ? (exp + TOKEN_CLOCK_TOLERANCE_SECONDS) * 1000 : 0;
  } catch {
    return 0;
  }
}

export function createAuthenticator(
  credentials: CredentialStore,
  accessTokenSecret: string,
  identity: InternalClient,
  verified = new VerifiedTokens(),
  /** INBOUND_EMAIL_USERNAME/PASSWORD; null: replies by mail are off and their route answers 404. */
  inboundMail: OperatorCredentials | null = null,
) {
  async function sessionCaller(sessionId: string, requestId: string): Promise<Caller> {
    const session = await credentials.session(sessionId, requestId);
    if (!session) throw new ApiError('invalid_access_token', 'No valid session found.');
    if (session.expiresAt === null) throw new ApiError('expired_access_token', 'Access token has been revoked.');
    if (Date.parse(session.expiresAt) <= Date.now()) throw new ApiError('expired_access_token', 'Access token has expired.');
    return { applicationId: session.applicationId };
  }

  /** A cached server token: its application as of now must still accept the secret that signed it. */
  async function cachedApplicationCaller(token: string, applicationId: string, secret: string, requestId: string) {
    const application = await credentials.application(applicationId, requestId);
    if (!application) throw new ApiError('application_not_found', `Application ${applicationId} not found.`);
    if (acceptedSecrets(application).includes(secret)) return { applicationId };
    verified.delete(token);
    return undefined;
  }

  async function applicationCaller(token: string, requestId: string): Promise<Caller> {
    const hit = verified.get(token);
    if (hit?.kind === 'access') return sessionCaller(hit.sessionId, requestId);
    if (hit?.kind === 'app') {
      const caller = await cachedApplicationCaller(token, hit.applicationId, hit.secret, requestId);
      if (caller) return caller;
    }
    const sessionId = await accessTokenSession(token, accessTokenSecret);
    if (sessionId) {
      verified.set(token, { kind: 'access', sessionId, validUntil: accessTokenValidUntil(token) });
      return sessionCaller(sessionId, requestId);
    }
    const claims = unverifiedPayload(token, 'invalid_app_token');
    const applicationId = serverTokenApplicationId(claims);
    const application = await credentials.application(applicationId, requestId);
    if (!application) throw new ApiError('application_not_found', `Application ${applicationId} not found.`);
    const secret = await verifySignedTokenWithAny(token, acceptedSecrets(application), 'invalid_app_token');
    verified.set(token, { kind: 'app', applicationId, secret, validUntil: signedTokenValidUntil(claims) });
    return { applicationId };
  }

  async function customerCaller(token: string, requestId: string): Promise<Caller> {
    const hit = verified.get(token);
    if (hit?.kind === 'customer') {
      const customer = await credentials.customer(hit.customerId, requestId);
      if (!customer) throw new ApiError('invalid_customer_token', 'Invalid customer token.');
      if (customer.secret === hit.secret) return { customerId: hit.customerId };
      verified.delete(token);
    }
    const claims = unverifiedPayload(token, 'invalid_customer_token');
    const customerId = customerTokenCustomerId(claims);
    const customer = await credentials.customer(customerId, requestId);
    if (!customer) throw new ApiError('invalid_customer_token', 'Invalid customer token.');
    await verifySignedToken(token, customer.secret, 'invalid_customer_token');
    verified.set(token, { kind: 'customer', customerId, secret: customer.secret, validUntil: signedTokenValidUntil(claims) });
    return { customerId };
  }

  /**
   * A client token: its claims, its signature, then the viewer from identity (which applies
   * user_details and group_details). Every failure is `403 invalid_session` (decision 53).
   */
  async function clientCaller(authorization: string | undefined, requestId: string): Promise<Caller> {
    try {
      const token = bearerToken(authorization);
      const claims = clientTokenClaims(unverifiedPayload(token, 'invalid_session'));
      const application = await credentials.application(claims.applicationId, requestId);
      if (!application) throw new ApiError('invalid_session', `Platform project ${claims.applicationId} not found.`);
      await verifyClientToken(token, acceptedSecrets(application));
      const body = clientSessionContract.request.parse({
        userId: claims.userId,
        groupId: claims.groupId,
        userDetails: claims.userDetails,
        groupDetails: claims.groupDetails,
      });
      const answer = await identity.call('POST', clientSessionContract.path, { applicationId: claims.applicationId, requestId, body });
      return { applicationId: claims.applicationId, viewer: clientSessionContract.response.parse(answer) };
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'invalid_session' || error.status >= 500)) throw error;
      const text = error instanceof ApiError ? error.message : 'invalid token';
      throw new ApiError('invalid_session', `${text}`);
    }
  }

  function inboundCaller(authorization: string | undefined): Caller {
    if (!inboundMail) throw new ApiError('not_found', 'Replies by e-mail are not enabled on this server.');
    const given = parseBasic(authorization);
    if (!given || !credentialsMatch(given, inboundMail))
      throw new ApiError('invalid_authorization_header', 'The inbound-mail credentials are missing or wrong.', {
        headers: { 'WWW-Authenticate': 'Basic realm="inbound-email"' },
      });
    return {};
  }

  return async function authenticate(kind: AuthKind, authorization: string | undefined, requestId: string): Promise<Caller> {
    if (kind === 'none') return {};
    if (kind === 'inbound') return inboundCaller(authorization);
    if (kind === 'client') return clientCaller(authorization, requestId);
    const token = bearerToken(authorization);
    return kind === 'customer' ? customerCaller(token, requestId) : applicationCaller(token, requestId);
  };
}

export type Authenticate = ReturnType<typeof createAuthenticator>;

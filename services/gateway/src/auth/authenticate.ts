/**
 * Verifies the bearer token of a request for the route's token kind,
 * and answers who the caller is: an application (server or access token) or a customer.
 */
import {
  accessTokenSession,
  ApiError,
  bearerToken,
  clientSessionContract,
  clientTokenClaims,
  customerTokenCustomerId,
  serverTokenApplicationId,
  unverifiedPayload,
  verifySignedToken,
  verifyClientToken,
  verifySignedTokenWithAny,
  type ApplicationCredentials,
  type AuthKind,
  type InternalClient,
  type Viewer,
} from '@collab/shared';
import type { CredentialStore } from '@collab/shared';

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

export function createAuthenticator(credentials: CredentialStore, accessTokenSecret: string, identity: InternalClient) {
  async function applicationCaller(token: string, requestId: string): Promise<Caller> {
    const sessionId = await accessTokenSession(token, accessTokenSecret);
    if (sessionId) {
      const session = await credentials.session(sessionId, requestId);
      if (!session) throw new ApiError('invalid_access_token', 'No valid session found.');
      if (session.expiresAt === null) throw new ApiError('expired_access_token', 'Access token has been revoked.');
      if (Date.parse(session.expiresAt) <= Date.now())
        throw new ApiError('expired_access_token', 'Access token has expired.');
      return { applicationId: session.applicationId };
    }
    const applicationId = serverTokenApplicationId(unverifiedPayload(token, 'invalid_app_token'));
    const application = await credentials.application(applicationId, requestId);
    if (!application) throw new ApiError('application_not_found', `Application ${applicationId} not found.`);
    await verifySignedTokenWithAny(token, acceptedSecrets(application), 'invalid_app_token');
    return { applicationId };
  }

  async function customerCaller(token: string, requestId: string): Promise<Caller> {
    const customerId = customerTokenCustomerId(unverifiedPayload(token, 'invalid_customer_token'));
    const customer = await credentials.customer(customerId, requestId);
    if (!customer) throw new ApiError('invalid_customer_token', 'Invalid customer token.');
    await verifySignedToken(token, customer.secret, 'invalid_customer_token');
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

  return async function authenticate(kind: AuthKind, authorization: string | undefined, requestId: string): Promise<Caller> {
    if (kind === 'none') return {};
    if (kind === 'client') return clientCaller(authorization, requestId);
    const token = bearerToken(authorization);
    return kind === 'customer' ? customerCaller(token, requestId) : applicationCaller(token, requestId);
  };
}

export type Authenticate = ReturnType<typeof createAuthenticator>;

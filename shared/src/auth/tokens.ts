/**
 * JWT checks shared by the gateway (every request) and identity (POST /v1/authorize), in one way:
 * HS512 only, the secret string's bytes as the HMAC key, at most 24 h
 * after `iat` with 30 s of clock tolerance.
 *
 * The common case (a well-formed token that passes) is decided synchronously with node's HMAC;
 * anything else goes through jose, whose outcome and error messages define the behaviour. The
 * fast path accepts only what jose would accept, so the outcome never depends on which path ran.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { compactVerify, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { ApiError, type ErrorCode } from '../errors.js';
import { isJwtShaped, isUuid } from '../schema/formats.js';

export const TOKEN_MAX_AGE_SECONDS = 24 * 60 * 60;
export const TOKEN_CLOCK_TOLERANCE_SECONDS = 30;
export const ACCESS_TOKEN_TTL_SECONDS = 24 * 60 * 60;
const ALGORITHM = 'HS512';
/** Header keys a token may carry; `jwk`, `jku`, `x5u`, `kid`, `crit` … are refused outright. */
const ALLOWED_HEADER_KEYS = new Set(['alg', 'typ']);

const encoder = new TextEncoder();
export const hmacKey = (secret: string): Uint8Array => encoder.encode(secret);

/** Authorization header → the bearer token. */
export function bearerToken(header: string | undefined): string {
  if (!header) throw new ApiError('missing_authorization_header');
  if (!header.startsWith('Bearer'))
    throw new ApiError('invalid_authorization_header', 'Expecting a token with a Bearer prefix.');
  // `Bearer` must be followed by whitespace: `BearerXYZ…` (even `Bearer<jwt>`) is not a bearer token.
  const rest = header.slice('Bearer'.length);
  const token = rest.trim();
  if ((rest !== '' && !/^\s/.test(rest)) || !isJwtShaped(token))
    throw new ApiError(
      'invalid_authorization_header',
      'Input type for authorization header bearer token is not valid, expected JWT.',
    );
  return token;
}

/**
 * The payload as an object, without checking the signature yet (claims decide which key to use).
 * Only JWT-shaped tokens get here: one whose payload is not a JSON object is no JWT at all, and
 * the message says so.
 */
export function unverifiedPayload(token: string, code: ErrorCode, what = 'Authorization token'): Record<string, unknown> {
  try {
    return decodeJwt(token) as Record<string, unknown>;
  } catch {
    throw new ApiError(code, `${what} is not a valid JWT: its payload must be a base64url-encoded JSON object.`);
  }
}

function checkHeader(token: string, code: ErrorCode): void {
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    throw new ApiError(code, 'The token header is not valid JSON.');
  }
  if (header.alg !== ALGORITHM) throw new ApiError(code, 'JsonWebTokenError: invalid algorithm');
  const extra = Object.keys(header).find((key) => !ALLOWED_HEADER_KEYS.has(key));
  if (extra) throw new ApiError(code, `The token header may not contain "${extra}".`);
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The payload bytes when the token is certainly a valid HS512 JWS signed with `secret` (plain
 * `{alg, typ}` header, canonical encodings: jose would verify it too), false when jose would
 * certainly refuse the signature, undefined when only jose can tell (unusual encodings).
 */
function hs512Payload(token: string, secret: string): Uint8Array | false | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  const [header, payload, signature] = parts as [string, string, string];
  if (secret === '' || !BASE64URL.test(signature)) return undefined;
  const expected = createHmac('sha512', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  // A base64url string jose decodes gives these same bytes, so different bytes fail in jose too.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  if (signature !== expected.toString('base64url') || !BASE64URL.test(header) || !BASE64URL.test(payload)) return undefined;
  if (header.length % 4 === 1 || payload.length % 4 === 1) return undefined;
  try {
    const parsed: unknown = JSON.parse(strictUtf8.decode(Buffer.from(header, 'base64url')));
    if (!isPlainObject(parsed) || parsed.alg !== ALGORITHM || Object.keys(parsed).some((key) => !ALLOWED_HEADER_KEYS.has(key)))
      return undefined;
  } catch {
    return undefined;
  }
  return Buffer.from(payload, 'base64url');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether jose's claim checks (verifySignedToken's options) certainly pass; false: let jose tell. */
function claimsCertainlyValid(payload: Uint8Array, now = Math.floor(Date.now() / 1000)): boolean {
  let claims: unknown;
  try {
    claims = JSON.parse(strictUtf8.decode(payload));
  } catch {
    return false;
  }
  if (!isPlainObject(claims)) return false;
  const { iat, nbf, exp } = claims;
  const tolerance = TOKEN_CLOCK_TOLERANCE_SECONDS;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return false;
  if (nbf !== undefined && !(typeof nbf === 'number' && nbf <= now + tolerance)) return false;
  if (exp !== undefined && !(typeof exp === 'number' && exp > now - tolerance)) return false;
  const age = now - iat;
  return age - tolerance <= TOKEN_MAX_AGE_SECONDS && age >= -tolerance;
}

/** Verifies signature, `exp` and the 24 h `iat` age; each failure is a 401 with `code`. */
export async function verifySignedToken(token: string, secret: string, code: ErrorCode): Promise<void> {
  checkHeader(token, code);
  const payload = hs512Payload(token, secret);
  if (payload && claimsCertainlyValid(payload)) return;
  try {
    await jwtVerify(token, hmacKey(secret), {
      algorithms: [ALGORITHM],
      maxTokenAge: TOKEN_MAX_AGE_SECONDS,
      clockTolerance: TOKEN_CLOCK_TOLERANCE_SECONDS,
    });
  } catch (error) {
    throw new ApiError(code, describeJoseError(error));
  }
}

/**
 * Verifies a token that may be signed with any of `secrets`: an application's current secret
 * first, then its previous one during the grace period after a rotation. Only a signature that
 * does not match moves on to the next secret; any other failure (expired, bad header) is the
 * answer. When no secret matches, the error is the first secret's. Returns the secret that matched.
 */
export async function verifySignedTokenWithAny(token: string, secrets: readonly string[], code: ErrorCode): Promise<string> {
  let mismatch: unknown;
  for (const secret of secrets) {
    try {
      await verifySignedToken(token, secret, code);
      return secret;
    } catch (error) {
      if (!(error instanceof ApiError) || error.message !== SIGNATURE_MISMATCH) throw error;
      mismatch ??= error;
    }
  }
  throw mismatch ?? new ApiError(code, SIGNATURE_MISMATCH);
}

const SIGNATURE_MISMATCH = 'JsonWebTokenError: invalid signature';

function describeJoseError(error: unknown): string {
  const joseCode = (error as { code?: string }).code;
  switch (joseCode) {
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return SIGNATURE_MISMATCH;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'JsonWebTokenError: invalid algorithm';
    case 'ERR_JWT_EXPIRED':
      return (error as { claim?: string }).claim === 'iat'
        ? 'TokenExpiredError: maxAge exceeded'
        : 'TokenExpiredError: jwt expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      // A future `nbf` is refused, in jsonwebtoken's wording like every message here.
      const { claim, reason } = error as { claim?: string; reason?: string };
      if (claim === 'nbf' && reason === 'check_failed') return 'NotBeforeError: jwt not active';
      return `JsonWebTokenError: ${(error as Error).message}`;
    }
    default:
      return 'JsonWebTokenError: invalid token';
  }
}

const SERVER_TOKEN_CLAIMS = new Set(['app_id', 'project_id', 'iat', 'exp']);

/** Server ("app") token claims: `app_id` or `project_id`, `iat`, `exp`, nothing else. */
export function serverTokenApplicationId(payload: Record<string, unknown>): string {
  const applicationId = payload.app_id ?? payload.project_id;
  if (applicationId === undefined)
    throw new ApiError(
      'invalid_app_token',
      'Please include the app_id if you are authorizing directly with a non-access token.',
    );
  if (typeof applicationId !== 'string' || !isUuid(applicationId))
    throw new ApiError('invalid_app_token', 'Input type for app_id is not valid, expected UUID.');
  if (Object.keys(payload).some((claim) => !SERVER_TOKEN_CLAIMS.has(claim)))
    throw new ApiError('invalid_app_token', 'Authorization token payload invalid, must contain only app_id.');
  return applicationId.toLowerCase();
}

const CUSTOMER_TOKEN_FORBIDDEN = ['user_id', 'org_id', 'app_id', 'project_id'];

/** Customer (application-management) token claims: `customer_id`, no app or user claims. */
export function customerTokenCustomerId(payload: Record<string, unknown>): string {
  const customerId = payload.customer_id;
  if (customerId === undefined)
    throw new ApiError('invalid_customer_token', 'Application management auth tokens must include a customer_id field.');
  if (typeof customerId !== 'string' || !isUuid(customerId))
    throw new ApiError('invalid_customer_token', 'Input type for customer_id is not valid, expected UUID.');
  if (CUSTOMER_TOKEN_FORBIDDEN.some((claim) => claim in payload))
    throw new ApiError('invalid_customer_token', 'Authorization token payload invalid, must contain only customer_id.');
  return customerId.toLowerCase();
}

/** The claims of `signed_app_token` in POST /v1/authorize. */
export function authorizeTokenApplicationId(payload: Record<string, unknown>): string {
  const applicationId = payload.app_id;
  if (applicationId === undefined)
    throw new ApiError('invalid_app_token', 'signed_app_token payload is missing app_id.');
  if (typeof applicationId !== 'string' || !isUuid(applicationId))
    throw new ApiError('invalid_app_token', 'Input type for app_id is not valid, expected UUID.');
  if ('user_id' in payload || 'org_id' in payload)
    throw new ApiError('invalid_app_token', 'signed_app_token payload may not contain user_id or org_id.');
  return applicationId.toLowerCase();
}

/**
 * Access tokens are signed with the service's own secret. A token whose signature verifies
 * against it is an access token, whatever its claims; otherwise it is a server token.
 * Returns the session id, or null when the token is not one of ours.
 */
export async function accessTokenSession(
  token: string,
  signingSecret: string,
  now = Date.now(),
): Promise<string | null> {
  const fast = hs512Payload(token, signingSecret);
  const verified =
    fast ??
    (await compactVerify(token, hmacKey(signingSecret), { algorithms: [ALGORITHM] }).then(
      (result) => result.payload,
      () => false as const,
    ));
  if (verified === false) return null;
  // The signature is ours, so this is an access token: a malformed payload makes it an invalid one,
  // never a server token.
  let payload: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(verified));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
  } catch {
    payload = null;
  }
  const sessionId = payload?.session_id;
  if (!payload || typeof sessionId !== 'string' || !isUuid(sessionId))
    throw new ApiError('invalid_access_token', 'Access token has no valid session_id.');
  // The JWT expiry is checked here, separately from the signature.
  if (typeof payload.exp === 'number' && payload.exp * 1000 + TOKEN_CLOCK_TOLERANCE_SECONDS * 1000 < now)
    throw new ApiError('expired_access_token', 'Access token has expired.');
  return sessionId.toLowerCase();
}

export async function signAccessToken(sessionId: string, signingSecret: string, issuedAt: Date): Promise<string> {
  const iat = Math.floor(issuedAt.getTime() / 1000);
  return new SignJWT({ session_id: sessionId })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
    .sign(hmacKey(signingSecret));
}

/** What a client token names (original-extras §4.2): `project_id` wins over `app_id`, `group_id` over `organization_id`. */
export interface ClientTokenClaims {
  applicationId: string;
  userId: string;
  groupId: string | null;
  userDetails?: unknown;
  groupDetails?: unknown;
}

function clientId(value: unknown, claim: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string' || text.length < 1 || text.length > 128)
    throw new ApiError('invalid_session', `${claim} must be a string of 1 to 128 characters or a number.`);
  return text;
}

/** Client-token claims, read from the unverified payload; each failure is `403 invalid_session`. */
export function clientTokenClaims(payload: Record<string, unknown>): ClientTokenClaims {
  const applicationId = payload.project_id ?? payload.app_id;
  if (typeof applicationId !== 'string' || !isUuid(applicationId))
    throw new ApiError('invalid_session', 'Invalid ClientAuthTokenData: the token requires field project_id (a UUID).');
  const userId = clientId(payload.user_id, 'user_id');
  if (userId === undefined) throw new ApiError('invalid_session', 'Invalid ClientAuthTokenData: the token requires field user_id.');
  const groupId = clientId(payload.group_id ?? payload.organization_id, 'group_id') ?? null;
  const groupDetails = payload.group_details ?? payload.organization_details;
  if (groupDetails !== undefined && groupId === null)
    throw new ApiError('invalid_session', 'Specified group_details to create/update a group, but not a group_id to create/update.');
  return { applicationId: applicationId.toLowerCase(), userId, groupId, userDetails: payload.user_details, groupDetails };
}

/**
 * Verifies a client token's signature (HS256 or HS512) with any of the application's accepted
 * secrets; `exp` and `nbf` are honoured when present, with no maximum age (unlike server tokens).
 */
export async function verifyClientToken(token: string, secrets: readonly string[]): Promise<void> {
  let failure: unknown;
  for (const secret of secrets) {
    try {
      await jwtVerify(token, hmacKey(secret), { algorithms: ['HS256', 'HS512'], clockTolerance: TOKEN_CLOCK_TOLERANCE_SECONDS });
      return;
    } catch (error) {
      failure ??= error;
      if ((error as { code?: string }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') break;
    }
  }
  throw new ApiError('invalid_session', `${describeJoseError(failure)}`);
}

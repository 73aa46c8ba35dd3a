/**
 * Client tokens (original-extras §4.2, decision 53): JWTs a customer's backend signs with the
 * application secret for one user, HS256 or HS512, `exp`/`nbf` honoured when present and no
 * maximum age. Every failure is `403 invalid_session`.
 */
import { decodeJwt, jwtVerify } from 'jose';
import { ApiError } from '../errors.js';
import { isUuid } from '../schema/formats.js';
import { hmacKey, TOKEN_CLOCK_TOLERANCE_SECONDS } from './tokens.js';

export interface ClientTokenClaims {
  applicationId: string;
  userId: string;
  groupId: string | null;
}

const session = (text: string) => new ApiError('invalid_session', text);
const LONE_SURROGATE = /\p{Cs}/u;

/** An ID claim: a string of 1–128 characters, or a number (made a string). */
function idClaim(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  // Well-formed: the ID travels percent-encoded to the services, which a lone surrogate cannot be.
  if (typeof value === 'string' && value.length >= 1 && value.length <= 128 && !LONE_SURROGATE.test(value)) return value;
  throw session(`Invalid ClientAuthTokenData: ${name} must be a string of 1 to 128 characters or a number.`);
}

/** The claims of a client token, read before its signature is checked (they name the key). */
export function clientTokenClaims(token: string): ClientTokenClaims {
  let payload: Record<string, unknown>;
  try {
    payload = decodeJwt(token);
  } catch {
    throw session('The client token is not a JWT.');
  }
  // `project_id` wins over `app_id` (the opposite of server tokens).
  const applicationId = payload.project_id ?? payload.app_id;
  if (applicationId === undefined) throw session('Invalid ClientAuthTokenData: requires field: project_id.');
  if (typeof applicationId !== 'string' || !isUuid(applicationId)) throw session('Invalid ClientAuthTokenData: project_id must be a UUID.');
  const userId = idClaim(payload.user_id, 'user_id');
  if (userId === null) throw session('Invalid ClientAuthTokenData: requires field: user_id.');
  const groupId = idClaim(payload.group_id ?? payload.organization_id, 'group_id');
  return { applicationId: applicationId.toLowerCase(), userId, groupId };
}

/** Verifies the signature with any of the application's accepted secrets, and `exp`/`nbf`. */
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
  const code = (failure as { code?: string }).code;
  throw session(
    code === 'ERR_JWT_EXPIRED'
      ? 'The client token has expired.'
      : code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED'
        ? 'The client token is not signed with the application secret.'
        : `The client token is not valid: ${(failure as Error).message}`,
  );
}

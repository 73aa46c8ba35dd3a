/** Tokens as customers' backends build them: HS512, signed with the secret string's bytes. */
import { SignJWT } from 'jose';

const encode = (secret: string) => new TextEncoder().encode(secret);

export async function serverToken(
  applicationId: string,
  secret: string,
  options: { claims?: Record<string, unknown>; iat?: number; exp?: number; alg?: string } = {},
): Promise<string> {
  const iat = options.iat ?? Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ app_id: applicationId, ...options.claims })
    .setProtectedHeader({ alg: options.alg ?? 'HS512', typ: 'JWT' })
    .setIssuedAt(iat);
  if (options.exp !== undefined) jwt.setExpirationTime(options.exp);
  return jwt.sign(encode(secret));
}

export async function customerToken(
  customerId: string,
  secret: string,
  options: { claims?: Record<string, unknown>; iat?: number; exp?: number } = {},
): Promise<string> {
  const iat = options.iat ?? Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ customer_id: customerId, ...options.claims })
    .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
    .setIssuedAt(iat);
  if (options.exp !== undefined) jwt.setExpirationTime(options.exp);
  return jwt.sign(encode(secret));
}

/** A client token as a customer's backend gives its browser: `{project_id, user_id, …}`, HS256 by default. */
export async function clientToken(
  applicationId: string,
  secret: string,
  claims: Record<string, unknown>,
  options: { alg?: string; exp?: number } = {},
): Promise<string> {
  const jwt = new SignJWT({ project_id: applicationId, ...claims }).setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' }).setIssuedAt();
  if (options.exp !== undefined) jwt.setExpirationTime(options.exp);
  return jwt.sign(encode(secret));
}

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

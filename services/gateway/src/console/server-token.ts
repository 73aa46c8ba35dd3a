/** The console's token helper: a short-lived server token of one application, to paste into curl. */
import { hmacKey } from '@collab/shared';
import { SignJWT } from 'jose';

/** Short, since it leaves the server: long enough to try a few calls. */
export const CONSOLE_TOKEN_SECONDS = 15 * 60;

export async function signServerToken(applicationId: string, secret: string, seconds: number) {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ app_id: applicationId })
    .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + seconds)
    .sign(hmacKey(secret));
  return { token, expiresAt: new Date((now + seconds) * 1000).toISOString() };
}

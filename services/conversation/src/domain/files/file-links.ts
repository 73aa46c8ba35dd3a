/** Signed download links for files, valid for an hour and served through the gateway. */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const DOWNLOAD_LINK_TTL_SECONDS = 60 * 60;

function signature(secret: string, fileId: string, expires: number): string {
  return createHmac('sha256', secret).update(`${fileId}.${expires}`).digest('base64url');
}

export function signedFileUrl(baseUrl: string, secret: string, fileId: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + DOWNLOAD_LINK_TTL_SECONDS;
  return `${baseUrl}/v1/files/${fileId}?expires=${expires}&signature=${signature(secret, fileId, expires)}`;
}

export function isValidFileSignature(secret: string, fileId: string, expires: unknown, given: unknown, now = Date.now()): boolean {
  if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof given !== 'string') return false;
  if (Number(expires) * 1000 < now) return false;
  const expected = Buffer.from(signature(secret, fileId, Number(expires)));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

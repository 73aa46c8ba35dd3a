/**
 * Access tokens and test tokens from the command line:
 *   npm run token -- server <application_id> <secret>    prints a server token (1 hour)
 *   npm run token -- customer <customer_id> <secret>     prints an application-management token (1 hour)
 *   npm run token -- revoke <session_id>                 revokes one access token
 *   npm run token -- revoke --application <id>           revokes all access tokens of an application
 * Minted tokens are what @cord-sdk/server's getServerAuthToken / getApplicationManagementAuthToken build.
 */
import { createSecretKey, randomBytes } from 'node:crypto';
import { createLogger, hmacKey, isUuid, runMain } from '@collab/shared';
import { SignJWT } from 'jose';
import { loadIdentityCliConfig } from '../config.js';
import { createIdentityContext } from '../service.js';
import { revokeApplicationSessions, revokeSession } from '../domain/auth/auth.js';

const USAGE = [
  'usage: npm run token -- server <application_id> <secret>',
  '       npm run token -- customer <customer_id> <secret>',
  '       npm run token -- revoke <session_id>',
  '       npm run token -- revoke --application <application_id>',
].join('\n');

function usage(): never {
  console.error(USAGE);
  process.exit(2);
}

async function mint(claim: 'app_id' | 'customer_id', id: string | undefined, secret: string | undefined) {
  if (!id || !isUuid(id) || !secret) usage();
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ [claim]: id })
    .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(hmacKey(secret));
  console.log(token);
}

async function revoke(first: string | undefined, second: string | undefined) {
  const applicationId = first === '--application' ? second : undefined;
  const target = applicationId ?? first;
  if (!target || !isUuid(target)) usage();
  const config = loadIdentityCliConfig(['REDIS_URL', 'REDIS_PREFIX']);
  // Revocation reads the database and publishes to gateways; it signs and decrypts nothing, so
  // its keys are empty or a throwaway one.
  const { ctx, close } = await createIdentityContext(
    { ...config, DB_POOL_SIZE: 1, ACCESS_TOKEN_SECRET: '', SECRET_ROTATION_GRACE_HOURS: 0, SECRETS_ENCRYPTION_KEY: createSecretKey(randomBytes(32)), INTERNAL_TOKEN: '', CUSTOMER_ID: '', CUSTOMER_SECRET: '', PORT: 0, LOG_LEVEL: 'warn', CONVERSATION_URL: '', NOTIFICATION_URL: '', WEBHOOKS_URL: '', MAIL_URL: '', OUTBOUND_ALLOWED_CIDRS: [] },
    createLogger('token-cli', 'warn'),
  );
  try {
    if (applicationId) {
      const count = await revokeApplicationSessions(ctx, applicationId.toLowerCase());
      console.log(`Revoked ${count} access token(s) of application ${applicationId}.`);
    } else {
      const revoked = await revokeSession(ctx, target.toLowerCase());
      console.log(revoked ? `Revoked session ${target}.` : `No active session ${target}.`);
      if (!revoked) process.exitCode = 1;
    }
  } finally {
    await close();
  }
}

runMain('token', async () => {
  const [command, first, second] = process.argv.slice(2);
  if (command === 'server') return mint('app_id', first, second);
  if (command === 'customer') return mint('customer_id', first, second);
  if (command === 'revoke') return revoke(first, second);
  usage();
});

/**
 * The operator's application CLI, working on the database directly (for the customer who lost an
 * application's secret, which no API call can then delete):
 *   npm run app -- list                                      every application of every customer
 *   npm run app -- show <application_id>                     one application (never its secret)
 *   npm run app -- rotate-secret <application_id> [--grace-hours <n>]
 *                                                            a new secret, printed once
 *   npm run app -- end-grace <application_id>                stop accepting the previous secret now
 *   npm run app -- delete <application_id>                   delete it and everything it owns
 * Rotation and deletion take the API's paths: the caches of gateways and the webhooks service are
 * told at once, and a deletion reaches the other services through identity's outbox.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, commonVars, createLogger, isUuid, loadConfig, runMain } from '@collab/shared';
import { identityConfigSpec, loadIdentityCliConfig } from '../config.js';
import { createIdentityContext } from '../service.js';
import { expirePreviousSecret, removeApplication, rotateApplicationSecret } from '../domain/applications/applications.js';
import type { IdentityContext } from '../domain/context.js';
import { prepareStoredSecrets } from '../domain/secrets.js';
import type { ApplicationRow } from '../entities/index.js';
import { applicationsRepository } from '../repositories/applications.repository.js';

const USAGE = [
  'usage: npm run app -- list',
  '       npm run app -- show <application_id>',
  '       npm run app -- rotate-secret <application_id> [--grace-hours <n>]',
  '       npm run app -- end-grace <application_id>',
  '       npm run app -- delete <application_id>',
].join('\n');

function usage(): never {
  console.error(USAGE);
  process.exit(2);
}

/** Exit code 1 with a message: the command was understood but cannot be done. */
function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** Where a previous secret stands, in words. */
function previousSecretState(application: ApplicationRow, now = new Date()): string {
  const expiresAt = application.previousSecretExpiresAt;
  if (!expiresAt) return 'none';
  return expiresAt > now ? `accepted until ${expiresAt.toISOString()}` : `expired at ${expiresAt.toISOString()}`;
}

async function findApplication(ctx: IdentityContext, id: string): Promise<ApplicationRow> {
  const application = await applicationsRepository.findById(ctx.db, id.toLowerCase());
  if (!application) fail(`No application ${id}.`);
  return application;
}

function list(applications: ApplicationRow[]): void {
  if (applications.length === 0) {
    console.log('No applications.');
    return;
  }
  console.log(['APPLICATION_ID', 'CUSTOMER_ID', 'CREATED', 'NAME'].join('\t'));
  for (const application of applications)
    console.log([application.id, application.customerId, application.createdAt.toISOString(), application.name].join('\t'));
}

function show(application: ApplicationRow): void {
  const fields: [string, unknown][] = [
    ['id', application.id],
    ['name', application.name],
    ['customer', application.customerId],
    ['created', application.createdAt.toISOString()],
    ['iconURL', application.iconUrl],
    ['eventWebhookURL', application.eventWebhookUrl],
    ['eventWebhookSubscriptions', application.eventWebhookSubscriptions?.join(', ') ?? null],
    ['redirectURI', application.redirectUri],
    ['previous secret', previousSecretState(application)],
  ];
  for (const [name, value] of fields) console.log(`${name}: ${value ?? '-'}`);
}

/** `--grace-hours <n>` after the id, else the configured SECRET_ROTATION_GRACE_HOURS. */
function graceHoursOption(args: string[]): number | undefined {
  if (args.length === 0) return undefined;
  if (args.length !== 2 || args[0] !== '--grace-hours' || !/^\d+$/.test(args[1])) usage();
  return Number(args[1]);
}

// Over 80 lines: the CLI's settings and identity's wiring, then one short case per command.
runMain('app', async () => {
  const [command, id, ...options] = process.argv.slice(2);
  if (!['list', 'show', 'rotate-secret', 'end-grace', 'delete'].includes(command ?? '')) usage();
  if (command === 'list' ? id !== undefined : command !== 'rotate-secret' && options.length > 0) usage();
  if (command !== 'list') {
    if (id === undefined) usage();
    // Said as it is: the command was right, the ID is not one an application can have.
    if (!isUuid(id)) {
      console.error(`The application ID must be a UUID, not ${JSON.stringify(id)}.`);
      process.exit(2);
    }
  }
  const graceHours = command === 'rotate-secret' ? graceHoursOption(options) : undefined;

  const config = loadIdentityCliConfig(['REDIS_URL', 'REDIS_PREFIX', 'SECRETS_ENCRYPTION_KEY', 'SECRET_ROTATION_GRACE_HOURS']);
  // A deletion is carried into the other services with identity's credential to them.
  const cascade =
    command === 'delete'
      ? loadConfig({
          INTERNAL_TOKEN: commonVars.INTERNAL_TOKEN,
          CONVERSATION_URL: identityConfigSpec.CONVERSATION_URL,
          NOTIFICATION_URL: identityConfigSpec.NOTIFICATION_URL,
          WEBHOOKS_URL: identityConfigSpec.WEBHOOKS_URL,
          MAIL_URL: identityConfigSpec.MAIL_URL,
        })
      : { INTERNAL_TOKEN: '', CONVERSATION_URL: '', NOTIFICATION_URL: '', WEBHOOKS_URL: '', MAIL_URL: '' };
  const logger = createLogger('app-cli', 'warn');
  const { ctx, close } = await createIdentityContext(
    {
      ...config,
      ...cascade,
      DB_POOL_SIZE: 1,
      LOG_LEVEL: 'warn',
      PORT: 0,
      // The CLI signs no access token, calls no customer URL and provisions no customer.
      ACCESS_TOKEN_SECRET: '',
      CUSTOMER_ID: '',
      CUSTOMER_SECRET: '',
      OUTBOUND_ALLOWED_CIDRS: [],
    },
    logger,
  );
  try {
    // The same key as identity's, or nothing is written: a secret sealed with another key would not open.
    await prepareStoredSecrets(ctx);
    if (command === 'list') return list(await applicationsRepository.listAll(ctx.db));
    const application = await findApplication(ctx, id!);
    switch (command) {
      case 'show':
        return show(application);
      case 'rotate-secret': {
        const rotated = await rotateApplicationSecret(ctx, application.customerId, application.id, graceHours);
        console.log(`APPLICATION_ID=${rotated.id}\nAPPLICATION_SECRET=${rotated.secret}`);
        console.error(
          rotated.previousSecretExpiresAt
            ? `Server tokens signed with the previous secret keep working until ${rotated.previousSecretExpiresAt.toISOString()}.`
            : 'Server tokens signed with the previous secret no longer work.',
        );
        return;
      }
      case 'end-grace': {
        if (!(await expirePreviousSecret(ctx, application.customerId, application.id)))
          fail(`Application ${application.id} has no previous secret still accepted.`);
        console.log(`Server tokens signed with the previous secret of application ${application.id} no longer work.`);
        return;
      }
      case 'delete': {
        try {
          await removeApplication(ctx, application, randomUUID());
        } catch (error) {
          // Deleted in identity (no token of it verifies); a service that could not be reached
          // now is reached by the identity worker's relay, which retries until it is.
          if (!(error instanceof ApiError && error.code === 'service_unavailable')) throw error;
          console.log(`Deleted application ${application.id}.`);
          console.error('Not every service could be reached: the identity worker purges the rest of its data once they are.');
          return;
        }
        console.log(`Deleted application ${application.id}; every service has stopped serving its data and purges it.`);
        return;
      }
    }
  } finally {
    await close();
  }
});

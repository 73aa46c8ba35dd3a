/** The mail service's dependencies and app, wired once for the API process, the worker and tests. */
import { conversationDirectory, conversationInternal, createInternalClient, identityInternal, identityMailContext, type Logger, type Producer } from '@collab/shared';
import { openServiceStores } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { createMailApp } from './app.js';
import type { MailConfig, MailWorkerConfig } from './config.js';
import { createMailDataSource } from './data-source.js';
import type { MailServiceContext } from './domain/context.js';
import { createMailTransport } from './domain/mails/transport.js';
import { internalRoutes } from './http/internal.routes.js';

/**
 * The context of the mail use cases: identity and conversation over internal HTTP, and for the
 * worker, which sends, SMTP through nodemailer (the API's transport never sends).
 */
export function mailContext(config: MailConfig | MailWorkerConfig, db: DataSource, queue: Producer<'mail-send'>, logger: Logger): MailServiceContext {
  const sending = 'SMTP_URL' in config ? config : { SMTP_URL: '', MAIL_FROM: '', EMAIL_DOMAIN: '', PUBLIC_URL: '', INBOUND_EMAIL_USERNAME: '' };
  const identity = createInternalClient({ baseUrl: config.IDENTITY_URL, internalToken: config.INTERNAL_TOKEN, service: 'identity', timeoutMs: 5000 });
  const conversation = createInternalClient({ baseUrl: config.CONVERSATION_URL, internalToken: config.INTERNAL_TOKEN, service: 'conversation', timeoutMs: 10_000 });
  return {
    db,
    logger,
    queue,
    conversation: conversationDirectory(conversation),
    async applicationSecret(applicationId, requestId) {
      const contract = identityInternal.applicationCredentials;
      return contract.response.parse(await identity.call(contract.method, contract.path(applicationId), { requestId })).secret;
    },
    async unsubscribeInApp(applicationId, threadRef, userId, requestId) {
      const contract = conversationInternal.unsubscribe;
      contract.response.parse(await conversation.call(contract.method, contract.path, { applicationId, requestId, body: contract.request.parse({ threadRef, userId }) }));
    },
    async postReply(applicationId, reply, linkBase, requestId) {
      const contract = conversationInternal.postReply;
      const body = contract.request.parse({ ...reply, linkBase });
      return contract.response.parse(await conversation.call(contract.method, contract.path, { applicationId, requestId, body })).messageID;
    },
    async mailContext(applicationId, userIds, groupId, requestId) {
      try {
        const body = identityMailContext.request.parse({ userIds: [...new Set(userIds)], groupId });
        return identityMailContext.response.parse(await identity.call(identityMailContext.method, identityMailContext.path, { applicationId, requestId, body }));
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return null;
        throw error;
      }
    },
    transport: createMailTransport(sending.SMTP_URL, logger),
    settings: {
      delaySeconds: config.EMAIL_DELAY_SECONDS,
      mailFrom: sending.MAIL_FROM,
      emailDomain: sending.EMAIL_DOMAIN,
      publicUrl: sending.PUBLIC_URL,
      inboundEmail: sending.INBOUND_EMAIL_USERNAME !== '',
    },
  };
}

export async function createMailService(config: MailConfig, logger: Logger, isDraining?: () => boolean) {
  const stores = await openServiceStores({ dataSource: createMailDataSource(config.DATABASE_URL, config.DB_POOL_SIZE), config, logger });
  const ctx = mailContext(config, stores.db, stores.producer('mail-send'), logger);
  const app = createMailApp(ctx, { logger, internalToken: config.INTERNAL_TOKEN, isDraining, readiness: stores.readiness, internal: internalRoutes(ctx) });
  return {
    app,
    ctx,
    async close() {
      ctx.transport.close();
      await stores.close();
    },
  };
}

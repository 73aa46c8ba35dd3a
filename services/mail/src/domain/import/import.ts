/**
 * This service's part of importing a customer dump: the threads users unsubscribed from by mail
 * (the original's email_subscription rows with subscribed false), so that they stay unsubscribed.
 */
import type { ImportHandlers } from '@collab/shared';
import { mailsRepository } from '../../repositories/mails.repository.js';
import type { MailServiceContext } from '../context.js';

export function importHandlers(ctx: Pick<MailServiceContext, 'db'>): ImportHandlers {
  return {
    threadOptOuts: async (applicationId, rows) => ({ inserted: await mailsRepository.importOptOuts(ctx.db, applicationId, rows) }),
  };
}

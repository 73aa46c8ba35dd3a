/** The mail service's internal API (contract in @collab/shared `mailInternal`) and its side of the deletion cascade. */
import {
  cascadeRoute,
  drainBatches,
  exportRoutes,
  importRoutes,
  internalApplicationOf,
  internalRoute,
  mailInternal,
  MAX_INTERNAL_BODY_BYTES,
  type InternalRoute,
} from '@collab/shared';
import type { MailServiceContext } from '../domain/context.js';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';
import { recordMails } from '../domain/mails/record-mails.js';
import { mailsRepository } from '../repositories/mails.repository.js';

const DELETE_BATCH = 1000;

export function internalRoutes(ctx: MailServiceContext): InternalRoute[] {
  return [
    internalRoute('POST', mailInternal.recordNotifications.path, MAX_INTERNAL_BODY_BYTES, async (req) => {
      const { notifications } = mailInternal.recordNotifications.request.parse(req.body);
      return { recorded: await recordMails(ctx, internalApplicationOf(req), notifications) };
    }),
    // Its part of a customer dump's import and export (the threads users unsubscribed from by mail).
    ...importRoutes(importHandlers(ctx)),
    ...exportRoutes(exportHandlers(ctx)),
    // A deleted application's or user's mails and opt-outs go with it; a group's threads go with the
    // conversation service, and a mail of one is then skipped when it is due.
    cascadeRoute(async (applicationId, target) => {
      if (target.kind === 'application') await drainBatches(() => mailsRepository.deleteApplication(ctx.db, applicationId, DELETE_BATCH));
      if (target.kind === 'user') await drainBatches(() => mailsRepository.deleteUser(ctx.db, applicationId, target.id, DELETE_BATCH));
    }),
  ];
}

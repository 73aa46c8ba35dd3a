/** The mail service's internal API (contract in @collab/shared `mailInternal`) and its side of the deletion cascade. */
import { ApiError, cascadeRouter, drainBatches, exportRouter, importRouter, mailInternal, MAX_INTERNAL_BODY_BYTES } from '@collab/shared';
import express, { type Router } from 'express';
import type { MailServiceContext } from '../domain/context.js';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';
import { recordMails } from '../domain/mails/record-mails.js';
import { mailsRepository } from '../repositories/mails.repository.js';

const DELETE_BATCH = 1000;

export function internalRouter(ctx: MailServiceContext): Router {
  const router = express.Router();
  router.post(mailInternal.recordNotifications.path.replace('/internal', ''), express.json({ limit: MAX_INTERNAL_BODY_BYTES }), async (req, res) => {
    const applicationId = req.ctx.applicationId;
    if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
    const { notifications } = mailInternal.recordNotifications.request.parse(req.body);
    res.json({ recorded: await recordMails(ctx, applicationId, notifications) });
  });
  // Its part of a customer dump's import and export (the threads users unsubscribed from by mail).
  router.use(importRouter(importHandlers(ctx)));
  router.use(exportRouter(exportHandlers(ctx)));
  // A deleted application's or user's mails and opt-outs go with it; a group's threads go with the
  // conversation service, and a mail of one is then skipped when it is due.
  router.use(
    cascadeRouter(async (applicationId, target) => {
      if (target.kind === 'application') await drainBatches(() => mailsRepository.deleteApplication(ctx.db, applicationId, DELETE_BATCH));
      if (target.kind === 'user') await drainBatches(() => mailsRepository.deleteUser(ctx.db, applicationId, target.id, DELETE_BATCH));
    }),
  );
  return router;
}

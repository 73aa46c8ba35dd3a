/** This service's part of exporting a customer dump: each opt-out as the original's email_subscription row. */
import { exportIds, type ExportHandlers, type ExportRow } from '@collab/shared';
import { mailsRepository } from '../../repositories/mails.repository.js';
import type { MailServiceContext } from '../context.js';

export function exportHandlers(ctx: Pick<MailServiceContext, 'db'>): ExportHandlers {
  return {
    email_subscription: async (app, { after, limit }) => {
      const rows = await mailsRepository.optOutsPage(ctx.db, app, after === null ? null : (JSON.parse(after) as [string, string]), limit);
      const last = rows.at(-1);
      return {
        rows: rows.map(
          (row): ExportRow<'email_subscription'> => ({ userID: exportIds.user(app, row.userId), threadID: exportIds.thread(app, row.threadRef), subscribed: 'f' }),
        ),
        next: rows.length === limit && last ? JSON.stringify([last.threadRef, last.userId]) : null,
      };
    },
  };
}

/** This service's part of exporting a customer dump: the application's registered webhooks, with their ids. */
import { formatTextArray, type ExportHandlers, type ExportRow } from '@collab/shared';
import type { WebhooksContext } from '../context.js';
import { exportRepository } from '../../repositories/export.repository.js';

export function exportHandlers(ctx: Pick<WebhooksContext, 'db'>): ExportHandlers {
  return {
    application_webhooks: async (app, { after, limit }) => {
      const rows = await exportRepository.registrations(ctx.db, app, after, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'application_webhooks'> => ({ id: row.id, platformApplicationID: app, eventWebhookURL: row.url, eventWebhookSubscriptions: formatTextArray(row.events) }),
        ),
        next: rows.length === limit ? rows[rows.length - 1].id : null,
      };
    },
  };
}

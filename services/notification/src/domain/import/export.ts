/**
 * This service's part of exporting a customer dump: notifications of every kind with their read
 * state, in the original's columns. Messages, threads and reactions are named by the UUIDs the
 * conversation service's export gives them (exportIds, from the same references).
 */
import { derivedUuid, exportIds, formatTextArray, formatTimestamp, type ExportHandlers, type ExportRow } from '@collab/shared';
import { exportRepository } from '../../repositories/export.repository.js';
import type { NotificationContext } from '../context.js';

const CORD_ID = /^cord:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function exportHandlers(ctx: Pick<NotificationContext, 'db'>): ExportHandlers {
  return {
    notifications: async (app, { after, limit }) => {
      const rows = await exportRepository.notifications(ctx.db, app, after, limit);
      return {
        rows: rows.map((row): ExportRow<'notifications'> => {
          const message = row.messageRef ? exportIds.message(app, row.messageRef) : null;
          return {
            // The original's notification ids are `cord:<id>`, as this server's are.
            id: CORD_ID.exec(row.externalId)?.[1] ?? derivedUuid(app, 'notification', row.externalId),
            recipientID: exportIds.user(app, row.recipientId),
            senderID: exportIds.user(app, row.actorId),
            type: row.kind,
            aggregationKey: row.kind === 'reaction' ? message : null,
            readStatus: row.readStatus,
            createdTimestamp: formatTimestamp(row.createdAt),
            messageID: message,
            reactionID: row.kind === 'reaction' && row.messageRef && row.reaction ? exportIds.reaction(app, row.messageRef, row.actorId, row.reaction) : null,
            externalTemplate: row.template,
            externalURL: row.url,
            replyActions: formatTextArray(row.replyActions),
            metadata: row.metadata,
            iconUrl: row.iconUrl,
            platformApplicationID: app,
            externalID: row.externalId,
            extraClassnames: row.extraClassnames,
            threadActionType: row.threadActionType,
            threadID: row.threadRef ? exportIds.thread(app, row.threadRef) : null,
          };
        }),
        next: rows.length === limit ? rows[rows.length - 1].internalId : null,
      };
    },
  };
}

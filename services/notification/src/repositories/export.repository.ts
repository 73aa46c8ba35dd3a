/** The SQL of exporting this service's part of a customer dump: a page of an application's notifications. */
import { rows, type Queryable } from '@collab/shared';
import type { NotificationRow } from '../entities/index.js';
import { notificationsTable as n } from './tables.js';

/** A dumped notification: its key and metadata as text, as the dump writes them. */
export type ExportedNotification = Omit<NotificationRow, 'internalId' | 'applicationId' | 'aggregationKey' | 'sourceId' | 'metadata' | 'purgingAt'> & {
  internalId: string;
  metadata: string;
};

export const exportRepository = {
  async notifications(db: Queryable, applicationId: string, after: string | null, limit: number): Promise<ExportedNotification[]> {
    return rows<ExportedNotification>(
      db,
      `SELECT ${n.text('internalId')}, ${n.pick('externalId', 'kind', 'recipientId', 'actorId', 'template', 'url', 'messageRef', 'threadRef')},
         ${n.pick('replyActions', 'threadActionType', 'reaction', 'iconUrl', 'extraClassnames')}, ${n.text('metadata')},
         ${n.pick('readStatus', 'createdAt')}
       FROM notification.notifications n WHERE n.application_id = $1 AND n.purging_at IS NULL AND n.internal_id > $2 ORDER BY n.internal_id LIMIT $3`,
      [applicationId, after ?? '0', limit],
    );
  },
};

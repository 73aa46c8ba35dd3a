/** The SQL of exporting this service's part of a customer dump: a page of an application's notifications. */
import type { Queryable as Db } from '@collab/shared';

export const exportRepository = {
  async notifications(db: Db, applicationId: string, after: string | null, limit: number) {
    return (await db.query(
      `SELECT internal_id::text AS "internalId", external_id AS "externalId", kind, recipient_id AS "recipientId", actor_id AS "actorId", template, url,
         message_ref AS "messageRef", thread_ref AS "threadRef", reply_actions AS "replyActions", thread_action_type AS "threadActionType", reaction,
         icon_url AS "iconUrl", extra_classnames AS "extraClassnames", metadata::text AS metadata, read_status AS "readStatus", created_at AS "createdAt"
       FROM notification.notifications WHERE application_id = $1 AND purging_at IS NULL AND internal_id > $2 ORDER BY internal_id LIMIT $3`,
      [applicationId, after ?? '0', limit],
    )) as {
      internalId: string;
      externalId: string;
      kind: string;
      recipientId: string;
      actorId: string;
      template: string | null;
      url: string | null;
      messageRef: string | null;
      threadRef: string | null;
      replyActions: string[] | null;
      threadActionType: string | null;
      reaction: string | null;
      iconUrl: string | null;
      extraClassnames: string | null;
      metadata: string;
      readStatus: string;
      createdAt: Date;
    }[];
  },
};

/**
 * The SQL of importing a customer dump's notifications. The dump's own notification id becomes
 * the row's source, so that a notification is imported once however often the import runs.
 */
import { countAffected, type ImportedRow, type Queryable } from '@collab/shared';

export const importRepository = {
  async notifications(db: Queryable, applicationId: string, batch: ImportedRow<'notifications'>[], overwrite: boolean): Promise<number> {
    const set = `kind = EXCLUDED.kind, recipient_id = EXCLUDED.recipient_id, actor_id = EXCLUDED.actor_id, template = EXCLUDED.template,
      url = EXCLUDED.url, icon_url = EXCLUDED.icon_url, extra_classnames = EXCLUDED.extra_classnames, metadata = EXCLUDED.metadata,
      read_status = EXCLUDED.read_status, created_at = EXCLUDED.created_at, message_ref = EXCLUDED.message_ref, thread_ref = EXCLUDED.thread_ref,
      reply_actions = EXCLUDED.reply_actions, thread_action_type = EXCLUDED.thread_action_type, reaction = EXCLUDED.reaction,
      aggregation_key = EXCLUDED.aggregation_key, source_id = EXCLUDED.source_id`;
    const inserted = await countAffected(
      db,
      `INSERT INTO notification.notifications (application_id, external_id, source_id, kind, recipient_id, actor_id, template, url, icon_url,
         extra_classnames, metadata, read_status, created_at, message_ref, thread_ref, reply_actions, thread_action_type, reaction, aggregation_key)
       SELECT $1, r.id, r."originalId", r.kind, r."recipientID", r."actorID", r.template, r.url, r."iconUrl", r."extraClassnames",
         COALESCE(r.metadata, '{}'), r."readStatus", r."createdTimestamp", r."messageRef", r."threadRef", r."replyActions", r."threadActionType",
         r.reaction, r."aggregationKey"
       FROM ROWS FROM (jsonb_to_recordset($2::jsonb) AS (id text, "originalId" uuid, kind text, "recipientID" text, "actorID" text, template text,
         url text, "iconUrl" text, "extraClassnames" text, metadata jsonb, "readStatus" text, "createdTimestamp" timestamptz, "messageRef" text,
         "threadRef" text, "replyActions" jsonb, "threadActionType" text, reaction text, "aggregationKey" text)) WITH ORDINALITY AS r
       ORDER BY r.ordinality
       ${overwrite ? `ON CONFLICT (application_id, external_id) DO UPDATE SET ${set}` : 'ON CONFLICT DO NOTHING'}`,
      [applicationId, JSON.stringify(batch)],
    );
    return inserted;
  },
};

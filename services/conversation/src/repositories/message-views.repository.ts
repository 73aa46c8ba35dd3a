/**
 * The message object of the API as PostgreSQL writes it: one statement for a page of messages
 * with their reactions, link previews, attachments and readers, answered as JSON text in parts
 * that the domain joins (message-views.ts) without parsing them again. Messages are found within
 * their application (MessageRef, ThreadRef).
 */
import { isoTimestamp, messageView, rows, type Queryable } from '@collab/shared';
import type { FileRow, MessageRef, MessageRow, ThreadRef } from '../entities/index.js';
import { messagesTable } from './tables.js';

/** Which messages, in which order: `internal_id` and `ord` of each (the statement's $1 is the application). */
type Picked = string;

/**
 * The keys of the message answer that are a column of messages under the same name and that the
 * statement does not write itself: answered as their column stores them, so that a column added
 * with a key of its name in the answer's schema (`messageView`) is answered without an edit here.
 */
const WRITTEN_KEYS = new Set(['content', 'url', 'type', 'metadata', 'extraClassnames', 'skipLinkPreviews']);
const STORED_KEYS = Object.keys(messageView.shape).filter(
  (key) => Object.hasOwn(messagesTable.columns, key) && !WRITTEN_KEYS.has(key),
) as (keyof MessageRow & string)[];
const storedFields = STORED_KEYS.map((key) => `, '${key}', m.${messagesTable.columns[key].column}`).join('');

/**
 * A message's answer in four parts, in the answer's key order: `head` (id … content) and
 * `middle` (url … skipLinkPreviews) before and after `plaintext`, which Node computes from the
 * content; `previews` (the link-preview attachments, after the files) and `tail` (reactions,
 * seenBy). `files` is null unless the message has files: their links are signed in Node.
 * A reader has seen a message when they read the thread at or after its last change, both to the
 * millisecond as the answer shows them.
 */
const viewsOf = (picked: Picked) => `WITH picked AS (${picked})
  SELECT
    json_build_object('id', m.external_id, 'authorID', m.author_id, 'organizationID', t.group_id, 'groupID', t.group_id,
      'threadID', t.external_id, 'content', m.content)::text AS head,
    m.content,
    json_build_object('url', coalesce(m.url, t.url), 'createdTimestamp', ${isoTimestamp('m.created_at')},
      'updatedTimestamp', ${isoTimestamp('m.updated_at')}, 'deletedTimestamp', ${isoTimestamp('m.deleted_at')},
      'type', m.type, 'iconURL', m.icon_url, 'translationKey', m.translation_key, 'metadata', m.metadata,
      'extraClassnames', m.extra_classnames, 'skipLinkPreviews', m.skip_link_previews)::text AS middle,
    (SELECT json_agg(json_build_object('id', f.id, 'name', f.name, 'mimeType', f.mime_type, 'size', f.size, 'uploadStatus', f.upload_status) ORDER BY a.seq)
     FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
     WHERE a.message_id = m.internal_id AND f.purging_at IS NULL) AS files,
    (SELECT coalesce(json_agg(json_build_object('type', 'link_preview', 'id', lp.id, 'url', lp.url, 'imageURL', lp.image_url,
       'title', lp.title, 'description', lp.description) ORDER BY lp.seq), '[]')
     FROM conversation.message_link_previews lp WHERE lp.message_id = m.internal_id AND NOT lp.hidden)::text AS previews,
    json_build_object(
      'reactions', (SELECT coalesce(json_agg(json_build_object('reaction', r.reaction, 'userID', r.user_id, 'timestamp', ${isoTimestamp('r.reacted_at')})
         ORDER BY r.reacted_at, r.user_id, r.reaction), '[]')
       FROM conversation.message_reactions r WHERE r.message_id = m.internal_id),
      'seenBy', (SELECT coalesce(json_agg(p.user_id ORDER BY p.seq), '[]') FROM conversation.thread_participants p
       WHERE p.thread_id = m.thread_id
         AND date_trunc('milliseconds', p.last_seen_at) >= date_trunc('milliseconds', coalesce(m.updated_at, m.created_at)))${storedFields}
    )::text AS tail
  FROM picked JOIN conversation.messages m ON m.internal_id = picked.internal_id JOIN conversation.threads t ON t.internal_id = m.thread_id
  WHERE m.application_id = $1
  ORDER BY picked.ord`;

/**
 * The repository's statements that the bench's raw-SQL baselines issue too, exported so that
 * they issue the very same text.
 */
export const messageViewsStatements = {
  /** The messages $2, in that order. */
  ofMessages: viewsOf(`SELECT r.internal_id, r.ord FROM unnest($2::bigint[]) WITH ORDINALITY AS r(internal_id, ord)`),
  /** The messages of thread $2, oldest or newest first. */
  inThread: (direction: 'ascending' | 'descending') => {
    const order = direction === 'ascending' ? 'ASC' : 'DESC';
    return viewsOf(`SELECT m.internal_id, row_number() OVER (ORDER BY m.created_at ${order}, m.internal_id ${order}) AS ord
      FROM conversation.messages m WHERE m.application_id = $1 AND m.thread_id = $2 AND m.purging_at IS NULL`);
  },
};

/** A message's answer as the statement writes it (see viewsOf). */
export interface MessageViewParts {
  head: string;
  content: unknown[];
  middle: string;
  files: (Pick<FileRow, 'id' | 'name' | 'mimeType' | 'uploadStatus'> & { size: number })[] | null;
  previews: string;
  tail: string;
}

export const messageViewsRepository = {
  /** The answers of these messages, in this order (each once). */
  async ofMessages(db: Queryable, applicationId: string, messages: readonly MessageRef[]): Promise<MessageViewParts[]> {
    if (messages.length === 0) return [];
    return rows<MessageViewParts>(db, messageViewsStatements.ofMessages, [applicationId, messages]);
  },

  /** The answers of a thread's messages, oldest or newest first. */
  async inThread(db: Queryable, applicationId: string, thread: ThreadRef, direction: 'ascending' | 'descending'): Promise<MessageViewParts[]> {
    return rows<MessageViewParts>(db, messageViewsStatements.inThread(direction), [applicationId, thread]);
  },
};

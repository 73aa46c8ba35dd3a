/** All SQL about link previews. A message's previews are reached through its (tenant-checked) message. */
import { rows, type Queryable } from '@collab/shared';
import { randomUUID } from 'node:crypto';
import type { LinkPreviewRow, MessageRef, MessageRow } from '../entities/index.js';
import { messagesTable, previewsTable } from './tables.js';


/** What decides a message's previews, and the message's reference for the queries on them. */
export interface PreviewSource {
  ref: MessageRef;
  content: unknown;
  skipLinkPreviews: boolean;
  type: string;
}

export interface NewLinkPreview {
  url: string;
  title: string;
  description: string | null;
  imageUrl: string | null;
}

export const linkPreviewsRepository = {
  /**
   * The message's content and flags, or null when it is gone (deleted, or being purged). `lock`
   * (inside a transaction) holds the row until the end of it, so that an update of the message waits.
   */
  async source(db: Queryable, applicationId: string, internalId: string, lock = false): Promise<PreviewSource | null> {
    const [message] = await rows<Pick<MessageRow, 'internalId' | 'content' | 'skipLinkPreviews' | 'type'>>(
      db,
      `SELECT ${messagesTable.pick('internalId', 'content', 'skipLinkPreviews', 'type')} FROM conversation.messages m
       WHERE m.application_id = $1 AND m.internal_id = $2 AND m.purging_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [applicationId, internalId],
    );
    return message ? { ref: message.internalId, content: message.content, skipLinkPreviews: message.skipLinkPreviews, type: message.type } : null;
  },

  /** The URLs the message has a preview for, hidden ones included. */
  async urlsOf(db: Queryable, message: MessageRef): Promise<Set<string>> {
    const previews = await rows<Pick<LinkPreviewRow, 'url'>>(db, `SELECT ${previewsTable.pick('url')} FROM conversation.message_link_previews lp WHERE lp.message_id = $1`, [
      message,
    ]);
    return new Set(previews.map((preview) => preview.url));
  },

  /** Deletes the message's previews, hidden or not, of every URL but these. */
  async keepOnly(db: Queryable, message: MessageRef, urls: readonly string[]): Promise<void> {
    await db.query(`DELETE FROM conversation.message_link_previews WHERE message_id = $1 AND url <> ALL($2::text[])`, [message, [...urls]]);
  },

  /** Stores previews in the order given; a URL that has one already keeps it (and whether it is hidden). */
  async insert(db: Queryable, message: MessageRef, previews: readonly NewLinkPreview[]): Promise<void> {
    if (previews.length === 0) return;
    await db.query(
      `INSERT INTO conversation.message_link_previews (id, message_id, url, title, description, image_url)
       SELECT id, $1, url, title, description, image_url
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS p(id, url, title, description, image_url, position)
       ORDER BY position
       ON CONFLICT (message_id, url) DO NOTHING`,
      [
        message,
        previews.map(() => randomUUID()),
        previews.map((preview) => preview.url),
        previews.map((preview) => preview.title),
        previews.map((preview) => preview.description),
        previews.map((preview) => preview.imageUrl),
      ],
    );
  },

  /** Hides these previews of the message (they stay stored, so the URL gets no new preview). */
  async hide(db: Queryable, message: MessageRef, previewIds: readonly string[]): Promise<void> {
    if (previewIds.length === 0) return;
    await db.query(`UPDATE conversation.message_link_previews SET hidden = true WHERE message_id = $1 AND id::text = ANY($2::text[])`, [
      message,
      [...previewIds],
    ]);
  },
};

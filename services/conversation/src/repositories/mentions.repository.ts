/** A message's mentions, reached only through a message found within its application (a MessageRef). */
import { rows, type Queryable } from '@collab/shared';
import type { MentionRow, MessageRef } from '../entities/index.js';
import { mentionsTable } from './tables.js';


export const mentionsRepository = {
  /** Makes these users the message's mentions; returns those it did not mention before. */
  async replace(db: Queryable, message: MessageRef, userIds: readonly string[]): Promise<string[]> {
    await db.query(`DELETE FROM conversation.message_mentions WHERE message_id = $1 AND NOT (user_id = ANY($2::text[]))`, [
      message,
      [...userIds],
    ]);
    return mentionsRepository.add(db, message, userIds);
  },

  /** Adds mentions; returns the users that were not mentioned yet. */
  async add(db: Queryable, message: MessageRef, userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const added = await rows<Pick<MentionRow, 'userId'>>(
      db,
      `INSERT INTO conversation.message_mentions AS mm (message_id, user_id) SELECT $1, unnest($2::text[])
       ON CONFLICT DO NOTHING RETURNING ${mentionsTable.pick('userId')}`,
      [message, [...new Set(userIds)]],
    );
    return added.map((row) => row.userId);
  },
};

/** A message's mentions, reached only through a message found within its application (a MessageRef). */
import type { Queryable } from '@collab/shared';
import type { MessageRef } from '../entities/index.js';

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
    const rows: { userId: string }[] = await db.query(
      `INSERT INTO conversation.message_mentions (message_id, user_id) SELECT $1, unnest($2::text[])
       ON CONFLICT DO NOTHING RETURNING user_id AS "userId"`,
      [message, [...new Set(userIds)]],
    );
    return rows.map((row) => row.userId);
  },
};

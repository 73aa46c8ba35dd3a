/**
 * A message's reactions. Reached only through a message found within its application (a
 * MessageRef), so no query here needs the application id.
 */
import { rows, type Queryable } from '@collab/shared';
import type { MessageRef, ReactionRow } from '../entities/index.js';
import { reactionsTable } from './tables.js';


export const reactionsRepository = {
  /** The reactions a message has now. */
  async of(db: Queryable, message: MessageRef): Promise<Pick<ReactionRow, 'userId' | 'reaction'>[]> {
    return rows<Pick<ReactionRow, 'userId' | 'reaction'>>(db, `SELECT ${reactionsTable.pick('userId', 'reaction')} FROM conversation.message_reactions r WHERE r.message_id = $1`, [message]);
  },

  /** The reactions of these messages, oldest first (ties by user, then reaction). */
  async ofMessages(db: Queryable, messages: readonly MessageRef[]): Promise<Pick<ReactionRow, 'messageRef' | 'userId' | 'reaction'>[]> {
    if (messages.length === 0) return [];
    return rows<Pick<ReactionRow, 'messageRef' | 'userId' | 'reaction'>>(
      db,
      `SELECT ${reactionsTable.pick('messageRef', 'userId', 'reaction')} FROM conversation.message_reactions r
       WHERE r.message_id = ANY($1::bigint[]) ORDER BY r.reacted_at, r.user_id, r.reaction`,
      [[...new Set(messages)]],
    );
  },

  /** Adds reactions; an existing one keeps its time unless a timestamp was given. */
  async add(
    db: Queryable,
    message: MessageRef,
    reactions: readonly { userId: string; reaction: string; at: Date; explicitTime: boolean }[],
  ): Promise<void> {
    // As if added one by one: a reaction named twice ends with its last given timestamp, if any.
    const byKey = new Map<string, (typeof reactions)[number]>();
    for (const item of reactions) {
      const key = `${item.userId}\u0000${item.reaction}`;
      if (item.explicitTime || !byKey.get(key)?.explicitTime) byKey.set(key, item);
    }
    const unique = [...byKey.values()];
    for (const explicitTime of [true, false]) {
      const items = unique.filter((item) => item.explicitTime === explicitTime);
      if (items.length === 0) continue;
      await db.query(
        `INSERT INTO conversation.message_reactions (message_id, user_id, reaction, reacted_at)
         SELECT $1, r.user_id, r.reaction, r.reacted_at FROM unnest($2::text[], $3::text[], $4::timestamptz[]) AS r(user_id, reaction, reacted_at)
         ON CONFLICT (message_id, user_id, reaction) DO ${explicitTime ? 'UPDATE SET reacted_at = EXCLUDED.reacted_at' : 'NOTHING'}`,
        [message, items.map((item) => item.userId), items.map((item) => item.reaction), items.map((item) => item.at)],
      );
    }
  },

  async remove(db: Queryable, message: MessageRef, reactions: readonly { userId: string; reaction: string }[]): Promise<void> {
    if (reactions.length === 0) return;
    await db.query(
      `DELETE FROM conversation.message_reactions r USING unnest($2::text[], $3::text[]) AS x(user_id, reaction)
       WHERE r.message_id = $1 AND r.user_id = x.user_id AND r.reaction = x.reaction`,
      [message, reactions.map((item) => item.userId), reactions.map((item) => item.reaction)],
    );
  },
};

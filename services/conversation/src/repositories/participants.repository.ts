/**
 * Participant records: one per (thread, user), with last-seen time and subscription. Reached only
 * through a thread found within its application (a ThreadRef).
 */
import { rows, type Queryable } from '@collab/shared';
import type { ParticipantRow, ThreadRef } from '../entities/index.js';
import { participantsTable } from './tables.js';


/**
 * The repository's statements that the bench's raw-SQL baselines issue too, exported so that
 * they issue the very same text.
 */
export const participantsStatements = {
  /** The subscribers of thread $1 and whether it has messages. */
  beforeNewMessage: `SELECT ARRAY(SELECT user_id FROM conversation.thread_participants WHERE thread_id = $1 AND subscribed ORDER BY seq) AS subscribers,
              EXISTS (SELECT 1 FROM conversation.messages WHERE thread_id = $1) AS "hasMessages"`,
  /** Records for the users $2 in thread $1; $3 subscribes them. */
  subscribe: `INSERT INTO conversation.thread_participants (thread_id, user_id, subscribed)
       SELECT $1, user_id, $3 FROM unnest($2::text[]) WITH ORDINALITY AS input(user_id, position) ORDER BY position
       ON CONFLICT (thread_id, user_id) DO UPDATE SET subscribed = thread_participants.subscribed OR EXCLUDED.subscribed`,
  /** Thread $1 seen by the users $2 up to its newest activity; $3 subscribes them. */
  markSeen: `WITH newest AS (
         SELECT GREATEST(
           (SELECT max(GREATEST(created_at, updated_at)) FROM conversation.messages WHERE thread_id = $1),
           (SELECT max(r.reacted_at) FROM conversation.message_reactions r
              JOIN conversation.messages m ON m.internal_id = r.message_id WHERE m.thread_id = $1)) AS at
       )
       INSERT INTO conversation.thread_participants (thread_id, user_id, last_seen_at, subscribed)
       SELECT $1, user_id, (SELECT at FROM newest), $3 FROM unnest($2::text[]) WITH ORDINALITY AS input(user_id, position)
       WHERE (SELECT at FROM newest) IS NOT NULL
       ORDER BY position
       ON CONFLICT (thread_id, user_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at,
         subscribed = thread_participants.subscribed OR EXCLUDED.subscribed`,
};

export const participantsRepository = {
  async ofThreads(db: Queryable, threads: readonly ThreadRef[]): Promise<ParticipantRow[]> {
    if (threads.length === 0) return [];
    return rows<ParticipantRow>(
      db,
      `SELECT ${participantsTable.select} FROM conversation.thread_participants p WHERE p.thread_id = ANY($1::bigint[]) ORDER BY p.seq`,
      [[...new Set(threads)]],
    );
  },

  /** The users subscribed to a thread, in the order they joined it. */
  async subscribers(db: Queryable, thread: ThreadRef): Promise<string[]> {
    const subscribed = await rows<Pick<ParticipantRow, 'userId'>>(
      db,
      `SELECT ${participantsTable.pick('userId')} FROM conversation.thread_participants p WHERE p.thread_id = $1 AND p.subscribed ORDER BY p.seq`,
      [thread],
    );
    return subscribed.map((row) => row.userId);
  },

  /**
   * What a new message of the thread is decided by, in one statement: its subscribers (in the
   * order they subscribed) and whether it has any message yet.
   */
  async beforeNewMessage(db: Queryable, thread: ThreadRef): Promise<{ subscribers: string[]; hasMessages: boolean }> {
    const [row] = await rows<{ subscribers: string[]; hasMessages: boolean }>(db, participantsStatements.beforeNewMessage, [thread]);
    return row;
  },

  /** Creates missing records; `subscribed` true subscribes, false leaves existing records as they are. */
  async subscribe(db: Queryable, thread: ThreadRef, userIds: readonly string[], subscribed: boolean): Promise<void> {
    if (userIds.length === 0) return;
    await db.query(
      participantsStatements.subscribe,
      [thread, [...new Set(userIds)], subscribed],
    );
  },

  async unsubscribe(db: Queryable, thread: ThreadRef, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    await db.query(
      `UPDATE conversation.thread_participants SET subscribed = false WHERE thread_id = $1 AND user_id = ANY($2::text[])`,
      [thread, [...userIds]],
    );
  },

  /**
   * Marks the thread seen by these users up to its newest message, edit or reaction, creating records
   * as needed; `subscribe` also subscribes them (new and existing records), false leaves
   * subscriptions as they are (new records unsubscribed). A thread without messages has nothing to
   * see: nothing changes (rather than failing the request).
   * Edits count, so that seeing the thread again puts a user back into `seenBy` of an edited
   * message.
   */
  async markSeen(db: Queryable, thread: ThreadRef, userIds: readonly string[], subscribe: boolean): Promise<void> {
    if (userIds.length === 0) return;
    const { statement, params } = participantsRepository.markSeenWrite(thread, userIds, subscribe);
    await db.query(statement, [...params]);
  },

  /** markSeen's statement and parameters, for a caller that runs it along with another (the outbox's record). */
  markSeenWrite(thread: ThreadRef, userIds: readonly string[], subscribe: boolean): { statement: string; params: readonly unknown[] } {
    return { statement: participantsStatements.markSeen, params: [thread, [...new Set(userIds)], subscribe] };
  },

  async markUnseen(db: Queryable, thread: ThreadRef, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    await db.query(
      `UPDATE conversation.thread_participants SET last_seen_at = NULL WHERE thread_id = $1 AND user_id = ANY($2::text[])`,
      [thread, [...userIds]],
    );
  },
};

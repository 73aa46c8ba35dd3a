/**
 * Who a new message, an edit or a thread action notifies, decided inside the transaction that
 * writes it, from the thread's subscribers at that moment (before the author and the mentioned
 * users are subscribed by the message itself).
 */
import type { ReplyAction } from '@collab/shared';

export interface Recipient {
  userId: string;
  /** For a reply; null for a thread action. */
  replyActions: ReplyAction[] | null;
}

/**
 * A new user message notifies the users it mentions and the thread's subscribers, never its
 * author (a self-mention notifies nobody). Each learns why: mentioned, sent a file, or the message
 * started the thread.
 */
export function replyRecipients(message: {
  authorId: string;
  mentioned: readonly string[];
  subscribers: readonly string[];
  hasFiles: boolean;
  startsThread: boolean;
}): Recipient[] {
  const mentioned = new Set(message.mentioned);
  const users = [...new Set([...message.mentioned, ...message.subscribers])].filter((userId) => userId !== message.authorId);
  return users.map((userId) => {
    const replyActions: ReplyAction[] = [];
    if (mentioned.has(userId)) replyActions.push('mention');
    if (message.hasFiles) replyActions.push('attach-file');
    if (message.startsThread) replyActions.push('create-thread');
    return { userId, replyActions };
  });
}

/** A resolve or reopen notifies the thread's subscribers except the user who did it. */
export function threadActionRecipients(actorId: string, subscribers: readonly string[]): Recipient[] {
  return subscribers.filter((userId) => userId !== actorId).map((userId) => ({ userId, replyActions: null }));
}

/**
 * An edit notifies the users its new content mentions for the first time, never the author (a
 * self-mention notifies nobody). It is no thread's first message any more, so only mention and
 * attach-file apply.
 */
export function mentionRecipients(message: { authorId: string; newlyMentioned: readonly string[]; hasFiles: boolean }) {
  const replyActions: ReplyAction[] = message.hasFiles ? ['mention', 'attach-file'] : ['mention'];
  return message.newlyMentioned.filter((userId) => userId !== message.authorId).map((userId) => ({ userId, replyActions }));
}

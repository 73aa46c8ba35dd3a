/**
 * Notifications as their recipient sees them, in the list and in `notification-created` events:
 * which are shown (those whose message or thread is still there), and each item's header, header
 * translation and attachment for its kind. Messages and threads are shown as GET message (without
 * author) and GET thread answer them, asked of the conversation service.
 */
import {
  clientUserData,
  TEMPLATE_PLACEHOLDER,
  type ConversationDirectory,
  type ConversationViews,
  type DirectoryUser,
  type IdentityDirectory,
  type messageView,
  type notificationView,
  type threadView,
  type ViewAnswer,
} from '@collab/shared';
import type { NotificationRow } from '../../entities/index.js';
import type { NotificationItemRow, Visibility } from '../../repositories/notifications.repository.js';

export interface ItemsContext {
  identity: IdentityDirectory;
  conversation: ConversationDirectory;
}

/**
 * Which of the messages these notifications point at still show them: asked of the conversation
 * service, so that a notification disappears with its message or thread (deleted, or purged with
 * a group, user or application), a reply or reaction while its message is soft-deleted, and a
 * reaction's with the reaction. A message `messageRefs` does not name counts as still there, so
 * it names the messages of every notification whose visibility the caller decides with it.
 */
export async function visibilityOf(ctx: ItemsContext, applicationId: string, messageRefs: readonly string[], requestId: string): Promise<Visibility> {
  const states = await ctx.conversation.messageStates(applicationId, messageRefs, requestId);
  const existing = new Set(states.map((state) => state.ref));
  const undeleted = states.filter((state) => !state.deleted);
  return {
    goneMessages: [...new Set(messageRefs)].filter((ref) => !existing.has(ref)),
    deletedMessages: states.filter((state) => state.deleted).map((state) => state.ref),
    reactions: undeleted.flatMap((state) =>
      state.reactions.map((reaction) => ({ messageRef: state.ref, userId: reaction.userID, reaction: reaction.reaction })),
    ),
  };
}

type HeaderPart =
  | { type: 'text'; text: string; bold: boolean }
  | { type: 'user'; userID: string; user: ReturnType<typeof clientUserData> };

/** How a user is named in an item's `text`. */
function nameOf(user: DirectoryUser | undefined, id: string): string {
  return user?.name ?? user?.shortName ?? id;
}

/** The phrase of a reply's header, by the first rule its reply actions match. */
function replyPhrase(actions: readonly string[]): { phrase: string; connective: string; key: string } {
  if (actions.includes('mention') && actions.includes('attach-file'))
    return { phrase: 'mentioned you and sent you a file', connective: 'in', key: 'cord.reply_mention_attachment' };
  if (actions.includes('mention')) return { phrase: 'mentioned you', connective: 'in', key: 'cord.reply_mention' };
  if (actions.includes('create-thread')) return { phrase: 'created a new thread', connective: 'named', key: 'cord.thread_create' };
  return { phrase: 'replied', connective: 'on', key: 'cord.reply' };
}

/**
 * The items of these rows: the views of their messages and threads and their users are fetched
 * once for all. A row whose message or thread went away since it was found visible is left out.
 */
export async function renderItems(
  ctx: ItemsContext,
  applicationId: string,
  rows: readonly NotificationItemRow[],
  linkBase: string,
  requestId: string,
) {
  const showsMessage = (row: NotificationRow) => row.kind === 'reply' || row.kind === 'reaction';
  const showsThread = (row: NotificationRow) => row.kind === 'reply' || row.kind === 'thread_action';
  const userIds = [...new Set(rows.flatMap((row) => [...row.senders, row.recipientId]))];
  const [views, { users }] = await Promise.all([
    ctx.conversation.views(
      applicationId,
      {
        messageRefs: rows.filter(showsMessage).map((row) => row.messageRef!),
        threadRefs: rows.filter(showsThread).map((row) => row.threadRef!),
        linkBase,
      },
      requestId,
    ),
    userIds.length > 0 ? ctx.identity.lookup(applicationId, { userIds }, requestId) : { users: new Map<string, DirectoryUser>() },
  ]);
  const messages = new Map(views.messages.map((message) => [message.ref, message]));
  const threads = new Map(views.threads.map((thread) => [thread.ref, thread]));
  return rows.flatMap((row) => {
    const message = showsMessage(row) ? messages.get(row.messageRef!) : undefined;
    const thread = showsThread(row) ? threads.get(row.threadRef!) : undefined;
    if ((showsMessage(row) && !message) || (showsThread(row) && !thread)) return [];
    return [itemOf(row, users, message, thread)];
  });
}

type NotificationAnswer = NotificationItem;
// The message and thread views conversation built, passed on as they are: its contract leaves them
// unchecked (they are its own REST answers), so they are typed here as what they are.
type MessageAnswer = ViewAnswer<typeof messageView>;
type ThreadAnswer = ViewAnswer<typeof threadView>;

function itemOf(
  row: NotificationItemRow,
  users: Map<string, DirectoryUser>,
  message: ConversationViews['messages'][number] | undefined,
  thread: ConversationViews['threads'][number] | undefined,
): NotificationAnswer {
  const userPart = (id: string): HeaderPart => ({ type: 'user', userID: id, user: clientUserData(id, users.get(id)) });
  const textPart = (text: string, bold = false): HeaderPart => ({ type: 'text', text, bold });
  const senders = row.senders.map((id) => clientUserData(id, users.get(id)));
  const messageAttachment = () => ({ type: 'message' as const, messageID: message!.id, threadID: message!.threadID, message: message!.view as MessageAnswer });

  let header: HeaderPart[];
  let headerTranslation: NotificationAnswer['headerTranslation'] = null;
  let attachment: NotificationAnswer['attachment'];
  switch (row.kind) {
    case 'external': {
      // The template split at its placeholders into text parts and user parts.
      const ids = { actor: row.actorId, recipient: row.recipientId };
      header = [];
      let last = 0;
      for (const match of row.template!.matchAll(TEMPLATE_PLACEHOLDER)) {
        if (match.index > last) header.push(textPart(row.template!.slice(last, match.index)));
        header.push(userPart(ids[match[1] as 'actor' | 'recipient']));
        last = match.index + match[0].length;
      }
      if (last < row.template!.length) header.push(textPart(row.template!.slice(last)));
      attachment = { type: 'url', url: row.url };
      break;
    }
    case 'reply': {
      const { phrase, connective, key } = replyPhrase(row.replyActions!);
      header = [userPart(row.actorId), textPart(` ${phrase} ${connective} `), textPart(thread!.name, true)];
      headerTranslation = { key, parameters: { senders, threadName: thread!.name } };
      attachment = messageAttachment();
      break;
    }
    case 'thread_action': {
      const resolved = row.threadActionType === 'resolve';
      header = [userPart(row.actorId), textPart(resolved ? ' resolved the thread ' : ' reopened the thread '), textPart(thread!.name, true)];
      headerTranslation = { key: resolved ? 'cord.thread_resolve' : 'cord.thread_unresolve', parameters: { senders, threadName: thread!.name } };
      attachment = { type: 'thread', thread: thread!.view as ThreadAnswer };
      break;
    }
    case 'reaction': {
      // One item for all reactions to the message, named by the newest.
      const reacted = textPart(` reacted ${row.reaction} to your message`);
      const [first, second] = row.senders;
      const count = row.senders.length;
      if (count === 1) {
        header = [userPart(first), reacted];
        headerTranslation = { key: 'cord.reaction_single', parameters: { senders, reaction: row.reaction } };
      } else if (count === 2) {
        header = [userPart(first), textPart(' and ', true), userPart(second), reacted];
        headerTranslation = { key: 'cord.reaction_double', parameters: { senders, reaction: row.reaction } };
      } else {
        header = [userPart(first), textPart(` and ${count - 1} others`, true), reacted];
        headerTranslation = { key: 'cord.reaction_overflow', parameters: { senders, reaction: row.reaction, count: count - 1 } };
      }
      attachment = messageAttachment();
      break;
    }
  }
  return {
    id: row.externalId,
    senderUserIDs: row.senders,
    iconUrl: row.iconUrl,
    header,
    headerTranslation,
    attachment,
    readStatus: row.readStatus,
    timestamp: row.createdAt.toISOString(),
    extraClassnames: row.extraClassnames,
    metadata: row.metadata,
    // The header as plain text, users by name.
    text: header.map((part) => (part.type === 'text' ? part.text : nameOf(users.get(part.userID), part.userID))).join(''),
  };
}

/** A notification as the API answers it. */
export type NotificationItem = ViewAnswer<typeof notificationView>;

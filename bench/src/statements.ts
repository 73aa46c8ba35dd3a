/**
 * The SQL the services issue for the five calls, for the baselines that issue it without the
 * services: the raw-SQL script (scenarios/five-calls.ts) and the bare node:http server
 * (bare-server.ts). Each is the text the repository itself issues, imported from it (identity's
 * users and lookup repositories, conversation's threads, messages, participants and message views,
 * and the outbox's record), so a change there reaches the baselines; this file only names them in
 * the order the use cases call them and fixes what a statement is built from.
 */
import { randomUUID } from 'node:crypto';
import { lookupStatements } from '@collab/identity/repositories/lookup.repository';
import { usersTable } from '@collab/identity/repositories/tables';
import { usersStatements } from '@collab/identity/repositories/users.repository';
import { messagesStatements, type NewMessage } from '@collab/conversation/repositories/messages.repository';
import { messageViewsStatements } from '@collab/conversation/repositories/message-views.repository';
import { participantsStatements } from '@collab/conversation/repositories/participants.repository';
import { threadsStatements } from '@collab/conversation/repositories/threads.repository';
import { outboxRecordStatement } from '@collab/shared/storage';

/** identity: usersRepository and lookupRepository. */
export const IDENTITY = {
  /** usersRepository.findWithGroupIds: GET user, the user and its active groups in one statement ($1 application, $2 user). */
  findUserWithGroupIds: usersStatements.findWithGroupIds,
  /** usersRepository.upsert of name and email, outside a transaction (PUT user without group changes): $3 name, $4 email. */
  upsertNameAndEmail: usersStatements.upsert(usersTable.write({ name: '', email: '' }, ['$1', '$2'])),
  /** usersRepository.listPage: $2 the cursor, $3 the metadata filter, $4 the limit (one more than asked), $5 the search. */
  listUsers: usersStatements.listPage,
  /** usersRepository.count, beside the page ($2 the metadata filter, $3 the search). */
  countUsers: usersStatements.count,
  /** lookupRepository.lookup: what conversation asks identity about the author and the group, in one statement. */
  lookup: lookupStatements.lookup,
};

/** conversation: threadsRepository, messagesRepository, participantsRepository, messageViewsRepository and the outbox. */
export const CONVERSATION = {
  /** threadsRepository.find ($2: the thread's external id). */
  findThread: threadsStatements.find(false),
  /** threadsRepository.find(…, forUpdate): the create's transaction starts by locking the thread. */
  lockThread: threadsStatements.find(true),
  /** threadsRepository.insertIfAbsent (createThread): $3 group, $4 name, $5 url, $6 location, $7 metadata, $8 extra classnames. */
  insertThread: threadsStatements.insertIfAbsent,
  /** participantsRepository.subscribe: the new thread's creator. */
  subscribe: participantsStatements.subscribe,
  /**
   * messagesRepository.insertWithActivity of a user message as the create builds it from a body of
   * only an author and content (the other columns take their defaults): the statement and its
   * parameters. It also answers the thread's subscribers and whether it had messages.
   */
  insertMessage: (applicationId: string, thread: string, authorId: string, content: unknown[]): [string, unknown[]] =>
    messagesStatements.insertWithActivity(applicationId, {
      externalId: `cord:${randomUUID()}`,
      threadRef: thread as NewMessage['threadRef'],
      authorId,
      content,
      createdAt: new Date(),
    }),
  /** participantsRepository.markSeen: the author has seen the thread and is subscribed. */
  markSeen: participantsStatements.markSeen,
  /**
   * The outbox's record of the message.added event, which notifies the relays ($7, the channel) at
   * commit, with markSeen run alongside ($8 thread, $9 users, $10 subscribe), as the create runs them.
   */
  outboxRecordWithSeen: outboxRecordStatement('conversation', participantsStatements.markSeen),
  /** messagesRepository.inThread, newest first (the thread read's default order). */
  threadMessages: messagesStatements.inThread('descending'),
  /** messageViewsRepository.detailsOf: reactions, attachments, link previews and participants in one round trip. */
  viewDetails: messageViewsStatements.detailsOf,
  /** messagesRepository.appendText, the whole append of a token that changes no URL (no transaction around it): $2 the thread's id, $3 the message's id, $4 the text. */
  appendText: messagesStatements.appendText,
};

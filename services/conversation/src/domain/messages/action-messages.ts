/**
 * Messages the service writes itself when a thread is resolved or reopened: an action message
 * naming the user, by that user.
 */
import type { Queryable } from '@collab/shared';
import { randomUUID } from 'node:crypto';
import type { MessageRow, ThreadRef } from '../../entities/index.js';
import { messagesRepository } from '../../repositories/messages.repository.js';
import type { DirectoryUser } from '../identity-directory.js';

/** What tells a resolve's action message from a reopen's. */
export const ACTION_TRANSLATION_KEYS = { resolved: 'cord.thread_resolved', reopened: 'cord.thread_unresolved' } as const;

/** Inserts `<mention> resolved|reopened this thread` by `user`; returns the new message. */
export async function insertActionMessage(
  db: Queryable,
  applicationId: string,
  thread: ThreadRef,
  user: DirectoryUser,
  verb: 'resolved' | 'reopened',
  at = new Date(),
): Promise<MessageRow> {
  return messagesRepository.insert(db, applicationId, {
    externalId: `cord:${randomUUID()}`,
    threadRef: thread,
    authorId: user.id,
    type: 'action_message',
    content: [
      {
        type: 'p',
        children: [
          { type: 'mention', user: { id: user.id }, children: [{ text: `@${user.shortName ?? user.name ?? user.id}` }] },
          { text: ` ${verb} this thread` },
        ],
      },
    ],
    translationKey: ACTION_TRANSLATION_KEYS[verb],
    createdAt: at,
  });
}

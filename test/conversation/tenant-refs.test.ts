/**
 * Tenant scoping by type: the queries on a thread's or a message's child rows (participants,
 * reactions, mentions, attachments, link previews) take no application id, so they accept only a
 * ThreadRef or MessageRef, which only the repositories' reads within an application produce. These
 * checks run when the tests are type-checked (`npm run typecheck:tests`): an `@ts-expect-error`
 * line that stops being an error (a repository method taking a bare string again) fails it.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { MessageRef, MessageRow, ThreadRef, ThreadRow } from '../../services/conversation/src/entities/index.js';
import { attachmentsRepository } from '../../services/conversation/src/repositories/attachments.repository.js';
import type { Queryable } from '@collab/shared';
import { linkPreviewsRepository } from '../../services/conversation/src/repositories/link-previews.repository.js';
import { mentionsRepository } from '../../services/conversation/src/repositories/mentions.repository.js';
import { messagesRepository } from '../../services/conversation/src/repositories/messages.repository.js';
import { participantsRepository } from '../../services/conversation/src/repositories/participants.repository.js';
import { reactionsRepository } from '../../services/conversation/src/repositories/reactions.repository.js';
import { threadsRepository } from '../../services/conversation/src/repositories/threads.repository.js';

/** Never called: only compiled, for the calls the compiler must refuse and those it must accept. */
export async function childQueries(db: Queryable, applicationId: string, externalId: string, internalId: string) {
  // @ts-expect-error a bare internal id has not been looked up within the application
  await participantsRepository.subscribers(db, internalId);
  // @ts-expect-error nor can an external id stand for a thread's internal one
  await participantsRepository.markSeen(db, externalId, ['ann'], false);
  // @ts-expect-error a message's child rows need a MessageRef
  await reactionsRepository.of(db, internalId);
  // @ts-expect-error mentions are a message's child rows
  await mentionsRepository.add(db, internalId, ['ann']);
  // @ts-expect-error attachments are a message's child rows
  await attachmentsRepository.of(db, [internalId]);
  // @ts-expect-error link previews are a message's child rows
  await linkPreviewsRepository.urlsOf(db, internalId);
  // @ts-expect-error even with the application, a write by internal id needs a looked-up reference
  await messagesRepository.delete(db, applicationId, internalId);

  // The way that compiles: look the row up within the application, then use its reference.
  const thread = await threadsRepository.find(db, applicationId, externalId);
  if (thread) await participantsRepository.subscribers(db, thread.internalId);
  const message = await messagesRepository.find(db, applicationId, externalId);
  if (message) await reactionsRepository.of(db, message.internalId);
}

describe('internal ids of threads and messages', () => {
  it('are produced by the application-scoped reads and refuse a bare string', () => {
    expectTypeOf<ThreadRow['internalId']>().toEqualTypeOf<ThreadRef>();
    expectTypeOf<MessageRow['internalId']>().toEqualTypeOf<MessageRef>();
    expectTypeOf<MessageRow['threadRef']>().toEqualTypeOf<ThreadRef>();
    expectTypeOf<ThreadRef>().toExtend<string>();
    expectTypeOf<string>().not.toExtend<ThreadRef>();
    expectTypeOf<string>().not.toExtend<MessageRef>();
    expectTypeOf<ThreadRef>().not.toExtend<MessageRef>();
  });
});

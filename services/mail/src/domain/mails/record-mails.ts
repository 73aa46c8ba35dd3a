/**
 * The mails notifications may cause (original-extras §5.1): one per `reply` or `thread_action`
 * notification, recorded when the notification is relayed and queued to be sent after the delay.
 * The gates are read when it is sent, so a read, an edit or a deletion meanwhile counts.
 */
import { randomUUID } from 'node:crypto';
import { chunks, type MailCandidate } from '@collab/shared';
import { mailsRepository, type NewMail } from '../../repositories/mails.repository.js';
import type { MailServiceContext } from '../context.js';
import { newLinkToken } from './link-tokens.js';

/** Records the mails not recorded yet and queues them; answers how many were new. */
export async function recordMails(ctx: MailServiceContext, applicationId: string, candidates: readonly MailCandidate[]): Promise<number> {
  const sendAfter = new Date(Date.now() + ctx.settings.delaySeconds * 1000);
  const rows: NewMail[] = candidates.map(({ requestId: _requestId, ...candidate }) => ({
    ...candidate,
    id: randomUUID(),
    linkToken: newLinkToken(),
    sendAfter,
  }));
  const inserted = await mailsRepository.insert(ctx.db, applicationId, rows);
  const requestIds = new Map(candidates.map((candidate) => [candidate.notificationId, candidate.requestId]));
  // A batch of messages may notify thousands: queued a hundred at a time.
  for (const slice of chunks(inserted, 100))
    await Promise.all(
      slice.map(({ id, notificationId }) =>
        ctx.queue.add('mail.send', { applicationId, requestId: requestIds.get(notificationId)!, mailId: id }, { jobId: id, delay: ctx.settings.delaySeconds * 1000 }),
      ),
    );
  return inserted.length;
}

/** Appending text to a message: how a bot streams its answer into a message it posted. */
import { ApiError, type MessageNode, type RecordWrite } from '@collab/shared';
import { messagesRepository } from '../../repositories/messages.repository.js';
import type { ConversationContext } from '../context.js';
import { eventsOutbox } from '../events/outbox.js';
import { appendCannotChangeUrls, appendMayChangeUrls, previewUrlsOf } from '../link-previews/links.js';
import { keepPreviewsOf } from '../link-previews/link-previews.js';
import { requireThread } from '../threads/threads.js';
import { requireMessageInThread, sameJson } from './checks.js';

/** What an append needs of its request: its id for the logs, and how to record its answer (absent without an Idempotency-Key). */
interface AppendRequest {
  requestId: string;
  recordWrite?: RecordWrite<void>;
}

/**
 * POST /v1/threads/<tID>/messages/<mID>/append. Checks in this order, the first failing one
 * answering: the thread (404), the message in it (404), its content (400 message_not_appendable
 * unless it is exactly one markdown node with one text child). A bot streams many appends a second,
 * so an append that succeeds is one statement: the thread and the message are found by the UPDATE
 * itself, and only a refused append looks them up again to say why. Concurrent appends all land; no
 * timestamp changes, and nothing is notified and no webhook sent. When the appended text changes
 * the content's URLs, the link-preview rule is applied in the same transaction and the message's
 * preview job recorded, as for an edit of its content. The answer of a request with an
 * Idempotency-Key is recorded with the append (`recordWrite`, absent without a key).
 *
 * Most appends (a bot's next word) cannot change a URL, which their text alone shows: those are
 * the UPDATE alone, without a transaction around it, and those that arrive for one message while
 * its UPDATE runs go together in the next one (AppendBatches). Joined, they still cannot change a
 * URL: each starts with a space, so no word or URL runs across two of them. Only an append that
 * might change one, or whose answer is recorded, runs in a transaction with what follows.
 */
export async function appendToMessage(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  messageId: string,
  text: string,
  request: AppendRequest,
): Promise<void> {
  const appended =
    !request.recordWrite && appendCannotChangeUrls(text)
      ? await ctx.appends.append(JSON.stringify([applicationId, threadId, messageId]), text, async (texts) =>
          (await messagesRepository.appendText(ctx.db, applicationId, threadId, messageId, texts)) !== null,
        )
      : await appendInTransaction(ctx, { applicationId, threadId, messageId }, text, request);
  if (appended) return;
  const thread = await requireThread(ctx.db, applicationId, threadId);
  await requireMessageInThread(ctx.db, applicationId, thread, messageId);
  throw new ApiError('message_not_appendable');
}

/**
 * The append with what may follow it in one transaction: the answer recorded with it, and the
 * link-preview rule applied when the appended text changed the content's URLs. False when the
 * message is not appendable (or gone).
 */
async function appendInTransaction(
  ctx: ConversationContext,
  { applicationId, threadId, messageId }: { applicationId: string; threadId: string; messageId: string },
  text: string,
  request: AppendRequest,
): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const after = await messagesRepository.appendText(tx, applicationId, threadId, messageId, text);
    if (!after) return false;
    await request.recordWrite?.(tx);
    const before = { ...after, content: contentBefore(after.content as MessageNode[], text) };
    if (appendMayChangeUrls(textOf(before.content), text) && !sameJson(previewUrlsOf(before), previewUrlsOf(after))) {
      const urls = await keepPreviewsOf(tx, after);
      if (urls.length > 0 && ctx.linkPreviews.enabled)
        await eventsOutbox.record(tx, [{ applicationId, requestId: request.requestId, topic: 'message.links-changed', payload: { messageId: after.internalId } }]);
    }
    return true;
  });
}

/** The one text of an appendable content (one markdown node with one text child). */
function textOf(content: MessageNode[]): string {
  return content[0].children![0].text as string;
}

/** The appended content as it was before this append: its one text without the appended text. */
function contentBefore(content: MessageNode[], appended: string): MessageNode[] {
  const text = textOf(content);
  return [{ type: 'markdown', children: [{ text: text.slice(0, text.length - appended.length) }] }];
}

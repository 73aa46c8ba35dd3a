/**
 * Link previews of messages: a message whose content has URLs gets, shortly after it is written,
 * a preview (title, description, image) of each page they point to, fetched by the
 * conversation-link-previews job so that no request waits for a page.
 *
 * The rule, applied whenever the content or skipLinkPreviews changes: a message has previews only
 * of URLs its content has (at most 10) and none when it skips them; a URL dropped from the content
 * drops its preview (hidden or not) at once; a hidden preview stays hidden while its URL stays.
 */
import { createProducer, type Logger, type QueueConnection } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { MessageRow } from '../../entities/index.js';
import type { Db } from '../../repositories/db.js';
import { linkPreviewsRepository } from '../../repositories/link-previews.repository.js';
import type { ConversationContext } from '../context.js';
import { previewUrlsOf } from './links.js';
import type { PageCache } from './pages.js';

export interface LinkPreviewRequests {
  /**
   * Queues the preview job of a message without waiting for Redis: the answer to the request that
   * wrote the message is neither delayed nor failed by it. A job Redis did not take is logged; the
   * message's next edit requests its previews again.
   */
  request(applicationId: string, messageId: string, requestId: string): void;
  close(): Promise<void>;
}

/**
 * The requests of one process. `enabled` false (LINK_PREVIEWS=off) queues nothing. One job per
 * message at a time: a request made while its job waits is already served by it (the job reads
 * the content when it runs); one made while its job runs is kept, and queued when that run ends.
 * The connection opens at once, so that the first message does not wait for it.
 */
export function linkPreviewRequests(options: { enabled: boolean; connection: QueueConnection; logger: Logger }): LinkPreviewRequests {
  const producer = options.enabled ? createProducer('conversation-link-previews', options.connection) : null;
  return {
    request(applicationId, messageId, requestId) {
      if (!producer) return;
      producer
        .add('message.preview', { applicationId, requestId, messageId }, { deduplication: { id: `message-${messageId}`, keepLastIfActive: true } })
        .catch((error: Error) => options.logger.warn({ messageId, err: error.message }, 'link-preview job not queued'));
    },
    async close() {
      await producer?.close();
    },
  };
}

/**
 * Inside the transaction of an update that changes the content or skipLinkPreviews: deletes the
 * previews the message may no longer have, and returns the URLs it should have previews of.
 */
export async function keepPreviewsOf(tx: Db, message: Pick<MessageRow, 'internalId' | 'content' | 'skipLinkPreviews' | 'type'>): Promise<string[]> {
  const urls = previewUrlsOf(message);
  await linkPreviewsRepository.keepOnly(tx, message.internalId, urls);
  return urls;
}

/** After a message is written: queues its job when it should have previews of some URLs (the job fetches only those without one). */
export function requestPreviews(ctx: ConversationContext, applicationId: string, messageId: string, urls: readonly string[], requestId: string): void {
  if (urls.length > 0) ctx.linkPreviews.request(applicationId, messageId, requestId);
}

/**
 * The job: fetches the pages of the message's URLs that have no preview yet (through the page
 * cache, all at once), then stores their previews in a transaction that holds the message row and
 * reads its content again, so that an edit made meanwhile wins: only URLs the content still has
 * are stored (the edit itself deleted the previews of the URLs it dropped). Running it twice
 * stores nothing twice.
 */
export async function refreshLinkPreviews(
  deps: { db: DataSource; pages: PageCache },
  applicationId: string,
  messageId: string,
  log: Logger,
): Promise<{ pages: number; previews: number }> {
  const { db, pages } = deps;
  const message = await linkPreviewsRepository.source(db, applicationId, messageId);
  if (!message) return { pages: 0, previews: 0 };
  const stored = await linkPreviewsRepository.urlsOf(db, messageId);
  const missing = previewUrlsOf(message).filter((url) => !stored.has(url));
  const pageOutcomes = await Promise.all(missing.map(async (url) => ({ url, outcome: await pages.lookup(url) })));
  const previews = pageOutcomes.flatMap(({ url, outcome }) => {
    if ('preview' in outcome) return [{ url, ...outcome.preview }];
    // The origin only: a URL's path and query may carry what its author would not have logged.
    log.info({ origin: new URL(url).origin, outcome: outcome.failure, reason: outcome.message }, 'no link preview for a page');
    return [];
  });
  if (previews.length === 0) return { pages: missing.length, previews: 0 };
  const kept = await db.transaction(async (tx) => {
    const current = await linkPreviewsRepository.source(tx, applicationId, messageId, true);
    if (!current) return [];
    const urls = previewUrlsOf(current);
    const keep = previews.filter((preview) => urls.includes(preview.url));
    await linkPreviewsRepository.insert(tx, messageId, keep);
    return keep;
  });
  return { pages: missing.length, previews: kept.length };
}

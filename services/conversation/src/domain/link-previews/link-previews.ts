/**
 * Link previews of messages: a message whose content has URLs gets, shortly after it is written,
 * a preview (title, description, image) of each page they point to, fetched by the
 * conversation-link-previews job so that no request waits for a page.
 *
 * The flow costs the request that writes a message nothing: the create records only the
 * `message.added` outbox entry it records anyway, and an edit that changes the content or
 * skipLinkPreviews records a `message.links-changed` entry in its transaction. The conversation
 * worker's relay, handling those entries in batches, finds which of the messages have URLs and
 * queues their jobs in one round trip to Redis; the worker then fetches the pages. An entry
 * whose jobs Redis did not take is retried by the relay, so no message loses its previews to a
 * Redis outage.
 *
 * The rule, applied whenever the content or skipLinkPreviews changes: a message has previews only
 * of URLs its content has (at most 10) and none when it skips them; a URL dropped from the content
 * drops its preview (hidden or not) at once; a hidden preview stays hidden while its URL stays.
 */
import { createProducer, type Logger, type Producer, type QueueConnection, type Queryable } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { MessageRow } from '../../entities/index.js';
import { linkPreviewsRepository } from '../../repositories/link-previews.repository.js';
import { previewUrlsOf } from './links.js';
import type { PageCache } from './pages.js';

/** A message whose preview job is to be queued: its internal id, its tenant and the request that wrote it. */
export interface PreviewRequest {
  applicationId: string;
  messageId: string;
  requestId: string;
}

/**
 * How long the relay waits for Redis to take a batch's jobs: its handlers must end in bounded
 * time, and a Redis never reached would otherwise hold the add forever. Should Redis take them
 * later anyway, the entry's retry finds each message's job there (one job per message) and at
 * most adds one more run of it, which stores nothing twice.
 */
const QUEUE_TIMEOUT_MS = 5000;

/**
 * After Redis failed to take jobs, further batches fail at once until its connection is ready
 * again, or this long at most: an outage then costs the relay one wait, not one per entry it
 * retries (each is retried later by the outbox, with backoff).
 */
const FAIL_FAST_MS = 10_000;

export interface LinkPreviewQueue {
  /** False with LINK_PREVIEWS=off: nothing is ever queued. */
  readonly enabled: boolean;
  /**
   * Queues the jobs of these messages in one round trip to Redis; rejects when Redis did not take
   * them (the caller's outbox entry is then retried).
   */
  queue(requests: readonly PreviewRequest[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The preview queue of one process. One job per message at a time (a deduplication id per
 * message): a request made while its job waits is already served by it (the job reads the content
 * when it runs); one made while its job runs is kept, and queued when that run ends. The
 * connection opens on the first jobs, so that a process that queues none (the API) holds none.
 */
export function linkPreviewQueue(options: { enabled: boolean; connection: QueueConnection }): LinkPreviewQueue {
  let producer: Producer<'conversation-link-previews'> | null = null;
  let failingUntil = 0;
  const connected = () => {
    if (!producer) {
      producer = createProducer('conversation-link-previews', options.connection);
      producer.onReady(() => (failingUntil = 0));
    }
    return producer;
  };
  return {
    enabled: options.enabled,
    async queue(requests) {
      if (!options.enabled || requests.length === 0) return;
      if (Date.now() < failingUntil) throw new Error('Redis is unreachable: link-preview jobs not queued');
      const jobs = requests.map(({ applicationId, messageId, requestId }) => ({
        name: 'message.preview' as const,
        data: { applicationId, requestId, messageId },
        options: { deduplication: { id: `message-${messageId}`, keepLastIfActive: true } },
      }));
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not take the link-preview jobs within ${QUEUE_TIMEOUT_MS} ms`)), QUEUE_TIMEOUT_MS);
      });
      const adding = connected().addBulk(jobs);
      // An answer after the deadline concerns nobody any more.
      adding.catch(() => undefined);
      try {
        await Promise.race([adding, deadline]);
      } catch (error) {
        failingUntil = Date.now() + FAIL_FAST_MS;
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await producer?.close();
    },
  };
}

/** A new message as the relay read it, with the tenant and the request that wrote it. */
export interface NewMessage {
  message: Pick<MessageRow, 'internalId' | 'content' | 'skipLinkPreviews' | 'type'>;
  applicationId: string;
  requestId: string;
}

/**
 * For the relay: queues the jobs of the new messages (as read in its batch) that should have
 * previews of some URLs. Finding them walks each content, which is why it happens here and not
 * in the request that wrote them.
 */
export async function queuePreviewsOfNewMessages(previews: LinkPreviewQueue, messages: readonly NewMessage[]): Promise<number> {
  if (!previews.enabled) return 0;
  const requests = messages
    .filter(({ message }) => previewUrlsOf(message).length > 0)
    .map(({ message, applicationId, requestId }) => ({ applicationId, messageId: message.internalId, requestId }));
  await previews.queue(requests);
  return requests.length;
}

/**
 * Inside the transaction of an update that changes the content or skipLinkPreviews: deletes the
 * previews the message may no longer have, and returns the URLs it should have previews of.
 */
export async function keepPreviewsOf(tx: Queryable, message: Pick<MessageRow, 'internalId' | 'content' | 'skipLinkPreviews' | 'type'>): Promise<string[]> {
  const urls = previewUrlsOf(message);
  await linkPreviewsRepository.keepOnly(tx, message.internalId, urls);
  return urls;
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
  const stored = await linkPreviewsRepository.urlsOf(db, message.ref);
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
    await linkPreviewsRepository.insert(tx, current.ref, keep);
    return keep;
  });
  return { pages: missing.length, previews: kept.length };
}

/**
 * Fetching the page of a URL for its preview, through the outbound guard, and the page cache in
 * Redis that all workers and all applications share: one popular link posted many times is fetched
 * once per cache period, and a page that failed is not asked again for a short while, so that a
 * dead or slow site is not hammered by every message that links to it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { OutboundError, type OutboundClient, type RedisClient } from '@collab/shared';
import { linkPreviewMetrics } from './metrics.js';
import { extractPagePreview, type PagePreview } from './page-preview.js';

/** A page's preview, or why there is none (the `outcome` label of link_preview_fetches_total). */
export type PageOutcome = { preview: PagePreview } | { failure: string; message: string };

/**
 * The request for a page: 5 s in all (redirects and body included), at most 3 redirects, at most
 * 1 MB of body, HTML only (any other content type fails before its body is read).
 */
const PAGE_REQUEST = {
  timeoutMs: 5000,
  maxRedirects: 3,
  maxBodyBytes: 1_048_576,
  overLimit: 'fail',
  acceptContentTypes: ['text/html', 'application/xhtml+xml'],
  headers: { accept: 'text/html,application/xhtml+xml', 'user-agent': 'Mozilla/5.0 (compatible; collab-link-preview/1.0)' },
} as const;

export async function fetchPage(client: OutboundClient, url: string): Promise<PageOutcome> {
  const outcome = await requestPage(client, url);
  linkPreviewMetrics().fetched('preview' in outcome ? 'preview' : outcome.failure);
  return outcome;
}

async function requestPage(client: OutboundClient, url: string): Promise<PageOutcome> {
  try {
    const response = await client.request({ url, ...PAGE_REQUEST, acceptContentTypes: [...PAGE_REQUEST.acceptContentTypes] });
    if (response.status < 200 || response.status > 299) return { failure: 'http_error', message: `The page answered ${response.status}.` };
    return { preview: extractPagePreview(decodeHtml(response.body, response.headers['content-type']), response.finalUrl) };
  } catch (error) {
    if (error instanceof OutboundError) return { failure: error.kind, message: error.message };
    throw error;
  }
}

/** The body in the charset its Content-Type, else its `<meta charset>`, declares; UTF-8 when none or unknown. */
function decodeHtml(body: Buffer, contentType: string | undefined): string {
  const charset =
    /charset=["']?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ?? /<meta[^>]+charset=["']?([\w.:-]+)/i.exec(body.subarray(0, 1024).toString('latin1'))?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    // A label TextDecoder does not know.
    return new TextDecoder('utf-8').decode(body);
  }
}

export interface PageCacheOptions {
  redis: RedisClient;
  /** REDIS_PREFIX: the cache's keys are `<prefix>:link-previews:…`. */
  prefix: string;
  fetch: (url: string) => Promise<PageOutcome>;
  /** How long a preview is kept; 0 keeps nothing. */
  ttlSeconds: number;
  /** How long a failure is kept; 0 keeps nothing. */
  failureTtlSeconds: number;
}

/**
 * Longer than a page request may take: while one process fetches a URL, the others wait for its
 * outcome instead of fetching it too; a lock left by a process that died expires after this.
 */
const FETCH_LOCK_MS = 10_000;
/** How often a process waiting for another's fetch looks for its outcome. */
const WAIT_STEP_MS = 50;

export type PageCache = ReturnType<typeof createPageCache>;

export function createPageCache(options: PageCacheOptions) {
  const { redis, prefix } = options;
  const keyOf = (kind: 'page' | 'fetching', url: string) => `${prefix}:link-previews:${kind}:${createHash('sha256').update(url).digest('hex')}`;
  // Lookups of one URL in this process share one answer.
  const running = new Map<string, Promise<PageOutcome>>();

  async function lookupShared(url: string): Promise<PageOutcome> {
    const pageKey = keyOf('page', url);
    const lockKey = keyOf('fetching', url);
    const token = randomUUID();
    const waitUntil = Date.now() + FETCH_LOCK_MS;
    let locked: boolean;
    for (;;) {
      const cached = await redis.get(pageKey);
      if (cached !== null) {
        linkPreviewMetrics().cacheHit();
        return JSON.parse(cached) as PageOutcome;
      }
      locked = (await redis.set(lockKey, token, 'PX', FETCH_LOCK_MS, 'NX')) === 'OK';
      // Another process is fetching it; past the wait, it is stuck or gone: fetch here too.
      if (locked || Date.now() > waitUntil) break;
      await delay(WAIT_STEP_MS);
    }
    try {
      const outcome = await options.fetch(url);
      const ttl = 'preview' in outcome ? options.ttlSeconds : options.failureTtlSeconds;
      if (ttl > 0) await redis.set(pageKey, JSON.stringify(outcome), 'EX', ttl);
      return outcome;
    } finally {
      // Only our own lock: one that expired meanwhile may be another process's now.
      if (locked) await redis.eval(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`, 1, lockKey, token);
    }
  }

  return {
    /** The page's outcome: from the cache, from another process's fetch in progress, or fetched now. */
    lookup(url: string): Promise<PageOutcome> {
      let lookup = running.get(url);
      if (!lookup) {
        lookup = lookupShared(url).finally(() => running.delete(url));
        running.set(url, lookup);
      }
      return lookup;
    },
  };
}

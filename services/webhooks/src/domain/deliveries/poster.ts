/** Sends a signed webhook through the outbound guard and reads the answer as a delivery log wants it. */
import { OutboundError, type OutboundClient } from '@collab/shared';
import { ATTEMPT_TIMEOUT_MS, type WebhookPoster } from './attempts.js';

/** The receiver's answer is kept up to this many bytes, for the log. */
const ANSWER_LOG_BYTES = 64 * 1024;

/** Retry-After as seconds or an HTTP date, in milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: number = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function guardedPoster(client: OutboundClient): WebhookPoster {
  return async (url, body, headers) => {
    try {
      const response = await client.request({
        url,
        method: 'POST',
        headers,
        body,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        maxBodyBytes: ANSWER_LOG_BYTES,
        overLimit: 'truncate',
      });
      return {
        kind: 'answered',
        statusCode: response.status,
        retryAfterMs: retryAfterMs(response.headers['retry-after']),
        responseBody: response.body.toString('utf8'),
      };
    } catch (error) {
      if (error instanceof OutboundError) return { kind: 'failed', error: error.message };
      return { kind: 'failed', error: `Request failed: ${(error as Error).message}` };
    }
  };
}

/**
 * How every outgoing webhook body is serialized and signed, byte for byte in the form receivers
 * already verify, so that receivers verifying with `@cord-sdk/server` (`validateWebhookSignature`) accept
 * it: the signature is base64(HMAC-SHA256(key = the application secret string as UTF-8,
 * message = `<timestamp>:<body>`)), the timestamp being milliseconds since the epoch in decimal.
 */
import { createHmac } from 'node:crypto';
import type { WebhookEventType } from './events.js';

/**
 * JSON with object keys sorted by UTF-16 code units at every depth and no whitespace.
 * Receivers verify the raw bytes, so any stable form would validate; this one also keeps bodies
 * byte-identical to what receivers got before switching servers, for the same event. `undefined`
 * values are omitted (array items become `null`), non-finite numbers are `null`, and values with a
 * `toJSON` (dates) are replaced by it, as JSON.stringify does.
 */
export function stableStringify(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return write((value as { toJSON: () => unknown }).toJSON());
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'bigint') throw new TypeError('a bigint cannot be serialized to JSON');
  if (typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const written = write((value as Record<string, unknown>)[key]);
    if (written !== undefined) parts.push(`${JSON.stringify(key)}:${written}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The request body of one event: the event under `event` and also spread at the top level, after
 * the five envelope keys, so that an event key of the same name wins (a `notification-created`
 * event's own `timestamp` replaces the signing time).
 */
export function webhookEnvelope(type: WebhookEventType, applicationId: string, event: Record<string, unknown>, timestamp: string) {
  return { type, timestamp, applicationID: applicationId, projectID: applicationId, event, ...event };
}

export interface SignedWebhook {
  body: string;
  headers: Record<string, string>;
}

/** The signature header's value for a body sent at `timestamp`. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}:${body}`, 'utf8').digest('base64');
}

/**
 * Builds and signs one attempt: a fresh timestamp (and envelope `timestamp`) every time, so that
 * a retry hours later is still inside the receiver's accepted age.
 */
export function signWebhook(
  type: WebhookEventType,
  applicationId: string,
  event: Record<string, unknown>,
  secret: string,
  now: number = Date.now(),
): SignedWebhook {
  const timestamp = String(now);
  const body = stableStringify(webhookEnvelope(type, applicationId, event, timestamp));
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Cord-Timestamp': timestamp,
      'X-Cord-Signature': webhookSignature(secret, timestamp, body),
    },
  };
}

/** The event of the URL-verification handshake. */
export const URL_VERIFICATION_EVENT = { message: 'Please respond with a HTTP 200 status code.' } as const;

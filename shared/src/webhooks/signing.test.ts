import { parseWebhookBody, validateWebhookSignature } from '@cord-sdk/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signWebhook, stableStringify, URL_VERIFICATION_EVENT } from './signing.js';

const APP = '8a1c2d3e-0000-4000-8000-000000000001';
const SECRET = '0123456789abcdef'.repeat(4);

describe('webhook signing', () => {
  it('reproduces the original service signature of its published test vector', () => {
    const signed = signWebhook('url-verification', APP, URL_VERIFICATION_EVENT, SECRET, 1700000000000);
    expect(signed.body).toBe(
      '{"applicationID":"8a1c2d3e-0000-4000-8000-000000000001","event":{"message":"Please respond with a HTTP 200 status code."},"message":"Please respond with a HTTP 200 status code.","projectID":"8a1c2d3e-0000-4000-8000-000000000001","timestamp":"1700000000000","type":"url-verification"}',
    );
    expect(signed.headers['X-Cord-Signature']).toBe('Oay0AxcCzd8hwFyxxOAmY2JpDv7Kb3xWbTffl0MTmJo=');
    expect(signed.headers['X-Cord-Timestamp']).toBe('1700000000000');
  });

  it('is accepted by the SDK for any event, and refused when the body or the secret differs', () => {
    const event = { threadID: 't-1', content: [{ type: 'p', children: [{ text: 'héllo "you" \u2028 😀' }] }], n: 1.5, none: null };
    const signed = signWebhook('thread-message-added', APP, event, SECRET);
    const { 'X-Cord-Timestamp': timestamp, 'X-Cord-Signature': signature } = signed.headers;
    expect(() => validateWebhookSignature(signed.body, timestamp, signature, SECRET)).not.toThrow();
    expect(parseWebhookBody(signed.body)).toMatchObject({ type: 'thread-message-added', event, threadID: 't-1', projectID: APP });
    expect(() => validateWebhookSignature(signed.body.replace('t-1', 't-2'), timestamp, signature, SECRET)).toThrow(
      'Unable to verify webhook signature',
    );
    expect(() => validateWebhookSignature(signed.body, timestamp, signature, SECRET.replace('0', '1'))).toThrow();
  });

  it('is refused by the SDK once its timestamp is older than the accepted age', () => {
    const signed = signWebhook('url-verification', APP, URL_VERIFICATION_EVENT, SECRET, Date.now() - 301_000);
    expect(() =>
      validateWebhookSignature(signed.body, signed.headers['X-Cord-Timestamp'], signed.headers['X-Cord-Signature'], SECRET),
    ).toThrow('Webhook signature timestamp invalid or too old.');
  });

  it('lets an event key of the same name win over the envelope (a notification timestamp)', () => {
    const signed = signWebhook('notification-created', APP, { timestamp: '2024-01-01T00:00:00.000Z' }, SECRET, 5);
    expect(JSON.parse(signed.body).timestamp).toBe('2024-01-01T00:00:00.000Z');
    expect(signed.headers['X-Cord-Timestamp']).toBe('5');
  });
});

describe('stableStringify', () => {
  it('parses back to what JSON.stringify would give, with sorted keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(stableStringify(value))).toEqual(JSON.parse(JSON.stringify(value) ?? 'null'));
      }),
    );
  });

  it('sorts keys at every depth and drops undefined values', () => {
    expect(stableStringify({ b: 1, a: { d: undefined, c: [undefined, new Date(0)] } })).toBe(
      '{"a":{"c":[null,"1970-01-01T00:00:00.000Z"]},"b":1}',
    );
  });
});

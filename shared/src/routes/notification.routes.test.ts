/**
 * POST /v1/notifications: the body the route's schema enforces is the one its JSON Schema (the
 * OpenAPI document's) describes, aliases and the template rule included.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/support/error-of.js';
import { notificationRoutes } from './notification.routes.js';

const body = notificationRoutes.createNotification.body;
const valid = { actor_id: 'ann', recipient_id: 'bob', template: '{{actor}} waves', url: 'https://example.com', type: 'url' };
const describedAs = new Ajv2020({ strict: false, allErrors: true }).compile(body.jsonSchema());

/** Whether the route's schema accepts the body. */
function enforced(candidate: Record<string, unknown>): boolean {
  try {
    body.parse(candidate);
    return true;
  } catch {
    return false;
  }
}

describe('the notification body', () => {
  const cases: [string, Record<string, unknown>, boolean][] = [
    ['documented keys', valid, true],
    ['camelCase aliases', { ...valid, actor_id: undefined, actorID: 'ann', recipient_id: undefined, recipientID: 'bob' }, true],
    ['no actor under either spelling', { ...valid, actor_id: undefined }, false],
    ['no recipient under either spelling', { ...valid, recipient_id: undefined }, false],
    ['spaces inside the braces', { ...valid, template: 'hi {{ actor }}' }, true],
    ['a template without {{actor}}', { ...valid, template: '{{recipient}} alone' }, false],
    ['a template with a broken placeholder', { ...valid, template: '{{actor} waves' }, false],
  ];

  it.each(cases)('with %s: enforced and described alike', (_name, candidate, accepted) => {
    const sent = JSON.parse(JSON.stringify(candidate)) as Record<string, unknown>;
    expect(enforced(sent)).toBe(accepted);
    expect(describedAs(sent)).toBe(accepted);
  });

  it('lists every missing field at once, an aliased one in its place', () => {
    expect(errorOf(() => body.parse({ url: 'https://example.com' })).message).toBe('Missing required fields: actor_id, recipient_id, template and type.');
  });

  it('rejects a template without {{actor}} in its place among the keys', () => {
    const error = errorOf(() => body.parse({ ...valid, template: 'hello', url: 'not a url' }));
    expect({ code: error.code, message: error.message }).toEqual({ code: 'invalid_field', message: 'Invalid template: must contain {{actor}} variable' });
  });
});

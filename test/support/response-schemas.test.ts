/**
 * The check of every answer the integration tests receive against its route's response schema:
 * it must report a body that drifts from the schema, and never pass by checking nothing.
 */
import { ROUTES, Schema, type SuccessStatus } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { ResponseChecker, ResponseSchemaMismatch, type ReceivedAnswer } from './response-schemas.js';

const JSON_TYPE = 'application/json; charset=utf-8';

const user = {
  id: 'alice',
  email: 'alice@example.com',
  status: 'active',
  name: 'Alice',
  shortName: null,
  short_name: null,
  first_name: null,
  last_name: null,
  profilePictureURL: null,
  profile_picture_url: null,
  metadata: { team: 'a', level: 3 },
  createdTimestamp: '2024-05-01T10:00:00.000Z',
  groups: ['g1'],
  organizations: ['g1'],
  groupIDsWithLinkedChatProfile: [],
  groupIDsWithLinkedSlackProfile: [],
};

const getUser = (body: unknown, overrides: Partial<ReceivedAnswer> = {}): ReceivedAnswer => ({
  method: 'GET',
  path: '/v1/users/alice',
  status: 200,
  contentType: JSON_TYPE,
  body,
  ...overrides,
});

function mismatchOf(checker: ResponseChecker, answer: ReceivedAnswer): string {
  try {
    checker.check(answer);
  } catch (error) {
    expect(error).toBeInstanceOf(ResponseSchemaMismatch);
    return (error as Error).message;
  }
  throw new Error('the answer was not reported');
}

describe('checking answers against their route response schema', () => {
  it('counts an answer that matches its route', () => {
    const checker = new ResponseChecker();
    checker.check(getUser(user));
    checker.check(getUser(user, { path: '/V1/Users/alice/?x=1' }));
    expect(checker.count).toBe(2);
  });

  it('reports a missing key, an extra key and a wrong type, naming the route and the field', () => {
    const checker = new ResponseChecker();
    const { groups: _groups, ...missing } = user;
    expect(mismatchOf(checker, getUser(missing))).toMatch(/GET \/v1\/users\/alice \(users\.get\) answered 200 .*must have required property 'groups'/);
    expect(mismatchOf(checker, getUser({ ...user, secret: 'x' }))).toMatch(/must NOT have additional properties/);
    expect(mismatchOf(checker, getUser({ ...user, createdTimestamp: 12 }))).toMatch(/body\/createdTimestamp must be string/);
    expect(mismatchOf(checker, getUser({ ...user, createdTimestamp: 'yesterday' }))).toMatch(/body\/createdTimestamp must match format "date-time"/);
    expect(mismatchOf(checker, getUser({ ...user, metadata: { nested: {} } }))).toMatch(/body\/metadata\/nested must be string,number,boolean/);
  });

  it('reports a success status its route does not document', () => {
    const checker = new ResponseChecker();
    expect(mismatchOf(checker, getUser(user, { status: 201 }))).toMatch(/answered 201 with JSON, which its route does not document/);
  });

  it('checks message content nodes through the shared MessageNode schema', () => {
    const checker = new ResponseChecker();
    const created = { method: 'POST', path: '/v1/threads/t1/messages', status: 200, contentType: JSON_TYPE };
    checker.check({ ...created, body: { success: true, message: 'Message created.', messageID: 'm1' } });
    expect(mismatchOf(checker, { ...created, body: { success: false, message: 'Message created.', messageID: 'm1' } })).toMatch(/body\/success must be equal to constant/);
  });

  it('leaves errors, non-JSON answers and paths outside the route table alone', () => {
    const checker = new ResponseChecker();
    checker.check(getUser({ error: 'user_not_found', message: 'x' }, { status: 401 }));
    checker.check(getUser('not json', { contentType: 'text/plain' }));
    checker.check(getUser({ anything: true }, { path: '/internal/users/alice' }));
    checker.check(getUser(undefined));
    checker.check(getUser({ anything: true }, { method: 'HEAD' }));
    expect(checker.count).toBe(0);
  });

  it('finds the schema of every JSON success answer of every route in the document', () => {
    const checker = new ResponseChecker();
    let routes = 0;
    for (const route of ROUTES)
      for (const [status, answer] of Object.entries(route.response)) {
        if (!(answer instanceof Schema)) continue;
        routes++;
        const path = route.path.replace(/:(\w+)/g, 'x');
        // Whatever the body, the route's schema is found: an empty array or object is judged by it.
        const message = mismatchOrNull(checker, { method: route.method, path, status: Number(status) as SuccessStatus, contentType: JSON_TYPE, body: 42 });
        expect(message, route.id).toMatch(new RegExp(`\\(${route.id.replaceAll('.', '\\.')}\\) answered ${status} with a body outside`));
      }
    expect(routes).toBeGreaterThan(40);
  });
});

function mismatchOrNull(checker: ResponseChecker, answer: ReceivedAnswer): string | null {
  try {
    checker.check(answer);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

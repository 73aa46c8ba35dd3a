/**
 * Error messages a new user meets first, through the gateway: each says what was wrong and what
 * is allowed, with the same status and code as before.
 */
import { randomUUID } from 'node:crypto';
import { LimitParam, ROUTES } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { asCustomer, request, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { pathOf } from '../support/pages.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('error messages', async (started) => {
  ({ system, app } = started);
  expect((await app.client.put('/v1/users/alice', { name: 'Alice' })).status).toBe(200);
  expect((await app.client.put('/v1/groups/team', { name: 'Team', members: ['alice'] })).status).toBe(200);
});

describe('limit', () => {
  const withLimit = ROUTES.filter((route) => route.query && Object.values(route.query.shape).some((param) => param instanceof LimitParam));

  it.each(withLimit.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: a negative or fractional limit says a whole number from 0 is expected',
    async (_label, route) => {
      // Path ids that pass their own checks, so that the limit is what is refused (a delivery that does not exist is looked up only after).
      const path = pathOf(route, { userID: 'alice', groupID: 'team', orgID: 'team', deliveryID: randomUUID() });
      for (const limit of ['-1', '1.5'])
        expectError(await app.client.get(`${path}?limit=${limit}`), 400, 'invalid_field', 'Limit must be a whole number from 0.');
    },
  );
});

describe('a bearer token that is JWT-shaped but not a JWT', () => {
  // Three base64url segments, but the payload is not base64url-encoded JSON.
  const notAJwt = 'not.a.jwt';
  const message = 'Authorization token is not a valid JWT: its payload must be a base64url-encoded JSON object.';

  it('on an application route: 401 invalid_app_token saying it is not a valid JWT', async () => {
    expectError(await request(system.url, 'GET', '/v1/users', { token: notAJwt }), 401, 'invalid_app_token', message);
  });

  it('on a customer route: 401 invalid_customer_token saying it is not a valid JWT', async () => {
    expectError(await request(system.url, 'GET', '/v1/applications', { token: notAJwt }), 401, 'invalid_customer_token', message);
  });

  it('as signed_app_token of POST /v1/authorize: 401 invalid_app_token saying it is not a valid JWT', async () => {
    const response = await request(system.url, 'POST', '/v1/authorize', { body: { signed_app_token: notAJwt } });
    expectError(response, 401, 'invalid_app_token', 'signed_app_token is not a valid JWT: its payload must be a base64url-encoded JSON object.');
  });
});

describe('a path id that does not percent-decode to UTF-8 text', () => {
  const notDecodable = (name: string) => `${name} is not valid: its percent-encoding does not decode to UTF-8 text.`;

  it.each([
    ['an encoded lone surrogate', 'GET', '/v1/users/%ED%A0%80', 'userID'],
    ['a bad escape', 'GET', '/v1/users/%zz', 'userID'],
    ['a cut-off escape', 'PUT', '/v1/users/a%2', 'userID'],
    ['a cut-off UTF-8 sequence', 'GET', '/v1/groups/%E0%A4%A/members', 'groupID'],
    ['the second id of the path', 'GET', '/v1/threads/t/messages/%ED%A0%80', 'messageID'],
  ])('%s (%s %s): 400 invalid_field naming %s', async (_case, method, path, name) => {
    expectError(await app.client.call(method, path, method === 'PUT' ? {} : undefined), 400, 'invalid_field', notDecodable(name));
  });

  it('on a customer route, naming applicationID', async () => {
    expectError(await asCustomer(system).get('/v1/applications/%ED%A0%80'), 400, 'invalid_field', notDecodable('applicationID'));
  });

  it('is still checked after the token: without one, 401', async () => {
    expectError(await request(system.url, 'GET', '/v1/users/%ED%A0%80'), 401, 'missing_authorization_header');
  });

  it('on a path no route has: still 404', async () => {
    expectError(await app.client.get('/v1/nowhere/%ED%A0%80'), 404, 'not_found');
  });
});

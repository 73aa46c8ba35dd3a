import { describe, expect, it } from 'vitest';
import { RouteMatcher, type PathLookup } from './match.js';
import { defineRoute, type HttpMethod, type RouteDef } from './route.js';

function route(method: HttpMethod, path: string, id = `${method} ${path}`): RouteDef {
  return defineRoute({ id, method, path, service: 'identity', auth: 'app', summary: id, tag: 'test', response: {} });
}

const ROUTES = [
  route('GET', '/v1/users'),
  route('GET', '/v1/users/:userID'),
  route('PUT', '/v1/users/:userID'),
  route('DELETE', '/v1/users/:userID'),
  route('GET', '/v1/groups/:groupID/members'),
  route('POST', '/v1/groups/:groupID/members'),
  route('GET', '/v1/threads/:threadID/messages/:messageID'),
  route('POST', '/v1/applications'),
];
const matcher = new RouteMatcher(ROUTES);

function matched(lookup: PathLookup<RouteDef>): { id: string; params: Record<string, string> } {
  if (lookup.kind !== 'match') throw new Error(`expected a match, got ${JSON.stringify(lookup)}`);
  return { id: lookup.match.route.id, params: lookup.match.params };
}

describe('RouteMatcher', () => {
  it('matches literal paths and extracts parameters', () => {
    expect(matched(matcher.lookup('GET', '/v1/users'))).toEqual({ id: 'GET /v1/users', params: {} });
    expect(matched(matcher.lookup('PUT', '/v1/users/alice'))).toEqual({ id: 'PUT /v1/users/:userID', params: { userID: 'alice' } });
    expect(matched(matcher.lookup('GET', '/v1/threads/t1/messages/m2'))).toEqual({
      id: 'GET /v1/threads/:threadID/messages/:messageID',
      params: { threadID: 't1', messageID: 'm2' },
    });
  });

  it('accepts lower-case method names', () => {
    expect(matched(matcher.lookup('get', '/v1/users/a')).id).toBe('GET /v1/users/:userID');
  });

  it('matches literal segments case-insensitively but keeps parameters as sent', () => {
    expect(matched(matcher.lookup('GET', '/V1/USERS')).id).toBe('GET /v1/users');
    expect(matched(matcher.lookup('GET', '/v1/Users/Alice'))).toEqual({ id: 'GET /v1/users/:userID', params: { userID: 'Alice' } });
    expect(matched(matcher.lookup('POST', '/v1/GROUPS/G/Members'))).toEqual({
      id: 'POST /v1/groups/:groupID/members',
      params: { groupID: 'G' },
    });
  });

  it('ignores one trailing slash', () => {
    expect(matched(matcher.lookup('GET', '/v1/users/')).id).toBe('GET /v1/users');
    expect(matched(matcher.lookup('GET', '/v1/users/alice/'))).toEqual({ id: 'GET /v1/users/:userID', params: { userID: 'alice' } });
    expect(matcher.lookup('GET', '/v1/users//').kind).toBe('not_found');
  });

  it('percent-decodes parameters, so %2F carries a slash inside one parameter', () => {
    expect(matched(matcher.lookup('GET', '/v1/users/a%2Fb')).params).toEqual({ userID: 'a/b' });
    expect(matched(matcher.lookup('GET', '/v1/users/a%2fb')).params).toEqual({ userID: 'a/b' });
    expect(matched(matcher.lookup('GET', '/v1/users/john%20doe')).params).toEqual({ userID: 'john doe' });
    expect(matched(matcher.lookup('GET', '/v1/users/%F0%9F%98%80')).params).toEqual({ userID: '😀' });
    expect(matched(matcher.lookup('GET', '/v1/users/a+b')).params).toEqual({ userID: 'a+b' });
    expect(matched(matcher.lookup('GET', '/v1/users/%25')).params).toEqual({ userID: '%' });
    expect(matched(matcher.lookup('GET', '/v1/threads/a%2Fb/messages/c%3Fd')).params).toEqual({
      threadID: 'a/b',
      messageID: 'c?d',
    });
  });

  it('does not split on an encoded slash', () => {
    // Two segments after /v1/groups would be /members; an encoded slash stays inside the ID.
    expect(matched(matcher.lookup('GET', '/v1/groups/a%2Fmembers/members')).params).toEqual({ groupID: 'a/members' });
    expect(matched(matcher.lookup('GET', '/v1/users/g%2Fmembers')).id).toBe('GET /v1/users/:userID');
  });

  it('matches a parameter that does not percent-decode to UTF-8, naming it as undecodable', () => {
    for (const path of ['/v1/users/%', '/v1/users/%zz', '/v1/users/a%2', '/v1/users/%E0%A4%A', '/v1/users/%ED%A0%80']) {
      const lookup = matcher.lookup('GET', path);
      expect(lookup.kind === 'match' && { id: lookup.match.route.id, undecodable: lookup.match.undecodableParam }, path).toEqual({
        id: 'GET /v1/users/:userID',
        undecodable: 'userID',
      });
    }
    const lookup = matcher.lookup('GET', '/v1/threads/t/messages/%zz');
    expect(lookup.kind === 'match' && lookup.match.undecodableParam).toBe('messageID');
    expect(matched(matcher.lookup('GET', '/v1/users/alice'))).toEqual({ id: 'GET /v1/users/:userID', params: { userID: 'alice' } });
  });

  it('does not match empty segments', () => {
    for (const path of ['/v1//users', '//v1/users', '/v1/users//x', '/v1/groups//members', '/v1/threads//messages/m']) {
      expect(matcher.lookup('GET', path).kind, path).toBe('not_found');
    }
  });

  it('answers not_found for unknown paths', () => {
    for (const path of ['/', '', '/v1', '/v2/users', '/v1/user', '/v1/users/a/b', '/v1/usersx', '/v1/groups/g/members/x']) {
      expect(matcher.lookup('GET', path), path).toEqual({ kind: 'not_found' });
    }
  });

  it('answers method_not_allowed with every method the path allows', () => {
    const lookup = matcher.lookup('POST', '/v1/users/alice');
    expect(lookup.kind).toBe('method_not_allowed');
    if (lookup.kind === 'method_not_allowed') expect([...lookup.allowed].sort()).toEqual(['DELETE', 'GET', 'PUT']);
    expect(matcher.lookup('DELETE', '/v1/users')).toEqual({ kind: 'method_not_allowed', allowed: ['GET'], path: '/v1/users' });
    expect(matcher.lookup('GET', '/v1/applications/')).toEqual({ kind: 'method_not_allowed', allowed: ['POST'], path: '/v1/applications' });
    expect(matcher.lookup('PATCH', '/v1/groups/g/members')).toEqual({
      kind: 'method_not_allowed',
      allowed: ['GET', 'POST'],
      path: '/v1/groups/:groupID/members',
    });
  });

  it('answers method_not_allowed on a path that matches only with bad encoding: the path exists', () => {
    expect(matcher.lookup('POST', '/v1/users/%zz')).toEqual({
      kind: 'method_not_allowed',
      allowed: ['GET', 'PUT', 'DELETE'],
      path: '/v1/users/:userID',
    });
    expect(matcher.lookup('GET', '/v1/nowhere/%zz')).toEqual({ kind: 'not_found' });
  });

  it('prefers the first matching route of the table', () => {
    const table = [route('GET', '/v1/users/me', 'me'), route('GET', '/v1/users/:userID', 'any')];
    const first = new RouteMatcher(table);
    expect(matched(first.lookup('GET', '/v1/users/me')).id).toBe('me');
    expect(matched(first.lookup('GET', '/v1/users/you')).id).toBe('any');
  });
});

import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/support/error-of.js';
import { defineRoute, param, parseParams, type PathParam, type RouteDef } from './route.js';


const base = { service: 'identity', auth: 'app', summary: 's', tag: 't', response: {} } as const;

const upsertUser = defineRoute({ ...base, id: 'users.upsert', method: 'PUT', path: '/v1/users/:userID', params: { userID: param.identifier('userID') } });
/** A read route of the identity service: only its id, path and path parameters (and token kind) differ. */
const readRoute = <const P extends Record<string, PathParam>>(id: string, path: string, params: P, auth: RouteDef['auth'] = 'app') =>
  defineRoute({ ...base, auth, id, method: 'GET', path, params });

const getUser = readRoute('users.get', '/v1/users/:userID', { userID: param.identifier('userID', 'invalid_request') });
const getThreadMessages = readRoute('threads.messages', '/v1/threads/:threadID/messages', {
  threadID: param.identifierOrServerId('threadID', 'invalid_request', 'thread ID is invalid'),
});
const getMessage = readRoute('messages.get', '/v1/threads/:threadID/messages/:messageID', {
  threadID: param.identifierOrServerId('threadID', 'invalid_field'),
  messageID: param.identifier('messageID', 'invalid_field'),
});
const getApplication = readRoute(
  'applications.get',
  '/v1/applications/:applicationID',
  { applicationID: param.uuid('applicationID', 'invalid_request', 'Application ID is invalid') },
  'customer',
);
const getJob = readRoute('batch.get', '/v1/batch/:jobID', { jobID: param.uuid('jobID', 'not_found') });

const UUID = '123e4567-e89b-12d3-a456-426614174000';

describe('parseParams', () => {
  it('returns valid parameters unchanged', () => {
    expect(parseParams(upsertUser, { userID: 'a/b c' })).toEqual({ userID: 'a/b c' });
    expect(parseParams(getThreadMessages, { threadID: `cord:${UUID}` })).toEqual({ threadID: `cord:${UUID}` });
    expect(parseParams(getThreadMessages, { threadID: 'my thread' })).toEqual({ threadID: 'my thread' });
    expect(parseParams(getApplication, { applicationID: UUID })).toEqual({ applicationID: UUID });
    expect(parseParams(getMessage, { threadID: 't', messageID: 'm' })).toEqual({ threadID: 't', messageID: 'm' });
  });

  it('is a no-op for routes without parameters', () => {
    const list: RouteDef = defineRoute({ ...base, id: 'users.list', method: 'GET', path: '/v1/users' });
    expect(parseParams(list, {})).toEqual({});
  });

  it('answers invalid_field with the label on write endpoints', () => {
    for (const userID of ['', 'cord:x', 'a\u0000b', 'a\u200bb', 'x'.repeat(321)]) {
      const error = errorOf(() => parseParams(upsertUser, { userID }));
      expect({ code: error.code, status: error.status, message: error.message }).toEqual({
        code: 'invalid_field',
        status: 400,
        message: 'Input type for userID is not valid, expected identifier.',
      });
    }
  });

  it('accepts 320 code points of emoji (640 UTF-16 units)', () => {
    expect(parseParams(upsertUser, { userID: '😀'.repeat(320) })).toEqual({ userID: '😀'.repeat(320) });
  });

  it('answers invalid_request on read endpoints', () => {
    const error = errorOf(() => parseParams(getUser, { userID: 'cord:x' }));
    expect({ code: error.code, status: error.status, message: error.message }).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Input type for userID is not valid, expected identifier.',
    });
  });

  it('treats a missing parameter as the empty string, which is invalid', () => {
    expect(errorOf(() => parseParams(upsertUser, {})).code).toBe('invalid_field');
  });

  it('accepts cord:<uuid> only where the route allows server IDs', () => {
    expect(errorOf(() => parseParams(upsertUser, { userID: `cord:${UUID}` })).code).toBe('invalid_field');
    const error = errorOf(() => parseParams(getThreadMessages, { threadID: 'cord:not-a-uuid' }));
    expect({ code: error.code, message: error.message }).toEqual({ code: 'invalid_request', message: 'thread ID is invalid' });
  });

  it('checks every parameter and names the failing one', () => {
    expect(errorOf(() => parseParams(getMessage, { threadID: 't', messageID: 'cord:x' })).message).toBe(
      'Input type for messageID is not valid, expected identifier.',
    );
    expect(errorOf(() => parseParams(getMessage, { threadID: '\u0000', messageID: 'm' })).message).toBe(
      'Input type for threadID is not valid, expected identifier.',
    );
  });

  it('validates UUID parameters with the route-specific code and message', () => {
    for (const applicationID of ['x', `${UUID}x`, UUID.replaceAll('-', ''), '']) {
      const error = errorOf(() => parseParams(getApplication, { applicationID }));
      expect({ code: error.code, status: error.status, message: error.message }).toEqual({
        code: 'invalid_request',
        status: 400,
        message: 'Application ID is invalid',
      });
    }
    const job = errorOf(() => parseParams(getJob, { jobID: 'nope' }));
    expect({ code: job.code, status: job.status, message: job.message }).toEqual({
      code: 'not_found',
      status: 404,
      message: 'Input type for jobID is not valid, expected UUID.',
    });
  });
});

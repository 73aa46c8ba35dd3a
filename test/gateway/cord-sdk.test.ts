/**
 * Compatibility with the reference server SDK, @cord-sdk/server: tokens it mints are accepted
 * as they are, and its `fetchCordRESTApi` works against this API when given `api_url`
 * (it calls `${api_url}${endpoint}` with a fresh server token, and throws on non-2xx answers).
 */
import {
  fetchCordRESTApi,
  getApplicationManagementAuthToken,
  getClientAuthToken,
  getProjectManagementAuthToken,
  getServerAuthToken,
} from '@cord-sdk/server';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { request, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;
/** The SDK's base URL: it appends the endpoint without a slash. */
let apiUrl: string;

systemWithApplication('sdk app', async (started) => {
  ({ system, app } = started);
  apiUrl = `${system.url}/`;
});

describe('@cord-sdk/server', () => {
  it('mints server tokens the API accepts (HS512, app_id, iat, one-minute exp)', async () => {
    const token = getServerAuthToken(app.id, app.secret);
    const claims = decodeJwt(token);
    expect(Object.keys(claims).sort()).toEqual(['app_id', 'exp', 'iat']);
    const response = await request(system.url, 'GET', '/v1/verify', { token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, application_id: app.id, application_name: 'sdk app' });
  });

  it('mints server tokens with a longer lifetime the API accepts', async () => {
    const token = getServerAuthToken(app.id, app.secret, { expires: '12 hours' });
    expect((await request(system.url, 'GET', '/v1/users', { token })).status).toBe(200);
  });

  it('calls the API through fetchCordRESTApi', async () => {
    const verified = await fetchCordRESTApi<{ application_id: string }>('v1/verify', {
      project_id: app.id,
      project_secret: app.secret,
      api_url: apiUrl,
    });
    expect(verified).toEqual({ success: true, application_id: app.id, application_name: 'sdk app' });

    const created = await fetchCordRESTApi('v1/users/sdk-user', {
      method: 'PUT',
      project_id: app.id,
      project_secret: app.secret,
      api_url: apiUrl,
      body: { name: 'SDK User', email: 'sdk@example.com' },
    });
    expect(created).toEqual({ success: true, message: 'You successfully created user sdk-user' });

    const read = await fetchCordRESTApi<{ id: string; name: string }>('v1/users/sdk-user', {
      project_id: app.id,
      project_secret: app.secret,
      api_url: apiUrl,
    });
    expect(read).toMatchObject({ id: 'sdk-user', name: 'SDK User', email: 'sdk@example.com' });
  });

  it('surfaces API errors through fetchCordRESTApi', async () => {
    await expect(
      fetchCordRESTApi('v1/verify', { project_id: app.id, project_secret: 'f'.repeat(64), api_url: apiUrl }),
    ).rejects.toThrow(/401.*invalid_app_token/s);
    await expect(
      fetchCordRESTApi('v1/users/nobody', { project_id: app.id, project_secret: app.secret, api_url: apiUrl }),
    ).rejects.toThrow(/401.*user_not_found/s);
  });

  it('mints application-management tokens the applications API accepts', async () => {
    // fetchCordRESTApi only signs server tokens, so customer calls use fetch with the SDK's token.
    const token = getApplicationManagementAuthToken(system.customer.id, system.customer.secret);
    expect(Object.keys(decodeJwt(token)).sort()).toEqual(['customer_id', 'exp', 'iat']);
    const created = await request(system.url, 'POST', '/v1/applications', { token, body: { name: 'made by the SDK' } });
    expect(created.status).toBe(200);
    const { applicationID, secret } = created.body;

    // The new application's secret works with the SDK straight away.
    const verified = await fetchCordRESTApi('v1/verify', { project_id: applicationID, project_secret: secret, api_url: apiUrl });
    expect(verified).toEqual({ success: true, application_id: applicationID, application_name: 'made by the SDK' });

    const listed = await request(system.url, 'GET', '/v1/applications', { token });
    expect(listed.body.map((a: { id: string }) => a.id)).toContain(applicationID);

    const legacyToken = getProjectManagementAuthToken(system.customer.id, system.customer.secret);
    const deleted = await request(system.url, 'DELETE', `/v1/projects/${applicationID}`, {
      token: legacyToken,
      body: { secret },
    });
    expect(deleted.body).toEqual({ success: true, message: `You successfully deleted application ${applicationID}` });
    await expect(
      fetchCordRESTApi('v1/verify', { project_id: applicationID, project_secret: secret, api_url: apiUrl }),
    ).rejects.toThrow(/401.*application_not_found/s);
  });

  it('exchanges an SDK server token for an access token at POST /v1/authorize', async () => {
    const authorized = await request(system.url, 'POST', '/v1/authorize', {
      body: { signed_app_token: getServerAuthToken(app.id, app.secret) },
    });
    expect(authorized.status).toBe(200);
    const verified = await request(system.url, 'GET', '/v1/verify', { token: authorized.body.access_token });
    expect(verified.body).toEqual({ success: true, application_id: app.id, application_name: 'sdk app' });
  });

  it('client tokens (with user_id) are refused by the server API → 401 invalid_app_token', async () => {
    const token = getClientAuthToken(app.id, app.secret, { user_id: 'sdk-user' });
    const response = await request(system.url, 'GET', '/v1/users', { token });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('invalid_app_token');
    const authorized = await request(system.url, 'POST', '/v1/authorize', { body: { signed_app_token: token } });
    expect(authorized.body.error).toBe('invalid_app_token');
  });

  it('server tokens are refused by the applications API, customer tokens by the rest', async () => {
    const server = getServerAuthToken(app.id, app.secret);
    const management = getApplicationManagementAuthToken(system.customer.id, system.customer.secret);
    expect((await request(system.url, 'GET', '/v1/applications', { token: server })).body.error).toBe('invalid_customer_token');
    expect((await request(system.url, 'GET', '/v1/users', { token: management })).body.error).toBe('invalid_app_token');
  });
});

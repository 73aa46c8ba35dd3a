/**
 * Which secrets the gateway verifies a server token with: the current one, and the previous one
 * only until its expiry, judged at each request from the cached credentials (a cached entry must
 * not stretch a rotation's grace period). The whole path runs in test/identity/application-secrets.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { acceptedSecrets } from '../../services/gateway/src/auth/authenticate.js';

const NOW = Date.parse('2026-11-24T12:00:00.000Z');
const base = { id: '2b0c5f8e-2d4c-4a57-9d38-58a4c0b3a1f1', name: 'app', customerId: '8a1c2d3e-0000-4000-8000-000000000001', secret: 'current' };

describe('acceptedSecrets', () => {
  it('is the current secret alone when there is no previous one', () => {
    expect(acceptedSecrets(base, NOW)).toEqual(['current']);
    expect(acceptedSecrets({ ...base, previousSecret: null, previousSecretExpiresAt: null }, NOW)).toEqual(['current']);
  });

  it('adds the previous secret, after the current one, until the moment it expires', () => {
    const rotated = { ...base, previousSecret: 'previous', previousSecretExpiresAt: new Date(NOW + 1000).toISOString() };
    expect(acceptedSecrets(rotated, NOW)).toEqual(['current', 'previous']);
    expect(acceptedSecrets(rotated, NOW + 999)).toEqual(['current', 'previous']);
    expect(acceptedSecrets(rotated, NOW + 1000)).toEqual(['current']);
    expect(acceptedSecrets(rotated, NOW + 3600_000)).toEqual(['current']);
  });

  it('ignores a previous secret without a readable expiry', () => {
    expect(acceptedSecrets({ ...base, previousSecret: 'previous', previousSecretExpiresAt: 'not a date' }, NOW)).toEqual(['current']);
    expect(acceptedSecrets({ ...base, previousSecret: 'previous' }, NOW)).toEqual(['current']);
  });
});

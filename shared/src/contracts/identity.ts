/**
 * The identity service's internal HTTP API: what the gateway (and later other services) may ask
 * it. Producer and consumer both validate against these schemas.
 */
import { s } from '../schema/index.js';

export const identityInternal = {
  applicationCredentials: {
    method: 'GET',
    path: (applicationId: string) => `/internal/applications/${encodeURIComponent(applicationId)}/credentials`,
    response: s.object({
      id: s.uuid(),
      name: s.string(),
      customerId: s.uuid(),
      secret: s.string({ minLength: 1 }),
    }),
  },
  customerCredentials: {
    method: 'GET',
    path: (customerId: string) => `/internal/customers/${encodeURIComponent(customerId)}/credentials`,
    response: s.object({ id: s.uuid(), secret: s.string({ minLength: 1 }) }),
  },
  session: {
    method: 'GET',
    path: (sessionId: string) => `/internal/sessions/${encodeURIComponent(sessionId)}`,
    response: s.object({
      id: s.uuid(),
      applicationId: s.uuid(),
      /** null when the session was revoked. */
      expiresAt: s.string().nullable(),
    }),
  },
} as const;

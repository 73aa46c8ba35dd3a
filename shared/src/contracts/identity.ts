/**
 * The identity service's internal HTTP API: what the gateway and the other services may ask it.
 * Producer and consumer both validate against these schemas.
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
      /**
       * The secret before the last rotation while server tokens signed with it are still accepted,
       * and until when (ISO-8601); absent or null otherwise. Events are signed with `secret` only.
       */
      previousSecret: s.string({ minLength: 1 }).nullable().optional(),
      previousSecretExpiresAt: s.string().nullable().optional(),
      /** Where the application wants its events, and which types (null: never set). */
      eventWebhookURL: s.string().nullable().optional(),
      eventWebhookSubscriptions: s.array(s.string()).nullable().optional(),
    }),
  },
  customers: {
    method: 'GET',
    path: '/internal/customers',
    response: s.object({
      customers: s.array(s.object({ id: s.uuid(), createdAt: s.string(), applications: s.integer({ minimum: 0 }) })),
      total: s.integer({ minimum: 0 }),
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

/**
 * Users and a group, looked up in one call by the conversation and notification services before
 * they write (checks are consistent at once: there is no window where a user just created is unknown).
 */
export const identityLookup = {
  method: 'POST',
  path: '/internal/lookup',
  request: s.object({
    userIds: s.array(s.string()),
    groupId: s.string().nullable().optional(),
  }),
  response: s.object({
    users: s.array(
      s.object({
        id: s.string(),
        name: s.string().nullable(),
        shortName: s.string().nullable(),
        status: s.enum(['active', 'deleted']),
        /** For the user objects of outgoing events. */
        profilePictureURL: s.string().nullable(),
        metadata: s.flatObject(),
      }),
    ),
    /** null when groupId was not asked for or does not exist. */
    group: s
      .object({
        id: s.string(),
        status: s.enum(['active', 'deleted']),
        /** Which of the asked users are members of the group. */
        memberIds: s.array(s.string()),
      })
      .nullable(),
  }),
} as const;

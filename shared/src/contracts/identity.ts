/**
 * The identity service's internal HTTP API: what the gateway and the other services' workers may
 * ask it. Producer and consumer both validate against these schemas.
 */
import { ApiError } from '../errors.js';
import type { InternalClient } from '../http/internal-client.js';
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
      /** Where the application wants its events, and which types (null: never set). */
      eventWebhookURL: s.string().nullable().optional(),
      eventWebhookSubscriptions: s.array(s.string()).nullable().optional(),
    }),
  },
  customerCredentials: {
    method: 'GET',
    path: (customerId: string) => `/internal/customers/${encodeURIComponent(customerId)}/credentials`,
    response: s.object({ id: s.uuid(), secret: s.string({ minLength: 1 }) }),
  },
  /**
   * Whether the application exists, asked by purge jobs before they remove an application's data.
   * The answer is definitive: while a DELETE of the application has not committed or rolled back,
   * it waits for that outcome (a 503 when that takes too long: ask again later).
   */
  applicationExists: {
    method: 'GET',
    path: (applicationId: string) => `/internal/applications/${encodeURIComponent(applicationId)}/exists`,
    response: s.object({ exists: s.boolean() }),
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
 * they write (decisions.md: checks are consistent at once, no window where a new user is unknown).
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

/**
 * Asks identity whether an application exists (identityInternal.applicationExists). Any failure
 * is a 5xx (503 when identity cannot tell yet or is unreachable, 502 for an answer outside the
 * contract), never a 4xx that a job would take for its client's fault and not retry.
 */
export async function applicationExists(identity: InternalClient, applicationId: string, requestId: string): Promise<boolean> {
  const contract = identityInternal.applicationExists;
  try {
    return contract.response.parse(await identity.call(contract.method, contract.path(applicationId), { requestId })).exists;
  } catch (error) {
    if (error instanceof ApiError && error.status >= 500) throw error;
    throw new ApiError('bad_gateway', 'The identity service answered with an invalid response.');
  }
}

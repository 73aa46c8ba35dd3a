/**
 * Headers the gateway sets on requests it forwards. It strips them from client requests first,
 * and services trust them only when the internal credential is present and correct.
 */
export const INTERNAL_HEADERS = {
  internalToken: 'x-collab-internal-token',
  applicationId: 'x-collab-application-id',
  customerId: 'x-collab-customer-id',
  /** The viewer of a client token, as base64url JSON (contracts/client-session.ts). */
  viewer: 'x-collab-viewer',
  requestId: 'x-request-id',
} as const;

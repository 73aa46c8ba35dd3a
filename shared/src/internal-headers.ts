/**
 * Headers the gateway sets on requests it forwards. It strips them from client requests first,
 * and services trust them only when the internal credential is present and correct.
 */
export const INTERNAL_HEADERS = {
  internalToken: 'x-collab-internal-token',
  applicationId: 'x-collab-application-id',
  customerId: 'x-collab-customer-id',
  requestId: 'x-request-id',
} as const;

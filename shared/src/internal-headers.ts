/**
 * Headers the gateway sets on requests it forwards. It strips them from client requests first,
 * and services trust them only when the internal credential is present and correct.
 */
export const INTERNAL_HEADERS = {
  internalToken: 'x-collab-internal-token',
  applicationId: 'x-collab-application-id',
  customerId: 'x-collab-customer-id',
  /** The viewer of a client token: its user, and its group when the token names one. */
  viewerUserId: 'x-collab-viewer-user-id',
  viewerGroupId: 'x-collab-viewer-group-id',
  requestId: 'x-request-id',
} as const;

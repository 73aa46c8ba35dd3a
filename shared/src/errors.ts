/**
 * The one error catalog. Every error a client can see has a code here, with its HTTP status
 * and the default message used when a handler does not give a more specific one. Errors render
 * as `{error, message}`; a dependency that is unreachable or failing answers 503
 * `service_unavailable`, and an unexpected error an opaque 500.
 */
export const ERROR_CATALOG = {
  invalid_request: { status: 400, message: 'Invalid request.' },
  unexpected_field: { status: 400, message: 'Unexpected field.' },
  missing_field: { status: 400, message: 'Missing field in request.' },
  invalid_field: { status: 400, message: 'Invalid field type.' },
  missing_authorization_header: {
    status: 401,
    message: 'Authorization header bearer token must be present.',
  },
  invalid_authorization_header: { status: 401, message: 'Invalid authorization header.' },
  invalid_app_token: { status: 401, message: 'Invalid app token.' },
  invalid_customer_token: { status: 401, message: 'Invalid customer token.' },
  invalid_access_token: { status: 401, message: 'Invalid access token.' },
  invalid_session: { status: 403, message: 'Invalid client token.' },
  expired_access_token: { status: 401, message: 'Access token has expired.' },
  application_not_found: { status: 401, message: 'Application not found.' },
  user_not_found: { status: 401, message: 'Platform user not found.' },
  organization_not_found: { status: 401, message: 'Platform organization not found.' },
  group_not_found: { status: 404, message: 'Platform group not found.' },
  invalid_user_id: { status: 401, message: 'Invalid user id' },
  user_not_in_organization: {
    status: 401,
    message: 'The user is not a member of the oranization.',
  },
  user_already_exists: { status: 409, message: 'Platform user already exists.' },
  organization_already_exists: { status: 409, message: 'Platform organization already exists.' },
  thread_not_found: { status: 404, message: 'Thread not found.' },
  thread_already_exists: { status: 409, message: 'Thread already exists.' },
  message_not_found: { status: 404, message: 'Message not found.' },
  message_already_exists: { status: 409, message: 'Message already exists.' },
  message_not_appendable: {
    status: 400,
    message: 'The request references a message that can not support appending. It must contain a markdown node only.',
  },
  idempotency_key_in_use: { status: 409, message: 'A request with this Idempotency-Key is still running. Try again.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used for another request.' },
  file_not_found: { status: 404, message: 'File not found.' },
  file_belongs_to_different_user: {
    status: 403,
    message: 'Cannot attach files owned by another user',
  },
  webhook_url_not_verified: { status: 400, message: 'The webhook URL could not be verified.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'Method not allowed.' },
  request_timeout: { status: 408, message: 'The request was not received in time.' },
  payload_too_large: { status: 413, message: 'Request body is too large.' },
  headers_too_large: { status: 431, message: 'Request headers are too large.' },
  rate_limited: { status: 429, message: 'Too many requests.' },
  error: { status: 500, message: 'internal server error' },
  bad_gateway: { status: 502, message: 'The upstream service answered with an invalid response.' },
  service_unavailable: { status: 503, message: 'A required service is unavailable. Try again.' },
  gateway_timeout: { status: 504, message: 'The upstream service did not answer in time.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ErrorBody {
  error: ErrorCode;
  message: string;
}

/**
 * The one error class. Carries a catalog code; the status comes from the catalog unless an
 * endpoint documents another one for the same code (group_not_found is 401 on some
 * endpoints and 404 on others).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message?: string,
    options: { status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? ERROR_CATALOG[code].status;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: this.code, message: this.message };
  }
}

/** `503 service_unavailable` saying what failed: a dependency is down and retrying in a second may succeed. */
export function unavailable(message: string): ApiError {
  return new ApiError('service_unavailable', message, { headers: { 'Retry-After': '1' } });
}

export function isErrorBody(value: unknown): value is ErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ErrorBody).error === 'string' &&
    (value as ErrorBody).error in ERROR_CATALOG &&
    typeof (value as ErrorBody).message === 'string'
  );
}

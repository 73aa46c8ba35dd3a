/** Why an outbound request failed; the message is written for a delivery log (`lastError`). */
export type OutboundErrorKind =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'blocked_address'
  | 'timeout'
  | 'too_many_redirects'
  | 'body_too_large'
  | 'unsupported_content_type'
  | 'network';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

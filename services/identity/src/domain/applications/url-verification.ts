/**
 * The URL-verification handshake: before an application's eventWebhookURL changes, the new URL
 * must show that it is the customer's receiver by answering a signed `url-verification` event
 * with exactly 200. A failure answers `400 webhook_url_not_verified` (the code existing clients
 * handle) with a message that says why, and is logged for the operator.
 */
import { ApiError, OutboundError, signWebhook, URL_VERIFICATION_EVENT, type Logger, type OutboundClient } from '@collab/shared';

/** Until the response status is known; the body is never read. */
const VERIFICATION_TIMEOUT_MS = 3000;

/**
 * Posts the handshake to `url`, signed with the application's secret like every event, through
 * the outbound guard (redirects followed, at most 3). Any final status but 200 fails it; an
 * address the guard refuses fails it before any call.
 */
export async function verifyWebhookUrl(
  outbound: OutboundClient,
  logger: Logger,
  applicationId: string,
  secret: string,
  url: string,
): Promise<void> {
  const reason = await failureOf(outbound, applicationId, secret, url);
  if (reason === null) return;
  logger.warn({ applicationID: applicationId, url, reason }, 'eventWebhookURL not verified');
  throw new ApiError('webhook_url_not_verified', reason);
}

/** Why the handshake failed, in the words of the original's messages where it had one; null when it passed. */
async function failureOf(outbound: OutboundClient, applicationId: string, secret: string, url: string): Promise<string | null> {
  const refusal = await outbound.addressRefusal(url);
  if (refusal !== null) return `Cannot verify webhook URL '${url}': ${refusal}.`;
  const { body, headers } = signWebhook('url-verification', applicationId, URL_VERIFICATION_EVENT, secret);
  try {
    const response = await outbound.request({
      url,
      method: 'POST',
      headers,
      body,
      timeoutMs: VERIFICATION_TIMEOUT_MS,
      maxRedirects: 3,
      maxBodyBytes: 0,
      overLimit: 'truncate',
    });
    if (response.status === 200) return null;
    return `Request to '${url}' failed with status ${response.status} but status 200 expected.`;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    if (error.kind === 'timeout') return `URL verification aborted: no response from '${url}' within ${VERIFICATION_TIMEOUT_MS / 1000} seconds.`;
    // No address, a refused connection, TLS, an invalid answer, too many redirects, a redirect to a refused address.
    return `Cannot verify webhook URL '${url}': ${error.message.replace(/\.$/, '')}.`;
  }
}

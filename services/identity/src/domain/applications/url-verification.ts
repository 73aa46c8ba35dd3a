/**
 * The URL-verification handshake: before an application's eventWebhookURL changes, the new URL
 * must show that it is the customer's receiver by answering a signed `url-verification` event
 * with exactly 200. Its answers and messages are the ones existing clients already handle, so
 * they read the same failures.
 */
import { ApiError, OutboundError, signWebhook, URL_VERIFICATION_EVENT, type OutboundClient } from '@collab/shared';

/** Until the response status is known; the body is never read. */
const VERIFICATION_TIMEOUT_MS = 3000;
const MORE_INFORMATION = ' For more information see: https://docs.cord.com/reference/events-webhook/events/url-verification';

/**
 * Posts the handshake to `url`, signed with the application's secret like every event, through
 * the outbound guard (redirects followed, at most 3). Any final status but 200 fails it.
 */
export async function verifyWebhookUrl(outbound: OutboundClient, applicationId: string, secret: string, url: string): Promise<void> {
  const { body, headers } = signWebhook('url-verification', applicationId, URL_VERIFICATION_EVENT, secret);
  let reason: string;
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
    if (response.status === 200) return;
    reason = `Request to '${url}' failed with status ${response.status} but status 200 expected.`;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    // Every other failure (no address, refused connection, TLS, a blocked address or scheme) reads the same.
    reason =
      error.kind === 'timeout'
        ? `URL verification aborted: no response from '${url}' within ${VERIFICATION_TIMEOUT_MS / 1000} seconds.`
        : `Cannot verify webhook URL '${url}'.`;
  }
  throw new ApiError('webhook_url_not_verified', `${reason}${MORE_INFORMATION}`);
}

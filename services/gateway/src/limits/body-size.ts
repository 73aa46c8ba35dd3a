/**
 * Request bodies over 10 MB are refused at the gateway from their Content-Length, before a byte
 * of them is forwarded, and the connection closed once the rest has been read and thrown away
 * (within bounds: see createHttpServer), so that a client still sending reads the 413. File
 * uploads (multipart) are exempt: the conversation service holds them to MAX_FILE_BYTES while it
 * stores the stream; so are customer dumps, which identity stores as they stream in. A body without a Content-Length (chunked) is counted by the service that
 * reads it, which answers the same 413.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, MAX_JSON_BODY_BYTES, type RouteDef } from '@collab/shared';

export function refuseOversizedBody(route: RouteDef, headers: IncomingHttpHeaders): void {
  if (route.bodyType !== undefined) return;
  // Node has already refused a Content-Length that is not a number.
  if (Number(headers['content-length'] ?? 0) > MAX_JSON_BODY_BYTES)
    throw new ApiError('payload_too_large', 'Request body is larger than 10 MB.', { headers: { Connection: 'close' } });
}

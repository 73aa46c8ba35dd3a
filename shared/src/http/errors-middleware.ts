import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';

/** Maps body-parser's failures to the API's codes. */
function fromBodyParser(error: { type?: string; status?: number }): ApiError | null {
  switch (error.type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', 'Request body is larger than 10 MB.');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'encoding.unsupported':
    case 'charset.unsupported':
    case 'entity.verify.failed':
      return new ApiError('invalid_request', 'Request body could not be read.');
    default:
      return null;
  }
}

/**
 * The one place errors become HTTP: ApiError renders as `{error, message}` with its status;
 * anything else is logged with its stack and answered with an opaque 500.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const apiError =
      error instanceof ApiError ? error : fromBodyParser(error as { type?: string; status?: number });
    const log = req.log ?? logger;
    if (!apiError) {
      log.error({ err: error, method: req.method, path: req.path }, 'unexpected error');
    }
    const rendered = apiError ?? new ApiError('error');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(rendered.status).set(rendered.headers).json(rendered.toBody());
  };
}

export const notFoundMiddleware: RequestHandler = (req) => {
  throw new ApiError('not_found', `No route for ${req.method} ${req.path}.`);
};

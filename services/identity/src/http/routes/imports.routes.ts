/**
 * POST /v1/customer/imports (a customer dump, streamed as the body or as the `dump` part of
 * multipart form data), GET /v1/customer/imports/<importID> and GET /v1/customer/dbdump (the
 * export); customer tokens only.
 */
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { ApiError, customerOf, dumpText, IncompleteDumpError, identityRoutes as routes, routeParams, routeQuery, type HandlerMap, type ServiceRequest } from '@collab/shared';
import busboy from 'busboy';
import { exportDump, type ExportContext } from '../../domain/import/export-dump.js';
import * as imports from '../../domain/import/imports.js';

/** A request whose body is multipart form data (a body, with that media type). */
function isMultipart(req: ServiceRequest): boolean {
  const hasBody = req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;
  return hasBody && (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase() === 'multipart/form-data';
}

/** The dump's bytes: the body itself, or its multipart part named `dump`. */
function dumpOf(req: ServiceRequest): Promise<Readable> {
  if (!isMultipart(req)) return Promise.resolve(req);
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 0 } });
    } catch {
      reject(new ApiError('invalid_request', 'Expected multipart/form-data with the dump as its `dump` part.'));
      return;
    }
    let found = false;
    parser.on('file', (name, stream) => {
      if (name !== 'dump' || found) {
        stream.resume();
        return;
      }
      found = true;
      resolve(stream);
    });
    parser.on('error', () => reject(new ApiError('invalid_request', 'The multipart body could not be read.')));
    parser.on('close', () => {
      if (!found) reject(new ApiError('missing_field', 'The multipart body has no `dump` part.'));
    });
    req.pipe(parser);
  });
}

export function importHandlers(ctx: imports.ImportsContext & ExportContext): HandlerMap {
  return {
    [routes.importDump.id]: async (req, res) => {
      const customerId = customerOf(req);
      const { overwrite } = routeQuery(routes.importDump, req);
      let importId: string;
      try {
        importId = await imports.startImport(ctx, await dumpOf(req), { customerId, overwrite: overwrite === 'true', requestId: req.ctx.requestId });
      } catch (error) {
        if (error instanceof IncompleteDumpError) throw new ApiError('invalid_request', error.message);
        throw error;
      }
      res.statusCode = 202;
      return { success: true, message: 'Import accepted.', importID: importId };
    },

    [routes.dbdump.id]: async (req, res) => {
      const lines = exportDump(ctx, customerOf(req), req.ctx.requestId);
      // The first lines are read before answering, so that a failure to start is an error answer.
      let first = await lines.next();
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      try {
        for (; !first.done && !res.destroyed; first = await lines.next())
          if (!res.write(first.value)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      } catch (error) {
        // Headers are sent: say so where the original did, in place of COMMIT;.
        req.log.warn({ err: (error as Error).message }, 'export stopped');
        res.write(dumpText.failure(`The export stopped: ${(error as Error).message}`));
      }
      res.end();
    },

    [routes.getImport.id]: async (req) => {
      const { importID } = routeParams(routes.getImport, req);
      const found = await imports.findImportOfCustomer(ctx.db, customerOf(req), importID);
      if (!found) throw new ApiError('not_found', 'Import not found.');
      return found;
    },
  };
}

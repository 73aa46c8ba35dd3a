/** The receiving ends of a dump import (contracts/imports.ts) and export (contracts/exports.ts), served under /internal by each service that holds a part. */
import { exportInternal, type ExportedKind, type ExportPage, type ExportRequest } from '../contracts/exports.js';
import { importInternal, type ImportedRow, type ImportKind, type ImportResponse } from '../contracts/imports.js';
import { internalApplicationOf, internalRoute, SMALL_INTERNAL_BODY_BYTES, type InternalRoute } from './internal-routes.js';
import { MAX_INTERNAL_BODY_BYTES } from './json-body.js';

export type ImportHandlers = {
  [K in ImportKind]?: (applicationId: string, rows: ImportedRow<K>[], overwrite: boolean) => Promise<ImportResponse<K>>;
};

export function importRoutes(handlers: ImportHandlers): InternalRoute[] {
  return (Object.keys(handlers) as ImportKind[]).map((kind) => {
    const contract = importInternal[kind];
    const handle = handlers[kind] as (applicationId: string, rows: unknown[], overwrite: boolean) => Promise<unknown>;
    return internalRoute('POST', contract.path, MAX_INTERNAL_BODY_BYTES, (req) => {
      const applicationId = internalApplicationOf(req);
      const { overwrite, rows } = contract.check(req.body);
      return handle(applicationId, rows, overwrite);
    });
  });
}

export type ExportHandlers = {
  [K in ExportedKind]?: (applicationId: string, request: ExportRequest) => Promise<ExportPage>;
};

/** The receiving end of an export (contracts/exports.ts): one page of a table's rows per call. */
export function exportRoutes(handlers: ExportHandlers): InternalRoute[] {
  return (Object.keys(handlers) as ExportedKind[]).map((kind) => {
    const contract = exportInternal[kind];
    return internalRoute('POST', contract.path, SMALL_INTERNAL_BODY_BYTES, (req) =>
      handlers[kind]!(internalApplicationOf(req), contract.request.parse(req.body)),
    );
  });
}

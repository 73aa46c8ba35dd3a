/** The receiving ends of a dump import (contracts/imports.ts) and export (contracts/exports.ts), mounted at /internal by each service that holds a part. */
import express, { type Router } from 'express';
import { exportInternal, type ExportedKind, type ExportPage, type ExportRequest } from '../contracts/exports.js';
import { importInternal, type ImportedRow, type ImportKind, type ImportResponse } from '../contracts/imports.js';
import { ApiError } from '../errors.js';
import { MAX_INTERNAL_BODY_BYTES } from './json-body.js';

export type ImportHandlers = {
  [K in ImportKind]?: (applicationId: string, rows: ImportedRow<K>[], overwrite: boolean) => Promise<ImportResponse<K>>;
};

export function importRouter(handlers: ImportHandlers): Router {
  const router = express.Router();
  for (const kind of Object.keys(handlers) as ImportKind[]) {
    const contract = importInternal[kind];
    const handle = handlers[kind] as (applicationId: string, rows: unknown[], overwrite: boolean) => Promise<unknown>;
    router.post(contract.path.replace('/internal', ''), express.json({ limit: MAX_INTERNAL_BODY_BYTES }), async (req, res) => {
      const applicationId = req.ctx.applicationId;
      if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
      const { overwrite, rows } = contract.check(req.body);
      res.json(await handle(applicationId, rows, overwrite));
    });
  }
  return router;
}

export type ExportHandlers = {
  [K in ExportedKind]?: (applicationId: string, request: ExportRequest) => Promise<ExportPage>;
};

/** The receiving end of an export (contracts/exports.ts): one page of a table's rows per call. */
export function exportRouter(handlers: ExportHandlers): Router {
  const router = express.Router();
  for (const kind of Object.keys(handlers) as ExportedKind[]) {
    const contract = exportInternal[kind];
    router.post(contract.path.replace('/internal', ''), express.json({ limit: '64kb' }), async (req, res) => {
      const applicationId = req.ctx.applicationId;
      if (!applicationId) throw new ApiError('invalid_request', 'The application header is required.');
      res.json(await handlers[kind]!(applicationId, contract.request.parse(req.body)));
    });
  }
  return router;
}

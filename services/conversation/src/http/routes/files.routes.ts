/** POST /v1/files (multipart upload) and the signed download link. */
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { applicationOf, conversationRoutes as routes, type HandlerMap } from '@collab/shared';
import type { ConversationContext } from '../../domain/context.js';
import * as files from '../../domain/files/files.js';

/** A file name as an RFC 8187 ext-value: encodeURIComponent leaves ' ( ) * unescaped, which attr-char does not allow. */
function extValue(name: string): string {
  return `UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

export function fileHandlers(ctx: ConversationContext): HandlerMap {
  return {
    [routes.uploadFile.id]: async (req) => {
      const uploaded = (fileID: string) => ({ success: true, message: 'File uploaded.', fileID });
      const fileID = await files.uploadFile(ctx, applicationOf(req), { headers: req.headers, body: req }, {
        requestId: req.ctx.requestId,
        bodyFingerprint: (fingerprint) => req.idempotency.bodyFingerprint(fingerprint),
        recordWrite: (tx, id) => req.idempotency.record(tx, { status: 200, body: uploaded(id) }),
      });
      return uploaded(fileID);
    },

    [routes.downloadFile.id]: async (req, res) => {
      const { file, chunks } = await files.openSignedFile(ctx, String(req.params.fileID), req.query.expires, req.query.signature);
      res.setHeader('Content-Type', file.mimeType);
      res.setHeader('Content-Length', String(file.size));
      res.setHeader('Content-Disposition', `attachment; filename*=${extValue(file.name)}`);
      res.setHeader('Cache-Control', 'private, max-age=3600');
      await pipeline(Readable.from(chunks()), res);
    },
  };
}

import type { Request } from 'express';
import type { ConversationContext } from '../../domain/context.js';
import type { ViewOptions } from '../../domain/messages/message-views.js';

/** Download links point at the public API: PUBLIC_URL, or the host the client called through the gateway. */
export function viewOptions(ctx: ConversationContext, req: Request): ViewOptions {
  const forwarded = (name: string) => String(req.headers[name] ?? '').split(',')[0].trim();
  const host = forwarded('x-forwarded-host') || req.headers.host;
  const proto = forwarded('x-forwarded-proto') || req.protocol;
  // Links append `/v1/files/…`: a PUBLIC_URL given with a trailing slash must not double it.
  const linkBase = ctx.files.publicUrl ? ctx.files.publicUrl.replace(/\/+$/, '') : `${proto}://${host}`;
  return { linkBase, fileUrlSecret: ctx.files.urlSecret };
}

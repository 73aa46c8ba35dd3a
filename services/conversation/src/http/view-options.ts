/** How a request asks for views: the public base URL of its download links and the key that signs them. */
import { requestBaseUrl, type ServiceRequest } from '@collab/shared';
import type { ConversationContext } from '../domain/context.js';
import type { ViewOptions } from '../domain/messages/message-views.js';

/** Download links point at the public API: PUBLIC_URL, or the base URL the client called (through the gateway). */
export function linkBaseOf(ctx: ConversationContext, requestBase: string): string {
  // Links append `/v1/files/…`: a PUBLIC_URL given with a trailing slash must not double it.
  return ctx.files.publicUrl ? ctx.files.publicUrl.replace(/\/+$/, '') : requestBase;
}

export function viewOptions(ctx: ConversationContext, req: ServiceRequest): ViewOptions {
  return { linkBase: linkBaseOf(ctx, requestBaseUrl(req)), fileUrlSecret: ctx.files.urlSecret };
}

/** POST /email/inbound: a reply to a notification mail, as an inbound-mail parser posts it. */
import { mailRoutes as routes, type HandlerMap } from '@collab/shared';
import type { MailServiceContext } from '../../domain/context.js';
import { postInboundReply } from '../../domain/mails/inbound.js';
import { readForm } from '../form.js';

export function inboundHandlers(ctx: MailServiceContext): HandlerMap {
  return {
    [routes.inbound.id]: async (req) => {
      const { fields, files } = await readForm(req);
      // The fields this route reads, validated as any body; a parser's many others are ignored.
      const known = Object.fromEntries(Object.entries(fields).filter(([name]) => Object.hasOwn(routes.inbound.body.shape, name)));
      const body = routes.inbound.body.parse(known);
      const withFiles = files > 0 || Number(body.attachments ?? 0) > 0;
      const outcome = await postInboundReply(ctx, { to: body.to, text: body.text, headers: body.headers, withFiles }, req.ctx.requestId);
      if ('dropped' in outcome) {
        req.log.info({ reason: outcome.dropped }, 'reply by mail dropped');
        return { success: true, message: `The reply was not posted: ${outcome.dropped}.`, messageID: null };
      }
      return { success: true, message: 'The reply was posted.', messageID: outcome.messageID };
    },
  };
}

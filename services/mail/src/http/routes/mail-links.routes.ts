/** The links of notification mails: the unsubscribe page and its one-click POST. */
import { mailRoutes as routes, routeQuery, type HandlerMap } from '@collab/shared';
import type { Response } from 'express';
import type { MailServiceContext } from '../../domain/context.js';
import { isUnsubscribeToken, unsubscribe, unsubscribePages } from '../../domain/mails/unsubscribe.js';

function html(res: Response, page: string): void {
  res.status(200).type('html').set('cache-control', 'no-store').send(page);
}

export function mailLinkHandlers(ctx: MailServiceContext): HandlerMap {
  return {
    [routes.unsubscribePage.id]: async (req, res) => {
      const { token } = routeQuery(routes.unsubscribePage, req);
      html(res, token !== undefined && (await isUnsubscribeToken(ctx, token)) ? unsubscribePages.confirm(token) : unsubscribePages.invalid());
    },

    // The page's form and a mail client's one-click POST (RFC 8058) do the same; the body says nothing more.
    [routes.unsubscribe.id]: async (req, res) => {
      const { token } = routeQuery(routes.unsubscribe, req);
      html(res, (await unsubscribe(ctx, token, req.ctx.requestId)) ? unsubscribePages.done() : unsubscribePages.invalid());
    },
  };
}

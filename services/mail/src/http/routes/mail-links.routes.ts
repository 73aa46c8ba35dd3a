/** The links of notification mails: the button's redirect, the unsubscribe page and its one-click POST. */
import { mailRoutes as routes, routeParams, routeQuery, type HandlerMap } from '@collab/shared';
import type { Response } from 'express';
import type { MailServiceContext } from '../../domain/context.js';
import { redirectTarget } from '../../domain/mails/redirect.js';
import { isUnsubscribeToken, unsubscribe, unsubscribePages } from '../../domain/mails/unsubscribe.js';

function html(res: Response, page: string): void {
  res.status(200).type('html').set('cache-control', 'no-store').send(page);
}

export function mailLinkHandlers(ctx: MailServiceContext): HandlerMap {
  return {
    [routes.redirect.id]: async (req, res) => {
      const { linkID } = routeParams(routes.redirect, req);
      const target = await redirectTarget(ctx, linkID, req.ctx.requestId);
      if (target) res.set('cache-control', 'no-store').redirect(302, target);
      else html(res, unsubscribePages.invalid());
    },

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

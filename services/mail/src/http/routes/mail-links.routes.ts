/** The links of notification mails: the button's redirect, the unsubscribe page and its one-click POST. */
import type { ServerResponse } from 'node:http';
import { mailRoutes as routes, routeParams, routeQuery, type HandlerMap } from '@collab/shared';
import type { MailServiceContext } from '../../domain/context.js';
import { redirectTarget } from '../../domain/mails/redirect.js';
import { isUnsubscribeToken, unsubscribe, unsubscribePages } from '../../domain/mails/unsubscribe.js';

function html(res: ServerResponse, page: string): void {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(page) });
  res.end(page);
}

/** A 302 to `url`, written as a header can carry it: what a URL cannot hold percent-encoded, its escapes kept. */
function redirect(res: ServerResponse, url: string): void {
  const location = url.replace(/%(?![0-9A-Fa-f]{2})|[^\x21-\x7E]+/g, (match) => (match === '%' ? '%25' : encodeURI(match)));
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store', 'Content-Length': 0 });
  res.end();
}

export function mailLinkHandlers(ctx: MailServiceContext): HandlerMap {
  return {
    [routes.redirect.id]: async (req, res) => {
      const { linkID } = routeParams(routes.redirect, req);
      const target = await redirectTarget(ctx, linkID, req.ctx.requestId);
      if (target) redirect(res, target);
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

/** /v1/threads handlers: parse, call one use case, shape the response. */
import { applicationOf, conversationRoutes as routes, routeBody, routeParams, routeQuery, setPageHeaders, type HandlerMap } from '@collab/shared';
import type { ConversationContext } from '../../domain/context.js';
import { viewOptions } from '../view-options.js';
import * as threads from '../../domain/threads/threads.js';

export function threadHandlers(ctx: ConversationContext): HandlerMap {
  return {
    [routes.listThreads.id]: async (req, res) => {
      const query = routeQuery(routes.listThreads, req);
      const page = await threads.listThreads(ctx, applicationOf(req), query, req.ctx.requestId);
      setPageHeaders(res, { path: '/v1/threads', query: req.query as Record<string, string>, total: page.total, nextToken: page.nextToken });
      return page.threads;
    },

    [routes.createThread.id]: async (req) => {
      const body = routeBody(routes.createThread, req);
      const threadID = await threads.createThread(ctx, applicationOf(req), body, req.ctx.requestId);
      return { success: true, message: 'Thread created.', threadID };
    },

    [routes.getThread.id]: (req) => {
      const { threadID } = routeParams(routes.getThread, req);
      return threads.getThread(ctx, applicationOf(req), threadID, req.ctx.requestId);
    },

    [routes.updateThread.id]: async (req) => {
      const { threadID } = routeParams(routes.updateThread, req);
      const body = routeBody(routes.updateThread, req);
      await threads.updateThread(ctx, applicationOf(req), threadID, body, req.ctx.requestId, viewOptions(ctx, req).linkBase);
      return { success: true, message: `You successfully updated thread ${threadID}` };
    },

    [routes.deleteThread.id]: async (req) => {
      const { threadID } = routeParams(routes.deleteThread, req);
      await threads.deleteThread(ctx, applicationOf(req), threadID);
      return { success: true, message: `You successfully deleted thread ${threadID}` };
    },
  };
}

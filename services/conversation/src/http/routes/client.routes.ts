/** /v1/client/* handlers of conversation: parse, call one use case as the token's viewer. */
import { applicationOf, clientConversationRoutes as routes, routeParams, routeQuery, viewerOf, type HandlerMap } from '@collab/shared';
import * as client from '../../domain/client/client-threads.js';
import type { ConversationContext } from '../../domain/context.js';
import { viewOptions } from '../view-options.js';

/** The viewer the gateway verified; a client route never runs without one. */
export function clientHandlers(ctx: ConversationContext): HandlerMap {
  return {
    [routes.clientMessage.id]: (req) => {
      const { messageID } = routeParams(routes.clientMessage, req);
      return client.message(ctx, applicationOf(req), viewerOf(req), messageID, viewOptions(ctx, req));
    },

    [routes.clientThreads.id]: (req) => {
      const query = routeQuery(routes.clientThreads, req);
      return client.threads(ctx, applicationOf(req), viewerOf(req), query, viewOptions(ctx, req), req.ctx.requestId);
    },

    [routes.clientThread.id]: (req) => {
      const { threadID } = routeParams(routes.clientThread, req);
      const { initialFetchCount } = routeQuery(routes.clientThread, req);
      return client.thread(ctx, applicationOf(req), viewerOf(req), threadID, initialFetchCount, viewOptions(ctx, req), req.ctx.requestId);
    },

    [routes.clientThreadCounts.id]: (req) => {
      const { filter } = routeQuery(routes.clientThreadCounts, req);
      return client.threadCounts(ctx, applicationOf(req), viewerOf(req), filter);
    },
  };
}

/** Message handlers under /v1/threads/<ID>/messages and /v1/messages. */
import { applicationOf, conversationRoutes as routes, routeBody, routeParams, routeQuery, type HandlerMap } from '@collab/shared';
import type { ConversationContext } from '../../domain/context.js';
import { appendToMessage } from '../../domain/messages/append-message.js';
import { createMessage } from '../../domain/messages/create-message.js';
import * as messages from '../../domain/messages/messages.js';
import { updateMessage } from '../../domain/messages/update-message.js';
import { viewOptions } from '../view-options.js';

export function messageHandlers(ctx: ConversationContext): HandlerMap {
  return {
    [routes.listThreadMessages.id]: (req) => {
      const { threadID } = routeParams(routes.listThreadMessages, req);
      const { sortDirection } = routeQuery(routes.listThreadMessages, req);
      return messages.listThreadMessages(ctx, applicationOf(req), threadID, sortDirection ?? 'descending', viewOptions(ctx, req));
    },

    [routes.createMessage.id]: async (req) => {
      const body = routeBody(routes.createMessage, req);
      const { threadID } = routeParams(routes.createMessage, req);
      const created = (messageID: string) => ({ success: true, message: 'Message created.', messageID });
      const messageID = await createMessage(ctx, applicationOf(req), threadID, body, {
        requestId: req.ctx.requestId,
        linkBase: viewOptions(ctx, req).linkBase,
        recordWrite: (tx, id) => req.idempotency.record(tx, { status: 200, body: created(id) }),
      });
      return created(messageID);
    },

    [routes.getMessage.id]: (req) => {
      const { threadID, messageID } = routeParams(routes.getMessage, req);
      return messages.getMessage(ctx, applicationOf(req), threadID, messageID, viewOptions(ctx, req));
    },

    [routes.updateMessage.id]: async (req) => {
      const body = routeBody(routes.updateMessage, req);
      const { threadID, messageID } = routeParams(routes.updateMessage, req);
      await updateMessage(ctx, applicationOf(req), threadID, messageID, body, req.ctx.requestId, viewOptions(ctx, req).linkBase);
      return { success: true, message: `You successfully updated message ${messageID}` };
    },

    [routes.appendToMessage.id]: async (req) => {
      const { text } = routeBody(routes.appendToMessage, req);
      const { threadID, messageID } = routeParams(routes.appendToMessage, req);
      const appended = { success: true, message: `You successfully updated message ${messageID}` };
      await appendToMessage(ctx, applicationOf(req), threadID, messageID, text, {
        requestId: req.ctx.requestId,
        recordWrite: req.idempotency.keyed ? (tx) => req.idempotency.record(tx, { status: 200, body: appended }) : undefined,
      });
      return appended;
    },

    [routes.deleteMessage.id]: async (req) => {
      const { threadID, messageID } = routeParams(routes.deleteMessage, req);
      await messages.deleteMessage(ctx, applicationOf(req), threadID, messageID);
      return { success: true, message: `You successfully deleted message ${messageID}` };
    },

    [routes.listMessages.id]: (req) => {
      const query = routeQuery(routes.listMessages, req);
      return messages.listMessages(ctx, applicationOf(req), query, viewOptions(ctx, req), req.ctx.requestId);
    },
  };
}

/**
 * The conversation service's internal API (contracts in @collab/shared `conversationInternal`):
 * what the notification service shows of messages and threads, and this service's side of the
 * deletion cascade, and its part of importing and exporting a customer dump.
 */
import {
  cascadeRoute,
  conversationInternal,
  exportRoutes,
  importRoutes,
  internalApplicationOf,
  internalRoute,
  MAX_INTERNAL_BODY_BYTES,
  type CascadeTarget,
  type InternalRoute,
} from '@collab/shared';
import type { ConversationContext } from '../domain/context.js';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';
import { messageExcerpt, messageStates, notificationViews, postReply, unsubscribeFromThread } from '../domain/notification-targets/notification-targets.js';
import { linkBaseOf } from './view-options.js';

// A user's every notification may name a message: each request takes as many as a body may hold.
const LIMIT = MAX_INTERNAL_BODY_BYTES;

export function internalRoutes(
  ctx: ConversationContext,
  cascade: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>,
): InternalRoute[] {
  return [
    internalRoute('POST', conversationInternal.messageStates.path, LIMIT, async (req) => {
      const { messageRefs } = conversationInternal.messageStates.request.parse(req.body);
      return { messages: await messageStates(ctx, internalApplicationOf(req), messageRefs) };
    }),

    internalRoute('POST', conversationInternal.views.path, LIMIT, async (req) => {
      const request = conversationInternal.views.request.parse(req.body);
      const linkBase = linkBaseOf(ctx, request.linkBase);
      return notificationViews(ctx, internalApplicationOf(req), { ...request, linkBase }, req.ctx.requestId);
    }),

    internalRoute('POST', conversationInternal.excerpt.path, LIMIT, async (req) => {
      const { messageRef } = conversationInternal.excerpt.request.parse(req.body);
      return messageExcerpt(ctx, internalApplicationOf(req), messageRef);
    }),

    internalRoute('POST', conversationInternal.unsubscribe.path, LIMIT, async (req) => {
      const { threadRef, userId } = conversationInternal.unsubscribe.request.parse(req.body);
      return { found: await unsubscribeFromThread(ctx, internalApplicationOf(req), threadRef, userId) };
    }),

    internalRoute('POST', conversationInternal.postReply.path, LIMIT, async (req) => {
      const { linkBase, ...reply } = conversationInternal.postReply.request.parse(req.body);
      return { messageID: await postReply(ctx, internalApplicationOf(req), reply, { requestId: req.ctx.requestId, linkBase: linkBaseOf(ctx, linkBase) }) };
    }),

    // Its part of a customer dump's import and export (threads, messages, reactions, mentions, participants).
    ...importRoutes(importHandlers(ctx)),
    ...exportRoutes(exportHandlers(ctx)),
    cascadeRoute(cascade),
  ];
}

/**
 * The conversation service's internal API (contracts in @collab/shared `conversationInternal`):
 * what the notification service shows of messages and threads, and this service's side of the
 * deletion cascade, and its part of importing and exporting a customer dump.
 */
import { ApiError, cascadeRouter, conversationInternal, exportRouter, importRouter, MAX_INTERNAL_BODY_BYTES, type CascadeTarget } from '@collab/shared';
import express, { type Request, type Router } from 'express';
import type { ConversationContext } from '../domain/context.js';
import { exportHandlers } from '../domain/import/export.js';
import { importHandlers } from '../domain/import/import.js';
import { messageExcerpt, messageStates, notificationViews, postReply, unsubscribeFromThread } from '../domain/notification-targets/notification-targets.js';
import { linkBaseOf } from './view-options.js';

function applicationHeader(req: Request): string {
  if (!req.ctx.applicationId) throw new ApiError('invalid_request', 'The application header is required.');
  return req.ctx.applicationId;
}

const internalPath = (path: string) => path.replace('/internal', '');

export function internalRouter(
  ctx: ConversationContext,
  cascade: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>,
): Router {
  const router = express.Router();
  // A user's every notification may name a message: the request takes as many as a body may hold.
  const json = express.json({ limit: MAX_INTERNAL_BODY_BYTES });

  router.post(internalPath(conversationInternal.messageStates.path), json, async (req, res) => {
    const { messageRefs } = conversationInternal.messageStates.request.parse(req.body);
    res.json({ messages: await messageStates(ctx, applicationHeader(req), messageRefs) });
  });

  router.post(internalPath(conversationInternal.views.path), json, async (req, res) => {
    const request = conversationInternal.views.request.parse(req.body);
    const linkBase = linkBaseOf(ctx, request.linkBase);
    res.json(await notificationViews(ctx, applicationHeader(req), { ...request, linkBase }, req.ctx.requestId));
  });

  router.post(internalPath(conversationInternal.excerpt.path), json, async (req, res) => {
    const { messageRef } = conversationInternal.excerpt.request.parse(req.body);
    res.json(await messageExcerpt(ctx, applicationHeader(req), messageRef));
  });

  router.post(internalPath(conversationInternal.unsubscribe.path), json, async (req, res) => {
    const { threadRef, userId } = conversationInternal.unsubscribe.request.parse(req.body);
    res.json({ found: await unsubscribeFromThread(ctx, applicationHeader(req), threadRef, userId) });
  });

  router.post(internalPath(conversationInternal.postReply.path), json, async (req, res) => {
    const { linkBase, ...reply } = conversationInternal.postReply.request.parse(req.body);
    res.json({ messageID: await postReply(ctx, applicationHeader(req), reply, { requestId: req.ctx.requestId, linkBase: linkBaseOf(ctx, linkBase) }) });
  });

  // Its part of a customer dump's import and export (threads, messages, reactions, mentions, participants).
  router.use(importRouter(importHandlers(ctx)));
  router.use(exportRouter(exportHandlers(ctx)));
  router.use(cascadeRouter(cascade));
  return router;
}

/**
 * The `/v1/client/*` reads (original-extras §4, decision 53): client token only, as the viewer it
 * names, within the viewer's groups. Read-only; no other token kind is taken here.
 */
import { ApiError } from '../errors.js';
import { filterId, filterLocation, filterMetadata, filterResolvedStatus, QueryParam, q, s, type FilterKeyParser, type JsonSchema } from '../schema/index.js';
import { presenceQuery, userLocationView } from './presence.routes.js';
import { defineRoute, param } from './route.js';
import { messageView, notificationUserView, notificationView, threadView } from './views.js';

/** ClientUserData (§4.6): the user as a notification names them, the same fields and display names. */
export const clientUserView = notificationUserView;

/** `users`: a JSON array of strings or numbers. */
export class UserIdsQueryParam extends QueryParam<string[]> {
  parse(raw: unknown): string[] {
    try {
      const parsed: unknown = typeof raw === 'string' ? JSON.parse(raw) : undefined;
      if (!Array.isArray(parsed) || !parsed.every((id) => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))))
        throw new Error('not ids');
      return parsed.map(String);
    } catch {
      throw new ApiError('invalid_request', '"users" must be a JSON array of user IDs.');
    }
  }
  jsonSchema(): JsonSchema {
    return { type: 'string', description: 'URI-encoded JSON array of user IDs' };
  }
}

const clientRoute = { service: 'identity', auth: 'client', tag: 'Client reads' } as const;

export const clientIdentityRoutes = {
  clientViewer: defineRoute({
    ...clientRoute,
    id: 'client.viewer',
    method: 'GET',
    path: '/v1/client/viewer',
    summary: 'The viewer, with their groups and notification preferences',
    response: {
      200: s.object({
        ...clientUserView.shape,
        organizationID: s.string().nullable(),
        groupID: s.string().nullable(),
        notificationPreferences: s.object({ sendViaEmail: s.boolean(), sendViaSlack: s.boolean() }),
        isSlackConnected: s.boolean(),
        organizationIsSlackConnected: s.boolean(),
        groupIsSlackConnected: s.boolean(),
        groups: s.array(s.string()),
      }),
    },
  }),
  clientUser: defineRoute({
    ...clientRoute,
    id: 'client.user',
    method: 'GET',
    path: '/v1/client/user/:userID',
    summary: 'A user who shares a group with the viewer',
    params: { userID: param.identifier('userID', 'invalid_request') },
    response: { 200: clientUserView },
  }),
  clientUsers: defineRoute({
    ...clientRoute,
    id: 'client.users',
    method: 'GET',
    path: '/v1/client/users',
    summary: 'Users who share a group with the viewer, null for the others',
    query: q.object({ users: new UserIdsQueryParam('URI-encoded JSON array of user IDs.') }),
    response: { 200: s.record(clientUserView.nullable()) },
  }),
  clientGroupMembers: defineRoute({
    ...clientRoute,
    id: 'client.groupMembers',
    method: 'GET',
    path: '/v1/client/groupMembers/:groupID',
    summary: "The first members of one of the viewer's groups",
    params: { groupID: param.identifier('groupID', 'invalid_request') },
    response: { 200: s.object({ groupMembers: s.array(clientUserView), loading: s.literal(false), hasMore: s.boolean() }) },
  }),
  clientPresence: defineRoute({
    ...clientRoute,
    id: 'client.presence',
    method: 'GET',
    path: '/v1/client/presence',
    summary: "Presence at a location, in the viewer's groups",
    query: presenceQuery,
    response: { 200: s.array(userLocationView) },
  }),
};

/** Filter `viewer`: "subscribed", "mentioned" or an array of them (several: any of them). */
export const filterViewer: FilterKeyParser<('subscribed' | 'mentioned')[]> = (value) => {
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0 || !values.every((item) => item === 'subscribed' || item === 'mentioned'))
    throw new ApiError('invalid_field', '"viewer" must be "subscribed", "mentioned" or an array of them.');
  return values as ('subscribed' | 'mentioned')[];
};

/** The thread filter of the client reads (§4.4); `groupID` narrows to one of the viewer's groups (decision 53). */
const clientThreadFilter = q.filter(
  {
    location: filterLocation,
    metadata: filterMetadata,
    resolvedStatus: filterResolvedStatus,
    viewer: filterViewer,
    groupID: filterId('groupID'),
    organizationID: filterId('organizationID'),
  },
  'URI-encoded JSON: {"location", "metadata", "resolvedStatus", "viewer", "groupID"}.',
);

/** ThreadActivitySummary (§4.6, §4.7): counts over the viewer's threads from their read state. */
export const threadCountsView = s.object({
  total: s.integer({ minimum: 0 }),
  unread: s.integer({ minimum: 0 }),
  unreadSubscribed: s.integer({ minimum: 0 }),
  new: s.integer({ minimum: 0 }),
  resolved: s.integer({ minimum: 0 }),
  empty: s.integer({ minimum: 0 }),
});

/** ClientMessageData (§4.6): the message with whether the viewer has seen it. */
export const clientMessageView = s.object({ ...messageView.shape, seen: s.boolean() });

/** ThreadSummary (§4.6): the thread with the viewer's read state and its first and last messages. */
export const threadSummaryView = s.object({
  ...threadView.shape,
  unread: s.integer({ minimum: 0 }),
  viewerIsThreadParticipant: s.boolean(),
  firstMessage: clientMessageView.nullable(),
  lastMessage: clientMessageView.nullable(),
});

export const MAX_INITIAL_FETCH_COUNT = 1000;

/** `initialFetchCount`: a whole number from 0, capped at 1000; absent is `undefined` (decision 53). */
export class InitialFetchCountParam extends QueryParam<number | undefined> {
  parse(raw: unknown): number | undefined {
    if (raw === undefined || raw === '') return undefined;
    if (typeof raw !== 'string' || !/^-?\d+$/.test(raw.trim()))
      throw new ApiError('invalid_field', '"initialFetchCount" must be a number.');
    const count = Number(raw);
    if (count < 0) throw new ApiError('invalid_field', '"initialFetchCount" must not be negative.');
    return Math.min(count, MAX_INITIAL_FETCH_COUNT);
  }
  jsonSchema(): JsonSchema {
    return { type: 'integer', minimum: 0, maximum: MAX_INITIAL_FETCH_COUNT };
  }
}
export const clientConversationRoutes = {
  clientThreads: defineRoute({
    ...clientRoute,
    service: 'conversation',
    id: 'client.threads',
    method: 'GET',
    path: '/v1/client/threads',
    summary: "The first page of the viewer's threads, with their counts",
    query: q.object({
      filter: clientThreadFilter,
      sortBy: q.enum(['first_message_timestamp', 'most_recent_message_timestamp'], {
        code: 'invalid_field',
        message: '"sortBy" must be "first_message_timestamp" or "most_recent_message_timestamp".',
      }),
      sortDirection: q.enum(['ascending', 'descending'], {
        code: 'invalid_field',
        message: '"sortDirection" must be "ascending" or "descending".',
      }),
      initialFetchCount: new InitialFetchCountParam('Number of threads; default 10, at most 1000.'),
    }),
    response: {
      200: s.object({ threads: s.array(threadSummaryView), counts: threadCountsView, loading: s.literal(false), hasMore: s.boolean() }),
    },
  }),
  clientThread: defineRoute({
    ...clientRoute,
    service: 'conversation',
    id: 'client.thread',
    method: 'GET',
    path: '/v1/client/thread/:threadID',
    summary: "A thread of the viewer's groups with its first window of messages",
    params: { threadID: param.identifierOrServerId('threadID', 'invalid_field') },
    query: q.object({ initialFetchCount: new InitialFetchCountParam('Number of the newest messages to answer.') }),
    response: {
      200: s.object({ thread: threadSummaryView, messages: s.array(clientMessageView), loading: s.literal(false), hasMore: s.boolean() }),
    },
  }),
  clientMessage: defineRoute({
    ...clientRoute,
    service: 'conversation',
    id: 'client.message',
    method: 'GET',
    path: '/v1/client/message/:messageID',
    summary: "A message of a thread in the viewer's groups, with whether the viewer has seen it",
    params: { messageID: param.identifierOrServerId('messageID', 'invalid_field') },
    response: { 200: clientMessageView },
  }),
  clientThreadCounts: defineRoute({
    ...clientRoute,
    service: 'conversation',
    id: 'client.threadCounts',
    method: 'GET',
    path: '/v1/client/threadCounts',
    summary: "Counts of the viewer's threads: total, unread, new, unreadSubscribed, resolved, empty",
    query: q.object({ filter: clientThreadFilter }),
    response: { 200: threadCountsView },
  }),
};

export const clientNotificationRoutes = {
  clientNotifications: defineRoute({
    ...clientRoute,
    service: 'notification',
    id: 'client.notifications',
    method: 'GET',
    path: '/v1/client/notifications',
    summary: "The viewer's newest notifications",
    response: { 200: s.object({ notifications: s.array(notificationView), loading: s.literal(false), hasMore: s.boolean() }) },
  }),
  clientNotificationCounts: defineRoute({
    ...clientRoute,
    service: 'notification',
    id: 'client.notificationCounts',
    method: 'GET',
    path: '/v1/client/notificationCounts',
    summary: "How many of the viewer's notifications are unread",
    response: { 200: s.object({ unread: s.integer({ minimum: 0 }) }) },
  }),
};

/** Public routes owned by the conversation service: threads, messages and files. */
import { pageCursors } from '../pagination/index.js';
import {
  filterId,
  filterLocation,
  filterMetadata,
  filterResolvedStatus,
  filterTimeRange,
  q,
  s,
} from '../schema/index.js';
import { MessageContentSchema } from './message-content.js';
import { defineRoute, param, type RawAnswer } from './route.js';
import { messageView, pageOf, successView, successWith, threadView } from './views.js';

const reaction = () => s.string({ minLength: 1, maxLength: 127 });
const addReactions = s.array(s.object({ reaction: reaction(), userID: s.string(), timestamp: s.dateTime().optional() }));
const removeReactions = s.array(s.object({ reaction: reaction(), userID: s.string() }));
const addAttachments = s.array(s.object({ type: s.enum(['file']), id: s.string() }));
const removeAttachments = s.array(s.object({ type: s.enum(['file', 'link_preview']), id: s.string() }));

/** Thread-creation parameters; `groupID` or its alias `organizationID` is required. */
const threadCreationFields = {
  location: s.flatObject(),
  url: s.string(),
  name: s.string(),
  // Declared after the required keys, so that a missing group is listed after them.
  groupID: s.string().optional(),
  organizationID: s.string().optional(),
  metadata: s.flatObject().optional(),
  extraClassnames: s.string().nullable().optional(),
  addSubscribers: s.array(s.string()).optional(),
  /** Deprecated; accepted and ignored. */
  resolved: s.boolean().optional(),
};

const messageFields = {
  type: s.enum(['action_message', 'user_message']).optional(),
  createdTimestamp: s.dateTime().optional(),
  iconURL: s.uri().nullable().optional(),
  metadata: s.flatObject().optional(),
  url: s.string().nullable().optional(),
  updatedTimestamp: s.dateTime().nullable().optional(),
  deletedTimestamp: s.dateTime().nullable().optional(),
  translationKey: s.string().nullable().optional(),
  extraClassnames: s.string().nullable().optional(),
  skipLinkPreviews: s.boolean().optional(),
  addReactions: addReactions.optional(),
  addAttachments: addAttachments.optional(),
};

const threadParam = (code: 'invalid_field' | 'invalid_request') => ({
  threadID: param.identifierOrServerId('threadID', code, code === 'invalid_request' ? 'thread ID is invalid' : undefined),
});
const messageParams = (code: 'invalid_field' | 'invalid_request') => ({
  ...threadParam(code),
  messageID: param.identifierOrServerId('messageID', code),
});

const FILE_ANSWER: RawAnswer = {
  mediaType: '*/*',
  description: "The file's bytes, with its own Content-Type and a Content-Disposition naming it.",
  schema: { type: 'string', format: 'binary' },
};

export const conversationRoutes = {
  listThreads: defineRoute({
    id: 'threads.list',
    method: 'GET',
    path: '/v1/threads',
    service: 'conversation',
    auth: 'app',
    tag: 'Threads',
    summary: 'List threads, newest activity first (array; Link and X-Total-Count headers)',
    query: q.object({
      limit: q.limit(),
      token: q.token(pageCursors.threads),
      filter: q.filter({
        location: filterLocation,
        metadata: filterMetadata,
        groupID: filterId('groupID'),
        organizationID: filterId('organizationID'),
        firstMessageTimestamp: filterTimeRange('firstMessageTimestamp'),
        mostRecentMessageTimestamp: filterTimeRange('mostRecentMessageTimestamp'),
        resolvedStatus: filterResolvedStatus,
      }),
    }),
    response: { 200: s.array(threadView) },
  }),
  createThread: defineRoute({
    id: 'threads.create',
    method: 'POST',
    path: '/v1/threads',
    service: 'conversation',
    auth: 'app',
    tag: 'Threads',
    summary: 'Create a thread without a message',
    body: s.object({ id: s.identifier().optional(), ...threadCreationFields }, { alternatives: [['groupID', 'organizationID']] }),
    response: { 200: successWith('threadID') },
  }),
  getThread: defineRoute({
    id: 'threads.get',
    method: 'GET',
    path: '/v1/threads/:threadID',
    service: 'conversation',
    auth: 'app',
    tag: 'Threads',
    summary: 'Get a thread',
    params: threadParam('invalid_request'),
    response: { 200: threadView },
  }),
  updateThread: defineRoute({
    id: 'threads.update',
    method: 'PUT',
    path: '/v1/threads/:threadID',
    service: 'conversation',
    auth: 'app',
    tag: 'Threads',
    summary: 'Update a thread: resolve, reopen, rename, move, subscribers, seen state',
    params: threadParam('invalid_field'),
    body: s.object({
      id: s.string().optional(),
      resolved: s.boolean().optional(),
      resolvedTimestamp: s.dateTime().nullable().optional(),
      userID: s.string().optional(),
      metadata: s.flatObject().optional(),
      name: s.string().optional(),
      url: s.string().optional(),
      location: s.flatObject().optional(),
      groupID: s.string().optional(),
      organizationID: s.string().optional(),
      extraClassnames: s.string().nullable().optional(),
      typing: s.array(s.string()).optional(),
      seenByUsers: s.array(s.object({ userID: s.string(), seen: s.boolean() })).optional(),
      addSubscribers: s.array(s.string()).optional(),
      removeSubscribers: s.array(s.string()).optional(),
    }),
    response: { 200: successView },
  }),
  deleteThread: defineRoute({
    id: 'threads.delete',
    method: 'DELETE',
    path: '/v1/threads/:threadID',
    service: 'conversation',
    auth: 'app',
    tag: 'Threads',
    summary: 'Delete a thread and its messages',
    params: threadParam('invalid_field'),
    response: { 200: successView },
  }),

  listThreadMessages: defineRoute({
    id: 'messages.listInThread',
    method: 'GET',
    path: '/v1/threads/:threadID/messages',
    service: 'conversation',
    auth: 'app',
    tag: 'Messages',
    summary: 'All messages of a thread',
    params: threadParam('invalid_request'),
    query: q.object({
      sortDirection: q.enum(['ascending', 'descending'], {
        code: 'invalid_request',
        message: "sortDirection value is invalid: must be 'ascending' or 'descending'",
      }),
    }),
    response: { 200: s.array(messageView) },
  }),
  createMessage: defineRoute({
    id: 'messages.create',
    method: 'POST',
    path: '/v1/threads/:threadID/messages',
    service: 'conversation',
    auth: 'app',
    idempotent: true,
    tag: 'Messages',
    summary: 'Add a message to a thread, creating the thread with createThread',
    params: threadParam('invalid_field'),
    body: s.object({
      authorID: s.identifier(),
      content: new MessageContentSchema(),
      id: s.identifier().optional(),
      ...messageFields,
      subscribeToThread: s.boolean().optional(),
      // No `alternatives` here: createThread is ignored beyond the schema when the thread exists,
      // so a missing groupID is reported only when the thread is created.
      createThread: s.object(threadCreationFields).optional(),
    }),
    response: { 200: successWith('messageID') },
  }),
  getMessage: defineRoute({
    id: 'messages.get',
    method: 'GET',
    path: '/v1/threads/:threadID/messages/:messageID',
    service: 'conversation',
    auth: 'app',
    tag: 'Messages',
    summary: 'Get a message',
    params: messageParams('invalid_request'),
    response: { 200: messageView },
  }),
  updateMessage: defineRoute({
    id: 'messages.update',
    method: 'PUT',
    path: '/v1/threads/:threadID/messages/:messageID',
    service: 'conversation',
    auth: 'app',
    tag: 'Messages',
    summary: 'Update a message: content, reactions, attachments, soft delete',
    params: messageParams('invalid_field'),
    body: s.object({
      id: s.string().optional(),
      authorID: s.string().optional(),
      content: new MessageContentSchema().optional(),
      ...messageFields,
      removeReactions: removeReactions.optional(),
      removeAttachments: removeAttachments.optional(),
      deleted: s.boolean().optional(),
    }),
    response: { 200: successView },
  }),
  appendToMessage: defineRoute({
    id: 'messages.append',
    method: 'POST',
    path: '/v1/threads/:threadID/messages/:messageID/append',
    service: 'conversation',
    auth: 'app',
    // A retry after a timeout would append the text twice: the key makes it safe.
    idempotent: true,
    tag: 'Messages',
    summary: "Append text to a message whose content is one markdown node (streaming a bot's answer)",
    params: messageParams('invalid_field'),
    body: s.object({ text: s.string() }),
    response: { 200: successView },
  }),
  deleteMessage: defineRoute({
    id: 'messages.delete',
    method: 'DELETE',
    path: '/v1/threads/:threadID/messages/:messageID',
    service: 'conversation',
    auth: 'app',
    tag: 'Messages',
    summary: 'Permanently delete a message',
    params: messageParams('invalid_field'),
    response: { 200: successView },
  }),
  uploadFile: defineRoute({
    id: 'files.upload',
    method: 'POST',
    path: '/v1/files',
    service: 'conversation',
    auth: 'app',
    idempotent: true,
    tag: 'Files',
    summary: 'Upload a file (multipart form data: file, ownerID, optional name) to attach to messages',
    bodyType: 'multipart',
    response: { 200: successWith('fileID') },
  }),
  downloadFile: defineRoute({
    id: 'files.download',
    method: 'GET',
    path: '/v1/files/:fileID',
    service: 'conversation',
    // The signed link in an attachment's `url` is the credential; it expires after an hour.
    auth: 'none',
    tag: 'Files',
    summary: 'Download a file through a signed link from a message attachment',
    response: { 200: FILE_ANSWER },
  }),
  listMessages: defineRoute({
    id: 'messages.list',
    method: 'GET',
    path: '/v1/messages',
    service: 'conversation',
    auth: 'app',
    tag: 'Messages',
    summary: 'All messages of the application, oldest first',
    query: q.object({
      limit: q.limit(),
      token: q.token(pageCursors.messages),
      filter: q.filter({
        metadata: filterMetadata,
        location: filterLocation,
        authorID: filterId('authorID'),
        groupID: filterId('groupID'),
        organizationID: filterId('organizationID'),
        threadID: filterId('threadID'),
      }),
    }),
    response: { 200: pageOf('messages', messageView) },
  }),
};

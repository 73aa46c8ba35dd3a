/**
 * Public routes owned by the identity service: authentication, groups, users, organizations, batch,
 * import and export; the application routes are in applications.routes.ts.
 *
 * Over 300 lines because it is a table: one declarative entry per route, and groups and their
 * earlier-generation organizations share their request schemas, so splitting it would scatter them.
 */
import { pageCursors } from '../pagination/index.js';
import { filterMetadata, q, s } from '../schema/index.js';
import { applicationRoutes } from './applications.routes.js';
import { defineRoute, param, prefixKeys, type RawAnswer } from './route.js';
import { userFields } from './user-fields.js';
import {
  batchStatusView,
  groupDetailsView,
  groupListItemView,
  groupMemberView,
  importView,
  legacyUserView,
  pageOf,
  successView,
  successWith,
  userDetailsView,
  userListItemView,
} from './views.js';

const groupStatus = s.enum(['active', 'deleted']);

const groupBody = s.object({
  name: s.string().optional(),
  status: groupStatus.optional(),
  metadata: s.flatObject().optional(),
  members: s.array(s.externalId()).optional(),
});

const membersBody = s.object({
  add: s.array(s.externalId()).optional(),
  remove: s.array(s.externalId()).optional(),
});

const upsertUserBody = s.object({
  ...userFields,
  addGroups: s.array(s.string({ minLength: 1 })).optional(),
  removeGroups: s.array(s.string({ minLength: 1 })).optional(),
});

/** Limits of POST /v1/batch. */
export const BATCH_LIMITS = { users: 10_000, groups: 1_000 } as const;

const batchGroupItem = s.object({ id: s.externalId({ identifier: true }), ...groupBody.shape });

/**
 * POST /v1/batch: `groups` and its earlier-generation alias
 * `organizations` (when both are present, `groups` is used). Items name their path in errors
 * (`users/3/email`). Also the payload of the `batch.apply` job.
 */
export const batchBody = s.object({
  users: s.array(s.object({ id: s.externalId({ identifier: true }), ...userFields }), { maxItems: BATCH_LIMITS.users }).optional(),
  groups: s.array(batchGroupItem, { maxItems: BATCH_LIMITS.groups }).optional(),
  organizations: s.array(batchGroupItem, { maxItems: BATCH_LIMITS.groups }).optional(),
});

const groupParam = { groupID: param.identifier('orgID') };
const groupReadParam = { groupID: param.identifier('orgID', 'invalid_request') };
const orgParam = { orgID: param.identifier('orgID') };
const orgReadParam = { orgID: param.identifier('orgID', 'invalid_request') };
const userParam = { userID: param.identifier('userID') };
const userReadParam = { userID: param.identifier('userID', 'invalid_request') };

const membersQuery = q.object({ limit: q.limit(), token: q.token(pageCursors.groupMembers) });

/** The earlier generation's writes answer `{success: true}` alone. */
const bareSuccess = s.object({ success: s.literal(true) });

const groupMembersPage = pageOf('users', groupMemberView);

/** `failedDeletionIDs` (and its alias `failedDeletionFileIDs`): files of the user that could not be deleted. */
const deletedUser = s.object({
  ...successWith('userID').shape,
  failedDeletionIDs: s.array(s.string()),
  failedDeletionFileIDs: s.array(s.string()),
});

const DUMP_ANSWER: RawAnswer = {
  mediaType: 'text/plain',
  description: 'The dump, as text/plain; it ends with COMMIT; only when whole (an error half-way ends it with a `-- <error>` comment).',
  schema: { type: 'string' },
};

export const identityRoutes = {
  authorize: defineRoute({
    id: 'auth.authorize',
    method: 'POST',
    path: '/v1/authorize',
    service: 'identity',
    auth: 'none',
    tag: 'Authentication',
    summary: 'Exchange a server token for a 24-hour access token',
    body: s.object({ signed_app_token: s.jwt() }),
    response: { 200: s.object({ access_token: s.jwt(), expires: s.dateTime() }) },
  }),
  verify: defineRoute({
    id: 'auth.verify',
    method: 'GET',
    path: '/v1/verify',
    service: 'identity',
    auth: 'app',
    tag: 'Authentication',
    summary: 'Check a token and name its application',
    response: { 200: s.object({ success: s.literal(true), application_id: s.uuid(), application_name: s.string() }) },
  }),

  upsertGroup: defineRoute({
    id: 'groups.upsert',
    method: 'PUT',
    path: '/v1/groups/:groupID',
    service: 'identity',
    auth: 'app',
    tag: 'Groups',
    summary: 'Create or update a group',
    params: groupParam,
    body: groupBody,
    response: { 200: successView },
  }),
  updateGroupMembers: defineRoute({
    id: 'groups.updateMembers',
    method: 'POST',
    path: '/v1/groups/:groupID/members',
    service: 'identity',
    auth: 'app',
    tag: 'Groups',
    summary: 'Add and remove group members',
    params: groupParam,
    body: membersBody,
    response: { 200: successView },
  }),
  listGroups: defineRoute({
    id: 'groups.list',
    method: 'GET',
    path: '/v1/groups',
    service: 'identity',
    auth: 'app',
    tag: 'Groups',
    summary: 'List groups, oldest first (array; with limit, Link and X-Total-Count headers)',
    query: q.object({
      limit: q.optionalLimit(
        'Extension: at most this many groups (maximum 1000), the next page named by the Link header and the count by X-Total-Count. Absent, every group.',
      ),
      token: q.token(pageCursors.groups, 'Token of the next page, from the Link header.'),
    }),
    response: { 200: s.array(groupListItemView) },
  }),
  getGroup: defineRoute({
    id: 'groups.get',
    method: 'GET',
    path: '/v1/groups/:groupID',
    service: 'identity',
    auth: 'app',
    tag: 'Groups',
    summary: 'Get a group',
    params: groupReadParam,
    response: { 200: groupDetailsView },
  }),
  listGroupMembers: defineRoute({
    id: 'groups.listMembers',
    method: 'GET',
    path: '/v1/groups/:groupID/members',
    service: 'identity',
    auth: 'app',
    tag: 'Groups',
    summary: 'List the members of a group',
    params: groupReadParam,
    query: membersQuery,
    response: { 200: groupMembersPage },
  }),
  deleteGroup: defineRoute({
    id: 'groups.delete',
    method: 'DELETE',
    path: '/v1/groups/:groupID',
    service: 'identity',
    auth: 'app',
    tag: 'Groups',
    summary: 'Delete a group, its threads and messages',
    params: groupParam,
    response: { 200: successView },
  }),

  createOrganization: defineRoute({
    id: 'organizations.create',
    method: 'POST',
    path: '/v1/organizations',
    service: 'identity',
    auth: 'app',
    tag: 'Organizations (earlier generation)',
    summary: 'Create an organization (fails when it exists)',
    body: s.object({ id: s.externalId({ identifier: true }), ...groupBody.shape, name: s.string() }),
    response: { 201: successView },
  }),
  upsertOrganization: defineRoute({
    id: 'organizations.upsert',
    method: 'PUT',
    path: '/v1/organizations/:orgID',
    service: 'identity',
    auth: 'app',
    tag: 'Organizations (earlier generation)',
    summary: 'Create or update an organization',
    params: orgParam,
    body: groupBody,
    response: { 200: bareSuccess },
  }),
  updateOrganizationMembers: defineRoute({
    id: 'organizations.updateMembers',
    method: 'POST',
    path: '/v1/organizations/:orgID/members',
    service: 'identity',
    auth: 'app',
    tag: 'Organizations (earlier generation)',
    summary: 'Add and remove organization members; answers the membership',
    params: orgParam,
    body: membersBody,
    response: { 200: s.array(legacyUserView) },
  }),
  listOrganizations: defineRoute({
    id: 'organizations.list',
    method: 'GET',
    path: '/v1/organizations',
    service: 'identity',
    auth: 'app',
    tag: 'Organizations (earlier generation)',
    summary: 'List organizations',
    response: { 200: s.array(groupListItemView) },
  }),
  getOrganization: defineRoute({
    id: 'organizations.get',
    method: 'GET',
    path: '/v1/organizations/:orgID',
    service: 'identity',
    auth: 'app',
    tag: 'Organizations (earlier generation)',
    summary: 'Get an organization',
    params: orgReadParam,
    response: { 200: groupDetailsView },
  }),
  listOrganizationMembers: defineRoute({
    id: 'organizations.listMembers',
    method: 'GET',
    path: '/v1/organizations/:orgID/members',
    service: 'identity',
    auth: 'app',
    tag: 'Organizations (earlier generation)',
    summary: 'List the members of an organization',
    params: orgReadParam,
    query: membersQuery,
    response: { 200: groupMembersPage },
  }),
  deleteOrganization: defineRoute({
    id: 'organizations.delete',
    method: 'DELETE',
    path: '/v1/organizations/:orgID',
    service: 'identity',
    auth: 'app',
    tag: 'Organizations (earlier generation)',
    summary: 'Delete an organization, its threads and messages',
    params: orgParam,
    response: { 200: bareSuccess },
  }),

  createUser: defineRoute({
    id: 'users.create',
    method: 'POST',
    path: '/v1/users',
    service: 'identity',
    auth: 'app',
    tag: 'Users',
    summary: 'Create a user (fails when it exists)',
    body: s.object({ id: s.externalId({ identifier: true }), ...userFields }),
    response: { 201: successView },
  }),
  upsertUser: defineRoute({
    id: 'users.upsert',
    method: 'PUT',
    path: '/v1/users/:userID',
    service: 'identity',
    auth: 'app',
    tag: 'Users',
    summary: 'Create or update a user',
    params: userParam,
    body: upsertUserBody,
    response: { 200: s.union([successView, bareSuccess]) },
  }),
  listUsers: defineRoute({
    id: 'users.list',
    method: 'GET',
    path: '/v1/users',
    service: 'identity',
    auth: 'app',
    tag: 'Users',
    summary: 'List users',
    query: q.object({
      limit: q.limit(),
      token: q.token(pageCursors.users),
      filter: q.filter({ metadata: filterMetadata }, 'URI-encoded JSON: {"metadata": {...}}, partial match.'),
      search: q.search(
        'search',
        'Extension: only users whose ID, name or e-mail contains this text, case-insensitive; with filter, both apply. Absent or blank, every user.',
      ),
    }),
    response: { 200: s.union([pageOf('users', userListItemView), s.array(legacyUserView)]) },
  }),
  getUser: defineRoute({
    id: 'users.get',
    method: 'GET',
    path: '/v1/users/:userID',
    service: 'identity',
    auth: 'app',
    tag: 'Users',
    summary: 'Get a user',
    params: userReadParam,
    response: { 200: userDetailsView },
  }),
  deleteUser: defineRoute({
    id: 'users.delete',
    method: 'DELETE',
    path: '/v1/users/:userID',
    service: 'identity',
    auth: 'app',
    tag: 'Users',
    summary: 'Permanently delete a user and their data',
    params: userParam,
    body: s.object({ permanently_delete: s.boolean() }),
    response: { 200: deletedUser },
  }),

  batch: defineRoute({
    id: 'batch.submit',
    method: 'POST',
    path: '/v1/batch',
    service: 'identity',
    auth: 'app',
    idempotent: true,
    tag: 'Batch',
    summary: 'Create or update many users and groups in one call, all or nothing',
    body: batchBody,
    response: { 200: successView, 202: successWith('jobID') },
  }),
  getBatch: defineRoute({
    id: 'batch.get',
    method: 'GET',
    path: '/v1/batch/:jobID',
    service: 'identity',
    auth: 'app',
    tag: 'Batch',
    summary: 'Status of a batch that was answered 202',
    params: { jobID: param.uuid('jobID', 'not_found', 'Batch job not found.') },
    response: { 200: batchStatusView },
  }),

  importDump: defineRoute({
    id: 'imports.create',
    method: 'POST',
    path: '/v1/customer/imports',
    service: 'identity',
    auth: 'customer',
    tag: 'Import and export',
    summary:
      "Import a dump of the original service (the body of its GET /v1/customer/dbdump), sent as the request body or as the `dump` part of multipart form data; answers 202 with an importID",
    query: q.object({
      overwrite: q.enum(['true', 'false'], { code: 'invalid_field', message: "overwrite value is invalid: must be 'true' or 'false'" }),
    }),
    bodyType: 'dump',
    response: { 202: successWith('importID') },
  }),
  getImport: defineRoute({
    id: 'imports.get',
    method: 'GET',
    path: '/v1/customer/imports/:importID',
    service: 'identity',
    auth: 'customer',
    tag: 'Import and export',
    summary: "An import's progress, counts per entity, what it skipped and why, conflicts and outcome",
    params: { importID: param.uuid('importID', 'not_found', 'Import not found.') },
    response: { 200: importView },
  }),

  dbdump: defineRoute({
    id: 'customer.dbdump',
    method: 'GET',
    path: '/v1/customer/dbdump',
    service: 'identity',
    auth: 'customer',
    tag: 'Import and export',
    summary: "Everything this server holds of the customer, as a dump in the original service's format (a psql script of COPY blocks, ending with COMMIT; when whole)",
    response: { 200: DUMP_ANSWER },
  }),

  ...prefixKeys('application', applicationRoutes('applications')),
  ...prefixKeys('project', applicationRoutes('projects')),
};

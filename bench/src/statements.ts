/**
 * The SQL the services issue for the five calls, word for word, for the baselines that issue it
 * without the services: the raw-SQL script (scenarios/five-calls.ts) and the bare node:http server
 * (bare-server.ts). Taken from services/identity/src/repositories (users, groups, lookup) and
 * services/conversation/src/repositories (threads, messages, participants) and shared/src/outbox,
 * in the order the use cases call them, and checked against the statements PostgreSQL logged for
 * one call of each (`PGOPTIONS='-c log_statement=all'` on the processes of a scratch system).
 * When a service changes what it issues, change it here too, or the baseline measures other work.
 */

const USER_COLUMNS = `u.internal_id AS "internalId", u.application_id AS "applicationId", u.external_id AS "externalId",
  u.name, u.email, u.short_name AS "shortName", u.profile_picture_url AS "profilePictureUrl", u.status,
  u.metadata, u.created_at AS "createdAt"`;

/** identity: usersRepository, groupsRepository and lookupRepository. */
export const IDENTITY = {
  /** usersRepository.findWithGroupIds: GET user, the user and its active groups in one statement ($1 application, $2 user). */
  findUserWithGroupIds: `SELECT ${USER_COLUMNS}, ARRAY(
         SELECT g.external_id FROM identity.group_members m JOIN identity.groups g ON g.internal_id = m.group_id
         WHERE m.application_id = u.application_id AND m.user_id = u.internal_id AND g.status = 'active'
         ORDER BY m.added_seq) AS "groupIds"
       FROM identity.users u WHERE u.application_id = $1 AND u.external_id = $2`,
  /** usersRepository.upsert of name and email, outside a transaction (PUT user without group changes). */
  upsertNameAndEmail: `INSERT INTO identity.users AS u (application_id, external_id, name, email)
           VALUES ($1, $2, $3, $4)
           ON CONFLICT (application_id, external_id) DO UPDATE SET name = $3, email = $4
           RETURNING u.internal_id AS "internalId", (u.xmax = 0) AS created`,
  /** usersRepository.listPage: $2 the cursor, $3 the metadata filter, $4 the limit (one more than asked). */
  listUsers: `SELECT ${USER_COLUMNS} FROM identity.users u
       WHERE u.application_id = $1
         AND ($2::text IS NULL OR u.external_id > $2::text)
         AND ($3::jsonb IS NULL OR u.metadata @> $3::jsonb)
       ORDER BY u.external_id
       LIMIT $4`,
  /** usersRepository.count, beside the page ($2 the metadata filter). */
  countUsers: `SELECT count(*) AS count FROM identity.users
       WHERE application_id = $1 AND ($2::jsonb IS NULL OR metadata @> $2::jsonb)`,
  /** lookupRepository.users: what conversation asks identity about the author. */
  lookupUsers: `SELECT external_id AS id, name, short_name AS "shortName", status, profile_picture_url AS "profilePictureURL", metadata
       FROM identity.users
       WHERE application_id = $1 AND external_id = ANY($2::text[])`,
  /** lookupRepository.groupWithMembers, beside it. */
  lookupGroup: `SELECT g.external_id AS id, g.status,
              COALESCE(array_agg(u.external_id) FILTER (WHERE u.external_id IS NOT NULL), '{}') AS "memberIds"
       FROM identity.groups g
       LEFT JOIN identity.group_members m ON m.group_id = g.internal_id
       LEFT JOIN identity.users u ON u.internal_id = m.user_id AND u.external_id = ANY($3::text[])
       WHERE g.application_id = $1 AND g.external_id = $2
       GROUP BY g.internal_id`,
};

const THREAD_COLUMNS = `t.internal_id AS "internalId", t.application_id AS "applicationId", t.external_id AS "externalId",
  t.group_id AS "groupId", t.name, t.url, t.location, t.metadata, t.extra_classnames AS "extraClassnames",
  t.resolved_at AS "resolvedAt", t.created_at AS "createdAt", t.last_activity_at AS "lastActivityAt"`;
const MESSAGE_COLUMNS = `m.internal_id AS "internalId", m.application_id AS "applicationId", m.external_id AS "externalId",
  m.thread_id AS "threadRef", m.author_id AS "authorId", m.type, m.content, m.url, m.icon_url AS "iconUrl",
  m.translation_key AS "translationKey", m.extra_classnames AS "extraClassnames", m.metadata,
  m.skip_link_previews AS "skipLinkPreviews", m.created_at AS "createdAt", m.updated_at AS "updatedAt",
  m.deleted_at AS "deletedAt"`;
const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)`;

/** conversation: threadsRepository, messagesRepository, participantsRepository and the outbox. */
export const CONVERSATION = {
  /** threadsRepository.find ($2: the thread's external id). */
  findThread: `SELECT ${THREAD_COLUMNS} FROM conversation.threads t WHERE t.application_id = $1 AND t.external_id = $2 AND t.purging_at IS NULL`,
  /** threadsRepository.find(…, forUpdate): the create's transaction starts by locking the thread. */
  lockThread: `SELECT ${THREAD_COLUMNS} FROM conversation.threads t WHERE t.application_id = $1 AND t.external_id = $2 AND t.purging_at IS NULL FOR UPDATE`,
  /** threadsRepository.insertIfAbsent (createThread): $3 group, $4 name, $5 url, $6 location, $7 metadata, $8 extra classnames. */
  insertThread: `INSERT INTO conversation.threads AS t (application_id, external_id, group_id, name, url, location, metadata, extra_classnames)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (application_id, external_id) DO NOTHING
       RETURNING ${THREAD_COLUMNS}`,
  /** participantsRepository.subscribe: the new thread's creator. */
  subscribe: `INSERT INTO conversation.thread_participants (thread_id, user_id, subscribed)
       SELECT $1, user_id, $3 FROM unnest($2::text[]) WITH ORDINALITY AS input(user_id, position) ORDER BY position
       ON CONFLICT (thread_id, user_id) DO UPDATE SET subscribed = thread_participants.subscribed OR EXCLUDED.subscribed`,
  /** participantsRepository.beforeNewMessage: who the new message notifies, and whether it starts the thread. */
  beforeNewMessage: `SELECT ARRAY(SELECT user_id FROM conversation.thread_participants WHERE thread_id = $1 AND subscribed ORDER BY seq) AS subscribers,
              EXISTS (SELECT 1 FROM conversation.messages WHERE thread_id = $1) AS "hasMessages"`,
  /** messagesRepository.insertWithActivity, every column given as the use case gives it. */
  insertMessage: `WITH inserted AS (INSERT INTO conversation.messages AS m (application_id, external_id, thread_id, author_id, type, content, url, icon_url, translation_key, extra_classnames, metadata, skip_link_previews, created_at, updated_at, deleted_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING ${MESSAGE_COLUMNS}),
       activity AS (
         UPDATE conversation.threads t SET last_activity_at = GREATEST(
           (SELECT max(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id), inserted."createdAt")
         FROM inserted WHERE t.application_id = $1 AND t.internal_id = inserted."threadRef"
       )
       SELECT * FROM inserted`,
  /** participantsRepository.markSeen: the author has seen the thread and is subscribed. */
  markSeen: `WITH newest AS (
         SELECT GREATEST(
           (SELECT max(GREATEST(created_at, updated_at)) FROM conversation.messages WHERE thread_id = $1),
           (SELECT max(r.reacted_at) FROM conversation.message_reactions r
              JOIN conversation.messages m ON m.internal_id = r.message_id WHERE m.thread_id = $1)) AS at
       )
       INSERT INTO conversation.thread_participants (thread_id, user_id, last_seen_at, subscribed)
       SELECT $1, user_id, (SELECT at FROM newest), $3 FROM unnest($2::text[]) WITH ORDINALITY AS input(user_id, position)
       WHERE (SELECT at FROM newest) IS NOT NULL
       ORDER BY position
       ON CONFLICT (thread_id, user_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at,
         subscribed = thread_participants.subscribed OR EXCLUDED.subscribed`,
  /** The outbox's record of the message.added event, which notifies the relays ($7, the channel) at commit. */
  outboxRecord: `WITH inserted AS (
           INSERT INTO "conversation"."outbox" (id, application_id, topic, payload, request_id, available_at)
           VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6)) RETURNING 1)
         SELECT pg_notify($7, '') FROM inserted`,
  /** messagesRepository.inThread, newest first (the thread read's default order). */
  threadMessages: `SELECT ${MESSAGE_COLUMNS} FROM conversation.messages m WHERE m.application_id = $1 AND m.thread_id = $2 AND m.purging_at IS NULL
       ORDER BY m.created_at DESC, m.internal_id DESC`,
  /** messageViewsRepository.detailsOf: reactions, attachments, link previews and participants in one round trip. */
  viewDetails: `SELECT
       (SELECT COALESCE(json_agg(json_build_object('messageRef', message_id::text, 'userId', user_id, 'reaction', reaction,
           'reactedAt', ${ms('reacted_at')}) ORDER BY reacted_at, user_id, reaction), '[]')
        FROM conversation.message_reactions WHERE message_id = ANY($1::bigint[])) AS reactions,
       (SELECT COALESCE(json_agg(json_build_object('messageRef', a.message_id::text, 'id', f.id, 'applicationId', f.application_id,
           'ownerId', f.owner_id, 'name', f.name, 'mimeType', f.mime_type, 'size', f.size::text, 'uploadStatus', f.upload_status, 'createdAt', ${ms('f.created_at')})
           ORDER BY a.seq), '[]')
        FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
        WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL) AS attachments,
       (SELECT COALESCE(json_agg(json_build_object('id', id, 'messageRef', message_id::text, 'url', url, 'imageUrl', image_url,
           'title', title, 'description', description, 'hidden', hidden, 'seq', seq::text) ORDER BY seq), '[]')
        FROM conversation.message_link_previews WHERE message_id = ANY($1::bigint[]) AND NOT hidden) AS previews,
       (SELECT COALESCE(json_agg(json_build_object('threadRef', thread_id::text, 'userId', user_id, 'lastSeenAt', ${ms('last_seen_at')},
           'subscribed', subscribed, 'seq', seq::text) ORDER BY seq), '[]')
        FROM conversation.thread_participants WHERE thread_id = ANY($2::bigint[])) AS participants`,
};

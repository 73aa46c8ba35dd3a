/**
 * Scenario 2, messages: message create and reading a thread of 100 messages through the gateway at
 * 50 connections, against a plain `pg` script that issues the same statements the services issue
 * (identity's lookup, then conversation's reads and its write transaction; see
 * services/conversation/src/domain/messages/messages.ts and the repositories it calls) on a pool
 * of as many connections: what this PostgreSQL can do for the same work.
 */
import { randomUUID } from 'node:crypto';
import { messageBody } from '../api.js';
import { describeCpu, measure, measureSql, rotate, seedConversations, type Harness, type Measured, type Scenario } from '../harness.js';
import { fmt, type Row, type Section } from '../report.js';
import { explain } from '../profile.js';

const RATE_TARGET = 0.4;
const THREAD_LENGTH = 100;

function rows(operation: string, api: Measured, raw: Measured): Row[] {
  const ratio = api.rps / raw.rps;
  return [
    {
      figure: `${operation}: throughput`,
      value: fmt.rps(api.rps),
      baseline: `${fmt.rps(raw.rps)} raw SQL`,
      ratio: fmt.ratio(ratio),
      target: `≥ ${fmt.ratio(RATE_TARGET)}`,
      met: ratio >= RATE_TARGET,
    },
    { figure: `${operation}: p50`, value: fmt.ms(api.p50), baseline: fmt.ms(raw.p50), ratio: fmt.ratio(api.p50 / raw.p50), target: '—', met: null },
    { figure: `${operation}: p99`, value: fmt.ms(api.p99), baseline: fmt.ms(raw.p99), ratio: fmt.ratio(api.p99 / raw.p99), target: '—', met: null },
  ];
}

const THREAD_COLUMNS = `t.internal_id, t.application_id, t.external_id, t.group_id, t.name, t.url, t.location, t.metadata,
  t.extra_classnames, t.resolved_at, t.created_at, t.last_activity_at`;
const MESSAGE_COLUMNS = `m.internal_id, m.application_id, m.external_id, m.thread_id, m.author_id, m.type, m.content, m.url,
  m.icon_url, m.translation_key, m.extra_classnames, m.metadata, m.skip_link_previews, m.created_at, m.updated_at, m.deleted_at`;

/** The statements of one message create, in the services' order (without HTTP, Node or TypeORM). */
const CREATE = {
  lookupUsers: `SELECT external_id AS id, name, short_name, status FROM identity.users WHERE application_id = $1 AND external_id = ANY($2::text[])`,
  lookupGroup: `SELECT g.external_id AS id, g.status, COALESCE(array_agg(u.external_id) FILTER (WHERE u.external_id IS NOT NULL), '{}') AS member_ids
    FROM identity.groups g LEFT JOIN identity.group_members m ON m.group_id = g.internal_id
    LEFT JOIN identity.users u ON u.internal_id = m.user_id AND u.external_id = ANY($3::text[])
    WHERE g.application_id = $1 AND g.external_id = $2 GROUP BY g.internal_id`,
  thread: `SELECT ${THREAD_COLUMNS} FROM conversation.threads t WHERE t.application_id = $1 AND t.external_id = $2 AND t.purging_at IS NULL`,
  /** The insert and the thread's activity in one statement (messagesRepository.insertWithActivity). */
  insert: `WITH inserted AS (
      INSERT INTO conversation.messages AS m (application_id, external_id, thread_id, author_id, type, content, url, icon_url,
        translation_key, extra_classnames, metadata, skip_link_previews, created_at, updated_at, deleted_at)
      VALUES ($1, $2, $3, $4, 'user_message', $5, NULL, NULL, NULL, NULL, '{}', false, now(), NULL, NULL) RETURNING ${MESSAGE_COLUMNS}),
    activity AS (
      UPDATE conversation.threads t SET last_activity_at = GREATEST(
        (SELECT max(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id), inserted.created_at)
      FROM inserted WHERE t.application_id = $1 AND t.internal_id = inserted.thread_id)
    SELECT * FROM inserted`,
  /** Seen by the author, who is subscribed in the same upsert. */
  markSeen: `WITH newest AS (
      SELECT GREATEST(
        (SELECT max(GREATEST(created_at, updated_at)) FROM conversation.messages WHERE thread_id = $1),
        (SELECT max(r.reacted_at) FROM conversation.message_reactions r
           JOIN conversation.messages m ON m.internal_id = r.message_id WHERE m.thread_id = $1)) AS at)
    INSERT INTO conversation.thread_participants (thread_id, user_id, last_seen_at, subscribed)
    SELECT $1, user_id, (SELECT at FROM newest), $3 FROM unnest($2::text[]) WITH ORDINALITY AS input(user_id, position)
    WHERE (SELECT at FROM newest) IS NOT NULL ORDER BY position
    ON CONFLICT (thread_id, user_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at,
      subscribed = thread_participants.subscribed OR EXCLUDED.subscribed`,
};

/** The statements of one thread read (listThreadMessages and messageViews). */
const READ = {
  messages: `SELECT ${MESSAGE_COLUMNS} FROM conversation.messages m WHERE m.application_id = $1 AND m.thread_id = $2 AND m.purging_at IS NULL
    ORDER BY m.created_at DESC, m.internal_id DESC`,
  reactions: `SELECT message_id, user_id, reaction, reacted_at FROM conversation.message_reactions WHERE message_id = ANY($1::bigint[])
    ORDER BY reacted_at, user_id, reaction`,
  attachments: `SELECT a.message_id, f.id, f.application_id, f.owner_id, f.name, f.mime_type, f.size, f.created_at
    FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
    WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL ORDER BY a.seq`,
  previews: `SELECT id, message_id, url, image_url, title, description, hidden FROM conversation.message_link_previews
    WHERE message_id = ANY($1::bigint[]) AND NOT hidden ORDER BY url, id`,
  participants: `SELECT thread_id, user_id, last_seen_at, subscribed, seq FROM conversation.thread_participants
    WHERE thread_id = ANY($1::bigint[]) ORDER BY seq`,
};

export const messages: Scenario = {
  key: 'messages',
  async run(harness: Harness): Promise<Section> {
    const { connections, system } = harness;
    const section: Section = {
      title: '2. Messages',
      method:
        `Through the gateway at ${connections} connections, ${harness.seconds} s each after ${harness.warmupSeconds} s of warm-up: ` +
        `message create (spread over 100 threads of one group) and \`GET /v1/threads/<ID>/messages\` of a thread of ` +
        `${THREAD_LENGTH} messages. Baseline: the same statements from a plain \`pg\` script, ${connections} concurrent loops ` +
        `on ${connections} connections (identity's lookup, the thread read, then one transaction: lock the thread, insert with ` +
        `the thread's activity, seen-by with the subscription; for the read: thread, messages, reactions, attachments, link previews, participants).`,
      rows: [],
      notes: [],
    };
    const seeded = await seedConversations(harness, 'bench messages', 2, 101);
    const [author] = seeded.userIds;
    const [readThread, ...writeThreads] = seeded.threadIds;
    for (let i = 1; i < THREAD_LENGTH; i++) await seeded.app.api.ok('POST', `/v1/threads/${readThread}/messages`, messageBody(author, `message ${i}`));

    const internalIds = new Map(
      (
        await system.sql.query<{ external_id: string; internal_id: string }>(
          `SELECT external_id, internal_id FROM conversation.threads WHERE application_id = $1`,
          [seeded.app.id],
        )
      ).rows.map((row) => [row.external_id, row.internal_id]),
    );
    const appId = seeded.app.id;
    const content = JSON.stringify(messageBody(author, 'hello').content);

    const apiCreate = await measure(harness, 'message create via gateway', {
      baseUrl: system.url,
      method: 'POST',
      path: rotate(writeThreads.map((id) => `/v1/threads/${id}/messages`)),
      headers: seeded.app.api.headers,
      body: messageBody(author, 'hello'),
      connections,
    });
    const nextThread = rotate(writeThreads);
    const rawCreate = await measureSql(harness, 'message create, raw SQL', connections, async () => {
      const threadId = nextThread();
      await system.sql.query(CREATE.lookupUsers, [appId, [author]]);
      await system.sql.query(CREATE.lookupGroup, [appId, seeded.groupId, [author]]);
      await system.sql.query(CREATE.thread, [appId, threadId]);
      const client = await system.sql.connect();
      try {
        await client.query('BEGIN');
        const internalId = internalIds.get(threadId);
        await client.query(`${CREATE.thread} FOR UPDATE`, [appId, threadId]);
        await client.query(CREATE.insert, [appId, `cord:${randomUUID()}`, internalId, author, content]);
        await client.query(CREATE.markSeen, [internalId, [author], true]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    });

    const readPath = `/v1/threads/${readThread}/messages`;
    const apiRead = await measure(harness, 'thread read via gateway', { baseUrl: system.url, path: readPath, headers: seeded.app.api.headers, connections });
    const readInternalId = internalIds.get(readThread);
    const rawRead = await measureSql(harness, 'thread read, raw SQL', connections, async () => {
      await system.sql.query(CREATE.thread, [appId, readThread]);
      const rows = await system.sql.query<{ internal_id: string }>(READ.messages, [appId, readInternalId]);
      const ids = rows.rows.map((row) => row.internal_id);
      await Promise.all([
        system.sql.query(READ.reactions, [ids]),
        system.sql.query(READ.attachments, [ids]),
        system.sql.query(READ.previews, [ids]),
        system.sql.query(READ.participants, [[readInternalId]]),
      ]);
    });

    section.rows.push(...rows('message create', apiCreate, rawCreate), ...rows(`thread read (${THREAD_LENGTH} messages)`, apiRead, rawRead));
    for (const [label, stats] of [
      ['message create via the gateway', apiCreate],
      ['message create, raw SQL', rawCreate],
      ['thread read via the gateway', apiRead],
      ['thread read, raw SQL', rawRead],
    ] as const)
      if (stats.cpu) section.notes.push(`${label}: ${describeCpu(stats.cpu)}.`);

    const writeThreadId = internalIds.get(writeThreads[0]);
    // Plans as they are once autovacuum has caught up with the load's inserts.
    await system.sql.query('ANALYZE conversation.messages, conversation.threads, conversation.thread_participants, identity.group_members');
    harness.appendix.push(
      '## Query plans of the hot paths',
      '',
      `EXPLAIN (ANALYZE, BUFFERS) after the load above, on its data, with fresh statistics (writes rolled back).`,
      '',
      ...(await explain(system.sql, 'thread read: messages of the thread', READ.messages, [appId, readInternalId])),
      ...(await explain(system.sql, 'message create: seen-by (markSeen)', CREATE.markSeen, [writeThreadId, [author], true])),
      ...(await explain(system.sql, 'message create: insert with the thread activity (insertWithActivity)', CREATE.insert, [appId, `cord:${randomUUID()}`, writeThreadId, author, content])),
      ...(await explain(system.sql, "message create: identity's group lookup", CREATE.lookupGroup, [appId, seeded.groupId, [author]])),
    );
    return section;
  },
};

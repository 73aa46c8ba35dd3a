/**
 * Scenario 10, append: how fast a bot can stream an answer into messages. `POST
 * /v1/threads/<ID>/messages/<ID>/append` through the gateway at 10 connections, all on one message
 * (where appends queue on the row lock, and conversation batches them) and round-robin over 50
 * messages, each beside the same UPDATE issued from a plain `pg` script on as many connections
 * (statements.ts).
 */
import { measure, measureSql, rotate, seedConversations, type Harness, type Measured, type Scenario } from '../harness.js';
import type { HttpLoad } from '../load.js';
import { fmt, type Row, type Section } from '../report.js';
import { CONVERSATION } from '../statements.js';

const CONNECTIONS = 10;
const MESSAGES = 50;
/** A streamed token, as a bot appends it. */
const TOKEN = ' token';
/** "Fast enough for a bot streaming tokens into many messages at once": p50 at 10 connections. */
const P50_TARGET_MS = 5;

const markdown = (text: string) => [{ type: 'markdown', children: [{ text }] }];

export const append: Scenario = {
  key: 'append',
  async run(harness: Harness): Promise<Section> {
    const { system } = harness;
    const section: Section = {
      title: '10. Append',
      method:
        `\`POST /v1/threads/<ID>/messages/<ID>/append\` of ${JSON.stringify(TOKEN)} through the gateway at ${CONNECTIONS} ` +
        `connections, ${harness.seconds} s each after ${harness.warmupSeconds} s of warm-up: all on one message (the appends that ` +
        `arrive while one is written go together in the next statement; the script's appends wait for the row lock one by one), and round-robin over ${MESSAGES} messages of ${MESSAGES} threads. Every ` +
        `message starts as one markdown node and is reset before each load, so that each load appends to the same lengths. ` +
        `Baseline: the append's one statement (messagesRepository.appendText) from a plain \`pg\` script, as many concurrent loops ` +
        `on as many connections. Target: p50 < ${fmt.ms(P50_TARGET_MS)} at ${CONNECTIONS} connections.`,
      rows: [],
      notes: [],
    };
    const seeded = await seedConversations(harness, 'bench append', 1, MESSAGES);
    const { app } = seeded;
    const [author] = seeded.userIds;
    const messages: { path: string; internalId: string; threadId: string; messageId: string }[] = [];
    for (const threadId of seeded.threadIds) {
      const { body } = await app.api.ok('POST', `/v1/threads/${threadId}/messages`, { authorID: author, content: markdown('') });
      const { rows } = await system.sql.query<{ internal_id: string }>(
        'SELECT internal_id::text FROM conversation.messages WHERE application_id = $1 AND external_id = $2',
        [app.id, body.messageID],
      );
      messages.push({
        path: `/v1/threads/${threadId}/messages/${encodeURIComponent(body.messageID)}/append`,
        internalId: rows[0].internal_id,
        threadId,
        messageId: body.messageID,
      });
    }
    const reset = () =>
      system.sql.query('UPDATE conversation.messages SET content = $2::jsonb WHERE application_id = $1 AND internal_id = ANY($3::bigint[])', [
        app.id,
        JSON.stringify(markdown('')),
        messages.map((message) => message.internalId),
      ]);
    /** The longest text of the messages now: what the last load grew them to. */
    const longest = async () =>
      (
        await system.sql.query<{ length: number }>(
          `SELECT max(length(content #>> '{0,children,0,text}'))::int AS length FROM conversation.messages WHERE application_id = $1 AND internal_id = ANY($2::bigint[])`,
          [app.id, messages.map((message) => message.internalId)],
        )
      ).rows[0].length;

    const load = (targets: typeof messages): Omit<HttpLoad, 'seconds'> => {
      const next = rotate(targets.map((message) => message.path));
      return { baseUrl: system.url, method: 'POST', path: next, headers: app.api.headers, body: { text: TOKEN }, connections: CONNECTIONS };
    };
    const sql = (targets: typeof messages) => {
      const next = rotate(targets);
      return async () => {
        const message = next();
        await system.sql.query(CONVERSATION.appendText, [app.id, message.threadId, message.messageId, TOKEN]);
      };
    };
    const settings = [
      { label: 'one message', targets: messages.slice(0, 1) },
      { label: `${MESSAGES} messages`, targets: messages },
    ];
    for (const setting of settings) {
      await reset();
      const api: Measured = await measure(harness, `append, ${setting.label}`, load(setting.targets));
      const apiLength = await longest();
      await reset();
      const raw: Measured = await measureSql(harness, `append, ${setting.label}, SQL script`, CONNECTIONS, sql(setting.targets));
      const rows: Row[] = [
        {
          figure: `append, ${setting.label}: throughput`,
          value: fmt.rps(api.rps),
          baseline: `${fmt.rps(raw.rps)} SQL script`,
          ratio: fmt.ratio(api.rps / raw.rps),
          target: 'report',
          met: null,
        },
        {
          figure: `append, ${setting.label}: p50`,
          value: fmt.ms(api.p50),
          baseline: `${fmt.ms(raw.p50)} SQL script`,
          ratio: fmt.ratio(api.p50 / raw.p50),
          target: `< ${fmt.ms(P50_TARGET_MS)}`,
          met: api.p50 < P50_TARGET_MS,
        },
        { figure: `append, ${setting.label}: p99`, value: fmt.ms(api.p99), baseline: `${fmt.ms(raw.p99)} SQL script`, ratio: fmt.ratio(api.p99 / raw.p99), target: '—', met: null },
      ];
      section.rows.push(...rows);
      if (api.failed > 0) section.notes.push(`append, ${setting.label}: ${api.failed} failed (${JSON.stringify(api.outcomes)}).`);
      section.notes.push(`append, ${setting.label}: the longest message had ${apiLength.toLocaleString('en')} characters after the load.`);
    }
    await reset();
    return section;
  },
};

/**
 * A synthetic customer dump in the original service's format, shaped like the fixture's rows
 * (shared/fixtures/cord-dump): one application with users, groups and memberships, threads with
 * their locations and participants, and messages (a paragraph with a mention, some with metadata
 * and a reaction). Written as a stream, so any size fits in bounded memory.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { derivedUuid, encodeCopyField } from '@collab/shared';

export interface SyntheticDumpShape {
  messages: number;
  threads: number;
  users: number;
  groups: number;
}

export interface SyntheticDump {
  applicationId: string;
  secret: string;
  bytes: number;
  rows: number;
}

const TABLES: Record<string, string[]> = {
  customers: ['id', 'createdTimestamp', 'sharedSecret'],
  applications: ['id', 'name', 'sharedSecret', 'iconURL', 'createdTimestamp', 'customerID', 'eventWebhookURL', 'eventWebhookSubscriptions', 'enableEmailNotifications'],
  users: ['id', 'createdTimestamp', 'state', 'name', 'screenName', 'email', 'profilePictureURL', 'externalID', 'platformApplicationID', 'metadata'],
  orgs: ['id', 'name', 'externalID', 'createdTimestamp', 'state', 'platformApplicationID', 'metadata'],
  threads: ['id', 'name', 'orgID', 'resolvedTimestamp', 'url', 'externalID', 'platformApplicationID', 'createdTimestamp', 'pageContextHash', 'metadata', 'extraClassnames'],
  messages: ['id', 'content', 'sourceID', 'orgID', 'threadID', 'timestamp', 'url', 'deletedTimestamp', 'lastUpdatedTimestamp', 'type', 'externalID', 'platformApplicationID', 'iconURL', 'metadata', 'extraClassnames', 'translationKey', 'skipLinkPreviews'],
  message_reactions: ['id', 'userID', 'messageID', 'timestamp', 'unicodeReaction'],
  org_members: ['userID', 'orgID', 'createdTimestamp', 'platformApplicationID'],
  pages: ['orgID', 'contextData', 'contextHash'],
  thread_participants: ['threadID', 'userID', 'orgID', 'lastSeenTimestamp', 'lastUnseenMessageTimestamp', 'subscribed', 'lastUnseenReactionTimestamp'],
};

const timestamp = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').replace('Z', '')}+00`;

export async function writeSyntheticDump(path: string, customer: { id: string; secret: string }, shape: SyntheticDumpShape): Promise<SyntheticDump> {
  const out = createWriteStream(path);
  let bytes = 0;
  let rows = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  const table = async (name: string, produce: (row: (values: (string | null)[]) => Promise<void>) => Promise<void>) => {
    await write(`\\echo Loading data into table ${name}...\n\nCOPY "tmp_${name}" (${TABLES[name].map((c) => `"${c}"`).join(', ')}) FROM stdin;\n`);
    await produce(async (values) => {
      rows++;
      await write(`${values.map(encodeCopyField).join('\t')}\n`);
    });
    await write('\\.\n\n');
  };

  const app = randomUUID();
  const secret = randomBytes(32).toString('hex');
  const start = Date.UTC(2024, 0, 1);
  const id = (...parts: string[]) => derivedUuid(app, ...parts);
  const userId = (u: number) => id('user', String(u));
  const groupOf = (t: number) => t % shape.groups;
  const groupUuid = (g: number) => id('group', String(g));
  const page = (t: number) => id('page', String(t));
  const perThread = Math.max(1, Math.floor(shape.messages / shape.threads));

  await write('SET search_path = cord, public;\n\nBEGIN;\n\n');
  await table('customers', async (row) => row([customer.id, timestamp(start), customer.secret]));
  await table('applications', async (row) =>
    row([app, 'Synthetic Docs', secret, 'https://example.com/icon.png', timestamp(start), customer.id, null, null, 't']),
  );
  await table('users', async (row) => {
    for (let u = 0; u < shape.users; u++)
      await row([userId(u), timestamp(start + u), 'active', `User ${u}`, `U${u}`, `user-${u}@example.com`, null, `user-${u}`, app, `{"title": "Engineer", "employeeNumber": ${u}}`]);
  });
  await table('orgs', async (row) => {
    for (let g = 0; g < shape.groups; g++) await row([groupUuid(g), `Group ${g}`, `group-${g}`, timestamp(start + g), 'active', app, '{"region": "eu-west-1"}']);
  });
  await table('threads', async (row) => {
    for (let t = 0; t < shape.threads; t++)
      await row([id('thread', String(t)), `Thread ${t}`, groupUuid(groupOf(t)), null, `https://docs.example.com/d/${t}`, `thread-${t}`, app, timestamp(start + t * 1000), page(t), '{"priority": 2}', null]);
  });
  await table('messages', async (row) => {
    for (let t = 0; t < shape.threads; t++)
      for (let m = 0; m < perThread; m++) {
        const author = (t + m) % shape.users;
        const mentioned = (t + m + 1) % shape.users;
        const content = JSON.stringify([
          { type: 'p', children: [{ text: `Message ${m} of thread ${t}, ` }, { type: 'mention', user: { id: userId(mentioned) }, children: [{ text: `@U${mentioned}` }] }, { bold: true, text: ' please review.' }] },
        ]);
        const messageId = id('message', `${t}:${m}`);
        await row([messageId, content, userId(author), groupUuid(groupOf(t)), id('thread', String(t)), timestamp(start + t * 1000 + m), null, null, null, 'user_message', `cord:${messageId}`, app, null, m % 10 === 0 ? '{"source": "web"}' : '{}', '', null, 'f']);
      }
  });
  await table('message_reactions', async (row) => {
    for (let t = 0; t < shape.threads; t++) {
      const messageId = id('message', `${t}:0`);
      await row([id('reaction', String(t)), userId((t + 2) % shape.users), messageId, timestamp(start + t * 1000 + 1), '👍']);
    }
  });
  await table('org_members', async (row) => {
    for (let u = 0; u < shape.users; u++) await row([userId(u), groupUuid(u % shape.groups), timestamp(start), app]);
  });
  await table('pages', async (row) => {
    for (let t = 0; t < shape.threads; t++) await row([groupUuid(groupOf(t)), `{"page": "doc", "docID": "${t}"}`, page(t)]);
  });
  await table('thread_participants', async (row) => {
    for (let t = 0; t < shape.threads; t++)
      for (const u of [t % shape.users, (t + 1) % shape.users]) await row([id('thread', String(t)), userId(u), groupUuid(groupOf(t)), timestamp(start + t * 1000 + perThread), null, 't', null]);
  });
  await write('COMMIT;\n');
  out.end();
  await once(out, 'finish');
  return { applicationId: app, secret, bytes, rows };
}

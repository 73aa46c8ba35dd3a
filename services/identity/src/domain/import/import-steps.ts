/**
 * One step per imported dump table (run-import.ts calls them in the dump's order, a batch of rows
 * at a time): identity writes its own tables (customers, applications, users, groups, memberships,
 * preferences), and hands the others to the service that owns them through its internal import
 * endpoint, after mapping the dump's ids to this server's. Every step keeps what is stored unless
 * the import overwrites, so that running it again changes nothing. Over 300 lines: sixteen short
 * steps, one per table, listed together in IMPORT_STEPS at the end.
 */
import { isDeepStrictEqual } from 'node:util';
import { parseTextArray, type ImportRow } from '@collab/shared';
import { applicationsRepository } from '../../repositories/applications.repository.js';
import { customersRepository } from '../../repositories/customers.repository.js';
import { importsRepository } from '../../repositories/imports.repository.js';
import { preferencesRepository } from '../../repositories/preferences.repository.js';
import { openSecret, sealSecret } from '../secrets.js';
import {
  attachedFileId,
  channelsOf,
  fileStatus,
  groupOf,
  json,
  mentionedIds,
  messageOf,
  notificationOf,
  parseBoolean,
  parseTimestamp,
  required,
  threadOf,
  userOf,
  type DumpRow,
  type ImportedTable,
} from './dump-tables.js';
import type { ImportState } from './import-state.js';

/** How one dump table's batch of rows is imported. */
export type ImportStep = (run: ImportState, rows: DumpRow[]) => Promise<void>;

async function customers(run: ImportState, rows: DumpRow[]) {
  for (const row of rows) {
    const id = required(row, 'id');
    const secret = required(row, 'sharedSecret');
    if (id !== run.record.customerId) {
      run.skip('customers', 1, `the dump's customer is imported into customer ${run.record.customerId}`);
      continue;
    }
    const existing = await customersRepository.find(run.db, id);
    const sealed = sealSecret(run.deps.secretBox, 'customer', id, secret);
    if (!existing) {
      await importsRepository.insertCustomer(run.db, { id, secretEncrypted: sealed, createdAt: parseTimestamp(row.createdTimestamp) ?? new Date() });
      run.count('customers', 1, 0);
    } else if (openSecret(run.deps.secretBox, 'customer', existing) === secret) {
      run.count('customers', 0, 1);
    } else if (run.record.overwrite) {
      await customersRepository.upsert(run.db, id, sealed);
      await run.deps.publishInvalidation({ kind: 'customer', id });
      run.count('customers', 1, 0);
    } else {
      run.conflict('customer', id, 'the customer exists here with another secret (kept; --overwrite replaces it)');
    }
  }
}

async function applications(run: ImportState, rows: DumpRow[]) {
  for (const row of rows) {
    const id = required(row, 'id');
    const wanted = {
      name: row.name ?? '',
      secret: required(row, 'sharedSecret'),
      iconUrl: row.iconURL,
      eventWebhookUrl: row.eventWebhookURL,
      eventWebhookSubscriptions: parseTextArray(row.eventWebhookSubscriptions)?.filter((item): item is string => item !== null) ?? null,
      redirectUri: row.redirectURI,
      emailSettings: emailSettingsOf(row),
    };
    const application = {
      id,
      customerId: run.record.customerId,
      ...wanted,
      secretEncrypted: sealSecret(run.deps.secretBox, 'application', id, wanted.secret),
      createdAt: parseTimestamp(row.createdTimestamp) ?? new Date(),
    };
    const existing = await applicationsRepository.findById(run.db, id);
    if (!existing) {
      await importsRepository.insertApplication(run.db, application, false);
      run.count('applications', 1, 0);
      continue;
    }
    if (existing.customerId !== run.record.customerId) {
      run.appsInConflict.add(id);
      run.conflict('application', id, 'the application belongs to another customer here (nothing of it is imported)');
      continue;
    }
    const stored = {
      name: existing.name,
      secret: openSecret(run.deps.secretBox, 'application', existing),
      iconUrl: existing.iconUrl,
      eventWebhookUrl: existing.eventWebhookUrl,
      eventWebhookSubscriptions: existing.eventWebhookSubscriptions,
      redirectUri: existing.redirectUri,
      emailSettings: existing.emailSettings,
    };
    const differing = (Object.keys(wanted) as (keyof typeof wanted)[]).filter((key) => !isDeepStrictEqual(wanted[key], stored[key]));
    if (differing.length === 0) {
      run.count('applications', 0, 1);
    } else if (run.record.overwrite) {
      await importsRepository.insertApplication(run.db, application, true);
      // Its secret may have changed: cached credentials must not keep accepting the one replaced.
      await run.deps.publishInvalidation({ kind: 'application', id });
      run.count('applications', 1, 0);
    } else {
      run.appsInConflict.add(id);
      run.conflict('application', id, `the application exists here with another ${differing.join(', ')} (nothing of it is imported; --overwrite replaces it)`);
    }
  }
}

async function users(run: ImportState, rows: DumpRow[]) {
  const kept = run.ofImportedApps('users', rows, (row) => row.platformApplicationID);
  const users = kept.map(([applicationId, row]) => userOf(row, applicationId));
  const result = await importsRepository.users(run.db, lastByKey(users), run.record.overwrite);
  await directoryChanged(run, kept);
  run.tally('user', users, result);
  await run.remember(
    'user',
    kept.map(([applicationId, row]) => ({ originalId: required(row, 'id'), applicationId, externalId: required(row, 'externalID'), ref: null, parentRef: null })),
  );
}

async function groups(run: ImportState, rows: DumpRow[]) {
  const kept = run.ofImportedApps('orgs', rows, (row) => row.platformApplicationID);
  const groups = kept.map(([applicationId, row]) => groupOf(row, applicationId));
  const result = await importsRepository.groups(run.db, lastByKey(groups), run.record.overwrite);
  await directoryChanged(run, kept);
  run.tally('group', groups, result);
  await run.remember(
    'group',
    kept.map(([applicationId, row]) => ({ originalId: required(row, 'id'), applicationId, externalId: required(row, 'externalID'), ref: null, parentRef: null })),
  );
}

async function memberships(run: ImportState, rows: DumpRow[]) {
  const users = await run.resolve('user', rows.map((row) => row.userID));
  const groups = await run.resolve('group', rows.map((row) => row.orgID));
  const kept = run.ofImportedApps('org_members', rows, (row) => (users.has(row.userID!) && groups.has(row.orgID!) ? groups.get(row.orgID!)!.applicationId : null));
  const memberships = kept.map(([applicationId, row]) => ({ applicationId, groupID: groups.get(row.orgID!)!.externalId, userID: users.get(row.userID!)!.externalId }));
  const inserted = await importsRepository.memberships(run.db, memberships);
  await directoryChanged(run, kept);
  run.count('memberships', inserted, memberships.length - inserted);
}

/** The applications of the rows just written have a new directory. */
async function directoryChanged(run: ImportState, written: [applicationId: string, row: DumpRow][]) {
  for (const applicationId of new Set(written.map(([id]) => id))) await run.deps.directoryChanged(applicationId);
}

async function threads(run: ImportState, rows: DumpRow[]) {
  const groups = await run.resolve('group', rows.map((row) => row.orgID));
  const kept = run.ofImportedApps('threads', rows, (row) => (groups.has(row.orgID!) ? row.platformApplicationID : null));
  // A page is the location of its threads: new when a thread new to this server is on it, else
  // already there (a thread imported before has its mapping). Counted once, with its first threads.
  const known = await run.resolve('thread', kept.map(([, row]) => row.id));
  const pages = new Map<string, boolean>();
  for (const [, row] of kept) {
    const page = `${row.orgID}:${row.pageContextHash}`;
    if (run.pages.has(page) && !run.pagesCounted.has(page)) pages.set(page, (pages.get(page) ?? false) || !known.has(row.id!));
  }
  for (const [page, isNew] of pages) {
    run.pagesCounted.add(page);
    run.count('pages', isNew ? 1 : 0, isNew ? 0 : 1);
  }
  const perApp = groupBy(kept, ([, row]) => threadOf(row, groups.get(row.orgID!)!.externalId, run.pages.get(`${row.orgID}:${row.pageContextHash}`)));
  for (const { applicationId, rows: sent, answer } of await run.send('threads', perApp)) {
    run.count('threads', answer.inserted, sent.length - answer.inserted);
    const ids = new Map(sent.map((thread) => [thread.originalId, thread.id]));
    await run.remember(
      'thread',
      answer.refs.map(({ originalId, ref }) => ({ originalId, applicationId, externalId: ids.get(originalId)!, ref, parentRef: null })),
    );
  }
}

async function messages(run: ImportState, rows: DumpRow[]) {
  const contents = new Map(rows.map((row) => [row.id, json(row.content)]));
  const threads = await run.resolve('thread', rows.map((row) => row.threadID));
  const users = await run.resolve('user', rows.flatMap((row) => [row.sourceID, ...mentionedIds(contents.get(row.id))]));
  const userIds = new Map([...users].map(([originalId, mapping]) => [originalId, mapping.externalId]));
  const kept = run.ofImportedApps('messages', rows, (row) => (threads.has(row.threadID!) && users.has(row.sourceID!) ? threads.get(row.threadID!)!.applicationId : null));
  const perApp = groupBy(kept, ([, row]) => messageOf(row, contents.get(row.id), threads.get(row.threadID!)!.ref!, users.get(row.sourceID!)!.externalId, userIds));
  for (const { applicationId, rows: sent, answer } of await run.send('messages', perApp)) {
    run.count('messages', answer.inserted, sent.length - answer.inserted);
    const byId = new Map(sent.map((message) => [message.originalId, message]));
    await run.remember(
      'message',
      answer.refs.map(({ originalId, ref }) => ({ originalId, applicationId, externalId: byId.get(originalId)!.id, ref, parentRef: byId.get(originalId)!.threadRef })),
    );
  }
}

async function mentions(run: ImportState, rows: DumpRow[]) {
  const messages = await run.resolve('message', rows.map((row) => row.messageID));
  const users = await run.resolve('user', rows.map((row) => row.userID));
  const kept = run.ofImportedApps('message_mentions', rows, (row) => (messages.has(row.messageID!) && users.has(row.userID!) ? messages.get(row.messageID!)!.applicationId : null));
  const perApp = groupBy(kept, ([, row]) => ({ messageRef: messages.get(row.messageID!)!.ref!, userID: users.get(row.userID!)!.externalId }));
  for (const { rows: sent, answer } of await run.send('mentions', perApp)) run.count('mentions', answer.inserted, sent.length - answer.inserted);
}

async function reactions(run: ImportState, rows: DumpRow[]) {
  const messages = await run.resolve('message', rows.map((row) => row.messageID));
  const users = await run.resolve('user', rows.map((row) => row.userID));
  const kept = run.ofImportedApps('message_reactions', rows, (row) => (messages.has(row.messageID!) && users.has(row.userID!) ? messages.get(row.messageID!)!.applicationId : null));
  const perApp = groupBy(kept, ([, row]) => ({
    messageRef: messages.get(row.messageID!)!.ref!,
    userID: users.get(row.userID!)!.externalId,
    reaction: required(row, 'unicodeReaction'),
    timestamp: parseTimestamp(required(row, 'timestamp'))!,
  }));
  for (const { rows: sent, answer } of await run.send('reactions', perApp)) run.count('reactions', answer.inserted, sent.length - answer.inserted);
  // Reaction notifications name their reaction by the original's id.
  await run.remember(
    'reaction',
    kept.map(([applicationId, row]) => ({
      originalId: required(row, 'id'),
      applicationId,
      externalId: required(row, 'unicodeReaction'),
      ref: messages.get(row.messageID!)!.ref,
      parentRef: null,
    })),
  );
}

async function notifications(run: ImportState, rows: DumpRow[]) {
  const users = await run.resolve('user', rows.flatMap((row) => [row.recipientID, row.senderID]));
  const messages = await run.resolve('message', rows.map((row) => row.messageID));
  const threads = await run.resolve('thread', rows.map((row) => row.threadID));
  const reactions = await run.resolve('reaction', rows.map((row) => row.reactionID));
  const kept = run.ofImportedApps('notifications', rows, (row) => (users.has(row.recipientID!) && users.has(row.senderID!) ? row.platformApplicationID : null));
  const perApp = new Map<string, ImportRow<'notifications'>[]>();
  for (const [applicationId, row] of kept) {
    const message = row.messageID ? messages.get(row.messageID) : undefined;
    const notification = notificationOf(row, {
      recipientId: users.get(row.recipientID!)!.externalId,
      actorId: users.get(row.senderID!)!.externalId,
      messageRef: message?.ref ?? null,
      threadRef: (row.threadID ? threads.get(row.threadID)?.ref : undefined) ?? message?.parentRef ?? null,
      reaction: row.reactionID ? (reactions.get(row.reactionID)?.externalId ?? null) : null,
    });
    if (typeof notification === 'string') run.skip('notifications', 1, notification);
    else perApp.set(applicationId, [...(perApp.get(applicationId) ?? []), notification]);
  }
  for (const { rows: sent, answer } of await run.send('notifications', perApp)) run.count('notifications', answer.inserted, sent.length - answer.inserted);
}

/** Users' notification channels, written by identity itself; a user's stored ones are kept unless overwriting. */
async function preferences(run: ImportState, rows: DumpRow[]) {
  const users = await run.resolve('user', rows.map((row) => row.userID));
  const known = rows.filter((row) => channelsOf(row) !== null);
  run.skip('user_preferences', rows.length - known.length, 'only the notification_channels preference is held by this server');
  const kept = run.ofImportedApps('user_preferences', known, (row) => users.get(row.userID!)?.applicationId);
  for (const [applicationId, preferences] of groupBy(kept, ([, row]) => ({ userID: users.get(row.userID!)!.externalId, ...channelsOf(row)! }))) {
    const written = await preferencesRepository.importMany(run.db, applicationId, preferences, run.record.overwrite);
    run.count('preferences', written, preferences.length - written);
  }
}

/** Threads users unsubscribed from by mail: a row with subscribed false is an opt-out, one with true is none. */
async function optOuts(run: ImportState, rows: DumpRow[]) {
  const optOuts = rows.filter((row) => parseBoolean(row.subscribed) === false);
  run.skip('email_subscription', rows.length - optOuts.length, 'a subscribed row is no opt-out, and mail is sent unless opted out');
  const threads = await run.resolve('thread', optOuts.map((row) => row.threadID));
  const users = await run.resolve('user', optOuts.map((row) => row.userID));
  const kept = run.ofImportedApps('email_subscription', optOuts, (row) => (threads.has(row.threadID!) && users.has(row.userID!) ? threads.get(row.threadID!)!.applicationId : null));
  const perApp = groupBy(kept, ([, row]) => ({ threadRef: threads.get(row.threadID!)!.ref!, userID: users.get(row.userID!)!.externalId }));
  for (const { rows: sent, answer } of await run.send('threadOptOuts', perApp)) run.count('threadOptOuts', answer.inserted, sent.length - answer.inserted);
}

async function participants(run: ImportState, rows: DumpRow[]) {
  const threads = await run.resolve('thread', rows.map((row) => row.threadID));
  const users = await run.resolve('user', rows.map((row) => row.userID));
  const kept = run.ofImportedApps('thread_participants', rows, (row) => (threads.has(row.threadID!) && users.has(row.userID!) ? threads.get(row.threadID!)!.applicationId : null));
  const perApp = groupBy(kept, ([, row]) => ({
    threadRef: threads.get(row.threadID!)!.ref!,
    userID: users.get(row.userID!)!.externalId,
    lastSeenTimestamp: parseTimestamp(row.lastSeenTimestamp),
    subscribed: parseBoolean(row.subscribed) ?? false,
  }));
  for (const { rows: sent, answer } of await run.send('participants', perApp)) run.count('participants', answer.inserted, sent.length - answer.inserted);
}

/**
 * Files, owned by their uploader, then the bytes of those given with the import (an id given
 * twice or already stored keeps its bytes: the same piece again changes nothing).
 */
async function files(run: ImportState, rows: DumpRow[]) {
  const users = await run.resolve('user', rows.map((row) => row.userID));
  const kept = run.ofImportedApps('files', rows, (row) => (users.has(row.userID!) ? row.platformApplicationID : null));
  const sizes = run.record.withFiles ? await importsRepository.fileSizes(run.db, run.record.id, kept.map(([, row]) => required(row, 'id'))) : new Map<string, number>();
  const withBytes: [string, string][] = [];
  const perApp = groupBy(kept, ([applicationId, row]): ImportRow<'files'> => {
    const id = required(row, 'id').toLowerCase();
    const { uploadStatus, failure } = fileStatus(row, { given: run.record.withFiles, size: sizes.get(id) });
    if (failure) run.skip('files', 1, failure);
    if (uploadStatus === 'uploading') withBytes.push([applicationId, id]);
    return {
      id,
      ownerID: users.get(row.userID!)!.externalId,
      name: row.name ?? '',
      mimeType: row.mimeType ?? 'application/octet-stream',
      size: Number(row.size ?? 0),
      uploadStatus,
      createdTimestamp: parseTimestamp(required(row, 'timestamp'))!,
    };
  });
  for (const { rows: sent, answer } of await run.send('files', perApp)) run.count('files', answer.inserted, sent.length - answer.inserted);
  for (const [applicationId, fileId] of withBytes) await fileBytes(run, applicationId, fileId);
}

/** One file's stored bytes handed on a chunk at a time; the last marks it uploaded. */
async function fileBytes(run: ImportState, applicationId: string, fileId: string) {
  let current = await importsRepository.fileChunk(run.db, run.record.id, fileId, 0);
  for (let seq = 0; ; seq++) {
    const next = current ? await importsRepository.fileChunk(run.db, run.record.id, fileId, seq + 1) : null;
    const chunk = { fileID: fileId, seq, data: (current ?? Buffer.alloc(0)).toString('base64'), last: next === null };
    await run.deps.services.send('fileChunks', applicationId, [chunk], run.record.overwrite, run.requestId);
    if (!next) return;
    current = next;
  }
}

/** File attachments of messages; the original's other kinds (annotations, screenshots) are not held here. */
async function attachments(run: ImportState, rows: DumpRow[]) {
  const files = rows.filter((row) => attachedFileId(row) !== null);
  run.skip('message_attachments', rows.length - files.length, 'only file attachments are held by this server');
  const messages = await run.resolve('message', files.map((row) => row.messageID));
  const kept = run.ofImportedApps('message_attachments', files, (row) => (messages.has(row.messageID!) ? messages.get(row.messageID!)!.applicationId : null));
  const perApp = groupBy(kept, ([, row]) => ({ messageRef: messages.get(row.messageID!)!.ref!, fileID: attachedFileId(row)! }));
  for (const { rows: sent, answer } of await run.send('attachments', perApp)) run.count('attachments', answer.inserted, sent.length - answer.inserted);
}

async function webhooks(run: ImportState, rows: DumpRow[]) {
  const kept = run.ofImportedApps('application_webhooks', rows, (row) => row.platformApplicationID);
  const perApp = groupBy(kept, ([, row]) => ({
    id: required(row, 'id'),
    url: required(row, 'eventWebhookURL'),
    events: parseTextArray(row.eventWebhookSubscriptions)?.filter((item): item is string => item !== null) ?? [],
  }));
  for (const { rows: sent, answer } of await run.send('webhooks', perApp)) run.count('webhooks', answer.inserted, sent.length - answer.inserted);
}

/** The step of each imported table, by the dump's table name; `pages` is read before the others (see run-import.ts). */
export const IMPORT_STEPS: Record<Exclude<ImportedTable, 'pages'>, ImportStep> = {
  customers,
  applications,
  users,
  orgs: groups,
  org_members: memberships,
  threads,
  messages,
  message_mentions: mentions,
  message_reactions: reactions,
  notifications,
  thread_participants: participants,
  application_webhooks: webhooks,
  files,
  message_attachments: attachments,
  user_preferences: preferences,
  email_subscription: optOuts,
};

/**
 * The application's e-mail settings as the original showed them: its custom template's fields
 * (null when it has none) and whether notification e-mails are on.
 */
function emailSettingsOf(row: DumpRow): Record<string, unknown> {
  const template = (json(row.customEmailTemplate) as Record<string, unknown> | null) ?? {};
  return { name: null, imageURL: null, sender: null, logoConfig: null, ...template, enableEmailNotifications: parseBoolean(row.enableEmailNotifications) ?? true };
}

function lastByKey<T extends { applicationId: string; id: string }>(items: T[]): T[] {
  return [...new Map(items.map((item) => [`${item.applicationId}\u0000${item.id}`, item])).values()];
}

function groupBy<Row>(kept: [string, DumpRow][], build: (entry: [string, DumpRow]) => Row): Map<string, Row[]> {
  const perApp = new Map<string, Row[]>();
  for (const entry of kept) {
    const rows = perApp.get(entry[0]) ?? [];
    rows.push(build(entry));
    perApp.set(entry[0], rows);
  }
  return perApp;
}

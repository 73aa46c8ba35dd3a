/**
 * Runs one import of a customer dump (the identity-import job): reads the stored dump twice as a
 * stream (first only the thread locations of `pages`, which the dump puts after the threads, then
 * everything), in batches of rows, and hands each bounded context its part: identity writes its
 * own tables, conversation, notification and webhooks get theirs through their internal import
 * endpoints. The dump's internal UUIDs are mapped to this server's ids as rows are imported
 * (identity.import_mappings), so that later tables can name them and a resumed run passes over
 * the tables already done. Every write keeps what is stored unless the import overwrites, so a
 * second run, or a run after a crash, ends in the same state as one clean run.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  IMPORT_BATCH_ROWS,
  readDump,
  parseTextArray,
  type ImportClient,
  type ImportKind,
  type ImportRow,
  type InvalidationMessage,
  type Logger,
  type SecretBox,
} from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { ImportRecordRow } from '../../entities/index.js';
import { applicationsRepository } from '../../repositories/applications.repository.js';
import { customersRepository } from '../../repositories/customers.repository.js';
import { preferencesRepository } from '../../repositories/preferences.repository.js';
import { importsRepository, type ImportedGroup, type ImportedUser, type Mapping, type MappingKind } from '../../repositories/imports.repository.js';
import { openSecret, sealSecret } from '../secrets.js';
import { dumpLines } from './dump-store.js';
import {
  attachedFileId,
  channelsOf,
  fileStatus,
  groupOf,
  IMPORTED_TABLES,
  json,
  mentionedIds,
  messageOf,
  notificationOf,
  parseBoolean,
  parseTimestamp,
  required,
  skipReason,
  threadOf,
  userOf,
  withMissingAsNull,
  type DumpRow,
} from './dump-tables.js';

export interface ImportDeps {
  db: DataSource;
  secretBox: SecretBox;
  services: ImportClient;
  logger: Logger;
  /** Tells every gateway replica to drop its cached credentials of a customer or application the import overwrote. */
  publishInvalidation(message: InvalidationMessage): Promise<void>;
  /** Batches of one table being written at once (default WRITES_IN_FLIGHT). */
  writesInFlight?: number;
}

/** Where the pages table begins, whether the dump copies into a temporary table first or not. */
const PAGES_MARKERS = ['COPY "tmp_pages" ', 'COPY "pages" '];
/** How often progress is written while a table is read. */
const PROGRESS_EVERY_MS = 1000;
/** Mappings kept in memory per kind; beyond, the cache starts over (the table has them all). */
const CACHE_LIMIT = 100_000;
/**
 * Batches of one table handed on at once: while the service writes one, PostgreSQL can write the
 * other on the second core. Their rows are distinct, and what they both update (a thread's last
 * activity) is locked in a fixed order, so they cannot deadlock.
 */
export const WRITES_IN_FLIGHT = 2;
/** Tables whose rows are checked and written one by one, each depending on those before it. */
const ONE_BATCH_AT_A_TIME = new Set(['customers', 'applications']);

type Counts = ImportRecordRow['counts'];

// Over 300 lines: one step per dump table, each a few lines, all sharing this run's mapping cache,
// counts, conflicts and writes in flight; apart from the class they would need all of it passed in.
export class ImportRun {
  private readonly counts: Counts;
  private readonly skipped: ImportRecordRow['skipped'];
  private readonly conflicts: ImportRecordRow['conflicts'];
  private readonly tablesDone: Set<string>;
  /** Applications in conflict: none of their data is imported. */
  private readonly appsInConflict: Set<string>;
  private readonly pages = new Map<string, unknown>();
  /** Pages counted in this run (see threads). */
  private readonly pagesCounted = new Set<string>();
  private readonly cache = new Map<MappingKind, Map<string, Mapping>>();
  private bytesRead = 0;
  /** The mapping rows being saved, one save after the other (see `remember`). */
  private saving: Promise<void> = Promise.resolve();
  private lastProgress = 0;

  constructor(
    private readonly deps: ImportDeps,
    private readonly record: ImportRecordRow,
    private readonly requestId: string,
  ) {
    this.counts = { ...record.counts };
    this.skipped = { ...record.skipped };
    this.conflicts = [...record.conflicts];
    this.tablesDone = new Set(record.tablesDone);
    this.appsInConflict = new Set(this.conflicts.filter((c) => c.entity === 'application').map((c) => c.id));
  }

  private get db() {
    return this.deps.db;
  }

  async execute(): Promise<void> {
    // Only the part of the dump from the pages table on is read for them.
    for await (const event of readDump(dumpLines(this.db, this.record.id, undefined, PAGES_MARKERS), new Set(['pages'])))
      if (event.kind === 'row') this.pages.set(`${event.row.orgID}:${event.row.contextHash}`, json(event.row.contextData));

    const wanted = new Set([...IMPORTED_TABLES].filter((table) => !this.tablesDone.has(table) && table !== 'pages'));
    let batch: DumpRow[] = [];
    const progress = { bytes: 0 };
    // Batches handed on while the next one is read, a few of one table at a time; tables stay in
    // the dump's order (a later one names the rows of those before it), and all of a table's
    // batches are written before its end is recorded.
    const writes = new Writes();
    const limit = this.deps.writesInFlight ?? WRITES_IN_FLIGHT;
    for await (const event of readDump(dumpLines(this.db, this.record.id, progress), wanted)) {
      this.bytesRead = progress.bytes;
      if (event.kind === 'row') {
        batch.push(withMissingAsNull(event.row));
        if (batch.length >= IMPORT_BATCH_ROWS) {
          await writes.below(ONE_BATCH_AT_A_TIME.has(event.table) ? 1 : limit);
          writes.add(this.flush(event.table, batch));
          batch = [];
          await this.saveProgress(false);
        }
        continue;
      }
      if (event.kind === 'table') continue;
      await writes.below(1);
      const reason = skipReason(event.table);
      if (reason !== null) {
        if (event.rows > 0) this.skipped[event.table] = { rows: event.rows, reason };
      } else if (event.table === 'pages') {
        // Read in the first pass and counted with the threads on them (see threads).
      } else if (wanted.has(event.table)) {
        await this.flush(event.table, batch);
        batch = [];
      }
      await this.remembered();
      this.tablesDone.add(event.table);
      await this.saveProgress(true);
    }
    this.bytesRead = Number(this.record.dumpBytes);
    await this.saveProgress(true);
  }

  private async saveProgress(force: boolean) {
    if (!force && Date.now() - this.lastProgress < PROGRESS_EVERY_MS) return;
    this.lastProgress = Date.now();
    await importsRepository.progress(this.db, this.record.id, {
      bytesRead: String(this.bytesRead),
      tablesDone: [...this.tablesDone],
      counts: this.counts,
      skipped: this.skipped,
      conflicts: this.conflicts,
    });
  }

  private count(entity: string, imported: number, existing: number) {
    const current = this.counts[entity] ?? { imported: 0, existing: 0 };
    this.counts[entity] = { imported: current.imported + imported, existing: current.existing + existing };
  }

  private skip(table: string, rows: number, reason: string) {
    if (rows === 0) return;
    const key = `${table}: ${reason}`;
    this.skipped[key] = { rows: (this.skipped[key]?.rows ?? 0) + rows, reason };
  }

  private conflict(entity: string, id: string, reason: string, applicationID?: string) {
    if (this.conflicts.some((c) => c.entity === entity && c.id === id && c.applicationID === applicationID)) return;
    this.conflicts.push({ entity, id, ...(applicationID ? { applicationID } : {}), reason });
  }

  private async flush(table: string, rows: DumpRow[]): Promise<void> {
    if (rows.length === 0) return;
    switch (table) {
      case 'customers':
        return this.customers(rows);
      case 'applications':
        return this.applications(rows);
      case 'users':
        return this.users(rows);
      case 'orgs':
        return this.groups(rows);
      case 'org_members':
        return this.memberships(rows);
      case 'threads':
        return this.threads(rows);
      case 'messages':
        return this.messages(rows);
      case 'message_mentions':
        return this.mentions(rows);
      case 'message_reactions':
        return this.reactions(rows);
      case 'notifications':
        return this.notifications(rows);
      case 'thread_participants':
        return this.participants(rows);
      case 'application_webhooks':
        return this.webhooks(rows);
      case 'files':
        return this.files(rows);
      case 'message_attachments':
        return this.attachments(rows);
      case 'user_preferences':
        return this.preferences(rows);
      case 'email_subscription':
        return this.optOuts(rows);
      default:
        throw new Error(`no importer for table ${table}`);
    }
  }

  /** Rows of applications this import may write, as [applicationId, row]; the others are counted as skipped. */
  private ofImportedApps(table: string, rows: DumpRow[], applicationOf: (row: DumpRow) => string | null | undefined): [string, DumpRow][] {
    const kept: [string, DumpRow][] = [];
    let withoutApp = 0;
    let inConflict = 0;
    for (const row of rows) {
      const applicationId = applicationOf(row);
      // The row's own application first: what it refers to is missing because that one is in conflict.
      if (this.appsInConflict.has(row.platformApplicationID ?? '') || (applicationId && this.appsInConflict.has(applicationId))) inConflict++;
      else if (!applicationId) withoutApp++;
      else kept.push([applicationId, row]);
    }
    this.skip(table, withoutApp, table === 'users' || table === 'orgs' ? 'Slack data (no application) is not held by this server' : this.unresolvedReason());
    this.skip(table, inConflict, 'its application is in conflict');
    return kept;
  }

  /**
   * Why a row whose references resolve to nothing is skipped. Rows that name no application
   * (mentions, reactions, participants, preferences) refer to rows that were not imported either
   * because the dump lacks them or because their application is in conflict: which one is not
   * known without keeping every skipped id, so with a conflict both are named.
   */
  private unresolvedReason(): string {
    return this.appsInConflict.size === 0 ? 'what it refers to is not in the dump' : 'what it refers to is not imported: it is not in the dump, or its application is in conflict';
  }

  private async resolve(kind: MappingKind, ids: (string | null | undefined)[]): Promise<Map<string, Mapping>> {
    let cache = this.cache.get(kind);
    if (!cache || cache.size > CACHE_LIMIT) this.cache.set(kind, (cache = new Map()));
    const wanted = [...new Set(ids.filter((id): id is string => Boolean(id)))];
    const missing = wanted.filter((id) => !cache.has(id));
    for (const mapping of await importsRepository.mappings(this.db, this.record.customerId, kind, missing)) cache.set(mapping.originalId, mapping);
    return new Map(wanted.filter((id) => cache.has(id)).map((id) => [id, cache.get(id)!]));
  }

  /**
   * Keeps the mappings of rows just imported: in the cache at once, in the table while the next
   * batch is handed on (they are identity's rows, the batch's are another service's). One save at
   * a time: a batch ends only once the save before its own is done, so that the mappings waiting
   * in memory are at most those of the batches being written. All are saved before the table's
   * end is recorded (`remembered`), so that a resumed import never passes over a table whose
   * mappings were not all kept.
   */
  private async remember(kind: MappingKind, mappings: Mapping[]) {
    const cache = this.cache.get(kind);
    if (cache) for (const mapping of mappings) cache.set(mapping.originalId, mapping);
    // Chained, not replaced: batches written at once each add their save after the last one, so
    // that `remembered` waits for all of them.
    const previous = this.saving;
    this.saving = previous.then(() => importsRepository.saveMappings(this.db, this.record.customerId, kind, mappings));
    // Awaited by the next batch or by `remembered`; a failure must not go unhandled meanwhile.
    this.saving.catch(() => undefined);
    await previous;
  }

  /** Waits until every mapping given to `remember` is saved (and fails if one could not be). */
  private async remembered() {
    await this.saving;
  }

  /** Hands rows to a service, one call per application and batch. */
  private async send<K extends ImportKind>(kind: K, perApp: Map<string, ImportRow<K>[]>) {
    const answers = [];
    for (const [applicationId, rows] of perApp)
      answers.push({ applicationId, rows, answer: await this.deps.services.send(kind, applicationId, rows, this.record.overwrite, this.requestId) });
    return answers;
  }

  private async customers(rows: DumpRow[]) {
    for (const row of rows) {
      const id = required(row, 'id');
      const secret = required(row, 'sharedSecret');
      if (id !== this.record.customerId) {
        this.skip('customers', 1, `the dump's customer is imported into customer ${this.record.customerId}`);
        continue;
      }
      const existing = await customersRepository.find(this.db, id);
      const sealed = sealSecret(this.deps.secretBox, 'customer', id, secret);
      if (!existing) {
        await importsRepository.insertCustomer(this.db, { id, secretEncrypted: sealed, createdAt: parseTimestamp(row.createdTimestamp) ?? new Date() });
        this.count('customers', 1, 0);
      } else if (openSecret(this.deps.secretBox, 'customer', existing) === secret) {
        this.count('customers', 0, 1);
      } else if (this.record.overwrite) {
        await customersRepository.upsert(this.db, id, sealed);
        await this.deps.publishInvalidation({ kind: 'customer', id });
        this.count('customers', 1, 0);
      } else {
        this.conflict('customer', id, 'the customer exists here with another secret (kept; --overwrite replaces it)');
      }
    }
  }

  private async applications(rows: DumpRow[]) {
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
        customerId: this.record.customerId,
        ...wanted,
        secretEncrypted: sealSecret(this.deps.secretBox, 'application', id, wanted.secret),
        createdAt: parseTimestamp(row.createdTimestamp) ?? new Date(),
      };
      const existing = await applicationsRepository.findById(this.db, id);
      if (!existing) {
        await importsRepository.insertApplication(this.db, application, false);
        this.count('applications', 1, 0);
        continue;
      }
      if (existing.customerId !== this.record.customerId) {
        this.appsInConflict.add(id);
        this.conflict('application', id, 'the application belongs to another customer here (nothing of it is imported)');
        continue;
      }
      const stored = {
        name: existing.name,
        secret: openSecret(this.deps.secretBox, 'application', existing),
        iconUrl: existing.iconUrl,
        eventWebhookUrl: existing.eventWebhookUrl,
        eventWebhookSubscriptions: existing.eventWebhookSubscriptions,
        redirectUri: existing.redirectUri,
        emailSettings: existing.emailSettings,
      };
      const differing = (Object.keys(wanted) as (keyof typeof wanted)[]).filter((key) => !isDeepStrictEqual(wanted[key], stored[key]));
      if (differing.length === 0) {
        this.count('applications', 0, 1);
      } else if (this.record.overwrite) {
        await importsRepository.insertApplication(this.db, application, true);
        // Its secret may have changed: cached credentials must not keep accepting the one replaced.
        await this.deps.publishInvalidation({ kind: 'application', id });
        this.count('applications', 1, 0);
      } else {
        this.appsInConflict.add(id);
        this.conflict('application', id, `the application exists here with another ${differing.join(', ')} (nothing of it is imported; --overwrite replaces it)`);
      }
    }
  }

  /** Users and groups: new ones inserted, identical ones counted as there, different ones conflicts unless overwriting. */
  private tally<T extends ImportedUser | ImportedGroup>(entity: 'user' | 'group', given: T[], result: { inserted: string[]; existing: T[] }) {
    const key = (item: { applicationId: string; id: string }) => `${item.applicationId}\u0000${item.id}`;
    const before = new Map(result.existing.map((item) => [key(item), item]));
    let imported = 0;
    let same = 0;
    for (const item of given) {
      const stored = before.get(key(item));
      if (!stored) imported++;
      else if (isDeepStrictEqual(comparable(stored), comparable(item))) same++;
      else if (this.record.overwrite) imported++;
      else this.conflict(entity, item.id, `the ${entity} exists here with other data (kept; --overwrite replaces it)`, item.applicationId);
    }
    this.count(entity === 'user' ? 'users' : 'groups', imported, same);
  }

  private async users(rows: DumpRow[]) {
    const kept = this.ofImportedApps('users', rows, (row) => row.platformApplicationID);
    const users = kept.map(([applicationId, row]) => userOf(row, applicationId));
    const result = await importsRepository.users(this.db, lastByKey(users), this.record.overwrite);
    this.tally('user', users, result);
    await this.remember(
      'user',
      kept.map(([applicationId, row]) => ({ originalId: required(row, 'id'), applicationId, externalId: required(row, 'externalID'), ref: null, parentRef: null })),
    );
  }

  private async groups(rows: DumpRow[]) {
    const kept = this.ofImportedApps('orgs', rows, (row) => row.platformApplicationID);
    const groups = kept.map(([applicationId, row]) => groupOf(row, applicationId));
    const result = await importsRepository.groups(this.db, lastByKey(groups), this.record.overwrite);
    this.tally('group', groups, result);
    await this.remember(
      'group',
      kept.map(([applicationId, row]) => ({ originalId: required(row, 'id'), applicationId, externalId: required(row, 'externalID'), ref: null, parentRef: null })),
    );
  }

  private async memberships(rows: DumpRow[]) {
    const users = await this.resolve('user', rows.map((row) => row.userID));
    const groups = await this.resolve('group', rows.map((row) => row.orgID));
    const kept = this.ofImportedApps('org_members', rows, (row) => (users.has(row.userID!) && groups.has(row.orgID!) ? groups.get(row.orgID!)!.applicationId : null));
    const memberships = kept.map(([applicationId, row]) => ({ applicationId, groupID: groups.get(row.orgID!)!.externalId, userID: users.get(row.userID!)!.externalId }));
    const inserted = await importsRepository.memberships(this.db, memberships);
    this.count('memberships', inserted, memberships.length - inserted);
  }

  private async threads(rows: DumpRow[]) {
    const groups = await this.resolve('group', rows.map((row) => row.orgID));
    const kept = this.ofImportedApps('threads', rows, (row) => (groups.has(row.orgID!) ? row.platformApplicationID : null));
    // A page is the location of its threads: new when a thread new to this server is on it, else
    // already there (a thread imported before has its mapping). Counted once, with its first threads.
    const known = await this.resolve('thread', kept.map(([, row]) => row.id));
    const pages = new Map<string, boolean>();
    for (const [, row] of kept) {
      const page = `${row.orgID}:${row.pageContextHash}`;
      if (this.pages.has(page) && !this.pagesCounted.has(page)) pages.set(page, (pages.get(page) ?? false) || !known.has(row.id!));
    }
    for (const [page, isNew] of pages) {
      this.pagesCounted.add(page);
      this.count('pages', isNew ? 1 : 0, isNew ? 0 : 1);
    }
    const perApp = groupBy(kept, ([, row]) => threadOf(row, groups.get(row.orgID!)!.externalId, this.pages.get(`${row.orgID}:${row.pageContextHash}`)));
    for (const { applicationId, rows: sent, answer } of await this.send('threads', perApp)) {
      this.count('threads', answer.inserted, sent.length - answer.inserted);
      const ids = new Map(sent.map((thread) => [thread.originalId, thread.id]));
      await this.remember(
        'thread',
        answer.refs.map(({ originalId, ref }) => ({ originalId, applicationId, externalId: ids.get(originalId)!, ref, parentRef: null })),
      );
    }
  }

  private async messages(rows: DumpRow[]) {
    const contents = new Map(rows.map((row) => [row.id, json(row.content)]));
    const threads = await this.resolve('thread', rows.map((row) => row.threadID));
    const users = await this.resolve('user', rows.flatMap((row) => [row.sourceID, ...mentionedIds(contents.get(row.id))]));
    const userIds = new Map([...users].map(([originalId, mapping]) => [originalId, mapping.externalId]));
    const kept = this.ofImportedApps('messages', rows, (row) => (threads.has(row.threadID!) && users.has(row.sourceID!) ? threads.get(row.threadID!)!.applicationId : null));
    const perApp = groupBy(kept, ([, row]) => messageOf(row, contents.get(row.id), threads.get(row.threadID!)!.ref!, users.get(row.sourceID!)!.externalId, userIds));
    for (const { applicationId, rows: sent, answer } of await this.send('messages', perApp)) {
      this.count('messages', answer.inserted, sent.length - answer.inserted);
      const byId = new Map(sent.map((message) => [message.originalId, message]));
      await this.remember(
        'message',
        answer.refs.map(({ originalId, ref }) => ({ originalId, applicationId, externalId: byId.get(originalId)!.id, ref, parentRef: byId.get(originalId)!.threadRef })),
      );
    }
  }

  private async mentions(rows: DumpRow[]) {
    const messages = await this.resolve('message', rows.map((row) => row.messageID));
    const users = await this.resolve('user', rows.map((row) => row.userID));
    const kept = this.ofImportedApps('message_mentions', rows, (row) => (messages.has(row.messageID!) && users.has(row.userID!) ? messages.get(row.messageID!)!.applicationId : null));
    const perApp = groupBy(kept, ([, row]) => ({ messageRef: messages.get(row.messageID!)!.ref!, userID: users.get(row.userID!)!.externalId }));
    for (const { rows: sent, answer } of await this.send('mentions', perApp)) this.count('mentions', answer.inserted, sent.length - answer.inserted);
  }

  private async reactions(rows: DumpRow[]) {
    const messages = await this.resolve('message', rows.map((row) => row.messageID));
    const users = await this.resolve('user', rows.map((row) => row.userID));
    const kept = this.ofImportedApps('message_reactions', rows, (row) => (messages.has(row.messageID!) && users.has(row.userID!) ? messages.get(row.messageID!)!.applicationId : null));
    const perApp = groupBy(kept, ([, row]) => ({
      messageRef: messages.get(row.messageID!)!.ref!,
      userID: users.get(row.userID!)!.externalId,
      reaction: required(row, 'unicodeReaction'),
      timestamp: parseTimestamp(required(row, 'timestamp'))!,
    }));
    for (const { rows: sent, answer } of await this.send('reactions', perApp)) this.count('reactions', answer.inserted, sent.length - answer.inserted);
    // Reaction notifications name their reaction by the original's id.
    await this.remember(
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

  private async notifications(rows: DumpRow[]) {
    const users = await this.resolve('user', rows.flatMap((row) => [row.recipientID, row.senderID]));
    const messages = await this.resolve('message', rows.map((row) => row.messageID));
    const threads = await this.resolve('thread', rows.map((row) => row.threadID));
    const reactions = await this.resolve('reaction', rows.map((row) => row.reactionID));
    const kept = this.ofImportedApps('notifications', rows, (row) => (users.has(row.recipientID!) && users.has(row.senderID!) ? row.platformApplicationID : null));
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
      if (typeof notification === 'string') this.skip('notifications', 1, notification);
      else perApp.set(applicationId, [...(perApp.get(applicationId) ?? []), notification]);
    }
    for (const { rows: sent, answer } of await this.send('notifications', perApp)) this.count('notifications', answer.inserted, sent.length - answer.inserted);
  }

  /** Users' notification channels, written by identity itself; a user's stored ones are kept unless overwriting. */
  private async preferences(rows: DumpRow[]) {
    const users = await this.resolve('user', rows.map((row) => row.userID));
    const known = rows.filter((row) => channelsOf(row) !== null);
    this.skip('user_preferences', rows.length - known.length, 'only the notification_channels preference is held by this server');
    const kept = this.ofImportedApps('user_preferences', known, (row) => users.get(row.userID!)?.applicationId);
    for (const [applicationId, preferences] of groupBy(kept, ([, row]) => ({ userID: users.get(row.userID!)!.externalId, ...channelsOf(row)! }))) {
      const written = await preferencesRepository.importMany(this.db, applicationId, preferences, this.record.overwrite);
      this.count('preferences', written, preferences.length - written);
    }
  }

  /** Threads users unsubscribed from by mail: a row with subscribed false is an opt-out, one with true is none. */
  private async optOuts(rows: DumpRow[]) {
    const optOuts = rows.filter((row) => parseBoolean(row.subscribed) === false);
    this.skip('email_subscription', rows.length - optOuts.length, 'a subscribed row is no opt-out, and mail is sent unless opted out');
    const threads = await this.resolve('thread', optOuts.map((row) => row.threadID));
    const users = await this.resolve('user', optOuts.map((row) => row.userID));
    const kept = this.ofImportedApps('email_subscription', optOuts, (row) => (threads.has(row.threadID!) && users.has(row.userID!) ? threads.get(row.threadID!)!.applicationId : null));
    const perApp = groupBy(kept, ([, row]) => ({ threadRef: threads.get(row.threadID!)!.ref!, userID: users.get(row.userID!)!.externalId }));
    for (const { rows: sent, answer } of await this.send('threadOptOuts', perApp)) this.count('threadOptOuts', answer.inserted, sent.length - answer.inserted);
  }

  private async participants(rows: DumpRow[]) {
    const threads = await this.resolve('thread', rows.map((row) => row.threadID));
    const users = await this.resolve('user', rows.map((row) => row.userID));
    const kept = this.ofImportedApps('thread_participants', rows, (row) => (threads.has(row.threadID!) && users.has(row.userID!) ? threads.get(row.threadID!)!.applicationId : null));
    const perApp = groupBy(kept, ([, row]) => ({
      threadRef: threads.get(row.threadID!)!.ref!,
      userID: users.get(row.userID!)!.externalId,
      lastSeenTimestamp: parseTimestamp(row.lastSeenTimestamp),
      subscribed: parseBoolean(row.subscribed) ?? false,
    }));
    for (const { rows: sent, answer } of await this.send('participants', perApp)) this.count('participants', answer.inserted, sent.length - answer.inserted);
  }

  /**
   * Files, owned by their uploader, then the bytes of those given with the import (an id given
   * twice or already stored keeps its bytes: the same piece again changes nothing).
   */
  private async files(rows: DumpRow[]) {
    const users = await this.resolve('user', rows.map((row) => row.userID));
    const kept = this.ofImportedApps('files', rows, (row) => (users.has(row.userID!) ? row.platformApplicationID : null));
    const sizes = this.record.withFiles ? await importsRepository.fileSizes(this.db, this.record.id, kept.map(([, row]) => required(row, 'id'))) : new Map<string, number>();
    const withBytes: [string, string][] = [];
    const perApp = groupBy(kept, ([applicationId, row]): ImportRow<'files'> => {
      const id = required(row, 'id').toLowerCase();
      const { uploadStatus, failure } = fileStatus(row, { given: this.record.withFiles, size: sizes.get(id) });
      if (failure) this.skip('files', 1, failure);
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
    for (const { rows: sent, answer } of await this.send('files', perApp)) this.count('files', answer.inserted, sent.length - answer.inserted);
    for (const [applicationId, fileId] of withBytes) await this.fileBytes(applicationId, fileId);
  }

  /** One file's stored bytes handed on a chunk at a time; the last marks it uploaded. */
  private async fileBytes(applicationId: string, fileId: string) {
    let current = await importsRepository.fileChunk(this.db, this.record.id, fileId, 0);
    for (let seq = 0; ; seq++) {
      const next = current ? await importsRepository.fileChunk(this.db, this.record.id, fileId, seq + 1) : null;
      const chunk = { fileID: fileId, seq, data: (current ?? Buffer.alloc(0)).toString('base64'), last: next === null };
      await this.deps.services.send('fileChunks', applicationId, [chunk], this.record.overwrite, this.requestId);
      if (!next) return;
      current = next;
    }
  }

  /** File attachments of messages; the original's other kinds (annotations, screenshots) are not held here. */
  private async attachments(rows: DumpRow[]) {
    const files = rows.filter((row) => attachedFileId(row) !== null);
    this.skip('message_attachments', rows.length - files.length, 'only file attachments are held by this server');
    const messages = await this.resolve('message', files.map((row) => row.messageID));
    const kept = this.ofImportedApps('message_attachments', files, (row) => (messages.has(row.messageID!) ? messages.get(row.messageID!)!.applicationId : null));
    const perApp = groupBy(kept, ([, row]) => ({ messageRef: messages.get(row.messageID!)!.ref!, fileID: attachedFileId(row)! }));
    for (const { rows: sent, answer } of await this.send('attachments', perApp)) this.count('attachments', answer.inserted, sent.length - answer.inserted);
  }

  private async webhooks(rows: DumpRow[]) {
    const kept = this.ofImportedApps('application_webhooks', rows, (row) => row.platformApplicationID);
    const perApp = groupBy(kept, ([, row]) => ({
      id: required(row, 'id'),
      url: required(row, 'eventWebhookURL'),
      events: parseTextArray(row.eventWebhookSubscriptions)?.filter((item): item is string => item !== null) ?? [],
    }));
    for (const { rows: sent, answer } of await this.send('webhooks', perApp)) this.count('webhooks', answer.inserted, sent.length - answer.inserted);
  }
}

/**
 * The application's e-mail settings as the original showed them: its custom template's fields
 * (null when it has none) and whether notification e-mails are on.
 */
function emailSettingsOf(row: DumpRow): Record<string, unknown> {
  const template = (json(row.customEmailTemplate) as Record<string, unknown> | null) ?? {};
  return { name: null, imageURL: null, sender: null, logoConfig: null, ...template, enableEmailNotifications: parseBoolean(row.enableEmailNotifications) ?? true };
}

/** What decides whether a stored user or group is the dump's: its data, not when it was created. */
function comparable(item: ImportedUser | ImportedGroup) {
  const { createdTimestamp: _created, ...data } = item as ImportedUser;
  return JSON.parse(JSON.stringify(data));
}

/** The batches being written; a failure is reported once the others have ended too. */
class Writes {
  private readonly pending: Promise<void>[] = [];

  add(write: Promise<void>) {
    // Awaited in `below`; a failure must not go unhandled meanwhile.
    write.catch(() => undefined);
    this.pending.push(write);
  }

  /** Waits, oldest first, until fewer than `count` batches are being written. */
  async below(count: number) {
    while (this.pending.length >= count) {
      const oldest = this.pending.shift()!;
      try {
        await oldest;
      } catch (error) {
        await Promise.allSettled(this.pending.splice(0));
        throw error;
      }
    }
  }
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

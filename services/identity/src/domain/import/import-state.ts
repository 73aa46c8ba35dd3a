/**
 * What the steps of one import run share (run-import.ts drives them, import-steps.ts holds one per
 * dump table): the counts, skips and conflicts the import record reports, the applications in
 * conflict, the pages read in the first pass, and the mapping of the dump's ids to this server's
 * (identity.import_mappings, with a bounded cache in memory).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ImportClient, ImportKind, ImportRow, InvalidationMessage, Logger, SecretBox } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { ImportRecordRow } from '../../entities/index.js';
import { importsRepository, type ImportedGroup, type ImportedUser, type Mapping, type MappingKind } from '../../repositories/imports.repository.js';
import type { DumpRow } from './dump-tables.js';

export interface ImportDeps {
  db: DataSource;
  secretBox: SecretBox;
  services: ImportClient;
  logger: Logger;
  /** Tells every gateway replica to drop its cached credentials of a customer or application the import overwrote. */
  publishInvalidation(message: InvalidationMessage): Promise<void>;
  /** After the import wrote users, groups or memberships of an application (domain/notices.ts). */
  directoryChanged(applicationId: string): Promise<void>;
  /** Batches of one table being written at once (default WRITES_IN_FLIGHT in run-import.ts). */
  writesInFlight?: number;
}

/** Mappings kept in memory per kind; beyond, the cache starts over (the table has them all). */
const CACHE_LIMIT = 100_000;

export class ImportState {
  readonly counts: ImportRecordRow['counts'];
  readonly skipped: ImportRecordRow['skipped'];
  readonly conflicts: ImportRecordRow['conflicts'];
  readonly tablesDone: Set<string>;
  /** Applications in conflict: none of their data is imported. */
  readonly appsInConflict: Set<string>;
  /** The pages table, read first: a thread's location by `<orgID>:<contextHash>`. */
  readonly pages = new Map<string, unknown>();
  /** Pages counted in this run (see the threads step). */
  readonly pagesCounted = new Set<string>();
  private readonly cache = new Map<MappingKind, Map<string, Mapping>>();
  /** The mapping rows being saved, one save after the other (see `remember`). */
  private saving: Promise<void> = Promise.resolve();

  constructor(
    readonly deps: ImportDeps,
    readonly record: ImportRecordRow,
    readonly requestId: string,
  ) {
    this.counts = { ...record.counts };
    this.skipped = { ...record.skipped };
    this.conflicts = [...record.conflicts];
    this.tablesDone = new Set(record.tablesDone);
    this.appsInConflict = new Set(this.conflicts.filter((c) => c.entity === 'application').map((c) => c.id));
  }

  get db() {
    return this.deps.db;
  }

  count(entity: string, imported: number, existing: number) {
    const current = this.counts[entity] ?? { imported: 0, existing: 0 };
    this.counts[entity] = { imported: current.imported + imported, existing: current.existing + existing };
  }

  skip(table: string, rows: number, reason: string) {
    if (rows === 0) return;
    const key = `${table}: ${reason}`;
    this.skipped[key] = { rows: (this.skipped[key]?.rows ?? 0) + rows, reason };
  }

  conflict(entity: string, id: string, reason: string, applicationID?: string) {
    if (this.conflicts.some((c) => c.entity === entity && c.id === id && c.applicationID === applicationID)) return;
    this.conflicts.push({ entity, id, ...(applicationID ? { applicationID } : {}), reason });
  }

  /** Rows of applications this import may write, as [applicationId, row]; the others are counted as skipped. */
  ofImportedApps(table: string, rows: DumpRow[], applicationOf: (row: DumpRow) => string | null | undefined): [string, DumpRow][] {
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

  async resolve(kind: MappingKind, ids: (string | null | undefined)[]): Promise<Map<string, Mapping>> {
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
  async remember(kind: MappingKind, mappings: Mapping[]) {
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
  async remembered() {
    await this.saving;
  }

  /** Hands rows to a service, one call per application and batch. */
  async send<K extends ImportKind>(kind: K, perApp: Map<string, ImportRow<K>[]>) {
    const answers = [];
    for (const [applicationId, rows] of perApp)
      answers.push({ applicationId, rows, answer: await this.deps.services.send(kind, applicationId, rows, this.record.overwrite, this.requestId) });
    return answers;
  }

  /** Users and groups: new ones inserted, identical ones counted as there, different ones conflicts unless overwriting. */
  tally<T extends ImportedUser | ImportedGroup>(entity: 'user' | 'group', given: T[], result: { inserted: string[]; existing: T[] }) {
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

}

/** What decides whether a stored user or group is the dump's: its data, not when it was created. */
function comparable(item: ImportedUser | ImportedGroup) {
  const { createdTimestamp: _created, ...data } = item as ImportedUser;
  return JSON.parse(JSON.stringify(data));
}

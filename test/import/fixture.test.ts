/**
 * Importing the original service's fixture dump into an empty system: every one of the 96 reads
 * the original answered afterwards answers the same through this server, with tokens minted from
 * the imported secrets, except where this server answers differently on purpose (each such
 * difference names its decision). The import reports what it imported and what it skipped, and why.
 */
import { describe, expect, it } from 'vitest';
import { replayExpectedReads } from '../support/fixture-reads.js';
import { FIXTURE_DUMP, systemWithImporter, type Importer } from '../support/imports.js';
import type { TestSystem } from '../support/system.js';
import type { ImportView } from '../../services/identity/src/domain/import/imports.js';

let system: TestSystem;
let importer: Importer;
let report: ImportView;

systemWithImporter(async (started) => {
  ({ system, importer } = started);
  report = await importer.run(FIXTURE_DUMP);
});

describe('importing the fixture dump into an empty system', () => {
  it('completes, counting every row of every imported table', () => {
    expect(report.status).toBe('completed');
    expect(report.error).toBeNull();
    expect(report.conflicts).toEqual([]);
    expect(report.progress.fraction).toBe(1);
    expect(report.counts).toEqual({
      customers: { imported: 1, existing: 0 },
      applications: { imported: 2, existing: 0 },
      users: { imported: 28, existing: 0 },
      groups: { imported: 7, existing: 0 },
      threads: { imported: 12, existing: 0 },
      messages: { imported: 46, existing: 0 },
      mentions: { imported: 11, existing: 0 },
      reactions: { imported: 11, existing: 0 },
      notifications: { imported: 67, existing: 0 },
      memberships: { imported: 39, existing: 0 },
      pages: { imported: 12, existing: 0 },
      participants: { imported: 33, existing: 0 },
      webhooks: { imported: 1, existing: 0 },
      preferences: { imported: 1, existing: 0 },
    });
  });

  it('skips, with their reason, the tables this server holds nothing of', () => {
    expect(report.skipped).toEqual([
      { table: 'message_notifications', rows: 54, reason: 'e-mail records (links of notification e-mails) are not held by this server' },
    ]);
  });

  it('answers every expected read as the original did, but for differences each named by its decision', async () => {
    const differences = await replayExpectedReads(system.url);
    const unexplained = differences.filter((difference) => difference.decision === null);
    expect(unexplained).toEqual([]);
    // The deliberate differences that occur, each named.
    const decisions = [...new Set(differences.map((difference) => difference.decision))].sort();
    expect(decisions).toEqual([
      "a message's url is the thread's url when the message has none",
      "notification items carry `text`, the template with names substituted",
      'eventWebhookSubscriptions is returned by the application GETs',
      'extraClassnames is null when never set (the reference answers "" for messages, nothing in thread lists)',
      'output supersets (keys this server adds)',
      'secrets never appear outside the create-application response',
      'timestamps are ISO-8601 UTC with milliseconds and Z',
    ].sort());
  });

  it('imports no events: nothing is delivered to the imported webhooks for history', async () => {
    const { rows } = await system.sql.query<{ count: number }>(`SELECT count(*)::int AS count FROM webhooks.events`);
    expect(rows[0].count).toBe(0);
  });
});

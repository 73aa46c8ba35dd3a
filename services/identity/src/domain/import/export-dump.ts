/**
 * GET /v1/customer/dbdump: everything this server holds of a customer, as a dump in the original
 * service's format (dump/dump-writer.ts), so that a customer can move between instances and keep
 * its tooling, and `npm run import` takes it back. Streamed a page of rows at a time: identity
 * writes its own tables and asks each service for its own; a failure half-way ends the body with
 * an error comment instead of COMMIT;, which importers refuse, as the original did.
 */
import {
  dumpText,
  EXPORT_TABLES,
  exportIds,
  formatTextArray,
  formatTimestamp,
  NOTIFICATION_CHANNELS,
  type ExportClient,
  type ExportedKind,
  type ExportRow,
  type ExportTable,
  type SecretBox,
} from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { ApplicationRow } from '../../entities/index.js';
import { customersRepository } from '../../repositories/customers.repository.js';
import { exportRepository } from '../../repositories/export.repository.js';
import { preferencesRepository } from '../../repositories/preferences.repository.js';
import { openSecret } from '../secrets.js';

export interface ExportContext {
  db: DataSource;
  secretBox: SecretBox;
  services: ExportClient;
}

const PAGE_ROWS = 1000;
const EMAIL_TEMPLATE_FIELDS = ['name', 'imageURL', 'sender', 'logoConfig'];

/** The dump's lines, table by table, in the original's order. */
export async function* exportDump(ctx: ExportContext, customerId: string, requestId: string): AsyncGenerator<string> {
  const customer = await customersRepository.find(ctx.db, customerId);
  if (!customer) throw new Error(`customer ${customerId} not found`);
  const applications = await exportRepository.applications(ctx.db, customerId);
  yield dumpText.header();
  for (const table of Object.keys(EXPORT_TABLES) as ExportTable[]) {
    yield dumpText.tableStart(table);
    if (table === 'customers')
      yield dumpText.row('customers', { id: customer.id, createdTimestamp: formatTimestamp(customer.createdAt), sharedSecret: openSecret(ctx.secretBox, 'customer', customer) });
    else if (table === 'applications') for (const application of applications) yield dumpText.row('applications', applicationRow(ctx, application));
    else for (const application of applications) yield* tableRows(ctx, table, application.id, requestId);
    yield dumpText.tableEnd(table);
  }
  yield dumpText.footer();
}

function applicationRow(ctx: ExportContext, application: ApplicationRow): ExportRow<'applications'> {
  const settings = (application.emailSettings ?? {}) as Record<string, unknown>;
  const template = Object.fromEntries(EMAIL_TEMPLATE_FIELDS.filter((key) => key in settings).map((key) => [key, settings[key]]));
  const hasTemplate = Object.values(template).some((value) => value !== null && value !== undefined);
  return {
    id: application.id,
    name: application.name,
    sharedSecret: openSecret(ctx.secretBox, 'application', application),
    customEmailTemplate: hasTemplate ? JSON.stringify(template) : null,
    iconURL: application.iconUrl,
    redirectURI: application.redirectUri,
    createdTimestamp: formatTimestamp(application.createdAt),
    customerID: application.customerId,
    eventWebhookURL: application.eventWebhookUrl,
    eventWebhookSubscriptions: formatTextArray(application.eventWebhookSubscriptions),
    enableEmailNotifications: settings.enableEmailNotifications === false ? 'f' : 't',
  };
}

async function* tableRows(ctx: ExportContext, table: ExportTable, app: string, requestId: string): AsyncGenerator<string> {
  if (table === 'user_preferences') {
    yield* preferenceRows(ctx, app);
    return;
  }
  if (table === 'users' || table === 'orgs' || table === 'org_members') {
    for (let after = '0'; ; ) {
      const rows = await identityPage(ctx, table, app, after);
      for (const row of rows.rows) yield dumpText.row(table, row as never);
      if (rows.next === null) return;
      after = rows.next;
    }
  }
  for (let after: string | null = null; ; ) {
    const page = await ctx.services.page(table as ExportedKind, app, { after, limit: PAGE_ROWS }, requestId);
    for (const row of page.rows) yield dumpText.row(table, row as never);
    if (page.next === null) return;
    after = page.next;
  }
}

/** Users' channels as the original stored them: both keys written, so that it reads them back unchanged. */
async function* preferenceRows(ctx: ExportContext, app: string): AsyncGenerator<string> {
  for (let after = '0'; ; ) {
    const rows = await preferencesRepository.page(ctx.db, app, after, PAGE_ROWS);
    for (const row of rows)
      yield dumpText.row('user_preferences', {
        userID: exportIds.user(app, row.userID),
        key: NOTIFICATION_CHANNELS,
        value: JSON.stringify({ email: row.sendViaEmail, slack: row.sendViaSlack }),
      });
    if (rows.length < PAGE_ROWS) return;
    after = rows[rows.length - 1].internalId;
  }
}

async function identityPage(ctx: ExportContext, table: 'users' | 'orgs' | 'org_members', app: string, after: string) {
  const next = <T>(rows: T[], cursor: (row: T) => string) => (rows.length === PAGE_ROWS ? cursor(rows[rows.length - 1]) : null);
  if (table === 'users') {
    const rows = await exportRepository.users(ctx.db, app, after, PAGE_ROWS);
    return {
      rows: rows.map(
        (row): ExportRow<'users'> => ({
          id: exportIds.user(app, row.externalId),
          createdTimestamp: formatTimestamp(row.createdAt),
          state: row.status,
          name: row.name,
          screenName: row.shortName,
          email: row.email,
          profilePictureURL: row.profilePictureUrl,
          externalID: row.externalId,
          externalProvider: 'platform',
          platformApplicationID: app,
          metadata: row.metadata,
        }),
      ),
      next: next(rows, (row) => row.internalId),
    };
  }
  if (table === 'orgs') {
    const rows = await exportRepository.groups(ctx.db, app, after, PAGE_ROWS);
    return {
      rows: rows.map(
        (row): ExportRow<'orgs'> => ({
          id: exportIds.group(app, row.externalId),
          name: row.name,
          externalID: row.externalId,
          externalProvider: 'platform',
          createdTimestamp: formatTimestamp(row.createdAt),
          // The original's word for a group of status deleted.
          state: row.status === 'deleted' ? 'inactive' : 'active',
          platformApplicationID: app,
          metadata: row.metadata,
        }),
      ),
      next: next(rows, (row) => row.internalId),
    };
  }
  const rows = await exportRepository.memberships(ctx.db, app, after, PAGE_ROWS);
  return {
    rows: rows.map(
      (row): ExportRow<'org_members'> => ({ userID: exportIds.user(app, row.userId), orgID: exportIds.group(app, row.groupId), platformApplicationID: app }),
    ),
    next: next(rows, (row) => row.seq),
  };
}

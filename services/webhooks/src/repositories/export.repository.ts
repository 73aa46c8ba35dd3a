/** The SQL of exporting this service's part of a customer dump: a page of an application's registered webhooks. */
import { rows, type Queryable } from '@collab/shared';
import type { RegistrationRow } from '../entities/index.js';
import { registrationsTable } from './tables.js';

export const exportRepository = {
  async registrations(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return rows<Pick<RegistrationRow, 'id' | 'url' | 'events'>>(
      db,
      `SELECT ${registrationsTable.pick('id', 'url', 'events')} FROM webhooks.registrations r WHERE r.application_id = $1 AND r.id > $2 ORDER BY r.id LIMIT $3`,
      [applicationId, after ?? '00000000-0000-0000-0000-000000000000', limit],
    );
  },
};

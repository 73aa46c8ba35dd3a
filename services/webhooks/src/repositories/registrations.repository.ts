/** All SQL about registered webhooks; every statement is scoped to one application. */
import { countAffected, rows, type Queryable } from '@collab/shared';
import type { RegistrationRow } from '../entities/index.js';
import { registrationsTable } from './tables.js';

export const registrationsRepository = {
  /** Creates the registration of this exact URL, or replaces its event types; returns its id. */
  async upsert(db: Queryable, applicationId: string, id: string, url: string, events: string[]): Promise<string> {
    const [registered] = await rows<Pick<RegistrationRow, 'id'>>(
      db,
      `INSERT INTO webhooks.registrations AS r (id, application_id, url, events) VALUES ($1, $2, $3, $4)
       ON CONFLICT (application_id, url) DO UPDATE SET events = EXCLUDED.events
       RETURNING ${registrationsTable.pick('id')}`,
      [id, applicationId, url, events],
    );
    return registered.id;
  },

  list(db: Queryable, applicationId: string): Promise<RegistrationRow[]> {
    return rows<RegistrationRow>(db, `SELECT ${registrationsTable.select} FROM webhooks.registrations r WHERE r.application_id = $1 ORDER BY r.created_at, r.id`, [
      applicationId,
    ]);
  },

  /** The distinct URLs registered for an event type. */
  async urlsFor(db: Queryable, applicationId: string, type: string): Promise<string[]> {
    const found = await rows<Pick<RegistrationRow, 'url'>>(
      db,
      `SELECT DISTINCT ${registrationsTable.pick('url')} FROM webhooks.registrations r WHERE r.application_id = $1 AND $2 = ANY(r.events)`,
      [applicationId, type],
    );
    return found.map((row) => row.url);
  },

  delete(db: Queryable, applicationId: string, id: string): Promise<number> {
    return countAffected(db, `DELETE FROM webhooks.registrations WHERE application_id = $1 AND id = $2`, [applicationId, id]);
  },
};

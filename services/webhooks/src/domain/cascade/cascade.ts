/**
 * The webhooks side of a deletion cascade: a deleted application's deletion is recorded, and a
 * purge job removes its deliveries, events and registrations, children first. Users and groups
 * own nothing here.
 */
import { definePurge } from '@collab/shared/storage';
import { WEBHOOKS_SCHEMA } from '../../entities/index.js';

export const webhooksPurge = definePurge({
  schema: WEBHOOKS_SCHEMA,
  mark: {},
  tables: [
    // A delivery keeps the body it last sent: fewer per batch.
    { name: 'deliveries', table: 'webhooks.deliveries', key: 'id', batchDivisor: 10 },
    { name: 'events', table: 'webhooks.events', key: 'id', batchDivisor: 10 },
    { name: 'registrations', table: 'webhooks.registrations', key: 'id' },
  ],
});

export * from './outbox.js';
export * from './relay.js';
export * from './table.js';
export * from './failed.js';

export * from './store.js';
export * from './table.js';

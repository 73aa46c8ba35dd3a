export * from './purge.js';
export * from './requests.js';
export * from './table.js';

export * from './cursor.js';
export * from './cursors.js';

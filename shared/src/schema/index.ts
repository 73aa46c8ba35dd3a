export * from './path.js';
export * from './formats.js';
export * from './schema.js';
export * from './query.js';

export * from './path.js';
export * from './formats.js';
export * from './schema.js';
export * from './scalar-schemas.js';
export * from './object-schemas.js';
export * from './builders.js';
export * from './query.js';

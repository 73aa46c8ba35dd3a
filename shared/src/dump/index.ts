export * from './copy-text.js';
export * from './dump-reader.js';
export * from './dump-writer.js';

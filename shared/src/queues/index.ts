export * from './contract.js';
export * from './producer.js';
export * from './worker.js';

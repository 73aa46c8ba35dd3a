/**
 * Helpers of the tests and the bench, which both start systems on the shared Postgres and Redis:
 * free ports, waiting for a condition, loopback servers, and removing what a system left. A
 * separate entry point (`@collab/shared/devkit`) that no service imports (a lint rule refuses it),
 * so production code carries no test helper; it lives here because the compiled bench cannot
 * import the TypeScript of test/support.
 */
export * from './cleanup.js';
export * from './loopback-server.js';
export * from './ports.js';
export * from './until.js';

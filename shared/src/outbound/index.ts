export * from './address-policy.js';
export * from './outbound-error.js';
export * from './outbound-client.js';

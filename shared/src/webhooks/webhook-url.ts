import { ApiError } from '../errors.js';

/**
 * Webhook URLs (the application's own and registered ones) must be http or https: other schemes
 * would never touch the network, so a receiver could never get an event there.
 */
export function requireHttpUrl(url: string, field: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new ApiError('invalid_field', `${field} must be an http or https URL.`);
}

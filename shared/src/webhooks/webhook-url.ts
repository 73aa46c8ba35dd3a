import { ApiError } from '../errors.js';
import type { OutboundClient } from '../outbound/index.js';

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

/**
 * A webhook URL whose address the outbound guard refuses would fail every delivery, so it is
 * refused when it is stored, naming the rule and the setting (decisions.md 41 accepted it and let
 * each delivery fail; the first hour of an operator with a local receiver showed that costs more).
 * A name that does not resolve yet is accepted: deliveries report it, and DNS may follow.
 */
export async function requireAllowedAddress(outbound: OutboundClient, url: string, field: string): Promise<void> {
  const refusal = await outbound.addressRefusal(url);
  if (refusal !== null) throw new ApiError('invalid_field', `${field} '${url}' is refused: ${refusal}.`);
}

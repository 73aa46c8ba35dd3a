/**
 * The address the console's sign-in limit counts a client's failures under. Behind a load balancer
 * or an ingress every connection comes from the proxy, and one client's failures would lock every
 * client out: when the connection comes from a proxy in TRUSTED_PROXY_CIDRS, the client is the
 * nearest X-Forwarded-For entry that is not such a proxy (entries further left are whatever the
 * client wrote, and are not believed).
 */
import type { IncomingMessage } from 'node:http';
import { isAddressInRanges, type Cidr } from '@collab/shared';

export function clientAddress(req: IncomingMessage, trustedProxies: readonly Cidr[]): string {
  let address = req.socket.remoteAddress ?? 'unknown';
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  while (forwarded.length > 0 && isAddressInRanges(address, trustedProxies)) address = forwarded.pop()!;
  return address;
}

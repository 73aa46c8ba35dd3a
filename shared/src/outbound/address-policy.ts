/**
 * Which addresses outbound requests may connect to: public unicast only, so that a customer's URL
 * cannot reach this system's own network (loopback, private ranges, link-local cloud metadata at
 * 169.254.169.254, CGNAT, multicast, reserved and documentation ranges, IPv4-mapped IPv6). The
 * range tables are ipaddr.js's; anything it does not call `unicast` is refused. Ranges listed in
 * OUTBOUND_ALLOWED_CIDRS are exempt, for receivers on an intranet and for tests on 127.0.0.1.
 */
import ipaddr from 'ipaddr.js';

/** A parsed CIDR range: network address and prefix length. */
export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * Whether a connection to `address` (an IP literal, as connected to) is allowed. An exemption
 * applies to addresses of its own family only: `127.0.0.0/8` does not cover `::ffff:127.0.0.1`.
 */
export function isAddressAllowed(address: string, exemptions: readonly Cidr[]): boolean {
  const parsed = ipaddr.parse(address);
  return parsed.range() === 'unicast' || inRanges(parsed, exemptions);
}

/** Whether a parsed address lies in one of the ranges of its own family. */
function inRanges(parsed: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly Cidr[]): boolean {
  return ranges.some(([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits));
}

/**
 * Whether `address` (an IP literal; an IPv4-mapped IPv6 address counts as its IPv4 address, as
 * Node reports IPv4 peers on a dual-stack socket) lies in one of `ranges`. False for anything that
 * is not an IP address.
 */
export function isAddressInRanges(address: string, ranges: readonly Cidr[]): boolean {
  return ipaddr.isValid(address) && inRanges(ipaddr.process(address), ranges);
}

/** ipaddr.js's range names, as a sentence says them. */
const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  unspecified: 'the unspecified address',
  uniqueLocal: 'a unique local address',
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  reserved: 'a reserved address',
};

/**
 * Why `address` is refused, naming its range and the setting that would allow it, e.g.
 * `127.0.0.1 is a loopback address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. 127.0.0.0/8)`.
 */
export function describeRefusedAddress(address: string, subject: string = address): string {
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  const example = range === 'loopback' && parsed.kind() === 'ipv4' ? '127.0.0.0/8' : `${parsed.toString()}/${parsed.kind() === 'ipv4' ? 32 : 128}`;
  return `${subject} is ${RANGE_NAMES[range] ?? `in the ${range} range`}, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. ${example})`;
}

/** Parses `10.0.0.0/8, fd00::/8`; a value that is not a CIDR range is an error naming every bad one. */
export function parseCidrList(raw: string): Cidr[] {
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const invalid = items.filter((item) => !ipaddr.isValidCIDR(item));
  if (invalid.length > 0)
    throw new Error(`not a CIDR range (like 10.0.0.0/8 or fd00::/8): ${invalid.map((item) => `"${item}"`).join(', ')}`);
  return items.map((item) => ipaddr.parseCIDR(item));
}

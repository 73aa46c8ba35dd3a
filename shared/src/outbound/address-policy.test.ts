/**
 * Which addresses outbound requests may reach: public unicast only, unless a configured range
 * exempts the address; and the OUTBOUND_ALLOWED_CIDRS variable refuses to boot with an entry that
 * is not a CIDR range, naming it.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, outboundVars } from '../config.js';
import { isAddressAllowed, parseCidrList } from './address-policy.js';

// One address in each refused range: loopback, private, link-local (cloud metadata), CGNAT,
// this-network, protocol assignments, documentation, AS112, AMT, 6to4 relay, benchmarking,
// multicast, reserved, broadcast; and for IPv6 also unique-local, IPv4-mapped (even of a public
// address), IPv4-translated, NAT64, discard, Teredo, 6to4.
const REFUSED = [
  '0.0.0.0', '0.1.2.3', '10.0.0.1', '100.64.0.1', '127.0.0.1', '127.255.255.254', '169.254.169.254',
  '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.0.2.1', '192.31.196.1', '192.52.193.1', '192.88.99.1',
  '192.168.1.1', '192.175.48.1', '198.18.0.1', '198.51.100.1', '203.0.113.1', '224.0.0.1', '240.0.0.1',
  '255.255.255.255',
  '::', '::1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:8.8.8.8',
  '::ffff:0:8.8.8.8', '64:ff9b::808:808', '100::1', '2001::1', '2001:2::1', '2001:db8::1', '2002::1',
  '2620:4f:8000::1',
];
const PUBLIC = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::1'];

describe('isAddressAllowed', () => {
  it('refuses every address outside public unicast', () => {
    expect(REFUSED.filter((address) => isAddressAllowed(address, []))).toEqual([]);
  });

  it('allows public unicast addresses', () => {
    expect(PUBLIC.filter((address) => !isAddressAllowed(address, []))).toEqual([]);
  });

  it('allows a refused address inside an exempted range, and only there', () => {
    const exemptions = parseCidrList('127.0.0.1/32, 10.0.0.0/8, fd00::/8');
    expect(isAddressAllowed('127.0.0.1', exemptions)).toBe(true);
    expect(isAddressAllowed('10.200.3.4', exemptions)).toBe(true);
    expect(isAddressAllowed('fd12:3456::1', exemptions)).toBe(true);
    expect(isAddressAllowed('127.0.0.2', exemptions)).toBe(false);
    expect(isAddressAllowed('192.168.1.1', exemptions)).toBe(false);
  });

  it('does not let an IPv4 exemption cover the IPv4-mapped IPv6 form of the address', () => {
    expect(isAddressAllowed('::ffff:127.0.0.1', parseCidrList('127.0.0.0/8'))).toBe(false);
  });
});

describe('OUTBOUND_ALLOWED_CIDRS', () => {
  const load = (value: string | undefined) => loadConfig(outboundVars, { OUTBOUND_ALLOWED_CIDRS: value });

  it('defaults to no exemption', () => {
    expect(load(undefined).OUTBOUND_ALLOWED_CIDRS).toEqual([]);
  });

  it('reads a comma-separated list of IPv4 and IPv6 ranges', () => {
    const ranges = load(' 127.0.0.0/8 ,fd00::/8 ').OUTBOUND_ALLOWED_CIDRS.map(([network, bits]) => `${network.toString()}/${bits}`);
    expect(ranges).toEqual(['127.0.0.0/8', 'fd00::/8']);
  });

  it('is a boot error naming every entry that is not a CIDR range', () => {
    let error: unknown;
    try {
      load('10.0.0.0/8, 192.168.1.1, nonsense, 10.0.0.0/33');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const [problem] = (error as ConfigError).problems;
    expect(problem).toMatch(/^OUTBOUND_ALLOWED_CIDRS is invalid: /);
    expect(problem).toContain('"192.168.1.1", "nonsense", "10.0.0.0/33"');
    expect(problem).not.toContain('"10.0.0.0/8"');
  });
});

// Where webhooks may go. A webhook URL is chosen by a tenant, so Kassa must not become a way to
// reach its own network: in production on a PostgreSQL server ("strict"), only https to public
// addresses; private, loopback, link-local, metadata and other special addresses are refused when
// the endpoint is saved and again, after DNS resolution, on every delivery (a name can change what
// it resolves to). Sandbox and the embedded setup also allow http and loopback, so a developer can
// receive on 127.0.0.1; cloud metadata addresses are refused everywhere.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { Environment } from '../context.ts';

export type DestinationPolicy = 'strict' | 'local';

export function destinationPolicy(environment: Environment): DestinationPolicy {
  return environment.name === 'production' && environment.config.databases.production.kind === 'postgres' ? 'strict' : 'local';
}

const metadata = new BlockList();
metadata.addAddress('169.254.169.254');
metadata.addAddress('fd00:ec2::254', 'ipv6');
metadata.addAddress('100.100.100.200');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8);
loopback.addAddress('::1', 'ipv6');

// Every range that is not the public internet (IANA special-purpose registries).
const special = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  special.addSubnet(network, prefix, 'ipv4');
}
// No rule for ::ffff:0:0/96: BlockList matches IPv4 addresses against it, so it would refuse every
// IPv4 address; a mapped address is judged as the IPv4 address it carries instead (addressRefusal).
for (const [network, prefix] of [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  special.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv4-mapped IPv6 address carries, in any spelling (`::ffff:7f00:1`, `::ffff:127.0.0.1`). */
function mappedIPv4(address: string): string | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const words = tail === undefined ? groups(head) : [...groups(head), ...Array(8 - groups(head).length - groups(tail).length).fill(0), ...groups(tail)];
  if (words.length !== 8 || words.slice(0, 5).some((w) => w !== 0) || words[5] !== 0xffff) return null;
  return [words[6] >> 8, words[6] & 255, words[7] >> 8, words[7] & 255].join('.');
}

/** Why Kassa will not send to this address, or null if it may. */
export function addressRefusal(address: string, policy: DestinationPolicy): string | null {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
  const mapped = family === 'ipv6' ? mappedIPv4(address) : null;
  if (mapped) return addressRefusal(mapped, policy);
  if (metadata.check(address, family)) return 'a cloud metadata address';
  if (policy === 'local' && loopback.check(address, family)) return null;
  if (special.check(address, family)) return 'a private or reserved address';
  return null;
}

/** Why Kassa will not save this webhook URL, or null if it may (names are resolved at delivery). */
export function urlRefusal(raw: string, policy: DestinationPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(policy === 'local' && url.protocol === 'http:')) {
    return policy === 'strict' ? 'must use https' : 'must use http or https';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (raw.length > 2048) return 'must be at most 2048 characters';
  // `localhost.` is `localhost`: a trailing dot only marks the name as fully qualified.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(host)) {
    const refusal = addressRefusal(host, policy);
    return refusal ? `must not point to ${refusal}` : null;
  }
  if (policy === 'strict' && (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.'))) return 'must name a public host';
  return null;
}

/**
 * A `lookup` for http(s).request that resolves the name and refuses any address the policy does
 * not allow, so the connection goes only to an address that was checked.
 */
export function guardedLookup(policy: DestinationPolicy) {
  return (hostname: string, options: object, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      const refused = list.map((a) => addressRefusal(a.address, policy)).find((r) => r !== null);
      if (refused || list.length === 0) {
        const blocked = Object.assign(new Error(`${hostname} resolves to ${refused ?? 'no address'}: not delivered`), { code: 'EDESTINATIONREFUSED' });
        return callback(blocked, '');
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

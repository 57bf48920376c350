// What a per-address limit counts of a client's address (http/client-ip.ts finds the address).
import { isIP } from 'node:net';

/**
 * What a per-address limit counts: an IPv4 address, or the /64 an IPv6 address belongs to. A
 * single IPv6 host usually holds a whole /64, so counting addresses one by one would let it
 * rotate past any limit.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head, tail] = address.split('%')[0].toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

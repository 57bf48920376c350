// The client's address. The socket's peer is the client unless it is a trusted proxy; then the
// X-Forwarded-For chain is read from the right (the hop nearest to Kassa), skipping trusted
// proxies, and the first untrusted address is the client. Anything left of it was written by the
// client itself and is never believed, so a client cannot choose its own address.
import { isIP, type BlockList } from 'node:net';
import type { IncomingMessage } from 'node:http';

/**
 * The bare address of a socket peer or a forwarded hop: `::ffff:127.0.0.1` is the IPv4 address
 * 127.0.0.1 on a dual-stack socket; some proxies write `1.2.3.4:5555` or `[2001:db8::1]:443`.
 */
function normalize(address: string): string {
  let bare = address;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(bare);
  if (bracketed) bare = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(bare)) bare = bare.slice(0, bare.lastIndexOf(':'));
  return bare.startsWith('::ffff:') && isIP(bare.slice(7)) === 4 ? bare.slice(7) : bare;
}

function trusted(proxies: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && proxies.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export function clientIpOf(req: IncomingMessage, proxies: BlockList): string {
  let client = normalize(req.socket.remoteAddress ?? '');
  if (!trusted(proxies, client)) return client;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((h) => normalize(h.trim())).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (isIP(hops[i]) === 0) break;
    client = hops[i];
    if (!trusted(proxies, client)) break;
  }
  return client;
}

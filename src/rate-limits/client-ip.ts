// The client's address. The socket's peer is the client unless it is a trusted proxy; then the
// X-Forwarded-For chain is read from the right (the hop nearest to Kassa), skipping trusted
// proxies, and the first untrusted address is the client. Anything left of it was written by the
// client itself and is never believed, so a client cannot choose its own address.
import { isIP, type BlockList } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** `::ffff:127.0.0.1` is the IPv4 address 127.0.0.1 on a dual-stack socket. */
function normalize(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
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

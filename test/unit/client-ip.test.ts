import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { clientIpOf } from '../../src/http/client-ip.ts';
import { addressKey } from '../../src/rate-limits/address-key.ts';

const request = (remoteAddress: string, forwardedFor?: string) =>
  ({ socket: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('the client address', () => {
  const none = loadConfig({}).trustedProxies;
  const proxies = loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8,2001:db8:ffff::/48' }).trustedProxies;

  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(clientIpOf(request('203.0.113.9', '198.51.100.1'), none)).toBe('203.0.113.9');
    expect(clientIpOf(request('::ffff:203.0.113.9'), none)).toBe('203.0.113.9');
  });

  it('behind trusted proxies, is the nearest hop they did not write', () => {
    expect(clientIpOf(request('10.0.0.2', '198.51.100.1, 203.0.113.7, 10.1.1.1'), proxies)).toBe('203.0.113.7');
    expect(clientIpOf(request('10.0.0.2', '203.0.113.7:5555'), proxies)).toBe('203.0.113.7');
    expect(clientIpOf(request('10.0.0.2', '[2001:db8:1::5]:443, 2001:db8:ffff::1'), proxies)).toBe('2001:db8:1::5');
    // Only proxies in the chain: the farthest of them is all that is known.
    expect(clientIpOf(request('10.0.0.2', '10.9.9.9'), proxies)).toBe('10.9.9.9');
    // A hop that is no address ends the walk at the last good one.
    expect(clientIpOf(request('10.0.0.2', 'nonsense'), proxies)).toBe('10.0.0.2');
  });

  it('is counted by its /64 for IPv6, by itself for IPv4', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
  });
});

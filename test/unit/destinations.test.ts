// Where webhooks may go. Production on a PostgreSQL server is "strict": https to public addresses
// only. Sandbox and the embedded setup are "local": http and loopback too. Cloud metadata and
// private addresses are refused under both, whatever spelling the address arrives in.
import { describe, expect, it } from 'vitest';
import type { Environment } from '../../src/context.ts';
import { addressRefusal, destinationPolicy, guardedLookup, urlRefusal, type DestinationPolicy } from '../../src/webhooks/destinations.ts';

const metadata = 'a cloud metadata address';
const reserved = 'a private or reserved address';

function environment(name: 'production' | 'sandbox', kind: 'postgres' | 'pglite'): Environment {
  return { name, config: { databases: { production: { kind }, sandbox: { kind } } } } as unknown as Environment;
}

describe('destinationPolicy', () => {
  it('is strict only in production on a PostgreSQL server', () => {
    expect(destinationPolicy(environment('production', 'postgres'))).toBe('strict');
    expect(destinationPolicy(environment('production', 'pglite'))).toBe('local');
    expect(destinationPolicy(environment('sandbox', 'postgres'))).toBe('local');
    expect(destinationPolicy(environment('sandbox', 'pglite'))).toBe('local');
  });
});

describe('addressRefusal', () => {
  const cases: [string, { strict: string | null; local: string | null }][] = [
    // Public addresses are allowed everywhere.
    ['8.8.8.8', { strict: null, local: null }],
    ['1.1.1.1', { strict: null, local: null }],
    ['2606:4700:4700::1111', { strict: null, local: null }],
    // Loopback: only where a developer receives on their own machine.
    ['127.0.0.1', { strict: reserved, local: null }],
    ['127.8.9.10', { strict: reserved, local: null }],
    ['::1', { strict: reserved, local: null }],
    // Cloud metadata: never.
    ['169.254.169.254', { strict: metadata, local: metadata }],
    ['100.100.100.200', { strict: metadata, local: metadata }],
    ['fd00:ec2::254', { strict: metadata, local: metadata }],
    // Private, link-local, shared, documentation, multicast and unspecified ranges: never.
    ['10.0.0.1', { strict: reserved, local: reserved }],
    ['172.16.5.4', { strict: reserved, local: reserved }],
    ['172.31.255.255', { strict: reserved, local: reserved }],
    ['192.168.0.1', { strict: reserved, local: reserved }],
    ['169.254.1.1', { strict: reserved, local: reserved }],
    ['100.64.0.1', { strict: reserved, local: reserved }],
    ['0.0.0.0', { strict: reserved, local: reserved }],
    ['192.0.2.1', { strict: reserved, local: reserved }],
    ['224.0.0.1', { strict: reserved, local: reserved }],
    ['255.255.255.255', { strict: reserved, local: reserved }],
    ['::', { strict: reserved, local: reserved }],
    ['fc00::1', { strict: reserved, local: reserved }],
    ['fd12:3456::1', { strict: reserved, local: reserved }],
    ['fe80::1', { strict: reserved, local: reserved }],
    ['ff02::1', { strict: reserved, local: reserved }],
    ['2001:db8::1', { strict: reserved, local: reserved }],
    // Addresses that carry an IPv4 address inside IPv6 cannot smuggle a private one through.
    ['64:ff9b::a00:1', { strict: reserved, local: reserved }],
    ['64:ff9b:1::a9fe:a9fe', { strict: reserved, local: reserved }],
    ['2002:a00:1::1', { strict: reserved, local: reserved }],
    ['::a9fe:a9fe', { strict: reserved, local: reserved }],
  ];
  for (const [address, expected] of cases) {
    for (const policy of ['strict', 'local'] as DestinationPolicy[]) {
      it(`${address} under ${policy}: ${expected[policy] ?? 'allowed'}`, () => {
        expect(addressRefusal(address, policy)).toBe(expected[policy]);
      });
    }
  }

  describe('an IPv4-mapped IPv6 address is judged as the IPv4 address it carries, in every spelling', () => {
    const mapped: [string, string | null, string | null][] = [
      ['::ffff:8.8.8.8', null, null],
      ['::ffff:808:808', null, null],
      ['::ffff:169.254.169.254', metadata, metadata],
      ['::ffff:a9fe:a9fe', metadata, metadata],
      ['::FFFF:A9FE:A9FE', metadata, metadata],
      ['0:0:0:0:0:ffff:a9fe:a9fe', metadata, metadata],
      ['::ffff:10.0.0.1', reserved, reserved],
      ['::ffff:a00:1', reserved, reserved],
      ['::ffff:127.0.0.1', reserved, null],
      ['::ffff:7f00:1', reserved, null],
    ];
    for (const [address, strict, local] of mapped) {
      it(address, () => {
        expect(addressRefusal(address, 'strict')).toBe(strict);
        expect(addressRefusal(address, 'local')).toBe(local);
      });
    }
  });
});

describe('urlRefusal under the strict policy (production on PostgreSQL)', () => {
  const strict = (url: string) => urlRefusal(url, 'strict');

  it('allows https to a public name or address', () => {
    expect(strict('https://hooks.example.com/kassa')).toBeNull();
    expect(strict('https://hooks.example.com:8443/kassa?x=1')).toBeNull();
    expect(strict('HTTPS://Hooks.Example.COM/kassa')).toBeNull();
    expect(strict('https://8.8.8.8/hook')).toBeNull();
    expect(strict('https://[2606:4700:4700::1111]/hook')).toBeNull();
  });

  it('refuses http and every other scheme', () => {
    expect(strict('http://hooks.example.com/kassa')).toBe('must use https');
    expect(strict('ftp://hooks.example.com/')).toBe('must use https');
    expect(strict('file:///etc/passwd')).toBe('must use https');
    expect(strict('gopher://hooks.example.com/')).toBe('must use https');
    expect(strict('javascript:alert(1)')).toBe('must use https');
  });

  it('refuses loopback, private and metadata addresses however they are written', () => {
    expect(strict('https://127.0.0.1/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://127.1/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://2130706433/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://0x7f.0.0.1/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://%31%32%37.0.0.1/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://[::1]/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://10.1.2.3/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://0.0.0.0/')).toBe(`must not point to ${reserved}`);
    expect(strict('https://169.254.169.254/latest/meta-data/')).toBe(`must not point to ${metadata}`);
    expect(strict('https://[::ffff:169.254.169.254]/')).toBe(`must not point to ${metadata}`);
    expect(strict('https://[fd00:ec2::254]/')).toBe(`must not point to ${metadata}`);
  });

  it('refuses names that only mean this machine or the local network', () => {
    expect(strict('https://localhost/')).toBe('must name a public host');
    expect(strict('https://LOCALHOST/')).toBe('must name a public host');
    expect(strict('https://localhost./')).toBe('must name a public host');
    expect(strict('https://api.localhost/')).toBe('must name a public host');
    expect(strict('https://intranet/')).toBe('must name a public host');
  });

  it('leaves names that resolve somewhere private to the check at delivery', () => {
    expect(strict('https://169.254.169.254.nip.io/')).toBeNull();
  });
});

describe('urlRefusal under the local policy (sandbox, embedded)', () => {
  const local = (url: string) => urlRefusal(url, 'local');

  it('allows http and https, to loopback as to anywhere public', () => {
    expect(local('http://127.0.0.1:4000/hook')).toBeNull();
    expect(local('http://localhost:4000/hook')).toBeNull();
    expect(local('http://[::1]:4000/hook')).toBeNull();
    expect(local('http://intranet/')).toBeNull();
    expect(local('https://hooks.example.com/kassa')).toBeNull();
  });

  it('refuses other schemes', () => {
    expect(local('ftp://hooks.example.com/')).toBe('must use http or https');
    expect(local('file:///etc/passwd')).toBe('must use http or https');
    expect(local('ws://127.0.0.1/')).toBe('must use http or https');
  });

  it('still refuses metadata and private addresses', () => {
    expect(local('http://169.254.169.254/latest/meta-data/')).toBe(`must not point to ${metadata}`);
    expect(local('http://[::ffff:a9fe:a9fe]/')).toBe(`must not point to ${metadata}`);
    expect(local('http://100.100.100.200/')).toBe(`must not point to ${metadata}`);
    expect(local('http://192.168.1.1/')).toBe(`must not point to ${reserved}`);
    expect(local('http://[fe80::1]/')).toBe(`must not point to ${reserved}`);
  });
});

describe('urlRefusal under both policies', () => {
  for (const policy of ['strict', 'local'] as DestinationPolicy[]) {
    it(`refuses credentials in the URL (${policy})`, () => {
      expect(urlRefusal('https://user:secret@hooks.example.com/', policy)).toBe('must not carry credentials');
      expect(urlRefusal('https://user@hooks.example.com/', policy)).toBe('must not carry credentials');
      expect(urlRefusal('https://:secret@hooks.example.com/', policy)).toBe('must not carry credentials');
    });

    it(`refuses what is not an absolute URL (${policy})`, () => {
      expect(urlRefusal('hooks.example.com/kassa', policy)).toBe('must be an absolute URL');
      expect(urlRefusal('/kassa', policy)).toBe('must be an absolute URL');
      expect(urlRefusal('https://', policy)).toBe('must be an absolute URL');
      expect(urlRefusal('', policy)).toBe('must be an absolute URL');
    });

    it(`refuses a URL longer than 2048 characters (${policy})`, () => {
      expect(urlRefusal(`https://hooks.example.com/${'a'.repeat(2048)}`, policy)).toBe('must be at most 2048 characters');
    });
  }
});

describe('guardedLookup', () => {
  const lookup = (policy: DestinationPolicy, hostname: string) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      guardedLookup(policy)(hostname, {}, (error, address) => resolve({ error, address })),
    );

  it('refuses, after resolving, a name that leads to loopback under the strict policy', async () => {
    const { error } = await lookup('strict', 'localhost');
    expect(error?.code).toBe('EDESTINATIONREFUSED');
    expect(error?.message).toMatch(/^localhost resolves to a private or reserved address/);
  });

  it('connects to the checked loopback address under the local policy', async () => {
    const { error, address } = await lookup('local', 'localhost');
    expect(error).toBeNull();
    expect(['127.0.0.1', '::1']).toContain(address);
  });

  it('answers a literal metadata address with a refusal under both policies', async () => {
    for (const policy of ['strict', 'local'] as DestinationPolicy[]) {
      expect((await lookup(policy, '169.254.169.254')).error?.code).toBe('EDESTINATIONREFUSED');
    }
  });
});

// SECRETS_KEY rotation: which keys decrypt, in which order, and what SECRETS_KEY_PREVIOUS accepts.
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { decryptSecret, encryptSecret, openSecret, UndecryptableSecretError, type SecretStore } from '../../src/webhooks/secrets.ts';

const hex = () => randomBytes(32).toString('hex');

/** A store whose database holds `databaseKey` (the key Kassa keeps when SECRETS_KEY is unset), if any. */
function store(env: Record<string, string>, databaseKey: Buffer | null = null) {
  const rows = new Map<string, Uint8Array>(databaseKey ? [['secrets-key', new Uint8Array(databaseKey)]] : []);
  const secret = {
    findUnique: vi.fn(async ({ where }: { where: { name: string } }) => (rows.has(where.name) ? { name: where.name, value: rows.get(where.name)! } : null)),
    findUniqueOrThrow: vi.fn(async ({ where }: { where: { name: string } }) => ({ name: where.name, value: rows.get(where.name)! })),
    createMany: vi.fn(async ({ data }: { data: { name: string; value: Uint8Array }[] }) => {
      for (const row of data) if (!rows.has(row.name)) rows.set(row.name, row.value);
    }),
  };
  return { config: loadConfig(env), prisma: { secret } } as unknown as SecretStore & { prisma: { secret: typeof secret } };
}

describe('SECRETS_KEY_PREVIOUS', () => {
  const current = hex();

  it('takes one or more earlier keys, hex or base64, newest first, without duplicates', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const config = loadConfig({ SECRETS_KEY: current, SECRETS_KEY_PREVIOUS: ` ${a.toString('hex')}, ${b.toString('base64')},${a.toString('hex').toUpperCase()}` });
    expect(config.previousSecretsKeys).toEqual([a, b]);
    expect(loadConfig({ SECRETS_KEY: current }).previousSecretsKeys).toEqual([]);
    expect(loadConfig({ SECRETS_KEY: current, SECRETS_KEY_PREVIOUS: '' }).previousSecretsKeys).toEqual([]);
  });

  it.each([
    ['a key of the wrong length', () => randomBytes(16).toString('hex'), /key 1 must be 32 random bytes/],
    ['garbage', () => 'not-a-key!', /key 1 must be 32 random bytes/],
    ['base64 of the wrong length', () => randomBytes(31).toString('base64'), /key 1 must be 32 random bytes/],
    ['a good key then garbage', () => `${hex()},,`, /key 2 must be 32 random bytes/],
    ['SECRETS_KEY itself', () => `${hex()},${Buffer.from(current, 'hex').toString('base64')}`, /key 2 is SECRETS_KEY itself/],
  ])('refuses %s, naming the variable', (_, value, message) => {
    const attempt = () => loadConfig({ SECRETS_KEY: current, SECRETS_KEY_PREVIOUS: value() });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^Invalid configuration: SECRETS_KEY_PREVIOUS /);
    expect(attempt).toThrow(message);
  });

  it('refuses to be set while SECRETS_KEY is not', () => {
    expect(() => loadConfig({ SECRETS_KEY_PREVIOUS: hex() })).toThrow(/SECRETS_KEY_PREVIOUS needs SECRETS_KEY/);
  });
});

describe('SECRETS_KEY and SECRETS_KEY_PREVIOUS read keys alike', () => {
  it('accepts hex, standard and URL-safe base64 for both, so a retired key can be listed as it was set', () => {
    const key = randomBytes(32);
    for (const written of [key.toString('hex'), key.toString('base64'), key.toString('base64url'), ` ${key.toString('hex')}\n`]) {
      expect(loadConfig({ SECRETS_KEY: written }).secretsKey).toEqual(key);
      expect(loadConfig({ SECRETS_KEY: hex(), SECRETS_KEY_PREVIOUS: written }).previousSecretsKeys).toEqual([key]);
    }
  });

  it('refuses for both what is not 32 bytes in either form, naming the variable', () => {
    for (const bad of ['abc', '*'.repeat(43) + '=', randomBytes(31).toString('base64'), randomBytes(33).toString('hex')]) {
      expect(() => loadConfig({ SECRETS_KEY: bad })).toThrow(new ConfigError('SECRETS_KEY', 'must be 32 random bytes, as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)'));
      expect(() => loadConfig({ SECRETS_KEY: hex(), SECRETS_KEY_PREVIOUS: bad })).toThrow(ConfigError);
    }
  });
});

describe('decrypting after a rotation', () => {
  const [a, b, c] = [hex(), hex(), hex()];
  const databaseKey = randomBytes(32);

  it('tries the current key first and never reads the database key when it opens the secret', async () => {
    const now = store({ SECRETS_KEY: b, SECRETS_KEY_PREVIOUS: a }, databaseKey);
    const sealed = await encryptSecret(now, 'whsec_current');
    expect(await openSecret(now, sealed)).toEqual({ secret: 'whsec_current', current: true });
    expect(now.prisma.secret.findUnique).not.toHaveBeenCalled();
  });

  it('falls back to each previous key in turn, then to the database key kept before SECRETS_KEY was set', async () => {
    const underA = await encryptSecret(store({ SECRETS_KEY: a }), 'whsec_a');
    const underC = await encryptSecret(store({ SECRETS_KEY: c }), 'whsec_c');
    const underDatabase = await encryptSecret(store({}, databaseKey), 'whsec_db');
    const now = store({ SECRETS_KEY: b, SECRETS_KEY_PREVIOUS: `${c},${a}` }, databaseKey);
    expect(await openSecret(now, underC)).toEqual({ secret: 'whsec_c', current: false });
    expect(await openSecret(now, underA)).toEqual({ secret: 'whsec_a', current: false });
    expect(now.prisma.secret.findUnique).not.toHaveBeenCalled();
    expect(await openSecret(now, underDatabase)).toEqual({ secret: 'whsec_db', current: false });
    expect(now.prisma.secret.findUnique).toHaveBeenCalledTimes(1);
    // Moving from the database key to SECRETS_KEY needs no SECRETS_KEY_PREVIOUS.
    expect(await decryptSecret(store({ SECRETS_KEY: b }, databaseKey), underDatabase)).toBe('whsec_db');
  });

  it('encrypts under the current key only', async () => {
    const sealed = await encryptSecret(store({ SECRETS_KEY: b, SECRETS_KEY_PREVIOUS: a }), 'whsec_new');
    expect(await openSecret(store({ SECRETS_KEY: b }), sealed)).toEqual({ secret: 'whsec_new', current: true });
    await expect(decryptSecret(store({ SECRETS_KEY: a }), sealed)).rejects.toThrow(UndecryptableSecretError);
  });

  it('never makes a database key when SECRETS_KEY is set and the database has none', async () => {
    const now = store({ SECRETS_KEY: b, SECRETS_KEY_PREVIOUS: a });
    await expect(decryptSecret(now, await encryptSecret(store({ SECRETS_KEY: c }), 'x'))).rejects.toThrow(UndecryptableSecretError);
    expect(now.prisma.secret.createMany).not.toHaveBeenCalled();
  });

  it('opens nothing with a wrong key: the tag must verify, so no garbage comes back', async () => {
    const sealed = await encryptSecret(store({ SECRETS_KEY: a }), 'whsec_a');
    const wrong = store({ SECRETS_KEY: b, SECRETS_KEY_PREVIOUS: c }, databaseKey);
    expect(await openSecret(wrong, sealed)).toBeNull();
    await expect(decryptSecret(wrong, sealed)).rejects.toThrow(/cannot be decrypted with SECRETS_KEY nor any of SECRETS_KEY_PREVIOUS/);
  });

  it('refuses a tampered ciphertext under every key, the right one included', async () => {
    const sealed = await encryptSecret(store({ SECRETS_KEY: a }), 'whsec_tampered');
    const everyKey = store({ SECRETS_KEY: b, SECRETS_KEY_PREVIOUS: `${c},${a}` }, databaseKey);
    for (const at of [0, 11, 12, 27, 28, sealed.length - 1]) {
      const tampered = new Uint8Array(sealed);
      tampered[at] ^= 0x01;
      expect(await openSecret(everyKey, tampered)).toBeNull();
    }
    expect(await openSecret(everyKey, sealed.subarray(0, 27))).toBeNull();
    expect(await openSecret(everyKey, sealed)).toEqual({ secret: 'whsec_tampered', current: false });
  });
});

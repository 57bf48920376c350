import { createHash, createHmac, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateToken, hashToken, isWellFormedToken, tokenPattern } from '../../src/auth/tokens.ts';
import { generatePassword, hashPassword, verifyPassword } from '../../src/auth/passwords.ts';
import { checkLink, signLink } from '../../src/auth/signed-links.ts';

describe('tokens', () => {
  it('carry the prefix, the kind, 30 random base62 characters and a 6-character checksum', () => {
    const token = generateToken('service', 'oat');
    expect(token).toMatch(/^service_oat_[0-9A-Za-z]{36}$/);
    expect(tokenPattern('service', 'oat').test(token)).toBe(true);
    expect(isWellFormedToken(token, 'service', 'oat')).toBe(true);
  });

  it('are never repeated', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => generateToken('service', 'oat')));
    expect(tokens.size).toBe(1000);
  });

  it('fail the checksum when a single character changes', () => {
    const token = generateToken('kassa', 'oat');
    const last = token.at(-8)!;
    const tampered = token.slice(0, -8) + (last === 'a' ? 'b' : 'a') + token.slice(-7);
    expect(isWellFormedToken(tampered, 'kassa', 'oat')).toBe(false);
    expect(isWellFormedToken(token, 'kassa', 'us')).toBe(false);
  });

  it('end in the CRC32 of the rest, six base62 digits with leading zeros: what secret scanners check', () => {
    // Known answers: a scanner that implements the checksum from the documentation must agree.
    expect(isWellFormedToken('kassa_oat_0000000000000000000000000000000tYPfo', 'kassa', 'oat')).toBe(true);
    expect(isWellFormedToken('service_pat_AbCdEfGhIjKlMnOpQrStUvWxYz01234WbQkZ', 'service', 'pat')).toBe(true);
    expect(isWellFormedToken('kassa_oat_000000000000000000000000000000tYPfo0', 'kassa', 'oat')).toBe(false);
    expect(isWellFormedToken('kassa_oat_0000000000000000000000000000000tYPfO', 'kassa', 'oat')).toBe(false);
    expect(isWellFormedToken('kassa_oat_0000000000000000000000000000000tYPf', 'kassa', 'oat')).toBe(false);
    expect(isWellFormedToken('kassa_oat_0000000000000000000000000000000tYPfo', 'service', 'oat')).toBe(false);
    expect(isWellFormedToken(`x${generateToken('kassa', 'oat')}`, 'kassa', 'oat')).toBe(false);
    expect(isWellFormedToken(`${generateToken('kassa', 'oat')}\n`, 'kassa', 'oat')).toBe(false);
  });

  it('draw every base62 character equally often', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 30_000; i++) {
      for (const character of generateToken('k', 'at').slice('k_at_'.length, -6)) counts.set(character, (counts.get(character) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    // 900,000 draws: about 14,516 each, one standard deviation 0.8%. A byte mapped with bias (the
    // 8 values from 248 up folded onto the first characters) would put those 25% above the rest.
    const mean = 900_000 / 62;
    for (const [character, count] of counts) expect(Math.abs(count - mean) / mean, character).toBeLessThan(0.06);
  });

  it('are stored as their SHA-256', () => {
    const token = generateToken('service', 'oat');
    expect(hashToken(token)).toBe(createHash('sha256').update(token).digest('hex'));
    expect(hashToken(token)).not.toContain(token);
  });
});

describe('passwords', () => {
  it('are hashed with scrypt and a salt, and verify only with the same password', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^scrypt\$/);
    expect(hash).not.toBe(await hashPassword('correct horse battery staple'));
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', hash)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-hash')).toBe(false);
  });

  it('record the scrypt parameters, a 16-byte salt and a 32-byte key, and verify with the parameters recorded', async () => {
    const hash = await hashPassword('pässword');
    const [scheme, n, r, p, salt, key] = hash.split('$');
    expect([scheme, n, r, p]).toEqual(['scrypt', '16384', '8', '1']);
    expect([Buffer.from(salt, 'base64').length, Buffer.from(key, 'base64').length]).toEqual([16, 32]);
    // A hash made with other parameters (as an older or tuned deployment would) still verifies.
    const olderKey = scryptSync('pässword', Buffer.from(salt, 'base64'), 24, { N: 1024, r: 8, p: 2 }).toString('base64');
    const older = ['scrypt', '1024', '8', '2', salt, olderKey].join('$');
    expect(await verifyPassword('pässword', older)).toBe(true);
    expect(await verifyPassword('password', older)).toBe(false);
  });

  it('compare the NFKC forms, so the same password typed on another keyboard verifies', async () => {
    const hash = await hashPassword('ﬁle Å');
    expect(await verifyPassword('file Å', hash)).toBe(true);
    expect(await verifyPassword('file A', hash)).toBe(false);
  });

  it('refuse a stored value of another scheme or without its salt or key', async () => {
    const [, n, r, p, salt, key] = (await hashPassword('secret')).split('$');
    expect(await verifyPassword('secret', ['bcrypt', n, r, p, salt, key].join('$'))).toBe(false);
    expect(await verifyPassword('secret', ['scrypt', n, r, p, '', key].join('$'))).toBe(false);
    expect(await verifyPassword('secret', ['scrypt', n, r, p, salt, ''].join('$'))).toBe(false);
    expect(await verifyPassword('secret', ['scrypt', n, r, p, salt].join('$'))).toBe(false);
    expect(await verifyPassword('secret', ['scrypt', n, r, p, salt, key].join('$'))).toBe(true);
  });

  it('made up by the server are 24 URL-safe characters (144 bits)', () => {
    const passwords = Array.from({ length: 50 }, generatePassword);
    for (const password of passwords) expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(new Set(passwords).size).toBe(50);
  });
});

describe('signed links', () => {
  const key = Buffer.alloc(32, 7);
  const at = new Date('2026-11-28T10:00:00.900Z');

  it('carry their expiry in whole seconds, rounded down, and an HMAC of subject and expiry', () => {
    const signed = signLink(key, 'invoice:1', at);
    expect(signed.expiresAt).toEqual(new Date('2026-11-28T10:00:00.000Z'));
    const query = new URLSearchParams(signed.query);
    expect([...query.keys()]).toEqual(['expires', 'signature']);
    expect(query.get('expires')).toBe('1795860000');
    expect(query.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('are valid until the second they expire, for their subject and key only', () => {
    const query = new URLSearchParams(signLink(key, 'invoice:1', at).query);
    expect(checkLink(key, 'invoice:1', query, new Date('2026-11-28T09:59:59.999Z'))).toBe('valid');
    expect(checkLink(key, 'invoice:1', query, new Date('2026-11-28T10:00:00.000Z'))).toBe('expired');
    expect(checkLink(key, 'invoice:2', query, new Date('2026-11-28T09:00:00Z'))).toBe('forged');
    expect(checkLink(Buffer.alloc(32, 8), 'invoice:1', query, new Date('2026-11-28T09:00:00Z'))).toBe('forged');
  });

  it('are forged when the expiry is moved, is not a whole number, or the signature is cut or missing', () => {
    const query = new URLSearchParams(signLink(key, 'invoice:1', at).query);
    const before = new Date('2026-11-28T09:00:00Z');
    const changed = (name: string, value: string | null) => {
      const copy = new URLSearchParams(query);
      if (value === null) copy.delete(name);
      else copy.set(name, value);
      return checkLink(key, 'invoice:1', copy, before);
    };
    expect(changed('expires', '1795863600')).toBe('forged');
    expect(changed('expires', '1795860000.5')).toBe('forged');
    expect(changed('expires', 'soon')).toBe('forged');
    expect(changed('expires', null)).toBe('forged');
    expect(changed('signature', query.get('signature')!.slice(0, -1))).toBe('forged');
    expect(changed('signature', null)).toBe('forged');
    expect(changed('signature', `${query.get('signature')!.slice(0, -1)}${query.get('signature')!.endsWith('A') ? 'B' : 'A'}`)).toBe('forged');
    // An expiry that is not a whole number is refused even under a signature the key made for it.
    for (const expires of ['1795860000.5', 'soon']) {
      const signature = createHmac('sha256', key).update(`invoice:1.${Number(expires)}`).digest('base64url');
      expect(checkLink(key, 'invoice:1', new URLSearchParams({ expires, signature }), before), expires).toBe('forged');
    }
  });
});

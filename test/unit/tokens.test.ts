import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateToken, hashToken, isWellFormedToken, tokenPattern } from '../../src/auth/tokens.ts';
import { hashPassword, verifyPassword } from '../../src/auth/passwords.ts';

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
});

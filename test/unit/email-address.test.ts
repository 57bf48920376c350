import { describe, expect, it } from 'vitest';
import { isEmailAddress, maxEmailLength } from '../../src/email/address.ts';

describe('the shape of an email address', () => {
  it('takes a local part, one @ and a dotted domain', () => {
    for (const address of ['buyer@example.com', 'first.last+tag@mail.example.co.uk', 'x@y.z', 'ÿ@ü.de']) expect(isEmailAddress(address), address).toBe(true);
  });

  it('refuses what cannot be an address', () => {
    for (const value of ['', 'buyer', 'buyer@', '@example.com', 'buyer@example', 'buyer@@example.com', 'a@b@example.com', 'buyer @example.com', 'buyer@exam ple.com', ' buyer@example.com', 'buyer@example.com\n', 'buyer@.']) {
      expect(isEmailAddress(value), JSON.stringify(value)).toBe(false);
    }
  });

  it('takes up to 320 characters, and refuses a longer value before reading its shape', () => {
    const domain = '@example.com';
    expect(isEmailAddress(`${'a'.repeat(maxEmailLength - domain.length)}${domain}`)).toBe(true);
    expect(isEmailAddress(`${'a'.repeat(maxEmailLength - domain.length + 1)}${domain}`)).toBe(false);
    // Many dots and no valid end: the pattern alone would take minutes over a value this long.
    expect(isEmailAddress(`a@${'a.'.repeat(500_000)}@`)).toBe(false);
  });
});

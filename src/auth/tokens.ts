// Secrets Kassa issues: `<prefix>_<kind>_<random><checksum>`.
// The random part is 30 base62 characters (178 bits) from the CSPRNG; the checksum, CRC32 of
// everything before it in 6 base62 characters, lets a scanner reject look-alikes offline.
// Only the SHA-256 of a token is stored, and tokens are looked up by that hash.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const randomLength = 30;
const checksumLength = 6;

/**
 * oat: organization access token; us: user session; pat: personal access token; cst: customer
 * session; whs: webhook signing secret; at / rt: OAuth access / refresh token; ac: OAuth
 * authorization code; ci / cs: OAuth client id / secret; rat: registration access token (RFC 7592).
 */
export type TokenKind = 'oat' | 'us' | 'pat' | 'cst' | 'whs' | 'at' | 'rt' | 'ac' | 'ci' | 'cs' | 'rat';

function base62Random(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out += alphabet[byte % 62];
    }
  }
  return out;
}

function base62Fixed(value: number, length: number): string {
  let out = '';
  for (let rest = value; out.length < length; rest = Math.floor(rest / 62)) out = alphabet[rest % 62] + out;
  return out;
}

function checksum(body: string): string {
  return base62Fixed(crc32(body), checksumLength);
}

export function generateToken(prefix: string, kind: TokenKind): string {
  const body = `${prefix}_${kind}_${base62Random(randomLength)}`;
  return body + checksum(body);
}

export function tokenPattern(prefix: string, kind: TokenKind): RegExp {
  return new RegExp(`^${prefix}_${kind}_[0-9A-Za-z]{${randomLength + checksumLength}}$`);
}

/** Whether a string has a token's shape and a valid checksum; says nothing of whether it is live. */
export function isWellFormedToken(token: string, prefix: string, kind: TokenKind): boolean {
  if (!tokenPattern(prefix, kind).test(token)) return false;
  const body = token.slice(0, -checksumLength);
  const expected = Buffer.from(checksum(body));
  return timingSafeEqual(expected, Buffer.from(token.slice(-checksumLength)));
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

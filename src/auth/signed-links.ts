// Links that carry their own authorization: `expires` (Unix seconds) and `signature`, an HMAC-SHA-256
// of the link's subject and expiry under a key of the environment. Whoever holds the link may use it
// until it expires and no longer; changing the subject or the expiry breaks the signature.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/client.ts';

/** The environment's key named `name`, made on first use and kept in its database (`Secret`). */
export async function linkKey(prisma: Db, name: string): Promise<Buffer> {
  await prisma.secret.createMany({ data: [{ name, value: new Uint8Array(randomBytes(32)) }], skipDuplicates: true });
  return Buffer.from((await prisma.secret.findUniqueOrThrow({ where: { name } })).value);
}

function linkSignature(key: Buffer, subject: string, expires: number): string {
  return createHmac('sha256', key).update(`${subject}.${expires}`).digest('base64url');
}

/** The query string authorizing `subject` until `expiresAt` (rounded down to the second). */
export function signLink(key: Buffer, subject: string, expiresAt: Date): { query: string; expiresAt: Date } {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return { query: `expires=${expires}&signature=${linkSignature(key, subject, expires)}`, expiresAt: new Date(expires * 1000) };
}

export type LinkCheck = 'valid' | 'forged' | 'expired';

/** Whether `query` carries a signature for `subject` made with `key`, and whether it is still valid at `now`. */
export function checkLink(key: Buffer, subject: string, query: URLSearchParams, now: Date): LinkCheck {
  const expires = Number(query.get('expires'));
  const given = Buffer.from(query.get('signature') ?? '');
  const expected = Buffer.from(linkSignature(key, subject, expires));
  if (!Number.isInteger(expires) || given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
  return expires * 1000 <= now.getTime() ? 'expired' : 'valid';
}

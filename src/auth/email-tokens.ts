// One-time links sent by email: a new user's address verification and a customer's portal sign-in.
//
// Invariants:
// - A link carries `<id>.<secret>`. The secret is an HMAC of the id under an environment key, so the
//   job that sends the mail derives it again and no job payload holds it; the row keeps only its
//   SHA-256, compared in constant time.
// - A token works once (`usedAt`, set under a row lock, so of two concurrent uses one wins) and
//   until `expiresAt`; every refusal says which of these it was.
// - Every request is a row, whether or not it sent a usable link (`account_exists`,
//   `portal_sign_in_unknown`), so the rate limits count alike for addresses that have an account
//   and addresses that do not.
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import { EmailDeliveryError } from '../email/transport.ts';
import { KassaError, RequestValidationError } from '../graphql/errors.ts';
import { enqueueJob } from '../jobs/runner.ts';
import { linkKey } from './signed-links.ts';

export const emailTokenPurposes = ['verify_email', 'portal_sign_in', 'account_exists', 'portal_sign_in_unknown'] as const;
export type EmailTokenPurpose = (typeof emailTokenPurposes)[number];

/** How long each kind of link works. */
export const emailTokenLifetimeMs = { verify_email: 24 * 3600_000, portal_sign_in: 15 * 60_000 } as const;

const tokenKey = (db: Db) => linkKey(db, 'email-tokens');

function secretOf(key: Buffer, id: string): string {
  return createHmac('sha256', key).update(`email-token:${id}`).digest('base64url');
}

const digest = (secret: string) => new Uint8Array(createHash('sha256').update(secret).digest());

/** The token a link carries for the row `id`: only the environment's key can make it. */
export async function emailTokenOf(db: Db, id: string): Promise<string> {
  return `${id}.${secretOf(await tokenKey(db), id)}`;
}

export class TooManyEmailRequestsError extends KassaError {
  constructor(retryAfterSeconds: number) {
    super(`Too many requests for this address or from this network. Try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`, 'TOO_MANY_REQUESTS', 429, 'TooManyRequests', {
      retryAfter: retryAfterSeconds,
      http: { status: 429, headers: { 'retry-after': String(retryAfterSeconds) } },
    });
  }
}

/** Requests allowed per address and per client address, within the window, by the purposes counted together. */
export interface EmailRequestLimit {
  purposes: readonly EmailTokenPurpose[];
  perEmail: number;
  perIp: number;
  windowMs: number;
}

/**
 * Refuses with TooManyEmailRequestsError when the address or the client address has made its
 * window's worth of requests. Call it in the transaction that records the request, after taking
 * the address's lock, so concurrent requests cannot all slip under the limit.
 */
export async function checkEmailRequestRate(db: Db, limit: EmailRequestLimit, email: string, ip: string, now: Date): Promise<void> {
  const since = new Date(now.getTime() - limit.windowMs);
  const purpose = { in: [...limit.purposes] };
  const wait = async (where: { email: string } | { ip: string }, allowed: number) => {
    const recent = await db.emailToken.findMany({ where: { ...where, purpose, createdAt: { gt: since } }, orderBy: { createdAt: 'desc' }, take: allowed, select: { createdAt: true } });
    if (recent.length < allowed) return 0;
    return Math.max(1, Math.ceil((recent[allowed - 1].createdAt.getTime() + limit.windowMs - now.getTime()) / 1000));
  };
  const seconds = Math.max(await wait({ email }, limit.perEmail), await wait({ ip }, limit.perIp));
  if (seconds > 0) throw new TooManyEmailRequestsError(seconds);
}

/** Serializes the requests for one address (and purpose family) until the transaction ends. */
export async function lockEmailRequests(db: Db, family: string, email: string): Promise<void> {
  await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`email-token:${family}:${email}`}))`;
}

/** Refuses a request that only makes sense with a mail to follow, when this server sends none. */
export function checkEmailConfigured(environment: Environment): void {
  if (environment.email.kind === 'none') throw new EmailDeliveryError('This server sends no email (EMAIL_TRANSPORT=none), so this action is not available.');
}

const mailed: readonly EmailTokenPurpose[] = ['verify_email', 'portal_sign_in', 'account_exists'];

/**
 * Records a request in `db` (the caller's transaction) and, for a purpose that mails something,
 * enqueues its email: sent by the job runner once the transaction commits, retried if sending fails.
 */
export async function issueEmailToken(
  db: Db,
  input: { purpose: EmailTokenPurpose; email: string; ip: string; now: Date; userId?: string; customerId?: string; lifetimeMs?: number },
): Promise<void> {
  const lifetime = input.lifetimeMs ?? (input.purpose === 'verify_email' ? emailTokenLifetimeMs.verify_email : emailTokenLifetimeMs.portal_sign_in);
  const id = randomUUID();
  await db.emailToken.create({
    data: {
      id,
      purpose: input.purpose,
      email: input.email,
      ip: input.ip,
      userId: input.userId ?? null,
      customerId: input.customerId ?? null,
      tokenHash: digest(secretOf(await tokenKey(db), id)),
      expiresAt: new Date(input.now.getTime() + lifetime),
      createdAt: input.now,
    },
  });
  if (mailed.includes(input.purpose)) await enqueueJob(db, 'email.send', { tokenId: id }, input.now, `email.token:${id}`);
}

// Each check refuses with the reason a person can act on: ask for a new link, or use the one they have.

function checkTokenFormat(token: string): { id: string; secret: string } {
  const match = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec(token.trim());
  if (!match) throw RequestValidationError.at(['token'], 'This link is not valid: ask for a new one.', 'token_invalid');
  return { id: match[1], secret: match[2] };
}

function checkTokenMatches(row: { tokenHash: Uint8Array; purpose: string } | null, purpose: EmailTokenPurpose, secret: string): asserts row is NonNullable<typeof row> {
  const matches = row !== null && row.purpose === purpose && timingSafeEqual(Buffer.from(digest(secret)), Buffer.from(row.tokenHash));
  if (!matches) throw RequestValidationError.at(['token'], 'This link is not valid: ask for a new one.', 'token_invalid');
}

function checkTokenUnused(row: { usedAt: Date | null }) {
  if (row.usedAt) throw RequestValidationError.at(['token'], 'This link was already used: each link works once.', 'token_used');
}

function checkTokenNotExpired(row: { expiresAt: Date }, now: Date) {
  if (row.expiresAt <= now) throw RequestValidationError.at(['token'], 'This link has expired: ask for a new one.', 'token_expired');
}

/** The token's row, locked until `db`'s transaction ends, when `token` is a live token of `purpose`; refuses otherwise. */
export async function checkEmailToken(db: Db, purpose: EmailTokenPurpose, token: string, now: Date) {
  const { id, secret } = checkTokenFormat(token);
  await db.$executeRaw`SELECT id FROM email_tokens WHERE id = ${id}::uuid FOR UPDATE`;
  const row = await db.emailToken.findUnique({ where: { id } });
  checkTokenMatches(row, purpose, secret);
  checkTokenUnused(row);
  checkTokenNotExpired(row, now);
  return row;
}

/** Spends a live token of `purpose` in `db`'s transaction: it works no more. Refuses as checkEmailToken does. */
export async function useEmailToken(db: Db, purpose: EmailTokenPurpose, token: string, now: Date) {
  const row = await checkEmailToken(db, purpose, token, now);
  await db.emailToken.update({ where: { id: row.id }, data: { usedAt: now } });
  return row;
}

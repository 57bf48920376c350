// Users' sign-in sessions: checking a password (throttled per account and per address), issuing
// and ending session tokens (`<prefix>_us_…`), and reading the session a browser cookie names.
// The GraphQL signIn mutation and the sign-in pages both go through here.
import type { Config } from '../config.ts';
import type { Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { announcePrincipalChange } from './principal-cache.ts';
import { linkKey } from './signed-links.ts';
import { generateToken, hashToken } from './tokens.ts';

export const sessionLifetimeMs = 7 * 24 * 3600 * 1000;
// Verifying against this when the email is unknown keeps both answers equally slow.
const decoyHash = hashPassword('decoy password that matches nothing');

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The user with this email and password, or null; as slow for an unknown email as for a wrong password. */
export async function checkCredentials(prisma: Db, email: string, password: string) {
  const user = await prisma.user.findUnique({ where: { email: normalizeEmail(email) } });
  const valid = await verifyPassword(password, user?.passwordHash ?? (await decoyHash));
  return user && valid ? user : null;
}

/** Failed attempts allowed per account, and per client address, within the window. */
export const signInThrottle = { windowMs: 15 * 60 * 1000, perAccount: 5, perAddress: 20 };

/**
 * How long until the account or the address may try again, in seconds; 0 when it may now. The
 * attempt being made is recorded (as failed) before this is asked, so of concurrent guesses only
 * as many as the limit allows get past it, however they interleave.
 */
async function throttledFor(prisma: Db, email: string, ip: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - signInThrottle.windowMs);
  const wait = async (where: { email: string } | { ip: string }, limit: number) => {
    const failures = await prisma.loginAttempt.findMany({ where: { ...where, succeeded: false, createdAt: { gt: since } }, orderBy: { createdAt: 'desc' }, take: limit + 1, select: { createdAt: true } });
    if (failures.length <= limit) return 0;
    // Free again when the oldest of the last `limit` failures leaves the window.
    return Math.max(1, Math.ceil((failures[limit - 1].createdAt.getTime() + signInThrottle.windowMs - now.getTime()) / 1000));
  };
  return Math.max(await wait({ email }, signInThrottle.perAccount), await wait({ ip }, signInThrottle.perAddress));
}

export type SignInOutcome = { kind: 'signed-in'; user: { id: string } } | { kind: 'throttled'; retryAfterSeconds: number } | { kind: 'refused' };

/** Checks a password, throttled per account and per address: every way of signing in goes through here. */
export async function attemptSignIn(prisma: Db, email: string, password: string, ip: string, now: Date): Promise<SignInOutcome> {
  const account = normalizeEmail(email);
  // Recording and counting one account's attempts is serialized, so of concurrent guesses exactly
  // as many as the limit allows get to the password check; the slow check itself runs unlocked.
  const { attempt, retryAfterSeconds } = await prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`sign-in:${account}`}))`;
    const attempt = await tx.loginAttempt.create({ data: { email: account, ip, succeeded: false, createdAt: now } });
    return { attempt, retryAfterSeconds: await throttledFor(tx as Db, account, ip, now) };
  });
  if (retryAfterSeconds > 0) return { kind: 'throttled', retryAfterSeconds };
  const user = await checkCredentials(prisma, email, password);
  if (!user) return { kind: 'refused' };
  await prisma.loginAttempt.update({ where: { id: attempt.id }, data: { succeeded: true } });
  return { kind: 'signed-in', user };
}

export async function createSession(prisma: Db, config: Config, userId: string, now: Date) {
  const token = generateToken(config.tokenPrefix, 'us');
  const session = await prisma.userSession.create({
    data: { userId, tokenHash: hashToken(token), expiresAt: new Date(now.getTime() + sessionLifetimeMs) },
    include: { user: true },
  });
  return { token, session };
}

/** A signed-in user's browser session, as the pages show it. */
export interface BrowserSession {
  id: string;
  createdAt: Date;
  user: { id: string; email: string; name: string | null };
}

/** The live session a session token names, if any. */
export async function liveUserSession(environment: Environment, token: string, now: Date): Promise<BrowserSession | null> {
  return environment.prisma.userSession.findFirst({
    where: { tokenHash: hashToken(token), revokedAt: null, expiresAt: { gt: now } },
    select: { id: true, createdAt: true, user: { select: { id: true, email: true, name: true } } },
  });
}

/** Ends a user session at once, here and in every process that holds its principal. */
export async function endUserSession(environment: Environment, sessionId: string, now: Date): Promise<void> {
  const { tokenHash } = await environment.prisma.$transaction(async (tx) => {
    const ended = await tx.userSession.update({ where: { id: sessionId }, data: { revokedAt: now } });
    await announcePrincipalChange(tx as Db, [ended.tokenHash]);
    return ended;
  });
  environment.principals.forget([tokenHash]);
}

/** The environment's key for the pages' CSRF tokens. */
export function csrfKey(environment: Environment): Promise<Buffer> {
  return linkKey(environment.prisma, 'csrf-key');
}

// Users and their sign-in sessions. A session token (`<prefix>_us_…`) makes its bearer that user on
// the Core API, for every organization they belong to.
import type { Config } from '../../config.ts';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { generateToken, hashToken } from '../../auth/tokens.ts';
import { announcePrincipalChange } from '../../auth/principal-cache.ts';
import { KassaError, NotPermittedError, RequestValidationError, UnauthenticatedError } from '../../graphql/errors.ts';

export const sessionLifetimeMs = 7 * 24 * 3600 * 1000;
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
// Verifying against this when the email is unknown keeps both answers equally slow.
const decoyHash = hashPassword('decoy password that matches nothing');

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function createUser(prisma: Db, input: { email: string; password: string }) {
  const email = normalizeEmail(input.email);
  if (!emailPattern.test(email)) throw RequestValidationError.at(['email'], 'value is not a valid email address');
  if (input.password.length < 12) throw RequestValidationError.at(['password'], 'Password must be at least 12 characters long');
  return prisma.user.create({ data: { email, passwordHash: await hashPassword(input.password) } });
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

export async function signIn(ctx: Context, email: string, password: string) {
  const outcome = await attemptSignIn(ctx.prisma, email, password, ctx.clientIp, ctx.now());
  if (outcome.kind === 'throttled') throw new TooManySignInAttemptsError(outcome.retryAfterSeconds);
  if (outcome.kind === 'refused') throw new UnauthenticatedError('Unknown email or wrong password.');
  return createSession(ctx.prisma, ctx.environment.config, outcome.user.id, ctx.now());
}

export class TooManySignInAttemptsError extends KassaError {
  constructor(retryAfterSeconds: number) {
    super(`Too many failed sign-in attempts. Try again in ${retryAfterSeconds} seconds.`, 'TOO_MANY_ATTEMPTS', 429, 'TooManyAttempts', {
      retryAfter: retryAfterSeconds,
      http: { status: 429, headers: { 'retry-after': String(retryAfterSeconds) } },
    });
  }
}

export async function createSession(prisma: Db, config: Config, userId: string, now: Date) {
  const token = generateToken(config.tokenPrefix, 'us');
  const session = await prisma.userSession.create({
    data: { userId, tokenHash: hashToken(token), expiresAt: new Date(now.getTime() + sessionLifetimeMs) },
    include: { user: true },
  });
  return { token, session };
}

export async function signOut(ctx: Context) {
  if (ctx.principal.kind !== 'user' || ctx.principal.credential !== 'session') return false;
  const sessionId = ctx.principal.tokenId;
  const { tokenHash } = await ctx.prisma.$transaction(async (tx) => {
    const session = await tx.userSession.update({ where: { id: sessionId }, data: { revokedAt: ctx.now() } });
    await announcePrincipalChange(tx as Db, [session.tokenHash]);
    return session;
  });
  ctx.environment.principals.forget([tokenHash]);
  return true;
}

/** The user behind a user principal; an organization's token acts for no user, so it has none to show. */
export async function currentUser(ctx: Context, query: object) {
  if (ctx.principal.kind !== 'user') throw new NotPermittedError('core.me answers for a user token only: an organization token acts for no user.');
  return ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: ctx.principal.userId } });
}

// Users: creating them, signing in and out over GraphQL, and who the token acts for. A session
// token (`<prefix>_us_…`, issued by auth/sessions.ts) makes its bearer that user on the Core API,
// for every organization they belong to.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { attemptSignIn, createSession, endUserSession, normalizeEmail } from '../../auth/sessions.ts';
import { KassaError, NotPermittedError, RequestValidationError, UnauthenticatedError } from '../../graphql/errors.ts';
import { isEmailAddress } from '../../email/address.ts';

export async function createUser(prisma: Db, input: { email: string; password: string }) {
  const email = normalizeEmail(input.email);
  if (!isEmailAddress(email)) throw RequestValidationError.at(['email'], 'value is not a valid email address');
  if (input.password.length < 12) throw RequestValidationError.at(['password'], 'Password must be at least 12 characters long');
  // The operator who creates a user (bootstrap, CLI) vouches for the address; sign-up proves it by mail.
  return prisma.user.create({ data: { email, passwordHash: await hashPassword(input.password), emailVerified: true } });
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

export async function signOut(ctx: Context) {
  if (ctx.principal.kind !== 'user' || ctx.principal.credential !== 'session') return false;
  await endUserSession(ctx.environment, ctx.principal.tokenId, ctx.now());
  return true;
}

/** The user behind a user principal; an organization's token acts for no user, so it has none to show. */
export async function currentUser(ctx: Context, query: object) {
  if (ctx.principal.kind !== 'user') throw new NotPermittedError('core.me answers for a user token only: an organization token acts for no user.');
  return ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: ctx.principal.userId } });
}

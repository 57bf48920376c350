// Users and their sign-in sessions. A session token (`<prefix>_us_…`) makes its bearer that user on
// the Core API, for every organization they belong to.
import type { Config } from '../../config.ts';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { generateToken, hashToken } from '../../auth/tokens.ts';
import { announcePrincipalChange } from '../../auth/principal-cache.ts';
import { NotPermittedError, RequestValidationError, UnauthenticatedError } from '../../graphql/errors.ts';

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

export async function signIn(ctx: Context, email: string, password: string) {
  const user = await checkCredentials(ctx.prisma, email, password);
  if (!user) throw new UnauthenticatedError('Unknown email or wrong password.');
  return createSession(ctx.prisma, ctx.environment.config, user.id, ctx.now());
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

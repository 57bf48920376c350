// Signing up: anyone may create a user with an email address and a password, and the user proves
// the address by following the link mailed to it. Until then the user may sign in but may not
// create an organization (organizations/service.ts).
//
// Invariants:
// - The answer is the same whether or not the address already has an account: an existing account
//   gets a "you already have an account" email instead of a link (or, while its address is not
//   verified, a new link), and nothing changes. The
//   password is hashed either way, so both answers take as long.
// - The link works once and for 24 hours (auth/email-tokens.ts); following it verifies the address
//   of the user it was issued for, and no other.
// - Sign-ups are limited per address and per client address, counted alike for both answers.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { normalizeEmail } from '../../auth/sessions.ts';
import { checkEmailConfigured, checkEmailRequestRate, issueEmailToken, lockEmailRequests, useEmailToken, type EmailRequestLimit } from '../../auth/email-tokens.ts';
import { ValidationIssues } from '../../graphql/errors.ts';

export const minPasswordLength = 12;
export const maxPasswordLength = 1024;

export const signUpLimit: EmailRequestLimit = { purposes: ['verify_email', 'account_exists'], perEmail: 3, perIp: 20, windowMs: 3600_000 };

const emailPattern = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;

function checkSignUpInput(email: string, password: string) {
  const issues = new ValidationIssues();
  if (email.length > 254 || !emailPattern.test(email)) issues.add(['email'], 'value is not a valid email address');
  if (password.length < minPasswordLength) issues.add(['password'], `Password must be at least ${minPasswordLength} characters long`, 'string_too_short');
  else if (password.length > maxPasswordLength) issues.add(['password'], `Password must be at most ${maxPasswordLength} characters long`, 'string_too_long');
  else if (password.toLowerCase().includes(email.split('@')[0]) && email.split('@')[0].length >= 4) issues.add(['password'], 'Password must not contain your email address', 'value_error');
  issues.throwIfAny();
}

/** What a sign-up answers, whatever happened: where the email went. */
export interface SignUpRequested {
  email: string;
}

/** Signs a user up, or mails the address's owner that they already have an account; answers alike. */
export async function signUp(ctx: Context, input: { email: string; password: string }): Promise<SignUpRequested> {
  const email = normalizeEmail(input.email);
  checkSignUpInput(email, input.password);
  checkEmailConfigured(ctx.environment);
  const passwordHash = await hashPassword(input.password);
  const now = ctx.now();
  await ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await lockEmailRequests(db, 'sign-up', email);
    await checkEmailRequestRate(db, signUpLimit, email, ctx.clientIp, now);
    const existing = await db.user.findUnique({ where: { email }, select: { id: true, emailVerified: true } });
    if (existing) {
      // An address not yet verified gets a new link (its password stays); a verified one, the notice.
      await issueEmailToken(db, { purpose: existing.emailVerified ? 'account_exists' : 'verify_email', email, ip: ctx.clientIp, now, userId: existing.id });
      return;
    }
    const user = await db.user.create({ data: { email, passwordHash, createdAt: now } });
    await issueEmailToken(db, { purpose: 'verify_email', email, ip: ctx.clientIp, now, userId: user.id });
  });
  return { email };
}

/** Verifies the address of the user a verification link was issued for, once. */
export async function verifyEmail(ctx: Context, token: string, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const row = await useEmailToken(db, 'verify_email', token, ctx.now());
    return db.user.update({ ...query, where: { id: row.userId! }, data: { emailVerified: true, modifiedAt: ctx.now() } });
  });
}

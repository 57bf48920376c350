// Signing in to an organization's customer portal by email: the customer types their address on
// the portal's page and receives a one-time link (auth/email-tokens.ts); following it and
// confirming signs the browser in with a customer session (customer-sessions.ts).
//
// Invariants:
// - The answer to a request is the same whether or not the address is a customer of the
//   organization: a link is mailed only to a customer, and the request is recorded either way, so
//   the rate limits (per address, per client address) count alike.
// - The link signs in the customer it was issued for, in the organization it was issued for, once,
//   within 15 minutes; a deleted customer's link signs nobody in.
import type { Context, Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import { checkEmailConfigured, checkEmailRequestRate, checkEmailToken, issueEmailToken, lockEmailRequests, useEmailToken, type EmailRequestLimit } from './email-tokens.ts';
import { issueCustomerSession } from './customer-sessions.ts';
import { RequestValidationError } from '../graphql/errors.ts';
import { normalizeEmail } from './sessions.ts';

export const portalSignInLimit: EmailRequestLimit = { purposes: ['portal_sign_in', 'portal_sign_in_unknown'], perEmail: 5, perIp: 20, windowMs: 3600_000 };

/** The organization of a portal, by slug; null when there is none. */
export function portalOrganization(environment: Environment, slug: string) {
  return environment.prisma.organization.findUnique({ where: { slug }, select: { id: true, name: true } });
}

/** Mails a sign-in link to `email` when it is a customer of the organization; records the request either way. */
export async function requestPortalSignIn(environment: Environment, organizationId: string, requested: string, ip: string, now: Date): Promise<void> {
  checkEmailConfigured(environment);
  const email = normalizeEmail(requested);
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email)) throw RequestValidationError.at(['email'], 'value is not a valid email address');
  await environment.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await lockEmailRequests(db, 'portal-sign-in', email);
    await checkEmailRequestRate(db, portalSignInLimit, email, ip, now);
    const customer = await db.customer.findFirst({ where: { organizationId, activeEmail: email, deletedAt: null }, select: { id: true } });
    await issueEmailToken(db, customer ? { purpose: 'portal_sign_in', email, ip, now, customerId: customer.id } : { purpose: 'portal_sign_in_unknown', email, ip, now });
  });
}

/** The customer a live sign-in link names, when it belongs to the organization; refuses (422) otherwise. Spends nothing. */
export async function portalSignInLink(environment: Environment, organizationId: string, token: string, now: Date) {
  const row = await checkEmailToken(environment.prisma, 'portal_sign_in', token, now);
  return checkLinkCustomer(environment.prisma, row, organizationId);
}

async function checkLinkCustomer(db: Db, row: { id: string; customerId: string | null }, organizationId: string) {
  const customer = row.customerId ? await db.customer.findUnique({ where: { id: row.customerId }, select: { id: true, email: true, organizationId: true, deletedAt: true } }) : null;
  if (!customer || customer.organizationId !== organizationId || customer.deletedAt) throw RequestValidationError.at(['token'], 'This link is not valid: ask for a new one.', 'token_invalid');
  return { tokenId: row.id, customer };
}

/** Spends a sign-in link on a customer session for the portal, in one transaction: of two uses, one signs in. */
export async function signInWithPortalLink(ctx: Context, organizationId: string, token: string): Promise<{ token: string; expiresAt: Date }> {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const row = await useEmailToken(db, 'portal_sign_in', token, ctx.now());
    const { customer } = await checkLinkCustomer(db, row, organizationId);
    const { token: sessionToken, session } = await issueCustomerSession(ctx, db, customer);
    return { token: sessionToken, expiresAt: session.expiresAt };
  });
}

// Customer sessions (`<prefix>_cst_…`): issuing them, and the portal's sign-in from a link. A
// session signs a customer in to the Customer Portal API; one issued for a checkout reaches only
// what that checkout bought.
import type { Context, Environment, Principal } from '../context.ts';
import type { Db } from '../db/client.ts';
import { KassaError } from '../graphql/errors.ts';
import { announcePrincipalChange } from './principal-cache.ts';
import { resolvePrincipal } from './principals.ts';
import { generateToken, hashToken } from './tokens.ts';

export const customerSessionLifetimeMs = 3600 * 1000;

/**
 * Signs a customer in. With `checkoutId`, the session reaches only what that checkout bought: it is
 * handed to whoever confirmed the checkout, who proved no more than knowing the customer's email.
 */
export async function issueCustomerSession(ctx: Context, db: Db, customer: { id: string }, options: { checkoutId?: string } = {}) {
  const token = generateToken(ctx.environment.config.tokenPrefix, 'cst');
  const expiresAt = new Date(ctx.now().getTime() + customerSessionLifetimeMs);
  const session = await db.customerSession.create({
    data: { customerId: customer.id, checkoutId: options.checkoutId ?? null, tokenHash: hashToken(token), expiresAt, createdAt: ctx.now() },
  });
  return { token, session };
}

type CustomerPrincipal = Extract<Principal, { kind: 'customer' }>;

/**
 * The customer a token signs in to the portal of the organization `slug`: a live customer session
 * of that organization, not one issued for a checkout. Null for anything else.
 */
export async function portalCustomer(environment: Environment, token: string | undefined, slug: string, now: Date): Promise<CustomerPrincipal | null> {
  if (!token || !token.startsWith(`${environment.config.tokenPrefix}_cst_`)) return null;
  let principal: Principal;
  try {
    principal = await resolvePrincipal(environment, token, now);
  } catch (error) {
    if (error instanceof KassaError) return null;
    throw error;
  }
  // A checkout's session reaches only what the checkout bought: it is no portal sign-in.
  if (principal.kind !== 'customer' || principal.checkoutId !== null) return null;
  const organization = await environment.prisma.organization.findUnique({ where: { id: principal.organizationId }, select: { slug: true } });
  return organization?.slug === slug ? principal : null;
}

/**
 * Trades the session of a sign-in link for a new one: the link works once, so a copy left in a
 * history or a forwarded mail signs nobody in. The new session ends when the link's would have.
 */
export async function exchangeLinkSession(ctx: Context, principal: CustomerPrincipal): Promise<{ token: string; expiresAt: Date }> {
  const { environment } = ctx;
  const now = ctx.now();
  const { token, expiresAt, linkHash } = await environment.prisma.$transaction(async (tx) => {
    const link = await tx.customerSession.update({ where: { id: principal.sessionId }, data: { revokedAt: now } });
    const { token, session } = await issueCustomerSession(ctx, tx as Db, { id: principal.customerId });
    const shortened = await tx.customerSession.update({ where: { id: session.id }, data: { expiresAt: link.expiresAt } });
    await announcePrincipalChange(tx as Db, [link.tokenHash]);
    return { token, expiresAt: shortened.expiresAt, linkHash: link.tokenHash };
  });
  environment.principals.forget([linkHash]);
  return { token, expiresAt };
}

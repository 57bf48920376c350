// Customer sessions: a token that signs one customer in to the Customer Portal. The organization
// creates one server-side and hands it to its customer; only the token's SHA-256 is stored.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { issueCustomerSession } from '../../auth/customer-sessions.ts';
import { announcePrincipalChange } from '../../auth/principal-cache.ts';
import { reach } from '../../auth/reach.ts';
import { RequestValidationError, ResourceNotFoundError } from '../../graphql/errors.ts';

export interface CustomerSessionCreateInput {
  customerId?: string | null;
  externalCustomerId?: string | null;
  /** Deprecated name of externalCustomerId. */
  customerExternalId?: string | null;
}

/**
 * A portal session for a customer of the caller's organization, named by id or by external id. A
 * customer of another organization is answered exactly as one that does not exist.
 */
export async function createCustomerSession(ctx: Context, input: CustomerSessionCreateInput, query: object) {
  const externalId = input.externalCustomerId ?? input.customerExternalId ?? null;
  const named = [input.customerId, input.externalCustomerId, input.customerExternalId].filter((v) => v != null).length;
  if (named === 0) throw RequestValidationError.at(['input'], 'Name the customer: give customer_id or external_customer_id.', 'missing');
  if (input.customerId != null && externalId != null) {
    throw RequestValidationError.at(['input'], 'Give either customer_id or external_customer_id, not both.');
  }
  if (input.externalCustomerId != null && input.customerExternalId != null && input.externalCustomerId !== input.customerExternalId) {
    throw RequestValidationError.at(['input', 'customerExternalId'], 'customer_external_id is the deprecated name of external_customer_id; they disagree.');
  }
  const loc = input.customerId != null ? ['input', 'customerId'] : ['input', input.externalCustomerId != null ? 'externalCustomerId' : 'customerExternalId'];
  const customer = await ctx.prisma.customer.findFirst({
    where: { AND: [reach(ctx).customer, input.customerId != null ? { id: input.customerId } : { externalId }] },
    select: { id: true, externalId: true },
  });
  if (!customer) throw RequestValidationError.at(loc, 'Customer does not exist.');
  const { token, session } = await issueCustomerSession(ctx, ctx.prisma, customer);
  return { ...(await ctx.prisma.customerSession.findUniqueOrThrow({ ...query, where: { id: session.id } })), token };
}

/**
 * Ends a customer session at once: its next request gets 401. The organization ends any session of
 * its customers; a customer ends only the session it is signed in with.
 */
export async function revokeCustomerSession(ctx: Context, id: string, query: object) {
  const { principal } = ctx;
  const own = principal.kind === 'customer' ? { id: principal.sessionId } : {};
  const hashes = await ctx.prisma.$transaction(async (tx) => {
    const session = await tx.customerSession.findFirst({ where: { id, ...own, customer: reach(ctx).customer }, select: { id: true, tokenHash: true, revokedAt: true } });
    if (!session) throw new ResourceNotFoundError('Customer session not found.');
    if (session.revokedAt === null) {
      await tx.customerSession.update({ where: { id }, data: { revokedAt: ctx.now() } });
      await announcePrincipalChange(tx as Db, [session.tokenHash]);
    }
    return [session.tokenHash];
  });
  ctx.environment.principals.forget(hashes);
  return ctx.prisma.customerSession.findUniqueOrThrow({ ...query, where: { id } });
}

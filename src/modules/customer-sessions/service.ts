// Customer sessions: a token that signs one customer in to the Customer Portal.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { generateToken, hashToken } from '../../auth/tokens.ts';

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

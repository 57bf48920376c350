// A declined checkout is not the end of the purchase: the buyer confirms it again with another
// card. The order the first confirm made is charged again (a new payment of the same amount), the
// checkout goes back to `confirmed`, and the buyer's page waits for the outcome as before. What was
// fixed at the first confirm stays fixed: the order, its amounts and discount, the customer, the
// billing details. Only the payment method is taken from the new confirm.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Checkout } from '../../generated/prisma/client.ts';
import { ValidationIssues } from '../../graphql/errors.ts';
import { recordEvents } from '../../events/outbox.ts';
import { issueCustomerSession } from '../../auth/customer-sessions.ts';
import { checkBuyerPaymentMethod } from './payment-method.ts';
import { chargeOrder, paymentAlreadyInProgress } from '../payments/service.ts';
import { subscriptionEnded } from '../subscriptions/status.ts';
import { notOpen, paymentError } from './errors.ts';

/**
 * Charges the order of a `failed` checkout again with `token`, in the caller's transaction, which
 * holds the checkout's row lock. `tokenProblem` is what the processor said of the token.
 */
export async function retryFailedCheckout(ctx: Context, db: Db, checkout: Checkout, token: string | null | undefined, tokenProblem: string | null, query: object) {
  const processor = ctx.environment.paymentProcessor;
  await db.$queryRaw`SELECT id FROM orders WHERE checkout_id = ${checkout.id}::uuid FOR UPDATE`;
  const order = await db.order.findFirst({ where: { checkoutId: checkout.id }, include: { subscription: true, customer: true } });
  if (!order || order.paid || order.status !== 'pending') throw notOpen('This checkout is failed: it can no longer change.');
  if (order.subscription && subscriptionEnded(order.subscription)) {
    throw notOpen('This checkout’s payment was declined too long ago: its subscription has ended. Start a new checkout.');
  }
  if ((await db.payment.count({ where: { orderId: order.id, status: 'pending' } })) > 0) throw paymentAlreadyInProgress();

  const issues = new ValidationIssues();
  await checkBuyerPaymentMethod(ctx, db, token, tokenProblem, issues, 'Field required: the payment method token of another card');
  issues.throwIfAny();
  if (!processor) throw paymentError('No payment processor is configured for this environment.');

  await chargeOrder(ctx, db, order, token!);
  // Its renewals charge the card that pays now, as they would have the first (a processor that saves cards replaces it with the saved one).
  if (order.subscriptionId) await db.subscription.update({ where: { id: order.subscriptionId }, data: { paymentMethod: token! } });
  await db.checkout.update({ where: { id: checkout.id }, data: { status: 'confirmed', processorMetadata: {} } });
  await recordEvents(ctx, db, ['checkout.updated'], { organizationId: checkout.organizationId, resourceId: checkout.id, resource: 'checkout' });
  const { token: sessionToken } = await issueCustomerSession(ctx, db, order.customer, { checkoutId: checkout.id });
  const confirmed = await db.checkout.findUniqueOrThrow({ ...query, where: { id: checkout.id } });
  return Object.assign(confirmed, { customerSessionToken: sessionToken });
}

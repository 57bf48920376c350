// A declined card does not end a checkout: its buyer confirms it again with another card, through
// the client library's clientConfirm as for the first try. The order made at the first confirm is
// charged again; nothing else about it changes (amounts, discount, customer), a discount is
// redeemed once, two retries at once make one charge, and a paid or unknown checkout takes none.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { checkoutWhen, fixedProduct, ordersOfCheckout, paidOrderOf } from '../helpers/purchases.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox' } });

async function declinedCheckout(priceAmount = 2500, extra: Record<string, unknown> = {}) {
  const product = await fixedProduct(t.org, 'Atlas', priceAmount);
  const checkout = await t.org.polar.checkouts.create({ products: [product.id], ...extra });
  await t.org.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: `declined-${randomUUID()}@example.com`, customerName: 'First Try', confirmationTokenId: 'tok_chargeDeclined' },
  });
  return checkoutWhen(t.org, checkout.id, 'failed');
}

const payments = (orderId: string) => t.server.kassa.environments.sandbox.environment.prisma.payment.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' } });

describe('confirming a declined checkout again', () => {
  it('tells the buyer why, then charges the same order with another card', async () => {
    const failed = await declinedCheckout();
    expect(failed.paymentProcessorMetadata).toEqual({ decline_message: 'The card was declined.' });
    const publicView = await t.org.buyer.checkouts.clientGet({ clientSecret: failed.clientSecret });
    expect(publicView.paymentProcessorMetadata).toEqual({ decline_message: 'The card was declined.' });
    const [before] = await ordersOfCheckout(t.org, failed.id);

    // Only the card is taken: the buyer's other fields were fixed by the first confirm.
    const confirmed = await t.org.buyer.checkouts.clientConfirm({
      clientSecret: failed.clientSecret,
      checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerEmail: 'someone-else@example.com' },
    });
    expect(confirmed).toMatchObject({ status: 'confirmed', customerSessionToken: expect.any(String) });
    const order = await paidOrderOf(t.org, failed.id);
    expect(order).toMatchObject({ id: before.id, totalAmount: 2500, customerId: before.customerId, billingName: 'First Try' });
    expect(order.customer.email).toBe(before.customer.email);
    expect((await payments(order.id)).map((p) => [p.status, p.paymentMethod, p.amount])).toEqual([
      ['failed', 'tok_chargeDeclined', 2500],
      ['succeeded', 'tok_visa', 2500],
    ]);
    const succeeded = await checkoutWhen(t.org, failed.id, 'succeeded');
    expect(succeeded.paymentProcessorMetadata).toEqual({});
  });

  it('refuses a retry without a card, or with a card the processor does not know, and writes nothing', async () => {
    const failed = await declinedCheckout();
    const [order] = await ordersOfCheckout(t.org, failed.id);
    const missing = await rejectionOf(t.org.buyer.checkouts.clientConfirm({ clientSecret: failed.clientSecret, checkoutConfirmStripe: {} }));
    expect(missing).toBeInstanceOf(HTTPValidationError);
    expect((missing as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'confirmation_token_id'], type: 'missing' });
    const unknown = await rejectionOf(t.org.buyer.checkouts.clientConfirm({ clientSecret: failed.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_nonsense' } }));
    expect(unknown).toBeInstanceOf(HTTPValidationError);
    expect((await payments(order.id)).map((p) => p.status)).toEqual(['failed']);
    expect((await t.org.polar.checkouts.get({ id: failed.id })).status).toBe('failed');
  });

  it('makes one charge of two retries at once; a paid checkout then takes no card', async () => {
    const failed = await declinedCheckout(4100);
    const [order] = await ordersOfCheckout(t.org, failed.id);
    const attempts = await Promise.allSettled(
      ['tok_visa', 'tok_visa'].map((card) => t.org.buyer.checkouts.clientConfirm({ clientSecret: failed.clientSecret, checkoutConfirmStripe: { confirmationTokenId: card } })),
    );
    expect(attempts.map((a) => a.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = attempts.find((a): a is PromiseRejectedResult => a.status === 'rejected')!.reason;
    expect([403, 409]).toContain(refused.statusCode);
    await paidOrderOf(t.org, failed.id);
    expect((await payments(order.id)).map((p) => p.status)).toEqual(['failed', 'succeeded']);
    const afterPaid = await rejectionOf(t.org.buyer.checkouts.clientConfirm({ clientSecret: failed.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } }));
    expect(afterPaid).toMatchObject({ statusCode: 403 });
    expect((await payments(order.id)).map((p) => p.status)).toEqual(['failed', 'succeeded']);
  });

  it('keeps the discount of the first confirm and redeems it once', async () => {
    const discount = await t.org.polar.discounts.create({ name: 'Once only', type: 'fixed', amount: 500, currency: 'usd', duration: 'once', maxRedemptions: 1 });
    const failed = await declinedCheckout(3000, { discountId: discount.id });
    expect((await t.org.polar.discounts.get({ id: discount.id })).redemptionsCount).toBe(1);
    await t.org.buyer.checkouts.clientConfirm({ clientSecret: failed.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } });
    const order = await paidOrderOf(t.org, failed.id);
    expect(order).toMatchObject({ subtotalAmount: 3000, discountAmount: 500, netAmount: 2500, totalAmount: 2500, discountId: discount.id });
    expect((await t.org.polar.discounts.get({ id: discount.id })).redemptionsCount).toBe(1);
  });

  it('fails again on another declined card, and can be retried again', async () => {
    const failed = await declinedCheckout();
    await t.org.buyer.checkouts.clientConfirm({ clientSecret: failed.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_chargeDeclined' } });
    await checkoutWhen(t.org, failed.id, 'failed');
    await t.org.buyer.checkouts.clientConfirm({ clientSecret: failed.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } });
    const order = await paidOrderOf(t.org, failed.id);
    expect((await payments(order.id)).map((p) => p.status)).toEqual(['failed', 'failed', 'succeeded']);
  });
});

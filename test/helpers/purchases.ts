// Buying through the official client (@polar-sh/sdk), in sandbox where test cards pay: the
// organization creates a checkout, the buyer confirms it with a card, and the payment job turns it
// into a paid order (or a failed checkout) shortly after, so the outcome is polled for.
import type { Checkout } from '@polar-sh/sdk/models/components/checkout.js';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import type { SubscriptionRecurringInterval } from '@polar-sh/sdk/models/components/subscriptionrecurringinterval.js';
import { expect } from 'vitest';
import type { Org } from './organizations.ts';
import { eventually } from './waiting.ts';

/** A product with one fixed price in USD: one-time unless given an interval. */
export async function fixedProduct(org: Org, name = 'Ebook', priceAmount = 1999, recurringInterval: SubscriptionRecurringInterval | null = null) {
  return org.polar.products.create({ name, recurringInterval, prices: [{ amountType: 'fixed', priceAmount, priceCurrency: 'usd' }] });
}

/** Creates a checkout of the product and confirms it as the buyer, with a test card (tok_visa unless told). */
export async function createAndConfirmCheckout(
  org: Org,
  productId: string,
  customerEmail: string,
  { customerName, card = 'tok_visa', customerId }: { customerName?: string; card?: string; customerId?: string } = {},
): Promise<Checkout> {
  const checkout = await org.polar.checkouts.create({ products: [productId], ...(customerId ? { customerId } : {}) });
  await org.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail, ...(customerName ? { customerName } : {}), confirmationTokenId: card },
  });
  return checkout;
}

/**
 * A checkout of the product for an existing customer, confirmed by the buyer with tok_visa: its id
 * and the customer session the confirm hands the buyer (which reaches only what this checkout bought).
 */
export async function confirmForCustomer(org: Org, productId: string, customerId: string, customerEmail: string): Promise<{ checkoutId: string; session: string }> {
  const checkout = await org.polar.checkouts.create({ products: [productId], customerId });
  const confirmed = await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail, confirmationTokenId: 'tok_visa' } });
  return { checkoutId: checkout.id, session: confirmed.customerSessionToken! };
}

export async function ordersOfCheckout(org: Org, checkoutId: string): Promise<Order[]> {
  return (await org.polar.orders.list({ checkoutId })).result.items;
}

/** The one order of the checkout, once it is paid. */
export async function paidOrderOf(org: Org, checkoutId: string): Promise<Order> {
  const orders = await eventually(() => ordersOfCheckout(org, checkoutId), (items) => items.length === 1 && items[0].status === 'paid', 'the order to be paid');
  return orders[0];
}

/** The checkout, once it has the status. */
export async function checkoutWhen(org: Org, id: string, status: Checkout['status']): Promise<Checkout> {
  return eventually(() => org.polar.checkouts.get({ id }), (c) => c.status === status, `the checkout to be ${status}`);
}

/** A whole purchase by a buyer with tok_visa: the checkout and the paid order, once the checkout has succeeded. */
export async function buyWithCheckout(org: Org, productId: string, customerEmail: string, customerName?: string): Promise<{ checkout: Checkout; order: Order }> {
  const checkout = await createAndConfirmCheckout(org, productId, customerEmail, { customerName });
  const order = await paidOrderOf(org, checkout.id);
  await checkoutWhen(org, checkout.id, 'succeeded');
  return { checkout, order };
}

/** A whole purchase by a buyer with tok_visa; returns the paid order (billing details as the buyer gave them). */
export async function buy(org: Org, productId: string, customerEmail: string, customerName?: string): Promise<Order> {
  return (await buyWithCheckout(org, productId, customerEmail, customerName)).order;
}

/** A purchase whose card is declined: the checkout fails and its order stays pending and unpaid. */
export async function declinedOrder(org: Org, productId: string, customerEmail: string, customerName?: string): Promise<Order> {
  const checkout = await createAndConfirmCheckout(org, productId, customerEmail, { customerName, card: 'tok_chargeDeclined' });
  await checkoutWhen(org, checkout.id, 'failed');
  const orders = await ordersOfCheckout(org, checkout.id);
  expect(orders.map((o) => [o.status, o.paid])).toEqual([['pending', false]]);
  return orders[0];
}

// Abuse cases against the Stripe integration: events that name a payment or a refund they are not
// about, events of the other mode, and saved cards of another customer. Each is played against
// the Stripe API double (test/stripe-double), with events signed by the endpoint's own secret: what
// is checked here is what Kassa does with a validly signed event that does not fit, not the
// signature itself (stripe.test.ts).
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import type { Org } from '../helpers/organizations.ts';
import { fixedProduct } from '../helpers/purchases.ts';
import { stripeKeys, useStripeServer } from '../helpers/stripe.ts';
import { eventually } from '../helpers/waiting.ts';

const s = useStripeServer({ shop: 'sandbox', live: 'production', other: 'sandbox' });
const { t, webhookUrl, prisma, confirmationToken, confirm, checkoutWhen, paymentsOf } = s;
const keys = stripeKeys;

/** Posts an event to Kassa's endpoint, signed with the environment's own secret, as Stripe would. */
async function deliver(environment: EnvironmentName, type: string, object: object, { livemode = environment === 'production' } = {}) {
  const payload = JSON.stringify({ id: `evt_${Math.random().toString(36).slice(2)}`, object: 'event', type, api_version: '2025-01-27.acacia', created: Math.floor(Date.now() / 1000), livemode, data: { object } });
  const signature = s.double.stripe().webhooks.generateTestHeaderString({ payload, secret: keys[environment].webhook });
  const response = await fetch(webhookUrl(environment), { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
  return { status: response.status, body: await response.json() };
}

/** A PaymentIntent as Stripe's events carry it. */
const intent = (fields: { id: string; amount: number; currency: string; status: string; paymentId: string; livemode?: boolean }) => ({
  id: fields.id,
  object: 'payment_intent',
  amount: fields.amount,
  amount_received: fields.status === 'succeeded' ? fields.amount : 0,
  currency: fields.currency,
  status: fields.status,
  livemode: fields.livemode ?? false,
  customer: null,
  payment_method: null,
  setup_future_usage: null,
  last_payment_error: null,
  metadata: { kassa_payment_id: fields.paymentId },
});

/** A checkout confirmed while Stripe cannot be reached: its payment is pending, with no PaymentIntent yet. */
async function pendingWithoutIntent(org: Org, amount: number) {
  const product = await fixedProduct(org, `Pending ${amount}`, amount);
  const checkout = await org.polar.checkouts.create({ products: [product.id] });
  const token = await confirmationToken(org.environment, 'pm_card_visa');
  await s.double.down(true);
  expect((await confirm(org, checkout.clientSecret, token)).status).toBe(200);
  const [payment] = await eventually(() => paymentsOf(org.environment, checkout.id), (p) => p.length === 1, 'the payment');
  return { checkout, payment };
}

describe('a PaymentIntent event that does not fit the payment it names', () => {
  it('does not pay a 100-dollar order with a 1-cent or other-currency PaymentIntent whose metadata names it', async () => {
    const { checkout, payment } = await pendingWithoutIntent(t.shop, 10_000);
    try {
      expect(payment).toMatchObject({ status: 'pending', processorId: null, amount: 10_000, currency: 'usd' });
      const cheap = await deliver('sandbox', 'payment_intent.succeeded', intent({ id: 'pi_cheap1', amount: 1, currency: 'usd', status: 'succeeded', paymentId: payment.id }));
      expect(cheap.status).toBe(404);
      const otherCurrency = await deliver('sandbox', 'payment_intent.succeeded', intent({ id: 'pi_yen1', amount: 10_000, currency: 'jpy', status: 'succeeded', paymentId: payment.id }));
      expect(otherCurrency.status).toBe(404);
      // Nor fail it: a declined PaymentIntent for another amount is not this payment's.
      const failed = await deliver('sandbox', 'payment_intent.payment_failed', intent({ id: 'pi_cheap2', amount: 1, currency: 'usd', status: 'requires_payment_method', paymentId: payment.id }));
      expect(failed.status).toBe(404);
      expect(await prisma('sandbox').payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ status: 'pending', processorId: null });
      expect((await prisma('sandbox').order.findUniqueOrThrow({ where: { id: payment.orderId } })).paid).toBe(false);
    } finally {
      await s.double.down(false);
    }
    // The buyer's own charge goes through once Stripe is back, for the whole amount.
    await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    const paid = await prisma('sandbox').payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(s.double.object<Stripe.PaymentIntent>(paid.processorId!)).toMatchObject({ amount: 10_000, currency: 'usd', status: 'succeeded' });
  });
});

describe('an event of the other mode', () => {
  /** A payment waiting for the buyer's bank (3-D Secure): pending, with its PaymentIntent. */
  async function waitingForTheBank(org: Org, amount: number) {
    const product = await fixedProduct(org, `Secure ${amount}`, amount);
    const checkout = await org.polar.checkouts.create({ products: [product.id] });
    await confirm(org, checkout.clientSecret, await confirmationToken(org.environment, 'pm_card_authenticationRequired'));
    await checkoutWhen(org, checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the checkout to ask for authentication');
    const [payment] = await paymentsOf(org.environment, checkout.id);
    return { checkout, payment };
  }

  for (const [environment, org, livemode] of [['production', 'live', false], ['sandbox', 'shop', true]] as const) {
    it(`is not applied in ${environment} (livemode ${livemode})`, async () => {
      const { checkout, payment } = await waitingForTheBank(t[org], 2700);
      const answer = await deliver(environment, 'payment_intent.succeeded', intent({ id: payment.processorId!, amount: 2700, currency: 'usd', status: 'succeeded', paymentId: payment.id, livemode }), { livemode });
      expect(answer.status).toBe(400);
      expect(await prisma(environment).payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ status: 'pending' });
      expect((await t[org].api('GET', `/checkouts/${checkout.id}`)).body.status).toBe('confirmed');
      // The buyer's bank says no: the payment fails on the event of the right mode.
      s.double.authenticate(payment.processorId!, 'fail');
      await checkoutWhen(t[org], checkout.id, (c) => c.status === 'failed', 'the checkout to fail');
    });
  }
});

/** A one-time purchase paid through Stripe with the card: the paid order's id and its PaymentIntent's. */
async function paidPurchase(org: Org, card: string, amount: number) {
  const product = await fixedProduct(org, `Product ${amount}`, amount);
  const checkout = await org.polar.checkouts.create({ products: [product.id] });
  await confirm(org, checkout.clientSecret, await confirmationToken(org.environment, card));
  await checkoutWhen(org, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
  const [payment] = await paymentsOf(org.environment, checkout.id);
  return { orderId: payment.orderId, intentId: payment.processorId! };
}

describe('a refund event that names a refund it is not', () => {
  it('does not reverse another order’s refund when a refund of another charge fails at the bank', async () => {
    // The victim: an order of another organization, refunded in full at Stripe.
    const victim = await paidPurchase(t.other, 'pm_card_visa', 2000);
    const refund = (await t.other.polar.refunds.create({ orderId: victim.orderId, reason: 'customer_request', amount: 2000 }))!;
    await eventually(async () => (await t.other.api('GET', `/refunds/${refund.id}`)).body, (r) => r.status === 'succeeded', 'the refund to succeed');
    // A refund of another charge (one whose refunds fail at the bank), made at Stripe outside
    // Kassa with metadata naming the victim's refund.
    const decoy = await paidPurchase(t.shop, 'pm_card_refundFail', 3000);
    const forged = await s.double.stripe(keys.sandbox.secret).refunds.create({ payment_intent: decoy.intentId, amount: 100, metadata: { kassa_refund_id: refund.id } });
    await s.double.webhooks.waitFor('refund.failed', (e) => (e.data.object as Stripe.Refund).id === forged.id);
    await s.double.webhooks.idle();

    expect((await t.other.api('GET', `/refunds/${refund.id}`)).body.status).toBe('succeeded');
    const order = await t.other.polar.orders.get({ id: victim.orderId });
    expect([order.status, order.refundedAmount]).toEqual(['refunded', 2000]);
    // Nothing says the victim's money may be refunded again.
    expect((await t.other.api('POST', '/refunds/', { order_id: victim.orderId, reason: 'customer_request', amount: 100 })).status).not.toBe(200);
  });
});

describe('a subscription set to renew with another customer’s saved card', () => {
  const UPDATE = `mutation ($id: UUID!, $pm: String!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: $pm) { id } } }`;

  /** A monthly subscription bought with the card: it renews with the card saved on the buyer's Stripe customer. */
  async function subscribed(org: Org, email: string) {
    const plan = await fixedProduct(org, `Plan of ${email}`, 1500, 'month');
    const checkout = await org.polar.checkouts.create({ products: [plan.id] });
    await confirm(org, checkout.clientSecret, await confirmationToken(org.environment, 'pm_card_visa'), email);
    await checkoutWhen(org, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    return prisma(org.environment).subscription.findFirstOrThrow({ where: { checkoutId: checkout.id }, include: { customer: true } });
  }

  it('is refused, and the subscription keeps its own card; a card saved on its own customer is taken', async () => {
    const victim = await subscribed(t.other, 'victim@example.com');
    expect(s.double.object<Stripe.PaymentMethod>(victim.paymentMethod)?.customer).toBe(victim.customer.processorCustomerId);
    const mine = await subscribed(t.shop, 'subscriber@example.com');

    for (const paymentMethod of [victim.paymentMethod, 'pm_card_visa', await confirmationToken('sandbox', 'pm_card_visa')]) {
      const { body } = await t.shop.gql(UPDATE, { id: mine.id, pm: paymentMethod });
      expect(body.errors?.[0]?.extensions?.code, paymentMethod).toBe('BAD_USER_INPUT');
      expect((await prisma('sandbox').subscription.findUniqueOrThrow({ where: { id: mine.id } })).paymentMethod).toBe(mine.paymentMethod);
    }

    // A second card saved on the subscriber's own Stripe customer is a method it may renew with.
    const own = await s.double.stripe(keys.sandbox.secret).setupIntents.create({ customer: mine.customer.processorCustomerId!, payment_method: 'pm_card_mastercard', confirm: true, usage: 'off_session' });
    const { body } = await t.shop.gql(UPDATE, { id: mine.id, pm: own.payment_method as string });
    expect(body.errors).toBeUndefined();
    expect((await prisma('sandbox').subscription.findUniqueOrThrow({ where: { id: mine.id } })).paymentMethod).toBe(own.payment_method);
  });
});

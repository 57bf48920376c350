// Subscriptions through Stripe, on the server's test clock: the first payment saves the card on the
// customer's Stripe record, renewals charge it off-session, and a renewal the bank refuses
// (`authentication_required`: it wants the buyer, who is not there) makes the subscription past due.
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSandboxStripe } from '../helpers/stripe.ts';
import type { Org } from '../helpers/organizations.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

const start = new Date('2027-03-15T10:00:00.000Z');
const { keys, env, double } = useSandboxStripe('subs1');
const t = useTestServer({ env, stopSandboxJobs: true, clock: start, organizations: { shop: 'sandbox' } });
beforeAll(() => double().webhooks.addTarget({ url: `${t.server.base('sandbox')}/integrations/stripe/webhook`, secret: keys.webhook }));

const environment = () => t.server.kassa.environments.sandbox;
const prisma = () => environment().environment.prisma;

/** Runs the scheduler and every job it causes until nothing is left to do at the current time. */
async function settle() {
  for (let idle = 0; idle < 2; ) idle = (await environment().jobs.runDue()) === 0 ? idle + 1 : 0;
}

async function monthlyPlan(org: Org, name: string, amount: number) {
  return org.polar.products.create({ name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }] });
}

/** Buys the plan with a card, as a buyer's page with Stripe.js would; returns the subscription's id once the first payment ran. */
async function subscribe(org: Org, productId: string, email: string, card: string) {
  const checkout = await org.polar.checkouts.create({ products: [productId] });
  const token = await double().stripe(keys.secret).testHelpers.confirmationTokens.create({ payment_method: card });
  const confirmed = await org.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: email, confirmation_token_id: token.id });
  expect(confirmed.status).toBe(200);
  await settle();
  const subscription = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: checkout.id } });
  return subscription.id;
}

const subscription = (id: string) => prisma().subscription.findUniqueOrThrow({ where: { id } });

describe('subscriptions through Stripe', () => {
  it('saves the card at the first payment and charges it off-session at each renewal', async () => {
    const plan = await monthlyPlan(t.shop, 'Pro', 1500);
    const id = await subscribe(t.shop, plan.id, 'renews@example.com', 'pm_card_visa');
    const first = await subscription(id);
    expect(first.status).toBe('active');
    expect(first.paymentMethod).toMatch(/^pm_/);
    const customer = await prisma().customer.findUniqueOrThrow({ where: { id: first.customerId } });
    expect(customer.processorCustomerId).toMatch(/^cus_/);
    expect(double().object<Stripe.Customer>(customer.processorCustomerId!)).toMatchObject({ email: 'renews@example.com', metadata: { kassa_customer_id: customer.id } });
    const saved = double().object<Stripe.PaymentMethod>(first.paymentMethod)!;
    expect(saved.customer).toBe(customer.processorCustomerId);

    t.server.clock.now = new Date(first.currentPeriodEnd.getTime() + 60_000);
    await settle();
    const renewed = await subscription(id);
    expect([renewed.status, renewed.cycles, renewed.currentPeriodStart]).toEqual(['active', 1, first.currentPeriodEnd]);
    const renewal = await prisma().order.findFirstOrThrow({ where: { subscriptionId: id, billingReason: 'subscription_cycle' }, include: { payments: true } });
    expect([renewal.status, renewal.payments.map((p) => p.status)]).toEqual(['paid', ['succeeded']]);
    const intent = double().object<Stripe.PaymentIntent>(renewal.payments[0].processorId!)!;
    expect(intent).toMatchObject({ amount: 1500, customer: customer.processorCustomerId, payment_method: first.paymentMethod, status: 'succeeded' });
    const create = double().requests.find((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.idempotencyKey === `kassa-payment-${renewal.payments[0].id}`)!;
    expect(create.params).toMatchObject({ off_session: 'true', payment_method: first.paymentMethod });
    expect(create.params.setup_future_usage).toBeUndefined();
  });

  it('goes past due when the bank wants the buyer for a renewal (authentication_required)', async () => {
    const plan = await monthlyPlan(t.shop, 'Secure plan', 2500);
    const checkout = await t.shop.polar.checkouts.create({ products: [plan.id] });
    const token = await double().stripe(keys.secret).testHelpers.confirmationTokens.create({ payment_method: 'pm_card_authenticationRequired' });
    await t.shop.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: 'secure@example.com', confirmation_token_id: token.id });
    await settle();
    const pending = await prisma().payment.findFirstOrThrow({ where: { order: { checkoutId: checkout.id } } });
    expect(pending.status).toBe('pending');
    // The buyer passes 3-D Secure on the page; Stripe's webhook activates the subscription.
    double().authenticate(pending.processorId!, 'succeed');
    const id = (await prisma().subscription.findFirstOrThrow({ where: { checkoutId: checkout.id } })).id;
    const active = await eventually(() => subscription(id), (s) => s.status === 'active', 'the subscription to start');
    expect(active.paymentMethod).toMatch(/^pm_/);

    t.server.clock.now = new Date(active.currentPeriodEnd.getTime() + 60_000);
    await settle();
    const pastDue = await subscription(id);
    expect(pastDue.status).toBe('past_due');
    const renewal = await prisma().order.findFirstOrThrow({ where: { subscriptionId: id, billingReason: 'subscription_cycle' }, include: { payments: true } });
    expect(renewal.payments.map((p) => [p.status, p.declineReason])).toEqual([['failed', 'authentication_required']]);
    expect(renewal.status).toBe('pending');
  });

  it('gives up a payment whose buyer never authenticates: cancelled at Stripe after a day, the checkout failed', async () => {
    const product = await t.shop.polar.products.create({ name: 'Abandoned', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1800, priceCurrency: 'usd' }] });
    const checkout = await t.shop.polar.checkouts.create({ products: [product.id] });
    const token = await double().stripe(keys.secret).testHelpers.confirmationTokens.create({ payment_method: 'pm_card_authenticationRequired' });
    await t.shop.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: 'gone@example.com', confirmation_token_id: token.id });
    await settle();
    const payment = await prisma().payment.findFirstOrThrow({ where: { order: { checkoutId: checkout.id } } });
    expect(payment.status).toBe('pending');

    // Asked about after PAYMENT_RECONCILE_AFTER_SECONDS (15 minutes): still waiting for the buyer.
    const confirmedAt = t.server.clock.now!;
    t.server.clock.now = new Date(confirmedAt.getTime() + 16 * 60_000);
    await settle();
    expect((await prisma().payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('pending');
    expect(double().requests.some((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${payment.processorId}`)).toBe(true);

    t.server.clock.now = new Date(confirmedAt.getTime() + 25 * 3600_000);
    await settle();
    expect(await prisma().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ status: 'failed', declineReason: 'authentication_abandoned' });
    expect(double().object<Stripe.PaymentIntent>(payment.processorId!)!.status).toBe('canceled');
    expect((await prisma().checkout.findUniqueOrThrow({ where: { id: checkout.id } })).status).toBe('failed');
  });
});

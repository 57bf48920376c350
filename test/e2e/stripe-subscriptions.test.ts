// Subscriptions through Stripe, on the server's test clock: the first payment saves the card on the
// customer's Stripe record, renewals charge it off-session, and a renewal the bank refuses
// (`authentication_required`: it wants the buyer, who is not there) makes the subscription past due.
// And, on the same clock, payments Stripe has not settled: asked about at growing intervals, given
// up after a day, charged late when every attempt failed, and left alone once settled.
import type Stripe from 'stripe';
import { beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { enqueueJob } from '../../src/jobs/runner.ts';
import { useSandboxStripe } from '../helpers/stripe.ts';
import type { Org } from '../helpers/organizations.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';
import { settleJobs } from '../helpers/server.ts';

const start = new Date('2027-03-15T10:00:00.000Z');
const { keys, env, double } = useSandboxStripe('subs1');
const t = useTestServer({ env, stopSandboxJobs: true, clock: start, organizations: { shop: 'sandbox' } });
beforeAll(() => double().webhooks.addTarget({ url: `${t.server.base('sandbox')}/integrations/stripe/webhook`, secret: keys.webhook }));

const environment = () => t.server.kassa.environments.sandbox;
const prisma = () => environment().environment.prisma;

/** Runs the scheduler and every job it causes until nothing is left to do at the current time. */
async function settle() {
  await settleJobs(environment().jobs);
}

async function monthlyPlan(org: Org, name: string, amount: number) {
  return org.polar.products.create({ name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }] });
}

/** A checkout of the product confirmed with a card, as a buyer's page with Stripe.js would; its charge not run yet. */
async function confirmWithCard(org: Org, productId: string, email: string, card: string) {
  const checkout = await org.polar.checkouts.create({ products: [productId] });
  const token = await double().stripe(keys.secret).testHelpers.confirmationTokens.create({ payment_method: card });
  const confirmed = await org.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: email, confirmation_token_id: token.id });
  expect(confirmed.status).toBe(200);
  return checkout;
}

/** The requests that created (or tried to create) the payment's PaymentIntent: the payment id is their idempotency key. */
const intentCreates = (paymentId: string) => double().requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.idempotencyKey === `kassa-payment-${paymentId}`);

/** Buys the plan with a card; returns the subscription's id once the first payment ran. */
async function subscribe(org: Org, productId: string, email: string, card: string) {
  const checkout = await confirmWithCard(org, productId, email, card);
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
    const [create] = intentCreates(renewal.payments[0].id);
    expect(create.params).toMatchObject({ off_session: 'true', payment_method: first.paymentMethod });
    expect(create.params.setup_future_usage).toBeUndefined();
    // The renewal's customer at Stripe is the one on record: the customer is not written again.
    expect((await prisma().customer.findUniqueOrThrow({ where: { id: customer.id } })).modifiedAt).toEqual(customer.modifiedAt);
  });

  it('goes past due when the bank wants the buyer for a renewal (authentication_required)', async () => {
    const plan = await monthlyPlan(t.shop, 'Secure plan', 2500);
    const checkout = await confirmWithCard(t.shop, plan.id, 'secure@example.com', 'pm_card_authenticationRequired');
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
    const checkout = await confirmWithCard(t.shop, product.id, 'gone@example.com', 'pm_card_authenticationRequired');
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

describe('payments Stripe has not settled, on the clock', () => {
  /** A new one-time product's checkout confirmed with `card`, its charge not run yet. */
  async function confirmedCheckout(name: string, amount: number, card: string) {
    const product = await t.shop.polar.products.create({ name, recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }] });
    return confirmWithCard(t.shop, product.id, `${name.replace(/\W/g, '-')}@example.com`, card);
  }
  const paymentOf = (checkoutId: string) => prisma().payment.findFirstOrThrow({ where: { order: { checkoutId } } });
  const checkoutUpdates = async (checkoutId: string) => prisma().event.count({ where: { resourceId: checkoutId, type: 'checkout.updated' } });
  /** The payment's reconciliation jobs not run yet. */
  const dueReconciliations = (paymentId: string) => prisma().job.findMany({ where: { kind: 'payment.reconcile', completedAt: null, payload: { path: ['paymentId'], equals: paymentId } } });

  it('hands the buyer’s page the intent’s secret, then asks Stripe after 15 minutes and at doubling intervals of at most six hours, until it gives up after a day', async () => {
    const outcomes: string[] = [];
    const counted = vi.spyOn(environment().environment.metrics, 'payment').mockImplementation((outcome) => void outcomes.push(outcome));
    onTestFinished(() => counted.mockRestore());
    const first = await confirmedCheckout('Waiting first', 1100, 'pm_card_authenticationRequired');
    const second = await confirmedCheckout('Waiting second', 1200, 'pm_card_authenticationRequired');
    const updatesBefore = await checkoutUpdates(first.id);
    await settle();
    expect(outcomes).toEqual(['pending', 'pending']);
    expect(await checkoutUpdates(first.id)).toBe(updatesBefore + 1);
    const [a, b] = [await paymentOf(first.id), await paymentOf(second.id)];
    for (const [payment, checkout] of [[a, first], [b, second]] as const) {
      expect(payment.status).toBe('pending');
      const intent = double().object<Stripe.PaymentIntent>(payment.processorId!)!;
      expect(intent.metadata).toEqual({ kassa_payment_id: payment.id });
      expect((await prisma().checkout.findUniqueOrThrow({ where: { id: checkout.id } })).processorMetadata).toEqual({ intent_status: 'requires_action', intent_client_secret: intent.client_secret });
    }

    const waits: number[] = [];
    for (let check = 0; check < 12; check++) {
      const due = await dueReconciliations(a.id);
      if (due.length === 0) break;
      expect(due.map((job) => job.payload)).toEqual([{ paymentId: a.id, check }]);
      waits.push((due[0].runAt.getTime() - t.server.clock.now!.getTime()) / 60_000);
      t.server.clock.now = due[0].runAt;
      await settle();
    }
    expect(waits).toEqual([15, 30, 60, 120, 240, 360, 360, 360]);
    expect(double().requests.filter((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${a.processorId}`)).toHaveLength(8);
    for (const payment of [a, b]) expect(await prisma().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ status: 'failed', declineReason: 'authentication_abandoned' });
    expect(outcomes).toEqual(['pending', 'pending', 'failed', 'failed']);
  });

  it('asks Stripe about a charge that failed at every attempt instead of failing it, and makes it then if Stripe never saw it', async () => {
    double().failNext(8, 'rate_limit', { path: 'POST /v1/payment_intents' });
    const checkout = await confirmedCheckout('Never reached', 1300, 'pm_card_visa');
    const payment = await paymentOf(checkout.id);
    const creates = () => intentCreates(payment.id).map((r) => r.status);
    // Eight attempts, each retried after a back-off of at most a minute; the reconciliation the
    // last one hands over to is due 15 minutes later, past these ten.
    for (let minute = 0; minute < 10; minute++) {
      await settle();
      t.server.clock.now = new Date(t.server.clock.now!.getTime() + 60_000);
    }
    expect(creates()).toEqual(Array(8).fill(429));
    expect(await prisma().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ status: 'pending', declineReason: null });
    const [reconciliation] = await dueReconciliations(payment.id);
    expect(reconciliation.payload).toEqual({ paymentId: payment.id, check: 0 });

    t.server.clock.now = reconciliation.runAt;
    await settle();
    expect(creates()).toEqual([...Array(8).fill(429), 200]);
    expect(await prisma().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ status: 'succeeded' });
    expect((await prisma().checkout.findUniqueOrThrow({ where: { id: checkout.id } })).status).toBe('succeeded');
  });

  it('saves no card for a one-time purchase, and does nothing for a charge or a reconciliation that comes after its payment settled', async () => {
    const checkout = await confirmedCheckout('Settled once', 1400, 'pm_card_visa');
    await settle();
    const payment = await paymentOf(checkout.id);
    expect(payment.status).toBe('succeeded');
    const [create] = intentCreates(payment.id);
    expect(create.params.setup_future_usage).toBeUndefined();
    expect(create.params.off_session).toBeUndefined();

    // A second charge job (reconciliation found no intent while the first was under way) and a late reconciliation.
    const requests = double().requests.length;
    await enqueueJob(prisma(), 'payment.charge', { paymentId: payment.id }, t.server.clock.now!);
    await enqueueJob(prisma(), 'payment.reconcile', { paymentId: payment.id, check: 0 }, t.server.clock.now!);
    await settle();
    expect(double().requests).toHaveLength(requests);
    const late = await prisma().job.findMany({ where: { kind: { in: ['payment.charge', 'payment.reconcile'] }, payload: { path: ['paymentId'], equals: payment.id } } });
    expect(late.map((job) => [job.kind, job.attempts, job.lastError, job.completedAt !== null]).sort()).toEqual([
      ['payment.charge', 1, null, true],
      ['payment.charge', 1, null, true],
      ['payment.reconcile', 1, null, true],
    ]);
    expect(await prisma().payment.findUniqueOrThrow({ where: { id: payment.id } })).toEqual(payment);
  });

  it('gives a payment waiting for its buyer up a day after it was made, to the millisecond', async () => {
    const checkout = await confirmedCheckout('A day to the millisecond', 1500, 'pm_card_authenticationRequired');
    await settle();
    const payment = await paymentOf(checkout.id);
    const dayAfter = payment.createdAt.getTime() + 24 * 3600_000;
    const reconcileAt = async (time: number) => {
      t.server.clock.now = new Date(time);
      await enqueueJob(prisma(), 'payment.reconcile', { paymentId: payment.id, check: 0 }, t.server.clock.now);
      await settle();
      return prisma().payment.findUniqueOrThrow({ where: { id: payment.id } });
    };
    expect(await reconcileAt(dayAfter - 1)).toMatchObject({ status: 'pending' });
    expect(double().object<Stripe.PaymentIntent>(payment.processorId!)!.status).toBe('requires_action');
    expect(await reconcileAt(dayAfter)).toMatchObject({ status: 'failed', declineReason: 'authentication_abandoned' });
    expect(double().object<Stripe.PaymentIntent>(payment.processorId!)!.status).toBe('canceled');
  });
});

// Subscriptions end to end, in sandbox, on a test clock: the official client buys a monthly plan,
// the renewal scheduler bills a year of periods, a declined renewal goes past due and recovers,
// canceling at period end stops renewals and revokes the benefits, and a license key from the
// grant is checked from the field. The background job runner is stopped; the test runs the due
// work itself (`settle`) after moving the clock, so every step is deterministic.
import { Polar } from '@polar-sh/sdk';
import { AlreadyCanceledSubscription } from '@polar-sh/sdk/models/errors/alreadycanceledsubscription.js';
import { SubscriptionLocked } from '@polar-sh/sdk/models/errors/subscriptionlocked.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import type { Subscription } from '@polar-sh/sdk/models/components/subscription.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, settleJobs, usePostgres } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { createAndConfirmCheckout } from '../helpers/purchases.ts';
import { rejectionOf } from '../helpers/waiting.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { backgroundWork } from '../../src/background.ts';
import { openDatabase } from '../../src/db/client.ts';
import { incompleteWindowMs, renewalRetryDelaysMs } from '../../src/modules/subscriptions/service.ts';

// The last day of January: monthly periods must stay anchored on month ends (Feb 28, Mar 31, ...).
const start = new Date('2027-01-31T10:00:00.000Z');
const DAY = 86_400_000;

const t = useTestServer({ stopSandboxJobs: true, clock: start });

const environment = () => t.server.kassa.environments.sandbox;
const prisma = () => environment().environment.prisma;

/** Runs the scheduler and every job it causes until nothing is left to do at the current time. */
async function settle() {
  await settleJobs(environment().jobs);
}

async function at(time: Date) {
  t.server.clock.now = time;
  await settle();
}

async function monthlyPlan(org: Org, name: string, amount: number, benefits: string[] = []) {
  const product = await org.polar.products.create({ name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }] });
  if (benefits.length) await org.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits } });
  return product;
}

/** Buys a product with a test card through the official client, as a buyer would; returns the subscription. */
async function subscribe(org: Org, productId: string, email: string, card = 'tok_visa'): Promise<Subscription> {
  await createAndConfirmCheckout(org, productId, email, { customerName: 'Ada Buyer', card });
  await settle();
  const page = await org.polar.subscriptions.list({ productId });
  const found = page.result.items.find((s) => s.customer.email === email);
  if (!found) throw new Error(`no subscription for ${email}`);
  return found;
}

async function ordersOf(org: Org, subscriptionId: string) {
  const orders = await prisma().order.findMany({ where: { subscriptionId }, orderBy: { billingPeriodStart: 'asc' }, include: { items: true, payments: true } });
  return orders;
}

async function setPaymentMethod(org: Org, id: string, paymentMethod: string) {
  const { body } = await org.gql(`mutation ($id: UUID!, $pm: String!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: $pm) { id status } } }`, { id, pm: paymentMethod });
  expect(body.errors).toBeUndefined();
  return body.data.core.subscriptionPaymentMethodUpdate;
}

async function eventTypes(resourceId: string) {
  const events = await prisma().event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } });
  return events.map((e) => e.type);
}

describe('a monthly plan bought through the official client', () => {
  let org: Org;
  let subscription: Subscription;
  let benefitId: string;

  beforeAll(async () => {
    t.server.clock.now = start;
    org = await newOrganization(t.server, 'sandbox');
    const benefit = await org.polar.benefits.create({
      type: 'license_keys',
      description: 'Pro license',
      properties: { prefix: 'PRO', activations: { limit: 2, enableCustomerAdmin: true } },
    });
    benefitId = benefit.id;
    const plan = await monthlyPlan(org, 'Pro monthly', 1500, [benefit.id]);
    subscription = await subscribe(org, plan.id, 'yearlong@example.com');
  });

  it('is active for its first month, with its price, customer, product and the first order paid', async () => {
    expect(subscription).toMatchObject({
      status: 'active',
      amount: 1500,
      currency: 'usd',
      recurringInterval: 'month',
      cancelAtPeriodEnd: false,
      canceledAt: null,
      endedAt: null,
      currentPeriodStart: start,
      currentPeriodEnd: new Date('2027-02-28T10:00:00.000Z'),
      startedAt: start,
    });
    expect(subscription.prices).toHaveLength(1);
    expect(subscription.prices[0]).toMatchObject({ amountType: 'fixed', priceAmount: 1500 });
    expect(subscription.product.benefits.map((b) => b.id)).toEqual([benefitId]);
    const [first] = await ordersOf(org, subscription.id);
    expect(first).toMatchObject({ billingReason: 'subscription_create', status: 'paid', totalAmount: 1500 });
    const order = await org.polar.orders.get({ id: first.id });
    expect(order.subscriptionId).toBe(subscription.id);
    expect(order.subscription).toMatchObject({ id: subscription.id, status: 'active' });
    expect(await eventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.updated', 'subscription.active']);
  });

  it('keeps the deprecated price_id and price from the first price on the wire', async () => {
    const { body } = await org.api('GET', `/subscriptions/${subscription.id}`);
    expect(body.price_id).toBe(subscription.prices[0].id);
    expect(body.price).toMatchObject({ id: subscription.prices[0].id, price_amount: 1500 });
  });

  it('grants the plan’s license key, which validates, activates up to its limit, and deactivates', async () => {
    const state = await org.polar.customers.getState({ id: subscription.customerId });
    expect(state.activeSubscriptions.map((s) => s.id)).toEqual([subscription.id]);
    expect(state.grantedBenefits.map((g) => g.benefitId)).toEqual([benefitId]);
    const key = await prisma().licenseKey.findFirstOrThrow({ where: { customerId: subscription.customerId } });
    expect(key.key).toMatch(/^PRO-/);
    const field = new Polar({ serverURL: `${t.server.url}/sandbox` });
    const valid = await field.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org.organizationId });
    expect(valid).toMatchObject({ id: key.id, status: 'granted' });
    const first = await field.customerPortal.licenseKeys.activate({ key: key.key, organizationId: org.organizationId, label: 'laptop' });
    await field.customerPortal.licenseKeys.activate({ key: key.key, organizationId: org.organizationId, label: 'desktop' });
    const third = await rejectionOf(field.customerPortal.licenseKeys.activate({ key: key.key, organizationId: org.organizationId, label: 'phone' }));
    expect(third).toBeInstanceOf(NotPermitted);
    await field.customerPortal.licenseKeys.deactivate({ key: key.key, organizationId: org.organizationId, activationId: first.id });
    const again = await field.customerPortal.licenseKeys.activate({ key: key.key, organizationId: org.organizationId, label: 'phone' });
    expect(again.label).toBe('phone');
  });

  it('renews twelve times on the test clock: twelve paid renewal orders, the period advancing each month', async () => {
    let current = await org.polar.subscriptions.get({ id: subscription.id });
    for (let month = 1; month <= 12; month++) {
      const ended = current.currentPeriodEnd!;
      await at(new Date(ended.getTime() + 60_000));
      const renewed = await org.polar.subscriptions.get({ id: subscription.id });
      expect(renewed.status).toBe('active');
      expect(renewed.currentPeriodStart).toEqual(ended);
      expect(renewed.currentPeriodEnd!.getTime()).toBeGreaterThan(ended.getTime());
      current = renewed;
    }
    expect(current.currentPeriodEnd).toEqual(new Date('2028-02-29T10:00:00.000Z'));
    const orders = await ordersOf(org, subscription.id);
    const renewals = orders.filter((o) => o.billingReason === 'subscription_cycle');
    expect(renewals).toHaveLength(12);
    for (const order of renewals) {
      expect(order).toMatchObject({ status: 'paid', subtotalAmount: 1500, totalAmount: 1500, currency: 'usd' });
      expect(order.payments.map((p) => p.status)).toEqual(['succeeded']);
    }
    // Each period billed from where the last one ended, month ends kept.
    expect(renewals.map((o) => o.billingPeriodStart!.toISOString().slice(0, 10))).toEqual([
      '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31', '2027-06-30', '2027-07-31',
      '2027-08-31', '2027-09-30', '2027-10-31', '2027-11-30', '2027-12-31', '2028-01-31',
    ]);
    // Nothing more is billed before the period ends.
    await settle();
    expect((await ordersOf(org, subscription.id)).length).toBe(13);
  });

  it('goes past due on a declined renewal, keeps its benefits while retried, and recovers with a new card', async () => {
    await setPaymentMethod(org, subscription.id, 'tok_chargeDeclined');
    const before = await org.polar.subscriptions.get({ id: subscription.id });
    const due = new Date(before.currentPeriodEnd!.getTime() + 60_000);
    await at(due);
    const pastDue = await org.polar.subscriptions.get({ id: subscription.id });
    expect(pastDue.status).toBe('past_due');
    expect(pastDue.currentPeriodEnd).toEqual(before.currentPeriodEnd);
    const declined = (await ordersOf(org, subscription.id)).at(-1)!;
    expect(declined).toMatchObject({ billingReason: 'subscription_cycle', status: 'pending', paid: false });
    expect(declined.payments.map((p) => p.status)).toEqual(['failed']);
    const grants = await org.polar.benefits.grants({ id: benefitId });
    expect(grants.result.items.filter((g) => g.subscriptionId === subscription.id).map((g) => g.isGranted)).toEqual([true]);

    // The retry a day later is declined again with the same card.
    await at(new Date(due.getTime() + renewalRetryDelaysMs[0] + 60_000));
    expect((await ordersOf(org, subscription.id)).at(-1)!.payments.map((p) => p.status)).toEqual(['failed', 'failed']);
    expect((await org.polar.subscriptions.get({ id: subscription.id })).status).toBe('past_due');

    await setPaymentMethod(org, subscription.id, 'tok_visa');
    await settle();
    const recovered = await org.polar.subscriptions.get({ id: subscription.id });
    expect(recovered.status).toBe('active');
    expect(recovered.currentPeriodStart).toEqual(before.currentPeriodEnd);
    const paid = (await ordersOf(org, subscription.id)).at(-1)!;
    expect(paid.id).toBe(declined.id);
    expect(paid).toMatchObject({ status: 'paid', paid: true });
    expect(paid.payments.map((p) => p.status).sort()).toEqual(['failed', 'failed', 'succeeded']);
    expect((await eventTypes(subscription.id)).slice(-2)).toEqual(['subscription.updated', 'subscription.active']);
  });

  it('refuses a product change while the subscription is past due with SubscriptionLocked', async () => {
    const other = await monthlyPlan(org, 'Locked test plan', 900);
    const plan = await monthlyPlan(org, 'Locked plan', 900);
    const locked = await subscribe(org, plan.id, 'locked@example.com');
    await setPaymentMethod(org, locked.id, 'tok_chargeDeclined');
    await at(new Date(locked.currentPeriodEnd!.getTime() + 60_000));
    expect((await org.polar.subscriptions.get({ id: locked.id })).status).toBe('past_due');
    const error = await rejectionOf(org.polar.subscriptions.update({ id: locked.id, subscriptionUpdate: { productId: other.id } }));
    expect(error).toBeInstanceOf(SubscriptionLocked);
    expect((await org.polar.subscriptions.get({ id: locked.id })).productId).toBe(plan.id);
    await org.polar.subscriptions.revoke({ id: locked.id });
  });

  it('stops renewing once canceled at period end, and revokes its benefits when the period ends', async () => {
    const current = await org.polar.subscriptions.get({ id: subscription.id });
    const canceled = await org.polar.subscriptions.update({
      id: subscription.id,
      subscriptionUpdate: { cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Budget cut' },
    });
    expect(canceled).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      endsAt: current.currentPeriodEnd,
      customerCancellationReason: 'too_expensive',
      customerCancellationComment: 'Budget cut',
    });
    expect(canceled.canceledAt).toEqual(t.server.clock.now);
    expect((await eventTypes(subscription.id)).slice(-2)).toEqual(['subscription.updated', 'subscription.canceled']);

    const twice = await rejectionOf(org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { cancelAtPeriodEnd: true } }));
    expect(twice).toBeInstanceOf(AlreadyCanceledSubscription);

    const ordersBefore = (await ordersOf(org, subscription.id)).length;
    const key = await prisma().licenseKey.findFirstOrThrow({ where: { customerId: subscription.customerId } });
    const field = new Polar({ serverURL: `${t.server.url}/sandbox` });
    // Still entitled until the end of the paid period.
    await at(new Date(current.currentPeriodEnd!.getTime() - 60_000));
    await field.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org.organizationId });

    await at(new Date(current.currentPeriodEnd!.getTime() + 60_000));
    const over = await org.polar.subscriptions.get({ id: subscription.id });
    expect(over).toMatchObject({ status: 'canceled', endedAt: current.currentPeriodEnd });
    expect((await ordersOf(org, subscription.id)).length).toBe(ordersBefore);
    const grants = await org.polar.benefits.grants({ id: benefitId });
    expect(grants.result.items.find((g) => g.subscriptionId === subscription.id)).toMatchObject({ isGranted: false, isRevoked: true });
    expect((await org.polar.customers.getState({ id: subscription.customerId })).grantedBenefits).toEqual([]);
    expect(await rejectionOf(field.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org.organizationId }))).toBeInstanceOf(ResourceNotFound);
    expect((await eventTypes(subscription.id)).slice(-2)).toEqual(['subscription.updated', 'subscription.revoked']);

    // A month later there is still nothing to bill.
    await at(new Date(current.currentPeriodEnd!.getTime() + 40 * DAY));
    expect((await ordersOf(org, subscription.id)).length).toBe(ordersBefore);
    const uncancel = await org.api('PATCH', `/subscriptions/${subscription.id}`, { cancel_at_period_end: false });
    expect(uncancel.status).toBe(403);
    expect(uncancel.body.error).toBe('AlreadyCanceledSubscription');
  });
});

describe('canceling, uncanceling and revoking', () => {
  let org: Org;
  beforeAll(async () => {
    t.server.clock.now = start;
    org = await newOrganization(t.server, 'sandbox');
  });

  it('uncanceling before the period ends keeps the subscription renewing', async () => {
    const plan = await monthlyPlan(org, 'Basic', 700);
    const subscription = await subscribe(org, plan.id, 'undecided@example.com');
    await org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { cancelAtPeriodEnd: true } });
    const resumed = await org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { cancelAtPeriodEnd: false } });
    expect(resumed).toMatchObject({ cancelAtPeriodEnd: false, canceledAt: null, endsAt: null, status: 'active' });
    expect((await eventTypes(subscription.id)).slice(-2)).toEqual(['subscription.updated', 'subscription.uncanceled']);
    await at(new Date(subscription.currentPeriodEnd!.getTime() + 60_000));
    expect((await ordersOf(org, subscription.id)).map((o) => o.billingReason)).toEqual(['subscription_create', 'subscription_cycle']);
  });

  it('revoking ends the subscription now; a second revoke or any update is AlreadyCanceledSubscription', async () => {
    t.server.clock.now = start;
    const plan = await monthlyPlan(org, 'Team', 4000);
    const subscription = await subscribe(org, plan.id, 'leaving@example.com');
    const revoked = await org.polar.subscriptions.revoke({ id: subscription.id });
    expect(revoked).toMatchObject({ status: 'canceled', canceledAt: start, endedAt: start, endsAt: start, cancelAtPeriodEnd: false });
    expect((await eventTypes(subscription.id)).slice(-3)).toEqual(['subscription.updated', 'subscription.canceled', 'subscription.revoked']);
    expect(await rejectionOf(org.polar.subscriptions.revoke({ id: subscription.id }))).toBeInstanceOf(AlreadyCanceledSubscription);
    expect(await rejectionOf(org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { cancelAtPeriodEnd: true } }))).toBeInstanceOf(
      AlreadyCanceledSubscription,
    );
    const other = await monthlyPlan(org, 'Team plus', 5000);
    const change = await org.api('PATCH', `/subscriptions/${subscription.id}`, { product_id: other.id });
    expect(change.status).toBe(403);
    expect(change.body).toEqual({ error: 'AlreadyCanceledSubscription', detail: expect.any(String) });
    await at(new Date(subscription.currentPeriodEnd!.getTime() + 60_000));
    expect((await ordersOf(org, subscription.id)).length).toBe(1);
  });

  it('ends a subscription whose renewal stays declined through every retry, revoking its benefits', async () => {
    t.server.clock.now = start;
    const benefit = await org.polar.benefits.create({ type: 'custom', description: 'Priority support', properties: { note: 'Mail us' } });
    const plan = await monthlyPlan(org, 'Doomed', 1000, [benefit.id]);
    const subscription = await subscribe(org, plan.id, 'declined@example.com');
    await setPaymentMethod(org, subscription.id, 'tok_chargeDeclined');
    let time = subscription.currentPeriodEnd!.getTime() + 60_000;
    await at(new Date(time));
    for (const delay of renewalRetryDelaysMs) {
      expect((await org.polar.subscriptions.get({ id: subscription.id })).status).toBe('past_due');
      time += delay + 60_000;
      await at(new Date(time));
    }
    const ended = await org.polar.subscriptions.get({ id: subscription.id });
    expect(ended).toMatchObject({ status: 'canceled', cancelAtPeriodEnd: false });
    expect(ended.endedAt).not.toBeNull();
    const orders = await ordersOf(org, subscription.id);
    expect(orders.at(-1)!.payments.map((p) => p.status)).toEqual(Array(renewalRetryDelaysMs.length + 1).fill('failed'));
    const grants = await org.polar.benefits.grants({ id: benefit.id });
    expect(grants.result.items.map((g) => g.isRevoked)).toEqual([true]);
  });

  it('is never activated when the first payment is declined and no other card comes within 23 hours: incomplete_expired, no renewal, no benefits', async () => {
    t.server.clock.now = start;
    const benefit = await org.polar.benefits.create({ type: 'custom', description: 'Welcome pack', properties: { note: 'Hi' } });
    const plan = await monthlyPlan(org, 'Declined at checkout', 1000, [benefit.id]);
    const declined = await subscribe(org, plan.id, 'bounced@example.com', 'tok_chargeDeclined');
    // The buyer may still try another card on the checkout's page.
    expect(declined).toMatchObject({ status: 'incomplete', startedAt: null, endedAt: null });
    await at(new Date(start.getTime() + incompleteWindowMs - 60_000));
    expect(await org.polar.subscriptions.get({ id: declined.id })).toMatchObject({ status: 'incomplete', endedAt: null });
    const expiredAt = new Date(start.getTime() + incompleteWindowMs);
    await at(expiredAt);
    const subscription = await org.polar.subscriptions.get({ id: declined.id });
    expect(subscription).toMatchObject({ status: 'incomplete_expired', startedAt: null, endedAt: expiredAt });
    expect(await eventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.updated']);
    // Too late for another card: the checkout refuses it, and nothing is charged.
    const checkout = (await org.polar.checkouts.list({ productId: plan.id })).result.items[0];
    const retry = await rejectionOf(org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } }));
    expect(retry).toMatchObject({ statusCode: 403 });
    expect(String((retry as Error).message)).toContain('its subscription has ended');
    await at(new Date(subscription.currentPeriodEnd!.getTime() + 60_000));
    expect((await ordersOf(org, subscription.id)).map((o) => o.status)).toEqual(['pending']);
    expect((await org.polar.benefits.grants({ id: benefit.id })).result.items).toEqual([]);
    expect((await org.polar.subscriptions.list({ productId: plan.id, active: true })).result.items).toEqual([]);
  });

  it('starts when the buyer pays with another card after the first is declined, with one charge and its benefits', async () => {
    t.server.clock.now = start;
    const benefit = await org.polar.benefits.create({ type: 'custom', description: 'Second chance', properties: { note: 'Hi' } });
    const plan = await monthlyPlan(org, 'Second card', 1200, [benefit.id]);
    const declined = await subscribe(org, plan.id, 'second-card@example.com', 'tok_chargeDeclined');
    expect(declined.status).toBe('incomplete');
    const checkout = (await org.polar.checkouts.list({ productId: plan.id })).result.items[0];
    expect(checkout.status).toBe('failed');
    t.server.clock.now = new Date(start.getTime() + 3600_000);
    const confirmed = await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } });
    expect(confirmed.status).toBe('confirmed');
    await settle();
    expect((await org.polar.checkouts.get({ id: checkout.id })).status).toBe('succeeded');
    const subscription = await org.polar.subscriptions.get({ id: declined.id });
    expect(subscription).toMatchObject({ status: 'active', endedAt: null });
    const [order, ...others] = await ordersOf(org, declined.id);
    expect(others).toEqual([]);
    expect(order).toMatchObject({ status: 'paid', totalAmount: 1200 });
    expect(order.payments.map((p) => [p.status, p.paymentMethod])).toEqual([['failed', 'tok_chargeDeclined'], ['succeeded', 'tok_visa']]);
    expect((await org.polar.benefits.grants({ id: benefit.id, isGranted: true })).result.items).toHaveLength(1);
    // Renewals charge the card that paid.
    expect((await prisma().subscription.findUniqueOrThrow({ where: { id: declined.id } })).paymentMethod).toBe('tok_visa');
    // Paid now: the checkout takes no other card.
    const again = await rejectionOf(org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' } }));
    expect(again).toMatchObject({ statusCode: 403 });
  });

  it('ends the subscriptions and revokes the benefits of a customer who is deleted', async () => {
    t.server.clock.now = start;
    const benefit = await org.polar.benefits.create({ type: 'custom', description: 'Member forum', properties: { note: 'Welcome' } });
    const plan = await monthlyPlan(org, 'Membership', 800, [benefit.id]);
    const subscription = await subscribe(org, plan.id, 'gone@example.com');
    expect((await org.polar.benefits.grants({ id: benefit.id, isGranted: true })).result.items).toHaveLength(1);
    await org.polar.customers.delete({ id: subscription.customerId });
    await settle();
    expect(await org.polar.subscriptions.get({ id: subscription.id })).toMatchObject({ status: 'canceled', endedAt: start });
    expect((await org.polar.benefits.grants({ id: benefit.id })).result.items.map((g) => g.isRevoked)).toEqual([true]);
  });

  it('treats a renewal the processor cannot charge at all, after every attempt, as declined', async () => {
    t.server.clock.now = start;
    const plan = await monthlyPlan(org, 'Unreachable', 1100);
    const subscription = await subscribe(org, plan.id, 'unreachable@example.com');
    await setPaymentMethod(org, subscription.id, 'tok_processorUnavailable');
    let time = subscription.currentPeriodEnd!.getTime() + 60_000;
    await at(new Date(time));
    // Each failed attempt is retried after a back-off of at most a minute, by the same clock.
    for (let attempt = 0; attempt < 10; attempt++) {
      time += 61_000;
      await at(new Date(time));
    }
    const [, renewal] = await ordersOf(org, subscription.id);
    expect(renewal.payments.map((p) => [p.status, p.declineReason, p.processorId])).toEqual([['failed', 'processing_error', 'not-charged']]);
    expect(await prisma().job.findFirst({ where: { kind: 'payment.charge', payload: { equals: { paymentId: renewal.payments[0].id } } } })).toMatchObject({
      attempts: 8,
      completedAt: expect.any(Date),
    });
    expect((await org.polar.subscriptions.get({ id: subscription.id })).status).toBe('past_due');
  });

  it('refuses revoke_benefits on a refund of a subscription order (the subscription is revoked instead)', async () => {
    t.server.clock.now = start;
    const plan = await monthlyPlan(org, 'Refundable', 2000);
    const subscription = await subscribe(org, plan.id, 'refunded@example.com');
    const [order] = await ordersOf(org, subscription.id);
    const refused = await org.api('POST', '/refunds/', { order_id: order.id, amount: 500, reason: 'customer_request', revoke_benefits: true });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(['body', 'revoke_benefits']);
    expect(await prisma().refund.count({ where: { orderId: order.id } })).toBe(0);
    const refunded = await org.api('POST', '/refunds/', { order_id: order.id, amount: 500, reason: 'customer_request' });
    expect(refunded.status).toBe(200);
    expect((await org.polar.subscriptions.get({ id: subscription.id })).status).toBe('active');
  });

  it('answers another organization’s subscription as not found, and changes nothing', async () => {
    t.server.clock.now = start;
    const plan = await monthlyPlan(org, 'Private', 1200);
    const subscription = await subscribe(org, plan.id, 'private@example.com');
    const intruder = await newOrganization(t.server, 'sandbox');
    expect(await rejectionOf(intruder.polar.subscriptions.get({ id: subscription.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(intruder.polar.subscriptions.revoke({ id: subscription.id }))).toBeInstanceOf(ResourceNotFound);
    expect((await intruder.api('PATCH', `/subscriptions/${subscription.id}`, { cancel_at_period_end: true })).status).toBe(404);
    expect((await intruder.polar.subscriptions.list({})).result.items).toEqual([]);
    expect((await org.polar.subscriptions.get({ id: subscription.id })).status).toBe('active');
  });

  it('rejects an update body that names no change, or two, with 422 and changes nothing', async () => {
    t.server.clock.now = start;
    const plan = await monthlyPlan(org, 'Strict', 1200);
    const subscription = await subscribe(org, plan.id, 'strict@example.com');
    for (const body of [{}, { cancel_at_period_end: true, revoke: true }, { revoke: false }, { product_id: 'not-a-uuid' }, { cancel_at_period_end: 'soon' }]) {
      const response = await org.api('PATCH', `/subscriptions/${subscription.id}`, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.detail).toEqual(expect.any(Array));
    }
    expect(await org.polar.subscriptions.get({ id: subscription.id })).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
  });
});

describe('changing plans', () => {
  it('moves to the new product now and bills the prorated difference on the next order', async () => {
    t.server.clock.now = new Date('2027-03-01T00:00:00.000Z');
    const org = await newOrganization(t.server, 'sandbox');
    const basic = await monthlyPlan(org, 'Basic', 1000);
    const pro = await monthlyPlan(org, 'Pro', 3000);
    const subscription = await subscribe(org, basic.id, 'upgrader@example.com');
    // March has 31 days: ten days in, 21/31 of the period remains.
    t.server.clock.now = new Date('2027-03-11T00:00:00.000Z');
    const changed = await org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { productId: pro.id, prorationBehavior: 'prorate' } });
    expect(changed).toMatchObject({ productId: pro.id, amount: 3000, status: 'active' });
    expect(changed.prices.map((p) => p.productId)).toEqual([pro.id]);
    await at(new Date('2027-04-01T00:01:00.000Z'));
    const renewal = (await ordersOf(org, subscription.id)).at(-1)!;
    const credit = -Math.round((1000 * 21) / 31);
    const charge = Math.round((3000 * 21) / 31);
    expect(renewal.items.map((i) => [i.label, i.amount, i.proration]).sort()).toEqual(
      [
        ['Pro', 3000, false],
        ['Remaining time on Pro', charge, true],
        ['Unused time on Basic', credit, true],
      ].sort(),
    );
    expect(renewal).toMatchObject({ status: 'paid', subtotalAmount: 3000 + charge + credit, totalAmount: 3000 + charge + credit });
    // Billed once: the following renewal carries only the plan's price.
    await at(new Date('2027-05-01T00:01:00.000Z'));
    expect((await ordersOf(org, subscription.id)).at(-1)!.items.map((i) => i.amount)).toEqual([3000]);
  });

  it('refuses a product of another interval, another organization, or immediate invoicing, with 422', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await monthlyPlan(org, 'Monthly', 1000);
    const subscription = await subscribe(org, plan.id, 'picky@example.com');
    const yearly = await org.polar.products.create({ name: 'Yearly', recurringInterval: 'year', prices: [{ amountType: 'fixed', priceAmount: 9000, priceCurrency: 'usd' }] });
    const foreign = await monthlyPlan(await newOrganization(t.server, 'sandbox'), 'Foreign', 1000);
    const monthly2 = await monthlyPlan(org, 'Monthly two', 2000);
    for (const body of [{ product_id: yearly.id }, { product_id: foreign.id }, { product_id: monthly2.id, proration_behavior: 'invoice' }]) {
      const response = await org.api('PATCH', `/subscriptions/${subscription.id}`, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
    }
    expect((await org.polar.subscriptions.get({ id: subscription.id })).productId).toBe(plan.id);
    expect(await prisma().subscriptionPendingItem.count({ where: { subscriptionId: subscription.id } })).toBe(0);
  });
});

describe('the renewal scheduler in two processes', () => {
  it('never bills a period twice when two schedulers run at once on one database', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await monthlyPlan(org, 'Shared', 500);
    const subscriptions = [];
    for (let i = 0; i < 6; i++) subscriptions.push(await subscribe(org, plan.id, `shared${i}@example.com`));
    // A second process: its own connection pool on the same database (on PostgreSQL), its own runner.
    const second = usePostgres ? await openDatabase(t.server.config.databases.sandbox) : null;
    try {
      const { environment: env } = environment();
      const logger = { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never;
      const runners = [env.prisma, second?.prisma ?? env.prisma].map(
        (db) => new JobRunner({ environment: env, prisma: db, now: () => t.server.clock.now!, logger }, { pollMs: 1000, batchSize: 10, lockMs: 60_000 }, backgroundWork),
      );
      for (let month = 1; month <= 3; month++) {
        t.server.clock.now = new Date(start.getTime() + month * 31 * DAY);
        for (let round = 0; round < 4; round++) await Promise.all(runners.map((runner) => runner.runDue()));
        await settle();
      }
    } finally {
      await second?.close();
    }
    for (const subscription of subscriptions) {
      const orders = await ordersOf(org, subscription.id);
      const periods = orders.map((o) => o.billingPeriodStart!.toISOString());
      expect(new Set(periods).size).toBe(periods.length);
      expect(orders.filter((o) => o.billingReason === 'subscription_cycle')).toHaveLength(3);
      expect(orders.flatMap((o) => o.payments).filter((p) => p.status === 'succeeded')).toHaveLength(4);
    }
  });
});

describe('subscriptions over GraphQL', () => {
  it('reads a customer’s entitlements in one query: active subscriptions, granted benefits and license keys', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const benefit = await org.polar.benefits.create({ type: 'license_keys', description: 'Seat license', properties: { prefix: 'SEAT' } });
    const plan = await monthlyPlan(org, 'Seats', 2500, [benefit.id]);
    const subscription = await subscribe(org, plan.id, 'graph@example.com');
    const { body } = await org.gql(
      `query ($id: UUID!) { core { customerState(id: $id) {
          email
          activeSubscriptions { id status amount product { name } }
          grantedBenefits { benefitId benefitType properties benefit { description } }
          licenseKeys { key status }
      } } }`,
      { id: subscription.customerId },
    );
    expect(body.errors).toBeUndefined();
    const state = body.data.core.customerState;
    expect(state.email).toBe('graph@example.com');
    expect(state.activeSubscriptions).toEqual([{ id: subscription.id, status: 'active', amount: 2500, product: { name: 'Seats' } }]);
    expect(state.grantedBenefits).toEqual([
      { benefitId: benefit.id, benefitType: 'license_keys', properties: { license_key_id: expect.any(String), display_key: expect.any(String) }, benefit: { description: 'Seat license' } },
    ]);
    expect(state.licenseKeys).toEqual([{ key: expect.stringMatching(/^SEAT-/), status: 'granted' }]);
  });

  it('is not reachable without a token, and shows an organization only its own', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const { body } = await graphqlClient(t.server.base('sandbox'))(`{ core { subscriptions { items { id } } } }`);
    expect(body.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
    const listed = await org.gql(`{ core { subscriptions { items { id } pagination { totalCount } } } }`);
    expect(listed.body.data.core.subscriptions.pagination.totalCount).toBe(0);
  });
});

// A subscription revoked while its renewal is being charged. The charge runs outside any
// transaction (a processor call takes its time), so the revocation can commit while it is under
// way. Whichever commits first, the end is one of: revoked with the renewal refunded in full
// through the processor; renewed, then revoked (the paid period kept); or revoked before the
// charge began (nothing charged). Never a revoked subscription keeping a charge it did not renew
// for. In sandbox, with the background runner stopped: the test runs the due work itself.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { createAndConfirmCheckout } from '../helpers/purchases.ts';
import { eventually, sleep } from '../helpers/waiting.ts';
import { settleJobs } from '../helpers/server.ts';

// Long enough that a revocation sent once the charge has begun lands before it is recorded, even on a busy machine.
const CARD_DELAY_MS = 3000;
const DAY = 86_400_000;
let start = new Date('2027-03-01T09:00:00.000Z');

const t = useTestServer({
  env: { TEST_CARD_DELAY_MS: String(CARD_DELAY_MS) },
  stopSandboxJobs: true,
  clock: start,
  organizations: { org: 'sandbox' },
});

/** Payments whose charge the processor has been asked for: a revocation sent after that lands while the charge is under way. */
const chargesBegun = new Set<string>();
beforeAll(() => {
  const processor = t.server.kassa.environments.sandbox.environment.paymentProcessor!;
  const charge = processor.charge.bind(processor);
  processor.charge = (request) => {
    chargesBegun.add(request.paymentId);
    return charge(request);
  };
});

const jobs = () => t.server.kassa.environments.sandbox.jobs;
const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

async function settle() {
  await settleJobs(jobs());
}

/** A new monthly subscription, paid for its first month, renewed with `card`; the clock starts a day later than the last one's. */
async function subscription(card: string) {
  start = new Date(start.getTime() + DAY);
  t.server.clock.now = start;
  const plan = await t.org.polar.products.create({ name: `Plan ${start.toISOString()}`, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 2500, priceCurrency: 'usd' }] });
  await createAndConfirmCheckout(t.org, plan.id, `renewing-${start.getTime()}@example.com`, { card: 'tok_visa' });
  await settle();
  const found = await prisma().subscription.findFirstOrThrow({ where: { productId: plan.id } });
  expect(found.status).toBe('active');
  const { body } = await t.org.gql(`mutation ($id: UUID!, $pm: String!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: $pm) { id } } }`, { id: found.id, pm: card });
  expect(body.errors).toBeUndefined();
  return found;
}

/** A new monthly plan's checkout confirmed with `card`, its first payment not charged yet: the subscription, incomplete. The clock starts a day later than the last one's. */
async function incompleteSubscription(name: string, amount: number, card: string) {
  start = new Date(start.getTime() + DAY);
  t.server.clock.now = start;
  const plan = await t.org.polar.products.create({ name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }] });
  await createAndConfirmCheckout(t.org, plan.id, `first-${start.getTime()}@example.com`, { card });
  return prisma().subscription.findFirstOrThrow({ where: { productId: plan.id } });
}

/** The charge of the subscription's pending payment has begun: the processor has been asked for it. */
async function chargeUnderWay(subscriptionId: string) {
  const payment = await eventually(
    () => prisma().payment.findFirst({ where: { status: 'pending', order: { subscriptionId } } }),
    (found) => found !== null,
    'a pending payment',
  );
  await eventually(async () => chargesBegun.has(payment!.id), (begun) => begun, 'the processor to be asked for its charge');
}

async function renewalOf(subscriptionId: string) {
  return prisma().order.findFirst({ where: { subscriptionId, billingReason: 'subscription_cycle' }, include: { payments: true, refunds: true } });
}

async function eventTypes(resourceId: string) {
  return (await prisma().event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } })).map((e) => e.type);
}

const revoke = (id: string) => t.org.api('DELETE', `/subscriptions/${id}`);

describe('a subscription revoked while its renewal is being charged', () => {
  it('stays revoked, and the renewal’s charge is refunded in full through the processor, with its events', async () => {
    const subscribed = await subscription('tok_delayedSuccess');
    t.server.clock.now = new Date(subscribed.currentPeriodEnd.getTime() + 60_000);
    const renewing = jobs().runDue();
    await chargeUnderWay(subscribed.id);
    const revoked = await revoke(subscribed.id);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('canceled');
    await renewing;
    await settle();

    const after = await prisma().subscription.findUniqueOrThrow({ where: { id: subscribed.id } });
    expect(after).toMatchObject({ status: 'canceled', cycles: subscribed.cycles, currentPeriodStart: subscribed.currentPeriodStart });
    const order = (await renewalOf(subscribed.id))!;
    expect(order).toMatchObject({ paid: true, status: 'refunded', refundedAmount: 2500, totalAmount: 2500 });
    expect(order.payments).toMatchObject([{ status: 'succeeded', amount: 2500 }]);
    expect(order.refunds).toMatchObject([{ status: 'succeeded', amount: 2500, reason: 'other', comment: 'Charged while the subscription was ending: refunded automatically.', revokeBenefits: false }]);
    expect(order.refunds[0].processorId).toMatch(/^test_re_/);
    expect(await eventTypes(order.id)).toEqual(['order.created', 'order.updated', 'order.paid', 'order.updated', 'order.refunded']);
    expect(await eventTypes(order.refunds[0].id)).toEqual(['refund.created']);
    // The subscription's own history ends at its revocation: no renewal is recorded after it.
    expect((await eventTypes(subscribed.id)).slice(-3)).toEqual(['subscription.updated', 'subscription.canceled', 'subscription.revoked']);

    const wire = await t.org.api('GET', `/orders/${order.id}`);
    expect(wire.body).toMatchObject({ status: 'refunded', paid: true, refunded_amount: 2500 });
    const refunds = await t.org.api('GET', `/refunds/?order_id=${order.id}`);
    expect(refunds.body.items).toMatchObject([{ order_id: order.id, amount: 2500, status: 'succeeded', subscription_id: subscribed.id }]);
  });

  it('keeps the paid renewal when the renewal is recorded first: renewed, then revoked', async () => {
    const subscribed = await subscription('tok_delayedSuccess');
    t.server.clock.now = new Date(subscribed.currentPeriodEnd.getTime() + 60_000);
    await settle();
    expect((await revoke(subscribed.id)).status).toBe(200);
    await settle();
    const after = await prisma().subscription.findUniqueOrThrow({ where: { id: subscribed.id } });
    expect(after).toMatchObject({ status: 'canceled', cycles: subscribed.cycles + 1, currentPeriodStart: subscribed.currentPeriodEnd });
    const order = (await renewalOf(subscribed.id))!;
    expect(order).toMatchObject({ paid: true, status: 'paid', refundedAmount: 0 });
    expect(order.refunds).toEqual([]);
  });

  it('refunds a first payment that goes through after its incomplete subscription was revoked', async () => {
    const incomplete = await incompleteSubscription('Slow first payment', 900, 'tok_delayedSuccess');
    const paying = jobs().runDue();
    await chargeUnderWay(incomplete.id);
    expect(incomplete.status).toBe('incomplete');
    expect((await revoke(incomplete.id)).status).toBe(200);
    await paying;
    await settle();
    expect(await prisma().subscription.findUniqueOrThrow({ where: { id: incomplete.id } })).toMatchObject({ status: 'canceled', startedAt: null });
    const order = await prisma().order.findFirstOrThrow({ where: { subscriptionId: incomplete.id }, include: { refunds: true } });
    expect(order).toMatchObject({ billingReason: 'subscription_create', paid: true, status: 'refunded', refundedAmount: 900 });
    expect(order.refunds).toMatchObject([{ status: 'succeeded', amount: 900 }]);
  });

  it('charges nothing for a first payment whose incomplete subscription was revoked before its charge began', async () => {
    const incomplete = await incompleteSubscription('Revoked before charging', 700, 'tok_visa');
    expect((await revoke(incomplete.id)).status).toBe(200);
    await settle();
    const order = await prisma().order.findFirstOrThrow({ where: { subscriptionId: incomplete.id }, include: { payments: true, refunds: true } });
    expect(order.payments.map((p) => [p.status, p.declineReason, p.processorId])).toEqual([['failed', 'subscription_ended', 'not-charged']]);
    expect(chargesBegun.has(order.payments[0].id)).toBe(false);
    expect(order).toMatchObject({ paid: false, refundedAmount: 0, refunds: [] });
  });

  it('started at the same moment, ends in exactly one of the allowed outcomes, on every interleaving tried', async () => {
    const outcomes = new Set<string>();
    // Revocations land before, during and after the charge (which takes CARD_DELAY_MS).
    for (const revokeAfterMs of [0, 0, 200, 1000, 2000, 2800, 5000, 7000]) {
      const subscribed = await subscription('tok_delayedSuccess');
      t.server.clock.now = new Date(subscribed.currentPeriodEnd.getTime() + 60_000);
      const [, revoked] = await Promise.all([jobs().runDue(), sleep(revokeAfterMs).then(() => revoke(subscribed.id))]);
      expect(revoked.status).toBe(200);
      await settle();

      const after = await prisma().subscription.findUniqueOrThrow({ where: { id: subscribed.id } });
      expect(after.status).toBe('canceled');
      const order = await renewalOf(subscribed.id);
      const renewed = after.cycles === subscribed.cycles + 1;
      let outcome: string;
      if (!order) outcome = 'revoked before the renewal was billed';
      else if (!order.paid) {
        expect(order.payments).toMatchObject([{ status: 'failed', declineReason: 'subscription_ended' }]);
        outcome = 'revoked before the charge began';
      } else if (renewed) {
        expect(order).toMatchObject({ status: 'paid', refundedAmount: 0 });
        outcome = 'renewed, then revoked';
      } else {
        expect(order).toMatchObject({ status: 'refunded', refundedAmount: order.netAmount });
        expect(order.refunds).toMatchObject([{ status: 'succeeded', amount: order.netAmount }]);
        outcome = 'revoked during the charge, refunded';
      }
      // Never both: a renewal kept while the period it paid for was not granted.
      expect(order?.paid && !renewed && order.refundedAmount < order.netAmount).toBeFalsy();
      outcomes.add(outcome);
    }
    expect(outcomes).toContain('revoked during the charge, refunded');
    expect(outcomes).toContain('renewed, then revoked');
    // Eight subscriptions, each paid and renewed through a card that waits CARD_DELAY_MS.
  }, 240_000);
});

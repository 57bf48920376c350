// Payments through Stripe, end to end: Kassa's Stripe processor uses the real `stripe` client,
// pointed by STRIPE_API_URL at the Stripe API double (test/stripe-double), which signs its webhooks
// and sends them to Kassa's webhook endpoint. The buyer's side (Stripe.js making a
// ConfirmationToken, the 3-D Secure popup) is played through the double's test helpers.
import type Stripe from 'stripe';
import { describe, expect, it, vi } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import type { Org } from '../helpers/organizations.ts';
import { fixedProduct } from '../helpers/purchases.ts';
import { stripeKeys, useStripeServer } from '../helpers/stripe.ts';
import { eventually } from '../helpers/waiting.ts';

const s = useStripeServer({ shop: 'sandbox', live: 'production', other: 'sandbox' });
const { t, webhookUrl, prisma, confirmationToken, confirm, checkoutWhen, paymentsOf, intentsFor } = s;
const keys = stripeKeys;

async function checkoutFor(org: Org, productId: string) {
  return org.polar.checkouts.create({ products: [productId] });
}

/** The charge job of a sandbox payment. */
const chargeJobOf = (paymentId: string) => prisma('sandbox').job.findFirstOrThrow({ where: { kind: 'payment.charge', payload: { path: ['paymentId'], equals: paymentId } } });
/** How many checkout.updated events a sandbox checkout has. */
const checkoutUpdates = (checkoutId: string) => prisma('sandbox').event.count({ where: { type: 'checkout.updated', resourceId: checkoutId } });

describe('a purchase through Stripe', () => {
  it('charges the buyer once, with the payment id as idempotency key, and pays the order on Stripe’s word', async () => {
    const product = await fixedProduct(t.shop, 'Ebook', 1999);
    const checkout = await checkoutFor(t.shop, product.id);
    expect(checkout.paymentProcessorMetadata).toEqual({ publishable_key: keys.sandbox.publishable });
    const confirmed = await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_visa'));
    expect(confirmed.status).toBe(200);
    await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');

    const [payment] = await paymentsOf('sandbox', checkout.id);
    expect(payment).toMatchObject({ processor: 'stripe', status: 'succeeded', amount: 1999 });
    const [intent] = intentsFor(payment.id);
    expect(intentsFor(payment.id)).toHaveLength(1);
    expect(intent).toMatchObject({ id: payment.processorId, amount: 1999, currency: 'usd', status: 'succeeded', livemode: false });
    const creates = s.double.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents');
    expect(creates.filter((r) => r.idempotencyKey === `kassa-payment-${payment.id}`).length).toBeGreaterThanOrEqual(1);
    const orders = (await t.shop.api('GET', `/orders/?checkout_id=${checkout.id}`)).body.items;
    expect(orders.map((o: { status: string; paid: boolean }) => [o.status, o.paid])).toEqual([['paid', true]]);
    // Stripe's own word arrives as well, and changes nothing more.
    await s.double.webhooks.waitFor('payment_intent.succeeded', (e) => (e.data.object as Stripe.PaymentIntent).id === intent.id);
    const deliveries = s.double.webhooks.sent.filter((d) => d.type === 'payment_intent.succeeded' && d.url === webhookUrl('sandbox'));
    expect(deliveries.at(-1)?.status).toBe(200);
  });

  it('takes live payments in production with the live key', async () => {
    const product = await fixedProduct(t.live, 'Course', 4900);
    const checkout = await checkoutFor(t.live, product.id);
    expect(checkout.paymentProcessorMetadata).toEqual({ publishable_key: keys.production.publishable });
    expect((await confirm(t.live, checkout.clientSecret, await confirmationToken('production', 'pm_card_visa'))).status).toBe(200);
    await checkoutWhen(t.live, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    const [payment] = await paymentsOf('production', checkout.id);
    expect(s.double.object<Stripe.PaymentIntent>(payment.processorId!)).toMatchObject({ livemode: true, amount: 4900 });
  });

  it('fails the checkout when the card is declined, with Stripe’s decline code', async () => {
    const product = await fixedProduct(t.shop, 'Declined', 1000);
    const checkout = await checkoutFor(t.shop, product.id);
    await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_chargeDeclinedInsufficientFunds'));
    await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'failed', 'the checkout to fail');
    const [payment] = await paymentsOf('sandbox', checkout.id);
    expect(payment).toMatchObject({ status: 'failed', declineReason: 'insufficient_funds' });
  });

  it('refuses an unknown, a used or a malformed confirmation token, and changes nothing', async () => {
    const product = await fixedProduct(t.shop, 'Guarded', 1500);
    const first = await checkoutFor(t.shop, product.id);
    const unknown = await confirm(t.shop, first.clientSecret, 'ctoken_doesnotexist');
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.body)).toMatch(/Unknown confirmation token/);
    const malformed = await confirm(t.shop, first.clientSecret, 'tok_visa');
    expect(malformed.status).toBe(422);
    expect(JSON.stringify(malformed.body)).toMatch(/ConfirmationToken \(ctoken_…\)/);
    expect((await t.shop.api('GET', `/checkouts/${first.id}`)).body.status).toBe('open');

    const token = await confirmationToken('sandbox', 'pm_card_visa');
    expect((await confirm(t.shop, first.clientSecret, token)).status).toBe(200);
    const second = await checkoutFor(t.shop, product.id);
    const reused = await confirm(t.shop, second.clientSecret, token);
    expect(reused.status).toBe(422);
    expect(JSON.stringify(reused.body)).toMatch(/used already/);
    expect((await t.shop.api('GET', `/checkouts/${second.id}`)).body.status).toBe('open');
    expect(await paymentsOf('sandbox', second.id)).toEqual([]);
  });
});

describe('3-D Secure', () => {
  it('hands the buyer the intent’s secret, and pays only once Stripe says the buyer authenticated', async () => {
    const product = await fixedProduct(t.shop, 'Secure', 2500);
    const checkout = await checkoutFor(t.shop, product.id);
    await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_authenticationRequired'));
    const waiting = await checkoutWhen(t.shop, checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the checkout to ask for authentication');
    expect(waiting.status).toBe('confirmed');
    const [payment] = await paymentsOf('sandbox', checkout.id);
    expect(payment.status).toBe('pending');
    expect(waiting.payment_processor_metadata).toEqual({
      publishable_key: keys.sandbox.publishable,
      intent_status: 'requires_action',
      intent_client_secret: s.double.object<Stripe.PaymentIntent>(payment.processorId!)!.client_secret,
    });
    // The buyer's page reads it without a token, by the client secret.
    const client = await t.shop.publicApi('GET', `/checkouts/client/${checkout.clientSecret}`);
    expect(client.body.payment_processor_metadata.intent_status).toBe('requires_action');

    s.double.authenticate(payment.processorId!, 'succeed');
    const paid = await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    expect(paid.payment_processor_metadata).toEqual({ publishable_key: keys.sandbox.publishable });
    expect((await prisma('sandbox').payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('succeeded');
  });

  it('fails the checkout when the buyer does not pass authentication', async () => {
    const product = await fixedProduct(t.shop, 'Secure fail', 2500);
    const checkout = await checkoutFor(t.shop, product.id);
    await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_authenticationRequired'));
    await checkoutWhen(t.shop, checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the checkout to ask for authentication');
    const [payment] = await paymentsOf('sandbox', checkout.id);
    s.double.authenticate(payment.processorId!, 'fail');
    await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'failed', 'the checkout to fail');
    expect((await prisma('sandbox').payment.findUniqueOrThrow({ where: { id: payment.id } })).declineReason).toBe('payment_intent_authentication_failure');
  });
});

describe('Stripe’s webhook endpoint', () => {
  async function post(environment: EnvironmentName, body: string, signature?: string) {
    const response = await fetch(webhookUrl(environment), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) },
      body,
    });
    return { status: response.status, body: await response.json() };
  }
  const sign = (payload: string, secret: string, timestamp?: number) => s.double.stripe().webhooks.generateTestHeaderString({ payload, secret, ...(timestamp ? { timestamp } : {}) });
  const event = (type: string, object: object, id = `evt_${Math.random().toString(36).slice(2)}`) => JSON.stringify({ id, object: 'event', type, created: Math.floor(Date.now() / 1000), livemode: false, data: { object } });

  it('refuses a validly signed body that is not an event: 400, never a 500', async () => {
    for (const body of ['[]', 'null', '{"id":"evt_noData","type":"payment_intent.succeeded","livemode":false}', '{"type":"charge.refunded","livemode":false,"data":{"object":{}}}', '{"id":7,"type":"x","livemode":false,"data":{"object":{}}}']) {
      expect(await post('sandbox', body, sign(body, keys.sandbox.webhook)), body).toMatchObject({ status: 400, body: { error: 'InvalidEvent' } });
    }
    expect(await prisma('sandbox').processorEvent.findUnique({ where: { id: 'evt_noData' } })).toBeNull();
  });

  it('refuses a missing, forged, stale or other environment’s signature, changing nothing', async () => {
    const payload = event('payment_intent.succeeded', { id: 'pi_x', object: 'payment_intent', status: 'succeeded', metadata: {} });
    expect(await post('sandbox', payload)).toMatchObject({ status: 400, body: { error: 'InvalidSignature' } });
    expect(await post('sandbox', payload, sign(payload, 'whsec_wrong'))).toMatchObject({ status: 400, body: { error: 'InvalidSignature' } });
    expect(await post('sandbox', payload, sign(payload, keys.production.webhook))).toMatchObject({ status: 400, body: { error: 'InvalidSignature' } });
    const stale = sign(payload, keys.sandbox.webhook, Math.floor(Date.now() / 1000) - 600);
    expect(await post('sandbox', payload, stale)).toMatchObject({ status: 400, body: { error: 'InvalidSignature' } });
    const tampered = payload.replace('pi_x', 'pi_y');
    expect(await post('sandbox', tampered, sign(payload, keys.sandbox.webhook))).toMatchObject({ status: 400, body: { error: 'InvalidSignature' } });
    expect(await prisma('sandbox').processorEvent.count({ where: { type: 'payment_intent.succeeded', id: { startsWith: 'evt_' } } })).toBe(
      await prisma('sandbox').processorEvent.count({ where: { type: 'payment_intent.succeeded' } }),
    );
  });

  it('answers 404 for a payment this environment does not have, and records nothing', async () => {
    const id = 'evt_unknownpayment';
    const payload = event('payment_intent.succeeded', { id: 'pi_unknown', object: 'payment_intent', status: 'succeeded', metadata: { kassa_payment_id: '00000000-0000-4000-8000-000000000000' } }, id);
    expect(await post('sandbox', payload, sign(payload, keys.sandbox.webhook))).toMatchObject({ status: 404, body: { error: 'NotFound' } });
    expect(await prisma('sandbox').processorEvent.findUnique({ where: { id } })).toBeNull();
    // Events Kassa does not use are acknowledged and ignored.
    const other = event('customer.created', { id: 'cus_x', object: 'customer' });
    expect(await post('sandbox', other, sign(other, keys.sandbox.webhook))).toMatchObject({ status: 200, body: { received: true, ignored: true } });
  });

  it('applies an event once, however often and however concurrently it is delivered', async () => {
    s.double.webhooks.mode('hold');
    try {
      const product = await fixedProduct(t.shop, 'Held', 1200);
      const checkout = await checkoutFor(t.shop, product.id);
      await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_authenticationRequired'));
      await checkoutWhen(t.shop, checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the checkout to ask for authentication');
      const [payment] = await paymentsOf('sandbox', checkout.id);
      s.double.authenticate(payment.processorId!, 'succeed');
      const succeeded = s.double.events.find((e) => e.type === 'payment_intent.succeeded' && (e.data.object as Stripe.PaymentIntent).id === payment.processorId)!;
      const payload = JSON.stringify(succeeded);
      const signature = sign(payload, keys.sandbox.webhook);
      const answers = await Promise.all([1, 2, 3, 4].map(() => post('sandbox', payload, signature)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(answers.filter((a) => !a.body.duplicate)).toHaveLength(1);
      await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
      const orders = await prisma('sandbox').order.findMany({ where: { checkoutId: checkout.id } });
      expect(await prisma('sandbox').event.count({ where: { type: 'order.paid', resourceId: orders[0].id } })).toBe(1);
    } finally {
      s.double.webhooks.mode('deliver');
      await s.double.webhooks.release({ order: 'forward' });
    }
  });

  it('pays once when Stripe delivers each event twice, and once more later', async () => {
    s.double.webhooks.mode('duplicate');
    try {
      const product = await fixedProduct(t.shop, 'Twice', 1250);
      const checkout = await checkoutFor(t.shop, product.id);
      await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_authenticationRequired'));
      await checkoutWhen(t.shop, checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the checkout to ask for authentication');
      const [payment] = await paymentsOf('sandbox', checkout.id);
      s.double.authenticate(payment.processorId!, 'succeed');
      const succeeded = s.double.events.find((e) => e.type === 'payment_intent.succeeded' && (e.data.object as Stripe.PaymentIntent).id === payment.processorId)!;
      await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
      await s.double.webhooks.redeliver(succeeded.id);
      await s.double.webhooks.idle();
      const deliveries = s.double.webhooks.sent.filter((d) => d.eventId === succeeded.id && d.url === webhookUrl('sandbox'));
      expect(deliveries.length).toBeGreaterThanOrEqual(3);
      expect(deliveries.every((d) => d.status === 200)).toBe(true);
      expect(await prisma('sandbox').event.count({ where: { type: 'order.paid', resourceId: payment.orderId } })).toBe(1);
    } finally {
      s.double.webhooks.mode('deliver');
    }
  });

  it('pays when Stripe’s word comes late', async () => {
    const product = await fixedProduct(t.shop, 'Late', 1260);
    const checkout = await checkoutFor(t.shop, product.id);
    await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_authenticationRequired'));
    await checkoutWhen(t.shop, checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the checkout to ask for authentication');
    const [payment] = await paymentsOf('sandbox', checkout.id);
    s.double.webhooks.mode('delay', 500);
    try {
      s.double.authenticate(payment.processorId!, 'succeed');
      expect((await t.shop.api('GET', `/checkouts/${checkout.id}`)).body.status).toBe('confirmed');
      await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    } finally {
      s.double.webhooks.mode('deliver');
    }
  });

  it('pays once when Stripe’s webhook settles the payment before its answer to the charge arrives', async () => {
    const product = await fixedProduct(t.shop, 'Webhook first', 1270);
    const checkout = await checkoutFor(t.shop, product.id);
    const token = await confirmationToken('sandbox', 'pm_card_visa');
    // Stripe makes the charge and sends its webhook at once, and holds the answer to the charge.
    s.double.latency(3000, { path: 'POST /v1/payment_intents' });
    try {
      await confirm(t.shop, checkout.clientSecret, token);
      await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the webhook to settle the payment');
      const [payment] = await paymentsOf('sandbox', checkout.id);
      const chargeJob = () => chargeJobOf(payment.id);
      expect((await chargeJob()).completedAt).toBeNull();
      const updates = await checkoutUpdates(checkout.id);
      // The charge job then records the answer it waited for: the payment is settled already.
      await eventually(chargeJob, (job) => job.completedAt !== null, 'the charge job to finish');
      expect(await prisma('sandbox').event.count({ where: { type: 'order.paid', resourceId: payment.orderId } })).toBe(1);
      expect(await checkoutUpdates(checkout.id)).toBe(updates);
    } finally {
      s.double.latency(0);
    }
  });

  it('leaves a payment settled by the webhook as it is when the charge’s answer that the buyer must authenticate comes after', async () => {
    const product = await fixedProduct(t.shop, 'Authenticated first', 1280);
    const checkout = await checkoutFor(t.shop, product.id);
    const token = await confirmationToken('sandbox', 'pm_card_authenticationRequired');
    const outcomes: string[] = [];
    const counted = vi.spyOn(t.server.kassa.environments.sandbox.environment.metrics, 'payment').mockImplementation((outcome) => void outcomes.push(outcome));
    // Stripe makes the intent at once and holds its answer (requires_action); the buyer authenticates meanwhile.
    s.double.latency(3000, { path: 'POST /v1/payment_intents' });
    try {
      await confirm(t.shop, checkout.clientSecret, token);
      const [payment] = await eventually(() => paymentsOf('sandbox', checkout.id), (p) => p.length === 1, 'the payment');
      const [intent] = await eventually(async () => intentsFor(payment.id), (intents) => intents.length === 1, 'the intent');
      s.double.authenticate(intent.id, 'succeed');
      await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the webhook to settle the payment');
      const chargeJob = () => chargeJobOf(payment.id);
      expect((await chargeJob()).completedAt).toBeNull();
      const updates = await checkoutUpdates(checkout.id);
      // The charge job then records the answer it waited for, which says the buyer must authenticate: too late.
      await eventually(chargeJob, (job) => job.completedAt !== null, 'the charge job to finish');
      const after = (await t.shop.api('GET', `/checkouts/${checkout.id}`)).body;
      expect([after.status, after.payment_processor_metadata]).toEqual(['succeeded', { publishable_key: stripeKeys.sandbox.publishable }]);
      expect(await checkoutUpdates(checkout.id)).toBe(updates);
      expect(await prisma('sandbox').job.count({ where: { kind: 'payment.reconcile', payload: { path: ['paymentId'], equals: payment.id } } })).toBe(0);
      expect(outcomes).toEqual(['succeeded']);
    } finally {
      s.double.latency(0);
      counted.mockRestore();
    }
  });

  it('settles a payment whose webhook was lost, by asking Stripe', async () => {
    s.double.webhooks.mode('drop');
    try {
      const product = await fixedProduct(t.shop, 'Lost', 1300);
      const checkout = await checkoutFor(t.shop, product.id);
      await confirm(t.shop, checkout.clientSecret, await confirmationToken('sandbox', 'pm_card_authenticationRequired'));
      await checkoutWhen(t.shop, checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the checkout to ask for authentication');
      const [payment] = await paymentsOf('sandbox', checkout.id);
      s.double.authenticate(payment.processorId!, 'succeed');
      // No webhook arrives; the reconciliation (after PAYMENT_RECONCILE_AFTER_SECONDS=1) asks Stripe.
      await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed without a webhook');
      expect(s.double.requests.some((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${payment.processorId}`)).toBe(true);
    } finally {
      s.double.webhooks.mode('deliver');
    }
  });
});

describe('when Stripe cannot be reached', () => {
  it('keeps the payment pending and charges once Stripe is back, exactly once', async () => {
    const product = await fixedProduct(t.shop, 'Patient', 1400);
    const checkout = await checkoutFor(t.shop, product.id);
    const token = await confirmationToken('sandbox', 'pm_card_visa');
    await s.double.down(true);
    try {
      expect((await confirm(t.shop, checkout.clientSecret, token)).status).toBe(200);
      const [payment] = await eventually(() => paymentsOf('sandbox', checkout.id), (p) => p.length === 1, 'the payment');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await prisma('sandbox').payment.findUniqueOrThrow({ where: { id: payment.id } })).status).toBe('pending');
    } finally {
      await s.double.down(false);
    }
    await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed once Stripe is back');
    const [payment] = await paymentsOf('sandbox', checkout.id);
    expect(intentsFor(payment.id)).toHaveLength(1);
  });

  it('tries again later when Stripe rate-limits the charge, and charges once', async () => {
    const product = await fixedProduct(t.shop, 'Throttled', 1700);
    const checkout = await checkoutFor(t.shop, product.id);
    const token = await confirmationToken('sandbox', 'pm_card_visa');
    s.double.failNext(2, 'rate_limit', { path: 'POST /v1/payment_intents' });
    await confirm(t.shop, checkout.clientSecret, token);
    await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    const [payment] = await paymentsOf('sandbox', checkout.id);
    expect(intentsFor(payment.id)).toHaveLength(1);
    const creates = s.double.requests.filter((r) => r.path === '/v1/payment_intents' && r.idempotencyKey === `kassa-payment-${payment.id}`);
    expect(creates.map((r) => r.status)).toEqual([429, 429, 200]);
  });

  it('makes one charge when the answer to the charge is lost', async () => {
    const product = await fixedProduct(t.shop, 'Lost answer', 1600);
    const checkout = await checkoutFor(t.shop, product.id);
    const token = await confirmationToken('sandbox', 'pm_card_visa');
    // The charge is made at Stripe, and its answer never reaches Kassa.
    s.double.failNext(3, 'connection_reset', { when: 'after', path: 'POST /v1/payment_intents' });
    await confirm(t.shop, checkout.clientSecret, token);
    await checkoutWhen(t.shop, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    const [payment] = await paymentsOf('sandbox', checkout.id);
    expect(intentsFor(payment.id)).toHaveLength(1);
  });
});

/** A one-time purchase paid through Stripe with the card; returns the paid order's id and the PaymentIntent's. */
async function paidPurchase(org: Org, card: string, amount = 3000) {
  const product = await fixedProduct(org, `Product ${amount}`, amount);
  const checkout = await checkoutFor(org, product.id);
  await confirm(org, checkout.clientSecret, await confirmationToken(org.environment, card));
  await checkoutWhen(org, checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
  const [payment] = await paymentsOf(org.environment, checkout.id);
  return { orderId: payment.orderId, intentId: payment.processorId! };
}

describe('refunds through Stripe', () => {
  it('returns the money at Stripe once, with the refund id as idempotency key and in its metadata', async () => {
    const { orderId, intentId } = await paidPurchase(t.shop, 'pm_card_visa', 3000);
    const refund = (await t.shop.polar.refunds.create({ orderId, reason: 'customer_request', amount: 1200 }))!;
    const done = await eventually(async () => (await t.shop.api('GET', `/refunds/${refund.id}`)).body, (r) => r.status !== 'pending', 'the refund to settle');
    expect(done.status).toBe('succeeded');
    const atStripe = s.double.objects<Stripe.Refund>('refund').filter((r) => r.payment_intent === intentId);
    expect(atStripe).toHaveLength(1);
    expect(atStripe[0]).toMatchObject({ amount: 1200, status: 'succeeded', metadata: { kassa_refund_id: refund.id } });
    expect(s.double.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds').map((r) => r.idempotencyKey)).toContain(`kassa-refund-${refund.id}`);
    expect(await prisma('sandbox').refund.findUniqueOrThrow({ where: { id: refund.id } })).toMatchObject({ processorId: atStripe[0].id });
    // Stripe's charge.refunded that follows finds nothing pending and changes nothing.
    await s.double.webhooks.waitFor('charge.refunded', (e) => (e.data.object as Stripe.Charge).payment_intent === intentId);
    expect((await t.shop.polar.orders.get({ id: orderId })).refundedAmount).toBe(1200);
  });

  it('gives the amount back to the order when the bank fails a refund it had accepted', async () => {
    const { orderId, intentId } = await paidPurchase(t.shop, 'pm_card_refundFail', 3100);
    const refund = (await t.shop.polar.refunds.create({ orderId, reason: 'customer_request', amount: 3100 }))!;
    await s.double.webhooks.waitFor('refund.failed', (e) => (e.data.object as Stripe.Refund).payment_intent === intentId);
    const failed = await eventually(async () => (await t.shop.api('GET', `/refunds/${refund.id}`)).body, (r) => r.status === 'failed', 'the refund to fail');
    expect(failed.amount).toBe(3100);
    const order = await t.shop.polar.orders.get({ id: orderId });
    expect([order.status, order.refundedAmount]).toEqual(['paid', 0]);
    // The amount can be refunded again.
    const again = await t.shop.api('POST', '/refunds/', { order_id: orderId, reason: 'customer_request', amount: 100 });
    expect(again.status).toBe(200);
  });
});

describe('disputes through Stripe', () => {
  const DISPUTES = `query ($id: UUID!) { core { order(id: $id) { disputes { status reason amount currency } } } }`;
  const disputesOf = async (orderId: string) => (await t.shop.gql(DISPUTES, { id: orderId })).body.data.core.order.disputes;

  it('records a chargeback on its order and sends dispute.created, then dispute.closed when Stripe closes it', async () => {
    const { orderId, intentId } = await paidPurchase(t.shop, 'pm_card_visa', 2200);
    const opened = s.double.dispute(intentId, { reason: 'fraudulent' });
    await eventually(() => disputesOf(orderId), (d) => d.length === 1, 'the dispute to be recorded');
    expect(await disputesOf(orderId)).toEqual([{ status: 'needs_response', reason: 'fraudulent', amount: 2200, currency: 'usd' }]);
    s.double.closeDispute(opened.id, 'lost');
    await eventually(() => disputesOf(orderId), (d) => d[0]?.status === 'lost', 'the dispute to close');
    const dispute = await prisma('sandbox').dispute.findUniqueOrThrow({ where: { processorId: opened.id } });
    const events = await prisma('sandbox').event.findMany({ where: { resourceId: dispute.id }, orderBy: { sequence: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['dispute.created', 'dispute.closed']);
    expect(dispute.closedAt).not.toBeNull();
  });

  it('ends in Stripe’s last state when the dispute’s events arrive in reverse, each applied once', async () => {
    const { orderId, intentId } = await paidPurchase(t.shop, 'pm_card_visa', 2300);
    s.double.webhooks.mode('hold');
    let disputeId: string;
    try {
      disputeId = s.double.dispute(intentId, { reason: 'product_not_received' }).id;
      s.double.closeDispute(disputeId, 'won');
    } finally {
      s.double.webhooks.mode('deliver');
    }
    await s.double.webhooks.release({ order: 'reverse' });
    await eventually(() => disputesOf(orderId), (d) => d.length === 1 && d[0].status === 'won', 'the dispute to be recorded, won');
    // Delivered again, nothing changes.
    for (const event of s.double.events.filter((e) => e.type.startsWith('charge.dispute.') && (e.data.object as Stripe.Dispute).id === disputeId!)) {
      await s.double.webhooks.redeliver(event.id);
    }
    await s.double.webhooks.idle();
    const dispute = await prisma('sandbox').dispute.findUniqueOrThrow({ where: { processorId: disputeId! } });
    const events = await prisma('sandbox').event.findMany({ where: { resourceId: dispute.id }, orderBy: { sequence: 'asc' } });
    expect(events.map((e) => e.type).sort()).toEqual(['dispute.closed', 'dispute.created']);
  });

  it('records the dispute Stripe opens by itself on the dispute test card', async () => {
    const { orderId } = await paidPurchase(t.shop, 'pm_card_createDispute', 2400);
    await eventually(() => disputesOf(orderId), (d) => d.length === 1, 'the dispute to be recorded');
  });
});

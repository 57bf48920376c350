// The Stripe API double, driven through the real stripe package as Kassa's processor will drive it:
// Stripe's test cards, its error classes, idempotency, retries, outages and webhook delivery.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startStripeDouble, type StripeDouble } from '../stripe-double/index.ts';

const secret = 'whsec_test_double';

/** A local webhook endpoint that verifies each delivery with the stripe package, as Kassa will. */
interface Receiver {
  url: string;
  received: Stripe.Event[];
  status: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const stripe = new Stripe('sk_test_receiver');
  const receiver = { received: [] as Stripe.Event[], status: 200 } as Receiver;
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    try {
      receiver.received.push(stripe.webhooks.constructEvent(Buffer.concat(chunks), request.headers['stripe-signature'] as string, secret));
      response.writeHead(receiver.status).end();
    } catch {
      response.writeHead(400).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stripe`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}

let double: StripeDouble;
let receiver: Receiver;
let stripe: Stripe;

beforeAll(async () => {
  receiver = await startReceiver();
  double = await startStripeDouble({ webhookTargets: [{ url: receiver.url, secret }], asyncDelayMs: 20 });
  stripe = double.stripe();
});

afterAll(async () => {
  await double.close();
  await receiver.close();
});

afterEach(async () => {
  double.webhooks.mode('deliver');
  await double.webhooks.release();
  double.latency(0);
});

async function token(paymentMethod: string, setupFutureUsage?: 'off_session') {
  return stripe.testHelpers.confirmationTokens.create({ payment_method: paymentMethod, return_url: 'https://shop.example/return', setup_future_usage: setupFutureUsage });
}

async function pay(paymentMethod: string, extra: Partial<Stripe.PaymentIntentCreateParams> = {}, options?: Stripe.RequestOptions) {
  const confirmation = await token(paymentMethod);
  return stripe.paymentIntents.create({ amount: 2000, currency: 'usd', confirm: true, confirmation_token: confirmation.id, ...extra }, options);
}

async function failure(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}

describe('payments with Stripe test cards', () => {
  it('pm_card_visa succeeds with a charge, and emits payment_intent.succeeded and charge.succeeded', async () => {
    const intent = await pay('pm_card_visa', { metadata: { order: 'o1' } });
    expect(intent).toMatchObject({ object: 'payment_intent', status: 'succeeded', amount: 2000, amount_received: 2000, livemode: false, metadata: { order: 'o1' } });
    const charge = await stripe.charges.retrieve(intent.latest_charge as string);
    expect(charge).toMatchObject({ payment_intent: intent.id, amount: 2000, amount_refunded: 0, refunded: false, disputed: false, paid: true });
    const succeeded = await double.webhooks.waitFor('payment_intent.succeeded', (event) => (event.data.object as Stripe.PaymentIntent).id === intent.id);
    expect(succeeded.request).toMatchObject({ id: expect.stringMatching(/^req_/), idempotency_key: expect.stringMatching(/^stripe-node-retry-/) });
    expect(double.events.filter((event) => (event.data.object as { id: string }).id === charge.id).map((event) => event.type)).toEqual(['charge.succeeded']);
  });

  it('a confirmation token confirms once; a second use is an invalid_request_error', async () => {
    const confirmation = await token('pm_card_visa');
    expect(confirmation).toMatchObject({ object: 'confirmation_token', payment_intent: null, setup_intent: null, payment_method_preview: { type: 'card', card: { brand: 'visa', last4: '4242', wallet: null } } });
    expect(confirmation.expires_at! - confirmation.created).toBe(12 * 60 * 60);
    const intent = await stripe.paymentIntents.create({ amount: 1000, currency: 'eur', confirm: true, confirmation_token: confirmation.id });
    expect((await stripe.confirmationTokens.retrieve(confirmation.id)).payment_intent).toBe(intent.id);
    const error = await failure(stripe.paymentIntents.create({ amount: 1000, currency: 'eur', confirm: true, confirmation_token: confirmation.id }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.param).toBe('confirmation_token');
  });

  it('an expired confirmation token is refused', async () => {
    const confirmation = await token('pm_card_visa');
    double.advanceClock(12 * 60 * 60 + 1);
    const error = await failure(stripe.paymentIntents.create({ amount: 1000, currency: 'usd', confirm: true, confirmation_token: confirmation.id }));
    double.advanceClock(-(12 * 60 * 60 + 1));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.message).toMatch(/expired/);
  });

  it('a declined card is a StripeCardError carrying the PaymentIntent', async () => {
    const error = await failure(pay('pm_card_chargeDeclinedInsufficientFunds'));
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error).toMatchObject({ statusCode: 402, code: 'card_declined', decline_code: 'insufficient_funds' });
    const intent = error.payment_intent as Stripe.PaymentIntent;
    expect(intent).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' } });
    await double.webhooks.waitFor('payment_intent.payment_failed', (event) => (event.data.object as Stripe.PaymentIntent).id === intent.id);
    expect((await failure(pay('pm_card_chargeDeclined'))).decline_code).toBe('generic_decline');
  });

  it('3-D Secure: requires_action, then authenticate moves the intent to succeeded or back to requires_payment_method', async () => {
    const intent = await pay('pm_card_authenticationRequired');
    expect(intent).toMatchObject({ status: 'requires_action', next_action: { type: 'use_stripe_sdk' }, client_secret: expect.stringMatching(new RegExp(`^${intent.id}_secret_`)) });
    expect(double.authenticate(intent.id, 'succeed').status).toBe('succeeded');
    expect((await stripe.paymentIntents.retrieve(intent.id)).latest_charge).toMatch(/^ch_/);
    await double.webhooks.waitFor('payment_intent.succeeded', (event) => (event.data.object as Stripe.PaymentIntent).id === intent.id);

    const abandoned = await pay('pm_card_authenticationRequired');
    const failed = double.authenticate(abandoned.id, 'fail') as Stripe.PaymentIntent;
    expect(failed).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'payment_intent_authentication_failure' } });
  });

  it('off session, a card that always asks for 3-D Secure fails with authentication_required', async () => {
    const error = await failure(pay('pm_card_authenticationRequired', { off_session: true }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error).toMatchObject({ code: 'authentication_required', decline_code: 'authentication_required' });
    expect(error.payment_intent.status).toBe('requires_payment_method');
  });

  it('a saved card is charged off session; pm_card_authenticationRequiredOnSetup asks only while setting up', async () => {
    const customer = await stripe.customers.create({ email: 'buyer@example.com' });
    const setup = await stripe.setupIntents.create({ customer: customer.id, confirm: true, usage: 'off_session', confirmation_token: (await token('pm_card_authenticationRequiredOnSetup')).id });
    expect(setup.status).toBe('requires_action');
    expect(double.authenticate(setup.id, 'succeed').status).toBe('succeeded');
    const saved = (await stripe.setupIntents.retrieve(setup.id)).payment_method as string;
    expect((await stripe.paymentMethods.retrieve(saved)).customer).toBe(customer.id);
    const offSession = await stripe.paymentIntents.create({ amount: 500, currency: 'usd', customer: customer.id, payment_method: saved, off_session: true, confirm: true });
    expect(offSession.status).toBe('succeeded');

    const stranger = await stripe.customers.create({});
    const error = await failure(stripe.paymentIntents.create({ amount: 500, currency: 'usd', customer: stranger.id, payment_method: saved, off_session: true, confirm: true }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.param).toBe('payment_method');
    const missing = await failure(stripe.paymentIntents.create({ amount: 500, currency: 'usd', customer: customer.id, payment_method: 'pm_nope', off_session: true, confirm: true }));
    expect(missing).toMatchObject({ code: 'resource_missing', param: 'payment_method' });
  });

  it('amounts: minimums per currency, zero-decimal whole units, three-decimal in steps of 10', async () => {
    expect(await failure(pay('pm_card_visa', { amount: 49 }))).toMatchObject({ code: 'amount_too_small', param: 'amount' });
    expect((await pay('pm_card_visa', { amount: 50, currency: 'jpy' })).status).toBe('succeeded');
    expect(await failure(pay('pm_card_visa', { amount: 5125, currency: 'kwd' }))).toMatchObject({ code: 'invalid_charge_amount', param: 'amount' });
    expect((await pay('pm_card_visa', { amount: 5120, currency: 'kwd' })).status).toBe('succeeded');
  });

  it('a requires_action intent can be canceled; a succeeded one cannot', async () => {
    const intent = await pay('pm_card_authenticationRequired');
    expect((await stripe.paymentIntents.cancel(intent.id)).status).toBe('canceled');
    const paid = await pay('pm_card_visa');
    expect(await failure(stripe.paymentIntents.cancel(paid.id))).toMatchObject({ code: 'payment_intent_unexpected_state' });
  });
});

describe('idempotency', () => {
  it('the same key and parameters replay the answer and create nothing new', async () => {
    const confirmation = await token('pm_card_visa');
    const params = { amount: 3000, currency: 'usd', confirm: true, confirmation_token: confirmation.id };
    const first = await stripe.paymentIntents.create(params, { idempotencyKey: 'order-42' });
    const second = await stripe.paymentIntents.create(params, { idempotencyKey: 'order-42' });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(double.objects<Stripe.PaymentIntent>('payment_intent').filter((intent) => intent.amount === 3000)).toHaveLength(1);
    expect(double.requests.filter((request) => request.idempotencyKey === 'order-42').map((request) => request.replayed)).toEqual([false, true]);
  });

  it('a replayed card error is the same 402', async () => {
    const confirmation = await token('pm_card_chargeDeclined');
    const params = { amount: 3100, currency: 'usd', confirm: true, confirmation_token: confirmation.id };
    const first = await failure(stripe.paymentIntents.create(params, { idempotencyKey: 'declined-1' }));
    const again = await failure(stripe.paymentIntents.create(params, { idempotencyKey: 'declined-1' }));
    expect(again).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(again.payment_intent.id).toBe(first.payment_intent.id);
  });

  it('the same key with other parameters is an idempotency_error', async () => {
    await stripe.customers.create({ email: 'a@example.com' }, { idempotencyKey: 'customer-1' });
    const error = await failure(stripe.customers.create({ email: 'b@example.com' }, { idempotencyKey: 'customer-1' }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });

  it('keys are scoped per secret key', async () => {
    const other = double.stripe('sk_test_other_account');
    const mine = await stripe.customers.create({ email: 'a@example.com' }, { idempotencyKey: 'shared' });
    const theirs = await other.customers.create({ email: 'a@example.com' }, { idempotencyKey: 'shared' });
    expect(theirs.id).not.toBe(mine.id);
  });

  it('a key still in progress answers 409, which the stripe package retries until it gets the replay', async () => {
    double.latency(300);
    const params = { email: 'slow@example.com' };
    const [first, second] = await Promise.all([
      stripe.customers.create(params, { idempotencyKey: 'slow' }),
      new Promise((resolve) => setTimeout(resolve, 50)).then(() => stripe.customers.create(params, { idempotencyKey: 'slow' })),
    ]);
    expect(second.id).toBe(first.id);
    expect(double.requests.filter((request) => request.idempotencyKey === 'slow').map((request) => request.status)).toEqual([200, 409, 200]);
  });
});

describe('failures and outages', () => {
  it('a 500 is retried by the stripe package with the same idempotency key', async () => {
    double.failNext(1, 'server_error');
    const customer = await stripe.customers.create({ email: 'retry@example.com' });
    const attempts = double.requests.filter((request) => request.path === '/v1/customers' && request.params.email === 'retry@example.com');
    expect(attempts.map((request) => request.status)).toEqual([500, 200]);
    expect(attempts[0].idempotencyKey).toBe(attempts[1].idempotencyKey);
    expect(customer.email).toBe('retry@example.com');
  });

  it("rate_limit is not retried by the stripe package: it surfaces as StripeRateLimitError", async () => {
    double.failNext(1, 'rate_limit');
    const error = await failure(stripe.customers.create({}));
    expect(error).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    expect(error).toMatchObject({ statusCode: 429, code: 'rate_limit' });
  });

  it('lock_timeout (Stripe-Should-Retry: true) is retried, and surfaces as StripeRateLimitError once retries run out', async () => {
    double.failNext(1, 'lock_timeout');
    expect((await stripe.customers.create({ email: 'lock@example.com' })).email).toBe('lock@example.com');
    double.failNext(3, 'lock_timeout');
    const error = await failure(stripe.customers.create({}));
    expect(error).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    expect(error.code).toBe('lock_timeout');
  });

  it('connection resets surface as StripeConnectionError once retries run out', async () => {
    double.failNext(3, 'connection_reset');
    expect(await failure(stripe.customers.create({}))).toBeInstanceOf(Stripe.errors.StripeConnectionError);
  });

  it('an answer lost after Stripe acted is recovered by the retry: the replay, not a second payment', async () => {
    const confirmation = await token('pm_card_visa');
    double.failNext(1, 'connection_reset', { when: 'after' });
    const intent = await stripe.paymentIntents.create({ amount: 4242, currency: 'usd', confirm: true, confirmation_token: confirmation.id });
    expect(intent.status).toBe('succeeded');
    expect(double.objects<Stripe.PaymentIntent>('payment_intent').filter((found) => found.amount === 4242)).toHaveLength(1);
  });

  it('down: connections are refused until the double is back', async () => {
    await double.down(true);
    const error = await failure(double.stripe(undefined, { maxNetworkRetries: 0 }).customers.create({}));
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    await double.down(false);
    expect((await stripe.customers.create({})).object).toBe('customer');
  });

  it('keys: a missing or malformed key is a 401; live keys see only live objects', async () => {
    expect(await failure(double.stripe('nonsense').customers.create({}))).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    const live = await double.stripe('sk_live_double').customers.create({});
    expect(live.livemode).toBe(true);
    expect(await failure(stripe.customers.retrieve(live.id))).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });

  it('an unknown path is a 404 invalid_request_error', async () => {
    const error = await failure(stripe.rawRequest('GET', '/v1/nothing_here'));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.message).toMatch(/^Unrecognized request URL/);
  });
});

describe('refunds', () => {
  it('a partial then the rest; more than remains is refused', async () => {
    const intent = await pay('pm_card_visa');
    const partial = await stripe.refunds.create({ payment_intent: intent.id, amount: 500, reason: 'requested_by_customer' });
    expect(partial).toMatchObject({ status: 'succeeded', amount: 500, payment_intent: intent.id });
    expect(await failure(stripe.refunds.create({ payment_intent: intent.id, amount: 1501 }))).toMatchObject({ code: 'amount_too_large', param: 'amount' });
    const rest = await stripe.refunds.create({ payment_intent: intent.id });
    expect(rest.amount).toBe(1500);
    expect(await stripe.charges.retrieve(intent.latest_charge as string)).toMatchObject({ amount_refunded: 2000, refunded: true });
    expect(await failure(stripe.refunds.create({ payment_intent: intent.id }))).toMatchObject({ code: 'charge_already_refunded' });
    const refunded = await double.webhooks.waitFor('charge.refunded', (event) => (event.data.object as Stripe.Charge).refunded && (event.data.object as Stripe.Charge).payment_intent === intent.id);
    expect(refunded.data.previous_attributes).toEqual({ amount_refunded: 500, refunded: false });
  });

  it('pm_card_refundFail: the refund is accepted, then fails with refund.failed and charge.refund.updated', async () => {
    const intent = await pay('pm_card_refundFail');
    const refund = await stripe.refunds.create({ payment_intent: intent.id });
    expect(refund.status).toBe('succeeded');
    const failed = await double.webhooks.waitFor('refund.failed', (event) => (event.data.object as Stripe.Refund).id === refund.id);
    expect(failed.data.object).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' });
    await double.webhooks.waitFor('charge.refund.updated', (event) => (event.data.object as Stripe.Refund).id === refund.id);
    expect(await stripe.charges.retrieve(intent.latest_charge as string)).toMatchObject({ amount_refunded: 0, refunded: false });
  });
});

describe('setup intents and saved payment methods', () => {
  it('a setup attaches the card; the customer lists it; detach removes it', async () => {
    const customer = await stripe.customers.create({ email: 'saver@example.com' });
    const setup = await stripe.setupIntents.create({ customer: customer.id, confirm: true, usage: 'off_session', confirmation_token: (await token('pm_card_mastercard')).id });
    expect(setup.status).toBe('succeeded');
    await double.webhooks.waitFor('setup_intent.succeeded', (event) => (event.data.object as Stripe.SetupIntent).id === setup.id);
    const listed = await stripe.customers.listPaymentMethods(customer.id, { type: 'card' });
    expect(listed).toMatchObject({ object: 'list', has_more: false, url: `/v1/customers/${customer.id}/payment_methods` });
    expect(listed.data.map((method) => method.card!.last4)).toEqual(['4444']);
    await stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: setup.payment_method as string } });
    const detached = await stripe.paymentMethods.detach(setup.payment_method as string);
    expect(detached.customer).toBeNull();
    expect((await stripe.customers.listPaymentMethods(customer.id)).data).toEqual([]);
    expect((await stripe.customers.retrieve(customer.id)) as Stripe.Customer).toMatchObject({ invoice_settings: { default_payment_method: null } });
  });

  it('a declined setup is a StripeCardError carrying the SetupIntent', async () => {
    const customer = await stripe.customers.create({});
    const error = await failure(stripe.setupIntents.create({ customer: customer.id, confirm: true, confirmation_token: (await token('pm_card_chargeDeclined')).id }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error.setup_intent).toMatchObject({ status: 'requires_payment_method', last_setup_error: { code: 'card_declined' } });
    await double.webhooks.waitFor('setup_intent.setup_failed', (event) => (event.data.object as Stripe.SetupIntent).id === error.setup_intent.id);
  });

  it('setup_future_usage with a customer attaches the card once the payment succeeds', async () => {
    const customer = await stripe.customers.create({});
    const intent = await stripe.paymentIntents.create({ amount: 900, currency: 'usd', customer: customer.id, confirm: true, confirmation_token: (await token('pm_card_visa', 'off_session')).id });
    expect((await stripe.paymentMethods.retrieve(intent.payment_method as string)).customer).toBe(customer.id);
  });
});

describe('disputes', () => {
  it('dispute opens needs_response with charge.dispute.created; closeDispute emits charge.dispute.closed', async () => {
    const intent = await pay('pm_card_visa');
    const dispute = double.dispute(intent.id, { reason: 'product_not_received' });
    expect(dispute).toMatchObject({ status: 'needs_response', reason: 'product_not_received', amount: 2000, charge: intent.latest_charge, payment_intent: intent.id });
    await double.webhooks.waitFor('charge.dispute.created', (event) => (event.data.object as Stripe.Dispute).id === dispute.id);
    expect(await failure(stripe.refunds.create({ payment_intent: intent.id }))).toMatchObject({ code: 'charge_disputed' });
    double.closeDispute(dispute.id, 'lost');
    const closed = await double.webhooks.waitFor('charge.dispute.closed', (event) => (event.data.object as Stripe.Dispute).id === dispute.id);
    expect(closed.data.object).toMatchObject({ status: 'lost' });
    expect((await stripe.disputes.retrieve(dispute.id)).status).toBe('lost');
  });

  it('pm_card_createDispute: the payment succeeds, then the charge is disputed', async () => {
    const intent = await pay('pm_card_createDispute');
    expect(intent.status).toBe('succeeded');
    const created = await double.webhooks.waitFor('charge.dispute.created', (event) => (event.data.object as Stripe.Dispute).payment_intent === intent.id);
    expect(created.request).toEqual({ id: null, idempotency_key: null });
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).disputed).toBe(true);
  });
});

describe('webhook delivery', () => {
  const customerEvents = (id: string) => receiver.received.filter((event) => (event.data.object as { id: string }).id === id).map((event) => event.type);

  it('deliveries are signed for stripe.webhooks.constructEvent and recorded with their status', async () => {
    const customer = await stripe.customers.create({ email: 'signed@example.com' });
    const event = await double.webhooks.waitFor('customer.created', (found) => (found.data.object as Stripe.Customer).id === customer.id);
    expect(receiver.received.find((received) => received.id === event.id)).toEqual(event);
    expect(event).toMatchObject({ object: 'event', api_version: Stripe.API_VERSION, livemode: false, pending_webhooks: 1 });
    expect(double.webhooks.sent.find((delivery) => delivery.eventId === event.id)).toMatchObject({ outcome: 'delivered', status: 200, url: receiver.url });
    expect((await stripe.events.retrieve(event.id)).id).toBe(event.id);
  });

  it('a failing endpoint is recorded and not retried until redeliver', async () => {
    receiver.status = 500;
    const customer = await stripe.customers.create({});
    const event = await double.webhooks.waitFor('customer.created', (found) => (found.data.object as Stripe.Customer).id === customer.id);
    receiver.status = 200;
    expect(double.webhooks.sent.filter((delivery) => delivery.eventId === event.id).map((delivery) => delivery.outcome)).toEqual(['failed']);
    expect((await double.webhooks.redeliver(event.id))[0]).toMatchObject({ outcome: 'delivered', status: 200 });
  });

  it('drop: the event exists but is never delivered', async () => {
    double.webhooks.mode('drop');
    const customer = await stripe.customers.create({});
    await double.webhooks.waitFor('customer.created', (found) => (found.data.object as Stripe.Customer).id === customer.id);
    expect(double.events.some((event) => (event.data.object as Stripe.Customer).id === customer.id)).toBe(true);
    expect(customerEvents(customer.id)).toEqual([]);
    expect(double.webhooks.sent.at(-1)).toMatchObject({ outcome: 'dropped', status: null });
  });

  it('duplicate: every event arrives twice', async () => {
    double.webhooks.mode('duplicate');
    const customer = await stripe.customers.create({});
    await double.webhooks.waitFor('customer.created', (found) => (found.data.object as Stripe.Customer).id === customer.id);
    expect(customerEvents(customer.id)).toEqual(['customer.created', 'customer.created']);
  });

  it('delay: the API answers at once, the event arrives later', async () => {
    double.webhooks.mode('delay', 200);
    const customer = await stripe.customers.create({});
    expect(customerEvents(customer.id)).toEqual([]);
    await double.webhooks.waitFor('customer.created', (found) => (found.data.object as Stripe.Customer).id === customer.id);
    expect(customerEvents(customer.id)).toEqual(['customer.created']);
  });

  it('hold and release in reverse: events arrive out of order', async () => {
    double.webhooks.mode('hold');
    const customer = await stripe.customers.create({ email: 'first@example.com' });
    await stripe.customers.update(customer.id, { email: 'second@example.com' });
    expect(double.webhooks.held.map((event) => event.type)).toEqual(['customer.created', 'customer.updated']);
    expect(customerEvents(customer.id)).toEqual([]);
    double.webhooks.mode('deliver');
    await double.webhooks.release({ order: 'reverse' });
    expect(customerEvents(customer.id)).toEqual(['customer.updated', 'customer.created']);
  });
});

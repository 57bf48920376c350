// The customer paying their declined order again from the portal, through the official client:
// GET /v1/customer-portal/orders/{id}/payment-status and POST …/confirm-payment. A retry is a new
// pending payment charged by the payment job; it is refused, with nothing written, while one is
// pending, once the order is paid, for another customer's order and for bad input. The job runner
// is stopped: the test runs the due work itself, so each step is seen in between.
import { Polar } from '@polar-sh/sdk';
import { OrderNotEligibleForRetry } from '@polar-sh/sdk/models/errors/ordernoteligibleforretry.js';
import { PaymentAlreadyInProgress } from '@polar-sh/sdk/models/errors/paymentalreadyinprogress.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { sdkServerURL } from '../helpers/organizations.ts';
import { createAndConfirmCheckout, fixedProduct } from '../helpers/purchases.ts';
import { expectErrorBody, expectStatus, expectValidationError, graphqlFailure } from '../helpers/responses.ts';
import { graphqlClient, restClient, settleJobs } from '../helpers/server.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, stopSandboxJobs: true, organizations: { org: 'sandbox' } });

const sandbox = () => t.server.kassa.environments.sandbox;
const portal = () => new Polar({ serverURL: sdkServerURL(t.server, 'sandbox') });

async function settle() {
  await settleJobs(sandbox().jobs);
}

/** A purchase whose card is declined: the customer's session and the unpaid order. */
async function declinedPurchase(productId: string, email: string) {
  const checkout = await createAndConfirmCheckout(t.org, productId, email, { card: 'tok_chargeDeclined' });
  await settle();
  const [order] = (await t.org.polar.orders.list({ checkoutId: checkout.id })).result.items;
  expect([order.status, order.paid]).toEqual(['pending', false]);
  const session = await t.org.polar.customerSessions.create({ customerId: order.customerId });
  return { order, token: session.token };
}

const paymentsOf = (orderId: string) => sandbox().environment.prisma.payment.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' } });

describe('paying a declined order again from the portal', () => {
  let productId: string;
  let ada: Awaited<ReturnType<typeof declinedPurchase>>;
  let bob: Awaited<ReturnType<typeof declinedPurchase>>;

  beforeAll(async () => {
    productId = (await fixedProduct(t.org, 'Course', 4900)).id;
    ada = await declinedPurchase(productId, 'ada@example.com');
    bob = await declinedPurchase(productId, 'bob@example.com');
  });

  it('shows the decline, takes a new card, refuses a second attempt while it is pending, and pays the order', async () => {
    const session = { customerSession: ada.token };
    expect(await portal().customerPortal.orders.getPaymentStatus(session, { id: ada.order.id })).toEqual({ status: 'failed', error: 'The card was declined.' });

    const confirmation = await portal().customerPortal.orders.confirmRetryPayment(session, { id: ada.order.id, customerOrderConfirmPayment: { confirmationTokenId: 'tok_visa' } });
    expect(confirmation).toEqual({ status: 'pending', clientSecret: null, error: null });
    expect((await paymentsOf(ada.order.id)).map((p) => [p.status, p.paymentMethod])).toEqual([['failed', 'tok_chargeDeclined'], ['pending', 'tok_visa']]);
    expect(await portal().customerPortal.orders.getPaymentStatus(session, { id: ada.order.id })).toEqual({ status: 'pending', error: null });

    const again = await rejectionOf(portal().customerPortal.orders.confirmRetryPayment(session, { id: ada.order.id, customerOrderConfirmPayment: { confirmationTokenId: 'tok_visa' } }));
    expect(again).toBeInstanceOf(PaymentAlreadyInProgress);
    expect((again as PaymentAlreadyInProgress).statusCode).toBe(409);
    expect(await paymentsOf(ada.order.id)).toHaveLength(2);

    await settle();
    expect(await portal().customerPortal.orders.getPaymentStatus(session, { id: ada.order.id })).toEqual({ status: 'succeeded', error: null });
    expect(await t.org.polar.orders.get({ id: ada.order.id })).toMatchObject({ status: 'paid', paid: true });
    const payments = (await t.org.polar.payments.list({ orderId: ada.order.id, sorting: ['created_at'] })).result.items;
    expect(payments.map((p) => p.status)).toEqual(['failed', 'succeeded']);

    const paid = await rejectionOf(portal().customerPortal.orders.confirmRetryPayment(session, { id: ada.order.id, customerOrderConfirmPayment: { confirmationTokenId: 'tok_visa' } }));
    expect(paid).toBeInstanceOf(OrderNotEligibleForRetry);
    expect((paid as OrderNotEligibleForRetry).statusCode).toBe(422);
    expect(await paymentsOf(ada.order.id)).toHaveLength(2);
  });

  it('shows the success when the declined attempt has the same creation time and sorts after it by id', async () => {
    // Two attempts in one millisecond (or at one frozen clock instant) share created_at: the outcome
    // must not depend on how their random ids happen to sort.
    const prisma = sandbox().environment.prisma;
    const [declined, succeeded] = await paymentsOf(ada.order.id);
    expect([declined.status, succeeded.status]).toEqual(['failed', 'succeeded']);
    await prisma.payment.update({ where: { id: declined.id }, data: { id: 'ffffffff-ffff-4fff-bfff-ffffffffffff', createdAt: succeeded.createdAt } });
    expect(await portal().customerPortal.orders.getPaymentStatus({ customerSession: ada.token }, { id: ada.order.id })).toEqual({ status: 'succeeded', error: null });
  });

  it('shows the pending retry when the declined attempt has the same creation time and sorts after it by id', async () => {
    const carol = await declinedPurchase(productId, 'carol@example.com');
    const session = { customerSession: carol.token };
    await portal().customerPortal.orders.confirmRetryPayment(session, { id: carol.order.id, customerOrderConfirmPayment: { confirmationTokenId: 'tok_visa' } });
    const [declined, pending] = await paymentsOf(carol.order.id);
    expect([declined.status, pending.status]).toEqual(['failed', 'pending']);
    await sandbox().environment.prisma.payment.update({ where: { id: declined.id }, data: { id: 'ffffffff-ffff-4fff-bfff-fffffffffffe', createdAt: pending.createdAt } });
    expect(await portal().customerPortal.orders.getPaymentStatus(session, { id: carol.order.id })).toEqual({ status: 'pending', error: null });
    await settle();
    expect(await portal().customerPortal.orders.getPaymentStatus(session, { id: carol.order.id })).toEqual({ status: 'succeeded', error: null });
  });

  it('a retry declined again leaves the order unpaid, with the new decline', async () => {
    const session = { customerSession: bob.token };
    await portal().customerPortal.orders.confirmRetryPayment(session, { id: bob.order.id, customerOrderConfirmPayment: { confirmationTokenId: 'tok_chargeDeclined' } });
    await settle();
    expect(await portal().customerPortal.orders.getPaymentStatus(session, { id: bob.order.id })).toEqual({ status: 'failed', error: 'The card was declined.' });
    expect(await t.org.polar.orders.get({ id: bob.order.id })).toMatchObject({ status: 'pending', paid: false });
    expect(await paymentsOf(bob.order.id)).toHaveLength(2);
  });

  it("answers another customer's order as one that does not exist, and writes nothing", async () => {
    const before = await paymentsOf(bob.order.id);
    const status = await rejectionOf(portal().customerPortal.orders.getPaymentStatus({ customerSession: ada.token }, { id: bob.order.id }));
    expect(status).toBeInstanceOf(ResourceNotFound);
    const retry = await rejectionOf(
      portal().customerPortal.orders.confirmRetryPayment({ customerSession: ada.token }, { id: bob.order.id, customerOrderConfirmPayment: { confirmationTokenId: 'tok_visa' } }),
    );
    expect(retry).toBeInstanceOf(ResourceNotFound);
    expect(await paymentsOf(bob.order.id)).toEqual(before);
  });

  it('refuses no token, an organization token and bad input, writing nothing', async () => {
    const path = `/customer-portal/orders/${bob.order.id}`;
    const before = await paymentsOf(bob.order.id);
    const anonymous = restClient(t.server.base('sandbox'));
    expectErrorBody(await anonymous('GET', `${path}/payment-status`), 401, 'Unauthorized');
    expectErrorBody(await anonymous('POST', `${path}/confirm-payment`, { confirmation_token_id: 'tok_visa' }), 401, 'Unauthorized');
    expectErrorBody(await t.org.api('POST', `${path}/confirm-payment`, { confirmation_token_id: 'tok_visa' }), 403, 'NotPermitted');

    const customer = restClient(t.server.base('sandbox'), bob.token);
    expectValidationError(await customer('GET', '/customer-portal/orders/not-a-uuid/payment-status'), ['path', 'id']);
    expectValidationError(await customer('POST', '/customer-portal/orders/not-a-uuid/confirm-payment', { confirmation_token_id: 'tok_visa' }), ['path', 'id']);
    expectValidationError(await customer('POST', `${path}/confirm-payment`, {}), ['body', 'confirmation_token_id'], 'missing');
    expectValidationError(await customer('POST', `${path}/confirm-payment`, { confirmation_token_id: 'tok_unknown' }), ['body', 'confirmation_token_id']);
    expectValidationError(await customer('POST', `${path}/confirm-payment`, { confirmation_token_id: 'tok_visa', payment_method_id: 'tok_visa' }), ['body', 'payment_method_id']);
    expectValidationError(await customer('POST', `${path}/confirm-payment`, { confirmation_token_id: 'tok_visa', payment_processor: 'paypal' }), ['body', 'payment_processor']);
    expectValidationError(await customer('POST', `${path}/confirm-payment`, { confirmation_token_id: 'tok_visa', amount: 1 }), ['body', 'amount'], 'extra_forbidden');
    expect(await paymentsOf(bob.order.id)).toEqual(before);
  });
});

describe('what the portal answers about a retry, exactly', () => {
  const paymentStatus = (token: string, orderId: string) => portal().customerPortal.orders.getPaymentStatus({ customerSession: token }, { id: orderId });
  const retry = (token: string, orderId: string, body: Record<string, unknown>) => restClient(t.server.base('sandbox'), token)('POST', `/customer-portal/orders/${orderId}/confirm-payment`, body);
  const retryOverGraphQL = (token: string, orderId: string, input: Record<string, unknown>) =>
    graphqlClient(t.server.base('sandbox'), token)(`mutation ($id: UUID!, $input: CustomerOrderPaymentConfirmInput!) { customerPortal { orderPaymentConfirm(id: $id, input: $input) { status } } }`, {
      id: orderId,
      input,
    });
  let productId: string;

  beforeAll(async () => {
    productId = (await fixedProduct(t.org, 'Workshop', 2900)).id;
  });

  it('names the attempt in progress and the paid order in its error bodies, over REST and GraphQL', async () => {
    const cyd = await declinedPurchase(productId, 'cyd@example.com');
    expectStatus(await retry(cyd.token, cyd.order.id, { confirmation_token_id: 'tok_visa' }), 200);

    const inProgress = await retry(cyd.token, cyd.order.id, { confirmation_token_id: 'tok_visa' });
    expect([inProgress.status, inProgress.body]).toEqual([
      409,
      { error: 'PaymentAlreadyInProgress', detail: 'A payment of this order is being processed: wait for its outcome before trying again.' },
    ]);
    const inProgressError = await graphqlFailure(retryOverGraphQL(cyd.token, cyd.order.id, { confirmationTokenId: 'tok_visa' }), 'PAYMENT_ALREADY_IN_PROGRESS');
    expect(inProgressError.message).toBe('A payment of this order is being processed: wait for its outcome before trying again.');

    await settle();
    const paid = await retry(cyd.token, cyd.order.id, { confirmation_token_id: 'tok_visa' });
    expect([paid.status, paid.body]).toEqual([422, { error: 'OrderNotEligibleForRetry', detail: 'This order is paid: there is nothing left to pay.' }]);
    const paidError = await graphqlFailure(retryOverGraphQL(cyd.token, cyd.order.id, { confirmationTokenId: 'tok_visa' }), 'ORDER_NOT_ELIGIBLE_FOR_RETRY');
    expect(paidError.message).toBe('This order is paid: there is nothing left to pay.');
    expect((await paymentsOf(cyd.order.id)).map((p) => p.status)).toEqual(['failed', 'succeeded']);
  });

  it('takes exactly one of five concurrent retries of one order; the others are told one is in progress', async () => {
    const jo = await declinedPurchase(productId, 'jo@example.com');
    const answers = await Promise.all(Array.from({ length: 5 }, () => retry(jo.token, jo.order.id, { confirmation_token_id: 'tok_visa' })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409, 409]);
    for (const answer of answers.filter((a) => a.status === 409)) expect(answer.body.error).toBe('PaymentAlreadyInProgress');
    expect((await paymentsOf(jo.order.id)).map((p) => p.status)).toEqual(['failed', 'pending']);
    await settle();
    expect((await paymentsOf(jo.order.id)).map((p) => p.status)).toEqual(['failed', 'succeeded']);
  });

  it('answers "Order not found." for an order that is not the customer’s, reading or paying it', async () => {
    const dan = await declinedPurchase(productId, 'dan@example.com');
    const eve = await declinedPurchase(productId, 'eve@example.com');
    const customer = restClient(t.server.base('sandbox'), eve.token);
    const status = await customer('GET', `/customer-portal/orders/${dan.order.id}/payment-status`);
    expect([status.status, status.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Order not found.' }]);
    const paying = await retry(eve.token, dan.order.id, { confirmation_token_id: 'tok_visa' });
    expect([paying.status, paying.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Order not found.' }]);
    expect((await paymentsOf(dan.order.id)).map((p) => p.status)).toEqual(['failed']);
  });

  it('says what is wrong with each bad input, at its field, and writes nothing', async () => {
    const fay = await declinedPurchase(productId, 'fay@example.com');
    const before = await paymentsOf(fay.order.id);
    const detail = async (body: Record<string, unknown>) => {
      const response = await retry(fay.token, fay.order.id, body);
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      return response.body.detail;
    };
    expect(await detail({})).toEqual([
      { loc: ['body', 'confirmation_token_id'], msg: 'Field required: a confirmation token or a saved payment method id', type: 'missing' },
    ]);
    expect(await detail({ confirmation_token_id: 'tok_visa', payment_method_id: 'tok_visa' })).toEqual([
      { loc: ['body', 'payment_method_id'], msg: 'Give either a confirmation token or a saved payment method id, not both.', type: 'value_error' },
    ]);
    const unknown = `Unknown payment method. In sandbox, use a test card: tok_visa, tok_delayedSuccess, tok_chargeDeclined, tok_delayedFailure, tok_processorUnavailable, tok_refundFail.`;
    expect(await detail({ confirmation_token_id: 'tok_unknown' })).toEqual([{ loc: ['body', 'confirmation_token_id'], msg: unknown, type: 'value_error' }]);
    expect(await detail({ payment_method_id: 'tok_unknown' })).toEqual([{ loc: ['body', 'payment_method_id'], msg: unknown, type: 'value_error' }]);
    expect(await paymentsOf(fay.order.id)).toEqual(before);
  });

  it('takes a method given as a saved payment method id, where the processor keeps none', async () => {
    const gus = await declinedPurchase(productId, 'gus@example.com');
    expect(expectStatus(await retry(gus.token, gus.order.id, { payment_method_id: 'tok_visa' }), 200)).toEqual({ status: 'pending', client_secret: null, error: null });
    expect((await paymentsOf(gus.order.id)).map((p) => [p.status, p.paymentMethod])).toEqual([['failed', 'tok_chargeDeclined'], ['pending', 'tok_visa']]);
    await settle();
    expect(await paymentStatus(gus.token, gus.order.id)).toEqual({ status: 'succeeded', error: null });
  });

  it('shows the latest of two failures, by creation time and then by id for one instant', async () => {
    const hal = await declinedPurchase(productId, 'hal@example.com');
    const prisma = sandbox().environment.prisma;
    const declined = 'The card was declined.';
    const processingError = 'An error occurred while processing the card. Try again later.';
    t.server.clock.now = new Date(Date.now() + 60_000);
    try {
      expectStatus(await retry(hal.token, hal.order.id, { confirmation_token_id: 'tok_delayedFailure' }), 200);
      await settle();
    } finally {
      t.server.clock.now = null;
    }
    const [first, second] = await paymentsOf(hal.order.id);
    expect([first.declineReason, second.declineReason]).toEqual(['card_declined', 'processing_error']);
    expect(second.createdAt.getTime()).toBeGreaterThan(first.createdAt.getTime());
    expect(await paymentStatus(hal.token, hal.order.id)).toEqual({ status: 'failed', error: processingError });

    // The earlier attempt with the greater id: the creation time still decides.
    const [earlier, later] = ['eeeeeeee-eeee-4eee-beee-eeeeeeeeeeee', '00000000-0000-4000-8000-000000000000'];
    await prisma.payment.update({ where: { id: second.id }, data: { id: later } });
    await prisma.payment.update({ where: { id: first.id }, data: { id: earlier } });
    expect(await paymentStatus(hal.token, hal.order.id)).toEqual({ status: 'failed', error: processingError });

    // One instant for both (the earlier one rewritten last, so stored after the later one): the greater id decides.
    await prisma.payment.update({ where: { id: earlier }, data: { createdAt: second.createdAt } });
    expect(await paymentStatus(hal.token, hal.order.id)).toEqual({ status: 'failed', error: declined });
  });

  it('refuses to charge the order of a subscription that has ended, and writes nothing', async () => {
    const plan = await fixedProduct(t.org, 'Monthly plan', 1500, 'month');
    const ivy = await declinedPurchase(plan.id, 'ivy@example.com');
    expect(ivy.order.subscriptionId).toEqual(expect.any(String));
    expectStatus(await t.org.api('DELETE', `/subscriptions/${ivy.order.subscriptionId}`), 200);
    const before = await paymentsOf(ivy.order.id);
    const refused = await retry(ivy.token, ivy.order.id, { confirmation_token_id: 'tok_visa' });
    expect([refused.status, refused.body]).toEqual([
      422,
      { error: 'OrderNotEligibleForRetry', detail: 'The subscription this order bills has ended: it is no longer charged.' },
    ]);
    expect(await paymentsOf(ivy.order.id)).toEqual(before);
  });
});

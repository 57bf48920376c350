// The customer paying their declined order again from the portal where the environment charges
// through Stripe (the sandbox, pointed at the Stripe API double): POST
// /v1/customer-portal/orders/{id}/confirm-payment with a new ConfirmationToken or a saved
// PaymentMethod. Stripe is asked before anything is written: a saved method must be on the order's
// customer's own Stripe record, a token must be one Stripe knows and has not spent, and a token
// taken by an earlier payment not yet charged is refused too. The sandbox job runner is stopped: the
// test runs the due work itself.
import { Polar } from '@polar-sh/sdk';
import type { PaymentMethodCard } from '@polar-sh/sdk/models/components/paymentmethodcard.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSandboxStripe } from '../helpers/stripe.ts';
import { sdkServerURL } from '../helpers/organizations.ts';
import { createAndConfirmCheckout, fixedProduct } from '../helpers/purchases.ts';
import { expectStatus, graphqlFailure } from '../helpers/responses.ts';
import { graphqlClient, restClient, settleJobs } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const { keys, env, double } = useSandboxStripe('portalretry1', { PRODUCTION_PAYMENT_PROCESSOR: 'test' });
const t = useTestServer({ env, stopSandboxJobs: true, organizations: { shop: 'sandbox' } });

const sandbox = () => t.server.kassa.environments.sandbox;
const portal = () => new Polar({ serverURL: sdkServerURL(t.server, 'sandbox') });
const paymentsOf = (orderId: string) => sandbox().environment.prisma.payment.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' } });

async function settle() {
  await settleJobs(sandbox().jobs);
}

/** What Stripe.js does on the customer's page: a ConfirmationToken for a test card. */
async function confirmationToken(card: string): Promise<string> {
  return (await double().stripe(keys.secret).testHelpers.confirmationTokens.create({ payment_method: card })).id;
}

/** A purchase whose card Stripe declines: the unpaid order and the customer's session. */
async function declinedPurchase(productId: string, email: string) {
  const checkout = await createAndConfirmCheckout(t.shop, productId, email, { card: await confirmationToken('pm_card_chargeDeclined') });
  await settle();
  const [order] = (await t.shop.polar.orders.list({ checkoutId: checkout.id })).result.items;
  expect([order.status, order.paid]).toEqual(['pending', false]);
  const { token } = await t.shop.polar.customerSessions.create({ customerId: order.customerId });
  return { order, token };
}

/** A card the customer saves in the portal: the Stripe PaymentMethod id. */
async function savedCard(token: string, card: string) {
  const method = (await portal().customerPortal.customers.addPaymentMethod(
    { customerSession: token },
    { confirmationTokenId: await confirmationToken(card), setDefault: false, returnUrl: 'https://shop.example.com/account' },
  )) as PaymentMethodCard;
  return method.id;
}

const retry = (token: string, orderId: string, body: Record<string, unknown>) => restClient(t.server.base('sandbox'), token)('POST', `/customer-portal/orders/${orderId}/confirm-payment`, body);
const issues = async (response: Promise<{ status: number; body: any }>) => {
  const answered = await response;
  expect(answered.status, JSON.stringify(answered.body)).toBe(422);
  return answered.body.detail;
};

describe('paying a declined order again through Stripe', () => {
  let productId: string;
  // Bob's and Cyd's orders are made first: the first orders stored are not Ada's.
  let bob: Awaited<ReturnType<typeof declinedPurchase>>;
  let cyd: Awaited<ReturnType<typeof declinedPurchase>>;
  let ada: Awaited<ReturnType<typeof declinedPurchase>>;
  let bobCard: string;
  let adaCard: string;

  beforeAll(async () => {
    productId = (await fixedProduct(t.shop, 'Course', 4900)).id;
    bob = await declinedPurchase(productId, 'bob@example.com');
    cyd = await declinedPurchase(productId, 'cyd@example.com');
    ada = await declinedPurchase(productId, 'ada@example.com');
    bobCard = await savedCard(bob.token, 'pm_card_visa');
    adaCard = await savedCard(ada.token, 'pm_card_mastercard');
  });

  it('shows a decline Stripe gives no sentence of its own as the generic one', async () => {
    expect((await paymentsOf(ada.order.id)).map((p) => [p.status, p.declineReason])).toEqual([['failed', 'generic_decline']]);
    expect(await portal().customerPortal.orders.getPaymentStatus({ customerSession: ada.token }, { id: ada.order.id })).toEqual({ status: 'failed', error: 'The payment was declined.' });
  });

  it("refuses another customer's saved card at paymentMethodId, and another customer's order as not found, writing nothing", async () => {
    expect(await issues(retry(ada.token, ada.order.id, { payment_method_id: bobCard }))).toEqual([
      { loc: ['body', 'payment_method_id'], msg: 'Unknown payment method: it is not one of your saved payment methods.', type: 'value_error' },
    ]);
    const theirs = await retry(ada.token, bob.order.id, { payment_method_id: bobCard });
    expect([theirs.status, theirs.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Order not found.' }]);
    expect(await paymentsOf(ada.order.id)).toHaveLength(1);
    expect(await paymentsOf(bob.order.id)).toHaveLength(1);
  });

  it('answers 503 PaymentProcessorUnavailable when Stripe cannot be asked about the saved card, writing nothing', async () => {
    const detail = 'The payment processor could not be reached: nothing was charged. Try again in a moment.';
    await double().down(true);
    try {
      const refused = await retry(ada.token, ada.order.id, { payment_method_id: adaCard });
      expect([refused.status, refused.body]).toEqual([503, { error: 'PaymentProcessorUnavailable', detail }]);
      const error = await graphqlFailure(
        graphqlClient(t.server.base('sandbox'), ada.token)(
          'mutation ($id: UUID!, $input: CustomerOrderPaymentConfirmInput!) { customerPortal { orderPaymentConfirm(id: $id, input: $input) { status } } }',
          { id: ada.order.id, input: { paymentMethodId: adaCard } },
        ),
        'PAYMENT_PROCESSOR_UNAVAILABLE',
      );
      expect(error.message).toBe(detail);
    } finally {
      await double().down(false);
    }
    expect(await paymentsOf(ada.order.id)).toHaveLength(1);
  });

  it('refuses a token Stripe does not know, and a method that is neither a token nor a saved method, at its field', async () => {
    expect(await issues(retry(ada.token, ada.order.id, { confirmation_token_id: 'ctoken_neverMadeByStripe' }))).toEqual([
      { loc: ['body', 'confirmation_token_id'], msg: 'Unknown confirmation token: make a new one with Stripe.js on the checkout page.', type: 'value_error' },
    ]);
    const notStripe = 'Unknown payment method: pass a ConfirmationToken (ctoken_…) or a saved PaymentMethod (pm_…).';
    expect(await issues(retry(ada.token, ada.order.id, { confirmation_token_id: 'tok_visa' }))).toEqual([{ loc: ['body', 'confirmation_token_id'], msg: notStripe, type: 'value_error' }]);
    expect(await issues(retry(ada.token, ada.order.id, { payment_method_id: 'tok_visa' }))).toEqual([{ loc: ['body', 'payment_method_id'], msg: notStripe, type: 'value_error' }]);
    expect(await paymentsOf(ada.order.id)).toHaveLength(1);
  });

  it("pays with the customer's own saved card", async () => {
    expect(expectStatus(await retry(ada.token, ada.order.id, { payment_method_id: adaCard }), 200)).toEqual({ status: 'pending', client_secret: null, error: null });
    expect((await paymentsOf(ada.order.id)).map((p) => [p.status, p.paymentMethod])).toEqual([
      ['failed', expect.stringMatching(/^ctoken_/)],
      ['pending', adaCard],
    ]);
    await settle();
    expect(await portal().customerPortal.orders.getPaymentStatus({ customerSession: ada.token }, { id: ada.order.id })).toEqual({ status: 'succeeded', error: null });
  });

  it("takes a new token once, and refuses it for another customer's order while the payment that took it is not charged yet", async () => {
    const token = await confirmationToken('pm_card_visa');
    expect(expectStatus(await retry(bob.token, bob.order.id, { confirmation_token_id: token }), 200)).toEqual({ status: 'pending', client_secret: null, error: null });
    expect(await issues(retry(cyd.token, cyd.order.id, { confirmation_token_id: token }))).toEqual([
      { loc: ['body', 'confirmation_token_id'], msg: 'This confirmation token was used already: make a new one.', type: 'value_error' },
    ]);
    expect((await paymentsOf(cyd.order.id)).map((p) => p.status)).toEqual(['failed']);
    await settle();
    expect(await t.shop.polar.orders.get({ id: bob.order.id })).toMatchObject({ status: 'paid', paid: true });
  });
});

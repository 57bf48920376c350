// The Customer Portal's saved payment methods, end to end: sandbox charges through Kassa's Stripe
// processor, pointed at the Stripe API double; production keeps the built-in test processor. A
// customer signed in by their organization lists, adds and removes their cards through the official
// client; a 3-D Secure card answers 402 with the SetupIntent's secret and is saved once the customer
// authenticated; a declined card is a 400. From the attacker's side: another customer's method is
// answered as one that does not exist and stays attached at Stripe; a checkout's session, an
// organization token and no token are refused. A past-due subscription recovers when the customer
// adds a new default card. The sandbox job runner is stopped: the test runs the due work itself.
import { Polar } from '@polar-sh/sdk';
import type { PaymentMethodCard } from '@polar-sh/sdk/models/components/paymentmethodcard.js';
import { PaymentMethodInUseByActiveSubscription } from '@polar-sh/sdk/models/errors/paymentmethodinusebyactivesubscription.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useSandboxStripe } from '../helpers/stripe.ts';
import { graphqlClient, restClient, settleJobs } from '../helpers/server.ts';
import { sdkServerURL, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectStatus, expectValidationError } from '../helpers/responses.ts';
import { fixedProduct } from '../helpers/purchases.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const returnUrl = 'https://shop.example.com/account/cards';

const { keys, env, double } = useSandboxStripe('portalcards1', { PRODUCTION_PAYMENT_PROCESSOR: 'test', TEST_CARD_DELAY_MS: '0' });
const t = useTestServer({ env, stopSandboxJobs: true, resetClockAfterEach: true, organizations: { shop: 'sandbox', other: 'sandbox', plain: 'production' } });

let portal: Polar;
beforeAll(() => {
  portal = new Polar({ serverURL: sdkServerURL(t.server, 'sandbox') });
});

const sandbox = () => t.server.kassa.environments.sandbox;
const prisma = () => sandbox().environment.prisma;
const rest = (token?: string) => restClient(t.server.base('sandbox'), token);
const paymentMethods = '/customer-portal/customers/me/payment-methods';

/** Runs the due jobs and sweeps until nothing is left to do at the current time. */
async function settle() {
  await settleJobs(sandbox().jobs);
}

/** What Stripe.js does on the customer's page: a ConfirmationToken for a test card. */
async function confirmationToken(card: string): Promise<string> {
  return (await double().stripe(keys.secret).testHelpers.confirmationTokens.create({ payment_method: card })).id;
}

/** A customer of the organization, signed in by it: the customer and their session token. */
async function signedInCustomer(org: Org, email: string) {
  const customer = await org.polar.customers.create({ email });
  const { token } = await org.polar.customerSessions.create({ customerId: customer.id });
  return { customer, token };
}

async function addCard(token: string, card: string, setDefault = false) {
  return (await portal.customerPortal.customers.addPaymentMethod(
    { customerSession: token },
    { confirmationTokenId: await confirmationToken(card), setDefault, returnUrl },
  )) as PaymentMethodCard;
}

async function listCards(token: string, request: { page?: number; limit?: number } = {}) {
  return (await portal.customerPortal.customers.listPaymentMethods({ customerSession: token }, request)).result;
}

/** A monthly plan bought with a saved card at a confirmed checkout: the checkout's answer and the active subscription. */
async function subscribeWithCard(productName: string, amount: number, email: string) {
  const plan = await fixedProduct(t.shop, productName, amount, 'month');
  const checkout = await t.shop.polar.checkouts.create({ products: [plan.id] });
  const confirmed = await t.shop.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, {
    customer_email: email,
    confirmation_token_id: await confirmationToken('pm_card_visa'),
  });
  expect(confirmed.status).toBe(200);
  await settle();
  const subscription = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: checkout.id } });
  expect(subscription.status).toBe('active');
  return { confirmed, subscription };
}

const stripeCustomerOf = async (customerId: string) => (await prisma().customer.findUniqueOrThrow({ where: { id: customerId } })).processorCustomerId;
const attachedTo = (paymentMethodId: string) => double().object<Stripe.PaymentMethod>(paymentMethodId)?.customer;

describe('a customer’s saved cards, through the official client', () => {
  it('lists none before the first card, then adds, lists, pages and removes the customer’s own cards', async () => {
    const { customer, token } = await signedInCustomer(t.shop, 'cards@example.com');
    expect(await listCards(token)).toEqual({ items: [], pagination: { totalCount: 0, maxPage: 0 } });
    expect(await stripeCustomerOf(customer.id)).toBeNull();

    const visa = await addCard(token, 'pm_card_visa');
    expect(visa).toEqual({
      id: expect.stringMatching(/^pm_/),
      createdAt: expect.any(Date),
      modifiedAt: null,
      processor: 'stripe',
      customerId: customer.id,
      type: 'card',
      methodMetadata: { brand: 'visa', last4: '4242', expMonth: expect.any(Number), expYear: expect.any(Number), wallet: null },
    });
    // Adding the first card made the customer's record at Stripe, and Kassa keeps it.
    const stripeCustomer = await stripeCustomerOf(customer.id);
    expect(stripeCustomer).toMatch(/^cus_/);
    expect(attachedTo(visa.id)).toBe(stripeCustomer);
    expect(double().object<Stripe.Customer>(stripeCustomer!)).toMatchObject({ email: 'cards@example.com', metadata: { kassa_customer_id: customer.id } });

    const mastercard = await addCard(token, 'pm_card_mastercard', true);
    expect(mastercard.methodMetadata).toMatchObject({ brand: 'mastercard', last4: '4444' });
    expect(await stripeCustomerOf(customer.id)).toBe(stripeCustomer);
    expect(double().object<Stripe.Customer>(stripeCustomer!)?.invoice_settings.default_payment_method).toBe(mastercard.id);

    const all = await listCards(token);
    expect(all.items.map((m) => m.id).sort()).toEqual([visa.id, mastercard.id].sort());
    expect(all.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const second = await listCards(token, { page: 2, limit: 1 });
    expect(second.items).toHaveLength(1);
    expect(second.pagination).toEqual({ totalCount: 2, maxPage: 2 });

    const raw = expectStatus(await rest(token)('GET', paymentMethods), 200);
    expect(raw.items.find((m: { id: string }) => m.id === visa.id)).toEqual({
      id: visa.id,
      created_at: datetime,
      modified_at: null,
      processor: 'stripe',
      customer_id: uuid,
      type: 'card',
      method_metadata: { brand: 'visa', last4: '4242', exp_month: expect.any(Number), exp_year: expect.any(Number), wallet: null },
    });

    // GraphQL says which one is the default.
    const gql = await graphqlClient(t.server.base('sandbox'), token)(
      `{ customerPortal { paymentMethods { items { id isDefault ... on PaymentMethodCard { methodMetadata { last4 } } } } } }`,
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.customerPortal.paymentMethods.items).toEqual(
      expect.arrayContaining([
        { id: visa.id, isDefault: false, methodMetadata: { last4: '4242' } },
        { id: mastercard.id, isDefault: true, methodMetadata: { last4: '4444' } },
      ]),
    );

    expect(await portal.customerPortal.customers.deletePaymentMethod({ customerSession: token }, { id: visa.id })).toBeUndefined();
    expect(attachedTo(visa.id)).toBeNull();
    expect((await listCards(token)).items.map((m) => m.id)).toEqual([mastercard.id]);
    // Gone is gone: removing it again finds nothing.
    expect(await rejectionOf(portal.customerPortal.customers.deletePaymentMethod({ customerSession: token }, { id: visa.id }))).toBeInstanceOf(ResourceNotFound);
  });

  it('answers a 3-D Secure card 402 PaymentMethodRequiresAction with the SetupIntent’s secret, and saves it once the customer authenticated', async () => {
    const { token } = await signedInCustomer(t.shop, 'secure@example.com');
    const confirmation = await confirmationToken('pm_card_authenticationRequired');
    const body = { confirmation_token_id: confirmation, set_default: false, return_url: returnUrl };
    const asked = await rest(token)('POST', paymentMethods, body);
    expect(asked.status, JSON.stringify(asked.body)).toBe(402);
    expect(asked.body).toEqual({ error: 'PaymentMethodRequiresAction', detail: expect.stringMatching(/handleNextAction/), client_secret: expect.stringMatching(/^seti_.+_secret_/) });
    const [intent] = double().objects<Stripe.SetupIntent>('setup_intent').filter((s) => s.client_secret === asked.body.client_secret);
    expect(intent.status).toBe('requires_action');
    expect((await listCards(token)).items).toEqual([]);

    // The customer's page finishes it with Stripe.js, then sends the same token again.
    double().authenticate(intent.id, 'succeed');
    const saved = expectStatus(await rest(token)('POST', paymentMethods, body), 201);
    expect(saved).toMatchObject({ type: 'card', method_metadata: { brand: 'visa', last4: '3184' } });
    expect((await listCards(token)).items.map((m) => m.id)).toEqual([saved.id]);
  });

  it('answers a failed authentication and a declined card 400 PaymentError, saving nothing', async () => {
    const { token } = await signedInCustomer(t.shop, 'declined@example.com');
    const declined = await rest(token)('POST', paymentMethods, { confirmation_token_id: await confirmationToken('pm_card_chargeDeclined'), set_default: true, return_url: returnUrl });
    expectErrorBody(declined, 400, 'PaymentError');
    expect(declined.body.detail).toBe('The card was declined (generic_decline): nothing was saved. Use another card.');
    const declinedGql = await graphqlClient(t.server.base('sandbox'), token)(
      `mutation($input: CustomerPaymentMethodCreateInput!) { customerPortal { customerPaymentMethodCreate(input: $input) { id } } }`,
      { input: { confirmationTokenId: await confirmationToken('pm_card_chargeDeclined'), setDefault: false, returnUrl } },
    );
    expect(declinedGql.body.errors?.[0]?.extensions?.code).toBe('PAYMENT_ERROR');

    const confirmation = await confirmationToken('pm_card_authenticationRequired');
    const body = { confirmation_token_id: confirmation, set_default: false, return_url: returnUrl };
    const asked = await rest(token)('POST', paymentMethods, body);
    expect(asked.status).toBe(402);
    const [intent] = double().objects<Stripe.SetupIntent>('setup_intent').filter((s) => s.client_secret === asked.body.client_secret);
    double().authenticate(intent.id, 'fail');
    const failed = await rest(token)('POST', paymentMethods, body);
    expectErrorBody(failed, 400, 'PaymentError');
    expect(failed.body.detail).toBe('The card was not saved: the customer did not pass the bank’s authentication. Try again, or use another card.');
    expect((await listCards(token)).items).toEqual([]);
  });

  it('refuses an unknown, a malformed or another’s used token and a return URL that is not one, at their fields', async () => {
    const { token } = await signedInCustomer(t.shop, 'typos@example.com');
    const post = (fields: Record<string, unknown>, as = token) => rest(as)('POST', paymentMethods, { set_default: false, return_url: returnUrl, ...fields });
    expectValidationError(await post({ confirmation_token_id: 'ctoken_doesnotexist' }), ['body', 'confirmation_token_id']);
    expectValidationError(await post({ confirmation_token_id: 'tok_visa' }), ['body', 'confirmation_token_id']);
    const used = await confirmationToken('pm_card_visa');
    const saved = expectStatus(await post({ confirmation_token_id: used }), 201);
    // Sent again by the same customer, it is the same request: the same card, not a second one.
    expect(expectStatus(await post({ confirmation_token_id: used }), 201).id).toBe(saved.id);
    const other = await signedInCustomer(t.shop, 'copycat@example.com');
    const reused = await post({ confirmation_token_id: used }, other.token);
    expectValidationError(reused, ['body', 'confirmation_token_id']);
    expect(JSON.stringify(reused.body)).toMatch(/used already/);
    expect((await listCards(other.token)).items).toEqual([]);
    const notAUrl = await post({ confirmation_token_id: await confirmationToken('pm_card_visa'), return_url: 'javascript:alert(1)' });
    expectValidationError(notAUrl, ['body', 'return_url']);
    expect(notAUrl.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'return_url'], msg: 'Input should be an absolute http or https URL', type: 'url_parsing' })]);
    expectValidationError(await post({ confirmation_token_id: await confirmationToken('pm_card_visa'), return_url: 'not a url' }), ['body', 'return_url']);
    // http is a URL too (a shop on a local address).
    expectStatus(await post({ confirmation_token_id: await confirmationToken('pm_card_visa'), return_url: 'http://127.0.0.1:3000/cards' }), 201);
    expectValidationError(await rest(token)('POST', paymentMethods, { confirmation_token_id: used }), ['body', 'set_default']);
    // The first card and the one saved with an http return URL.
    expect((await listCards(token)).items).toHaveLength(2);
  });
});

describe('another customer’s cards', () => {
  it('answers another customer’s method id 404, of the same organization or another, and leaves it attached', async () => {
    const owner = await signedInCustomer(t.shop, 'owner@example.com');
    const card = await addCard(owner.token, 'pm_card_visa');
    const stripeCustomer = await stripeCustomerOf(owner.customer.id);
    const neighbour = await signedInCustomer(t.shop, 'neighbour@example.com');
    await addCard(neighbour.token, 'pm_card_amex');
    const stranger = await signedInCustomer(t.other, 'owner@example.com');
    const newcomer = await signedInCustomer(t.shop, 'newcomer@example.com');

    for (const token of [neighbour.token, stranger.token, newcomer.token]) {
      expect(await rejectionOf(portal.customerPortal.customers.deletePaymentMethod({ customerSession: token }, { id: card.id }))).toBeInstanceOf(ResourceNotFound);
      expectErrorBody(await rest(token)('DELETE', `${paymentMethods}/${card.id}`), 404, 'ResourceNotFound');
      expect((await listCards(token)).items.map((m) => m.id)).not.toContain(card.id);
    }
    const unknown = await rest(owner.token)('DELETE', `${paymentMethods}/pm_doesnotexist`);
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Payment method not found.' }]);
    // A malformed id, or a customer Stripe has no record of, is not found without asking Stripe.
    const requestsBefore = double().requests.length;
    const setDefault = (as: string, id: string) =>
      graphqlClient(t.server.base('sandbox'), as)(`mutation($id: ID!) { customerPortal { customerDefaultPaymentMethodUpdate(id: $id) { id } } }`, { id });
    for (const id of ['../customers/x', 'pm_card/..', 'x'.repeat(256)]) {
      expectErrorBody(await rest(owner.token)('DELETE', `${paymentMethods}/${encodeURIComponent(id)}`), 404, 'ResourceNotFound');
      expect((await setDefault(owner.token, id)).body.errors?.[0]?.extensions?.code).toBe('RESOURCE_NOT_FOUND');
    }
    expectErrorBody(await rest(newcomer.token)('DELETE', `${paymentMethods}/${card.id}`), 404, 'ResourceNotFound');
    expect((await setDefault(newcomer.token, card.id)).body.errors?.[0]?.extensions?.code).toBe('RESOURCE_NOT_FOUND');
    expect(double().requests.slice(requestsBefore)).toEqual([]);
    expect(attachedTo(card.id)).toBe(stripeCustomer);
    expect(double().requests.filter((r) => r.path === `/v1/payment_methods/${card.id}/detach`)).toEqual([]);
    expect((await listCards(owner.token)).items.map((m) => m.id)).toEqual([card.id]);
  });

  it('refuses no token 401, and an organization token 403, on all three paths', async () => {
    const { token } = await signedInCustomer(t.shop, 'guarded@example.com');
    const card = await addCard(token, 'pm_card_visa');
    const body = { confirmation_token_id: await confirmationToken('pm_card_visa'), set_default: false, return_url: returnUrl };
    for (const [caller, status, error] of [[rest(), 401, 'Unauthorized'], [t.shop.api, 403, 'NotPermitted']] as const) {
      expectErrorBody(await caller('GET', paymentMethods), status, error);
      expectErrorBody(await caller('POST', paymentMethods, body), status, error);
      expectErrorBody(await caller('DELETE', `${paymentMethods}/${card.id}`), status, error);
    }
    expect(attachedTo(card.id)).toMatch(/^cus_/);
    expect((await listCards(token)).items).toHaveLength(1);
  });
});

describe('where the processor keeps no saved methods', () => {
  it('lists none, refuses to add one with 400 PaymentError, and finds none to remove (the test processor)', async () => {
    const customer = await t.plain.polar.customers.create({ email: 'testcards@example.com' });
    const { token } = await t.plain.polar.customerSessions.create({ customerId: customer.id });
    const production = restClient(t.server.base('production'), token);
    expect(expectStatus(await production('GET', paymentMethods), 200)).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    const added = await production('POST', paymentMethods, { confirmation_token_id: 'tok_visa', set_default: true, return_url: returnUrl });
    expectErrorBody(added, 400, 'PaymentError');
    expect(added.body.detail).toMatch(/payment processor \(test\) keeps no saved payment methods/);
    expectErrorBody(await production('DELETE', `${paymentMethods}/pm_card_visa`), 404, 'ResourceNotFound');
  });
});

describe('when Stripe cannot be reached', () => {
  it('answers 503 PaymentProcessorUnavailable and changes nothing', async () => {
    const { customer, token } = await signedInCustomer(t.shop, 'offline@example.com');
    const card = await addCard(token, 'pm_card_visa');
    const confirmation = await confirmationToken('pm_card_mastercard');
    await double().down(true);
    try {
      expectErrorBody(await rest(token)('GET', paymentMethods), 503, 'PaymentProcessorUnavailable');
      expectErrorBody(await rest(token)('POST', paymentMethods, { confirmation_token_id: confirmation, set_default: true, return_url: returnUrl }), 503, 'PaymentProcessorUnavailable');
      const down = await rest(token)('DELETE', `${paymentMethods}/${card.id}`);
      expect([down.status, down.body]).toEqual([
        503,
        { error: 'PaymentProcessorUnavailable', detail: 'The payment processor could not be reached, or failed to answer: nothing was changed. Try again in a moment.' },
      ]);
      const gql = await graphqlClient(t.server.base('sandbox'), token)(`{ customerPortal { paymentMethods { items { id } } } }`);
      expect(gql.body.errors?.[0]?.extensions?.code).toBe('PAYMENT_PROCESSOR_UNAVAILABLE');
    } finally {
      await double().down(false);
    }
    expect(attachedTo(card.id)).toBe(await stripeCustomerOf(customer.id));
    expect((await listCards(token)).items.map((m) => m.id)).toEqual([card.id]);
  });
});

describe('updating the payment method of a past-due subscription', () => {
  it('renews with the new default card at once: the past-due period is charged again and the subscription is active', async () => {
    const { confirmed, subscription } = await subscribeWithCard('Monthly cards', 1500, 'renewer@example.com');
    const firstCard = subscription.paymentMethod;
    expect(firstCard).toMatch(/^pm_/);

    // A checkout's session reads what it bought; cards need a session the organization issued.
    const checkoutToken = confirmed.body.customer_session_token as string;
    expectErrorBody(await rest(checkoutToken)('GET', paymentMethods), 403, 'NotPermitted');
    expectErrorBody(await rest(checkoutToken)('POST', paymentMethods, { confirmation_token_id: await confirmationToken('pm_card_visa'), set_default: true, return_url: returnUrl }), 403, 'NotPermitted');
    expectErrorBody(await rest(checkoutToken)('DELETE', `${paymentMethods}/${firstCard}`), 403, 'NotPermitted');

    const signIn = async () => (await t.shop.polar.customerSessions.create({ customerId: subscription.customerId })).token;
    let token = await signIn();
    expect((await listCards(token)).items.map((m) => m.id)).toEqual([firstCard]);
    // The card the subscription renews with stays until another replaces it.
    const inUse = await rejectionOf(portal.customerPortal.customers.deletePaymentMethod({ customerSession: token }, { id: firstCard }));
    expect(inUse).toBeInstanceOf(PaymentMethodInUseByActiveSubscription);
    const inUseRest = await rest(token)('DELETE', `${paymentMethods}/${firstCard}`);
    expect([inUseRest.status, inUseRest.body]).toEqual([
      400,
      {
        error: 'PaymentMethodInUseByActiveSubscription',
        detail: 'A subscription renews with this payment method: add another one with set_default true first (it replaces this one on the subscriptions), then remove this one.',
      },
    ]);
    const inUseGql = await graphqlClient(t.server.base('sandbox'), token)(`mutation($id: ID!) { customerPortal { customerPaymentMethodDelete(id: $id) } }`, { id: firstCard });
    expect(inUseGql.body.errors?.[0]?.extensions?.code).toBe('PAYMENT_METHOD_IN_USE_BY_ACTIVE_SUBSCRIPTION');
    expect(attachedTo(firstCard)).toMatch(/^cus_/);

    // The card is gone at Stripe (the bank closed it): the renewal is declined and the subscription goes past due.
    await double().stripe(keys.secret).paymentMethods.detach(firstCard);
    t.server.clock.now = new Date(subscription.currentPeriodEnd.getTime() + 60_000);
    await settle();
    const pastDue = await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } });
    expect(pastDue).toMatchObject({ status: 'past_due', failedAttempts: 1 });
    expect(pastDue.retryAt!.getTime()).toBeGreaterThan(t.server.clock.now.getTime());
    const renewal = await prisma().order.findFirstOrThrow({ where: { subscriptionId: subscription.id, billingReason: 'subscription_cycle' }, include: { payments: true } });
    expect(renewal.paid).toBe(false);
    const eventsBefore = await prisma().event.count({ where: { resourceId: subscription.id, type: 'subscription.updated' } });

    // A month later the customer signs in again (a session lasts an hour) and adds a new default card.
    token = await signIn();
    const newCard = await addCard(token, 'pm_card_mastercard', true);
    const updated = await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } });
    expect(updated).toMatchObject({ paymentMethod: newCard.id, status: 'past_due', retryAt: t.server.clock.now });
    expect(await prisma().event.count({ where: { resourceId: subscription.id, type: 'subscription.updated' } })).toBe(eventsBefore + 1);

    await settle();
    const recovered = await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } });
    expect(recovered).toMatchObject({ status: 'active', failedAttempts: 0, retryAt: null, paymentMethod: newCard.id, cycles: 1 });
    const paid = await prisma().order.findUniqueOrThrow({ where: { id: renewal.id }, include: { payments: { orderBy: { createdAt: 'asc' } } } });
    expect(paid.paid).toBe(true);
    expect(paid.payments.map((p) => [p.status, p.paymentMethod])).toEqual([
      ['failed', firstCard],
      ['succeeded', newCard.id],
    ]);
    expect(double().object<Stripe.PaymentIntent>(paid.payments[1].processorId!)).toMatchObject({ status: 'succeeded', payment_method: newCard.id, amount: 1500 });
    const portalView = await portal.customerPortal.subscriptions.get({ customerSession: token }, { id: subscription.id });
    expect(portalView.status).toBe('active');
    // The detached card is no longer the customer's.
    expect((await listCards(token)).items.map((m) => m.id)).toEqual([newCard.id]);
  });
});

describe('choosing the default card', () => {
  it('moves the live subscription to the chosen card, frees the old one for removal, and leaves the customer row alone', async () => {
    const { subscription } = await subscribeWithCard('Monthly default', 900, 'chooser@example.com');
    const firstCard = subscription.paymentMethod!;
    const { token } = await t.shop.polar.customerSessions.create({ customerId: subscription.customerId });
    const gql = graphqlClient(t.server.base('sandbox'), token);

    const second = await addCard(token, 'pm_card_mastercard');
    const customerRow = await prisma().customer.findUniqueOrThrow({ where: { id: subscription.customerId } });
    const third = await addCard(token, 'pm_card_amex');
    // Stripe's record of the customer was kept already: adding another card does not write the customer.
    expect((await prisma().customer.findUniqueOrThrow({ where: { id: subscription.customerId } })).modifiedAt).toEqual(customerRow.modifiedAt);
    expect((await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } })).paymentMethod).toBe(firstCard);

    const chosen = await gql(`mutation($id: ID!) { customerPortal { customerDefaultPaymentMethodUpdate(id: $id) { id isDefault } } }`, { id: second.id });
    expect(chosen.body.errors).toBeUndefined();
    expect(chosen.body.data.customerPortal.customerDefaultPaymentMethodUpdate).toEqual({ id: second.id, isDefault: true });
    expect((await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } })).paymentMethod).toBe(second.id);

    // The first card renews nothing now: it can go, and the answer says so.
    const removed = await gql(`mutation($id: ID!) { customerPortal { customerPaymentMethodDelete(id: $id) } }`, { id: firstCard });
    expect(removed.body).toEqual({ data: { customerPortal: { customerPaymentMethodDelete: true } } });
    expect(attachedTo(firstCard)).toBeNull();
    expect((await listCards(token)).items.map((m) => m.id).sort()).toEqual([second.id, third.id].sort());
  });
});

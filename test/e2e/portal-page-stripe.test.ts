// The portal page's "Payment methods" section when Stripe takes the sandbox's payments (the Stripe
// API double behind STRIPE_API_URL): the customer's saved cards are listed, made default, removed
// and added (Stripe's Payment Element in setup mode; the bank's check when it asks), and an order
// whose payment failed is paid again with a saved card or a new one. js.stripe.com cannot be reached
// from the tests: the form posts carry tokens the double makes, as Stripe.js would, and the browser
// test serves a small stand-in for Stripe.js. Another customer's card is never theirs to use.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { desktop, launchChromium, screenshots } from '../helpers/chromium.ts';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { expectValidationError } from '../helpers/responses.ts';
import { fixedProduct } from '../helpers/purchases.ts';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';
import { useSandboxStripe } from '../helpers/stripe.ts';

const { keys, env, double } = useSandboxStripe('portalpage1', { JOB_POLL_INTERVAL_MS: '50' });
const t = useTestServer({ env, resetClockAfterEach: true, organizations: { shop: 'sandbox' } });
let browser: Browser;
let productId: string;
beforeAll(async () => {
  double().webhooks.addTarget({ url: `${t.server.base('sandbox')}/integrations/stripe/webhook`, secret: keys.webhook });
  browser = await launchChromium();
  productId = (await fixedProduct(t.shop, 'Course', 4900)).id;
});
afterAll(() => browser?.close());

const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;
const paymentsOf = (orderId: string) => prisma().payment.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' } });
const stripeCustomerOf = async (customerId: string) => (await prisma().customer.findUniqueOrThrow({ where: { id: customerId } })).processorCustomerId;
const attachedTo = (paymentMethodId: string) => double().object<Stripe.PaymentMethod>(paymentMethodId)?.customer ?? null;
const token = (card: string) => double().confirmationToken(card).id;

/** A page's policy, directive by directive. */
function policy(headers: Headers): Map<string, string[]> {
  const header = headers.get('content-security-policy') ?? '';
  return new Map(header.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...sources]) => [name, sources]));
}

const inlineScriptHashes = (page: string) => [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, text]) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`);

async function portalLink(customerId: string): Promise<string> {
  const session = await t.shop.api('POST', '/customer-sessions/', { customer_id: customerId });
  expect(session.status).toBe(201);
  return session.body.customer_portal_url;
}

/** A signed-in form browser: the portal's address, and the page as it shows now. */
async function signedIn(customerId: string) {
  const visitor = new FormBrowser(t.server.url);
  const link = await portalLink(customerId);
  const shown = await visitor.get(link);
  const continued = await visitor.post(`${new URL(link).origin}${new URL(link).pathname}/continue`, formFields(shown.text));
  expect(continued.status).toBe(303);
  const portal = new URL(continued.location!, t.server.url).toString();
  const show = async () => (await visitor.get(portal)).text;
  const formToken = /name="form_token" value="([^"]+)"/.exec(await show())![1];
  return { visitor, portal, show, formToken };
}

async function newCustomer(email: string): Promise<string> {
  const created = await t.shop.api('POST', '/customers/', { email });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** A purchase whose card was declined at Stripe: the customer and the unpaid order. */
async function declinedPurchase(email: string) {
  const checkout = await t.shop.polar.checkouts.create({ products: [productId] });
  const confirmed = await t.shop.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: email, confirmation_token_id: token('pm_card_chargeDeclined') });
  expect(confirmed.status).toBe(200);
  const order = await eventually(
    () => prisma().order.findFirst({ where: { checkoutId: checkout.id }, include: { payments: true } }),
    (o) => o?.payments.length === 1 && o.payments[0].status === 'failed',
    'the payment to be declined',
  );
  return { customerId: order!.customerId, orderId: order!.id };
}

describe('the payment methods section with Stripe, by form posts', () => {
  test('mounts the Payment Element in setup mode, behind a policy that admits Stripe and the page’s own script by hash', async () => {
    const { show, visitor, portal } = await signedIn(await newCustomer('policy@example.com'));
    const page = await show();
    expect(page).toContain(`<div id="new-card-element" data-stripe-element="setup" data-publishable-key="${keys.publishable}" data-currency="usd"></div>`);
    expect(page).toContain('<script src="https://js.stripe.com/v3/"></script>');
    expect(page).toContain('No saved cards.');
    const csp = policy((await visitor.get(portal)).headers);
    const hashes = inlineScriptHashes(page);
    expect(hashes).toHaveLength(1);
    expect(csp.get('script-src')).toEqual([...hashes, 'https://js.stripe.com', 'https://*.js.stripe.com']);
    expect(csp.get('frame-src')).toEqual(['https://js.stripe.com', 'https://*.js.stripe.com', 'https://hooks.stripe.com']);
    expect(csp.get('connect-src')).toEqual(['https://api.stripe.com']);
    expect(csp.get('default-src')).toEqual(["'none'"]);
  });

  test('adds cards, makes one the default and removes another, at Stripe', async () => {
    const customerId = await newCustomer('cards-page@example.com');
    const { visitor, portal, show, formToken } = await signedIn(customerId);
    const added = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card: token('pm_card_visa'), set_default: 'yes' });
    expect(added.status).toBe(200);
    expect(added.text).toContain('Your Visa ending in 4242 is saved. Your subscriptions renew with it.');
    const second = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card: token('pm_card_mastercard') });
    expect(second.text).toContain('Your Mastercard ending in 4444 is saved.');
    const stripeCustomer = await stripeCustomerOf(customerId);
    const [visa, mastercard] = ['4242', '4444'].map((last4) => double().objects<Stripe.PaymentMethod>('payment_method').find((m) => m.customer === stripeCustomer && m.card?.last4 === last4)!.id);
    let page = await show();
    expect(page).toMatch(new RegExp(`<li class="item" id="method-${visa}"><strong>Visa ending in 4242</strong> · expires \\d\\d/\\d{4} · <span class="status">Default</span>`));
    expect(page).toContain(`action="/sandbox/portal/${new URL(portal).pathname.split('/').pop()}/payment-methods/${mastercard}/default"`);

    const made = await visitor.post(`${portal}/payment-methods/${mastercard}/default`, { form_token: formToken });
    expect(made.status).toBe(200);
    expect(made.text).toContain('Your Mastercard ending in 4444 is now your default');
    expect(double().object<Stripe.Customer>(stripeCustomer!)?.invoice_settings.default_payment_method).toBe(mastercard);

    const removed = await visitor.post(`${portal}/payment-methods/${visa}/remove`, { form_token: formToken });
    expect(removed.text).toContain('The card is removed.');
    expect(attachedTo(visa)).toBeNull();
    page = await show();
    expect(page).not.toContain('Visa ending in 4242');
    expect(page).toContain('Mastercard ending in 4444');

    // A post with no card, and a declined one, are said next to the card field; nothing is saved.
    const empty = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card: '' });
    expect(empty.status).toBe(422);
    expect(empty.text).toContain('<p class="error" id="new-card-error">Required: type the card in the card field.</p>');
    const declined = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card: token('pm_card_chargeDeclined') });
    expect(declined.status).toBe(400);
    expect(declined.text).toMatch(/<p class="error" id="new-card-error">The card was declined \(generic_decline\)/);
    const unknown = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card: 'ctoken_doesnotexist' });
    expect(unknown.status).toBe(422);
    expect(unknown.text).toMatch(/<p class="error" id="new-card-error">[^<]*[Uu]nknown confirmation token/);
    expect(double().objects<Stripe.PaymentMethod>('payment_method').filter((m) => m.customer === stripeCustomer).map((m) => m.id)).toEqual([mastercard]);
  });

  test('the bank’s check while saving a card opens with that SetupIntent’s secret, and the same token saves it after', async () => {
    const customerId = await newCustomer('secure-page@example.com');
    const { visitor, portal, show, formToken } = await signedIn(customerId);
    const card = token('pm_card_authenticationRequired');
    const asked = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card, set_default: 'yes' });
    expect(asked.status).toBe(402);
    const [intent] = double().objects<Stripe.SetupIntent>('setup_intent').filter((s) => s.status === 'requires_action' && asked.text.includes(s.client_secret!));
    expect(asked.text).toContain(`data-publishable-key="${keys.publishable}" data-client-secret="${intent.client_secret}"`);
    expect(policy(asked.headers).get('script-src')).toEqual([...inlineScriptHashes(asked.text), 'https://js.stripe.com', 'https://*.js.stripe.com']);
    const again = formFields(asked.text);
    expect(again).toEqual({ form_token: formToken, card, set_default: 'yes' });

    double().authenticate(intent.id, 'succeed');
    const saved = await visitor.post(`${portal}/payment-methods`, again);
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Your Visa ending in 3184 is saved.');
    expect(await show()).toContain('Visa ending in 3184');
  });

  test("another customer's card can be neither made default, removed nor paid with; nothing changes", async () => {
    const adaId = await newCustomer('ada-cards@example.com');
    const ada = await signedIn(adaId);
    await ada.visitor.post(`${ada.portal}/payment-methods`, { form_token: ada.formToken, card: token('pm_card_visa'), set_default: 'yes' });
    const adaStripe = await stripeCustomerOf(adaId);
    const adaCard = double().objects<Stripe.PaymentMethod>('payment_method').find((m) => m.customer === adaStripe)!.id;

    const bobOrder = await declinedPurchase('bob-cards@example.com');
    const bob = await signedIn(bobOrder.customerId);
    await bob.visitor.post(`${bob.portal}/payment-methods`, { form_token: bob.formToken, card: token('pm_card_mastercard'), set_default: 'yes' });
    expect(await bob.show()).not.toContain(adaCard);
    for (const change of ['default', 'remove']) {
      const refused = await bob.visitor.post(`${bob.portal}/payment-methods/${adaCard}/${change}`, { form_token: bob.formToken });
      expect(refused.status).toBe(404);
      expect(refused.text).toContain('This payment method is not one of yours: nothing was changed.');
    }
    expect(attachedTo(adaCard)).toBe(adaStripe);
    expect(double().object<Stripe.Customer>(adaStripe!)?.invoice_settings.default_payment_method).toBe(adaCard);

    const paid = await bob.visitor.post(`${bob.portal}/orders/${bobOrder.orderId}/pay`, { form_token: bob.formToken, payment_method: adaCard });
    expect(paid.status).toBe(422);
    expect(paid.text).toContain(`<p class="error" id="pay-${bobOrder.orderId}-method-error">Unknown payment method: it is not one of your saved payment methods.</p>`);
    expect(await paymentsOf(bobOrder.orderId)).toHaveLength(1);
    // Nor can Ada pay Bob's order.
    const other = await ada.visitor.post(`${ada.portal}/orders/${bobOrder.orderId}/pay`, { form_token: ada.formToken, payment_method: adaCard });
    expect(other.status).toBe(404);
    expect(await paymentsOf(bobOrder.orderId)).toHaveLength(1);

    // The same through the API, at payment_method_id (the client library reads every 422 of this
    // operation as OrderNotEligibleForRetry, so the body is read as it comes); nothing written.
    const bobToken = (await t.shop.polar.customerSessions.create({ customerId: bobOrder.customerId })).token;
    const refused = await restClient(t.server.base('sandbox'), bobToken)('POST', `/customer-portal/orders/${bobOrder.orderId}/confirm-payment`, { payment_method_id: adaCard });
    expectValidationError(refused, ['body', 'payment_method_id']);
    expect(await paymentsOf(bobOrder.orderId)).toHaveLength(1);

    // Making a card the default is the signed-in customer's own, through GraphQL only.
    const makeDefault = `mutation ($id: ID!) { customerPortal { customerDefaultPaymentMethodUpdate(id: $id) { id isDefault } } }`;
    const foreign = await graphqlClient(t.server.base('sandbox'), bobToken)(makeDefault, { id: adaCard });
    expect(foreign.body.errors?.[0]?.extensions?.code).toBe('RESOURCE_NOT_FOUND');
    const anonymous = await graphqlClient(t.server.base('sandbox'))(makeDefault, { id: adaCard });
    expect(anonymous.body.data?.customerPortal ?? null).toBeNull();
    const organization = await graphqlClient(t.server.base('sandbox'), t.shop.token)(makeDefault, { id: adaCard });
    expect(organization.body.data?.customerPortal ?? null).toBeNull();
    expect(double().object<Stripe.Customer>(adaStripe!)?.invoice_settings.default_payment_method).toBe(adaCard);
  });
});

describe('a past-due subscription, from the page', () => {
  test('its declined renewal is paid with a card added on the page: the order is paid and the subscription active again', async () => {
    const plan = await fixedProduct(t.shop, 'Monthly plan', 1500, 'month');
    const checkout = await t.shop.polar.checkouts.create({ products: [plan.id] });
    const confirmed = await t.shop.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: 'past-due-page@example.com', confirmation_token_id: token('pm_card_visa') });
    expect(confirmed.status).toBe(200);
    const subscription = await eventually(() => prisma().subscription.findFirst({ where: { checkoutId: checkout.id } }), (s) => s?.status === 'active', 'the subscription to be active');
    // The card is gone at Stripe (the bank closed it): the renewal is declined and the subscription goes past due.
    await double().stripe(keys.secret).paymentMethods.detach(subscription!.paymentMethod!);
    t.server.clock.now = new Date(subscription!.currentPeriodEnd.getTime() + 60_000);
    await eventually(() => prisma().subscription.findUniqueOrThrow({ where: { id: subscription!.id } }), (s) => s.status === 'past_due', 'the subscription to go past due', 20_000);
    const renewal = await eventually(
      () => prisma().order.findFirst({ where: { subscriptionId: subscription!.id, billingReason: 'subscription_cycle' }, include: { payments: true } }),
      (o) => o?.payments.some((p) => p.status === 'failed') ?? false,
      'the renewal to be declined',
    );

    const { visitor, portal, show, formToken } = await signedIn(subscription!.customerId);
    let page = await show();
    expect(page).toContain('A payment failed.');
    expect(page).toContain(`id="pay-${renewal!.id}"`);
    expect(page).toContain('Your subscription is past due: pay now to keep it.');
    const added = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card: token('pm_card_mastercard') });
    expect(added.text).toContain('Your Mastercard ending in 4444 is saved.');
    const stripeCustomer = await stripeCustomerOf(subscription!.customerId);
    const mastercard = double().objects<Stripe.PaymentMethod>('payment_method').find((m) => m.customer === stripeCustomer && m.card?.last4 === '4444')!.id;
    page = await show();
    expect(page).toContain(`<input type="radio" id="pay-${renewal!.id}-${mastercard}" name="payment_method" value="${mastercard}" checked>`);

    const paid = await visitor.post(`${portal}/orders/${renewal!.id}/pay`, { form_token: formToken, payment_method: mastercard });
    expect(paid.status).toBe(303);
    const outcome = await eventually(() => visitor.get(paid.location!), (r) => r.text.includes('<h1>Paid</h1>'), 'the renewal to be paid', 20_000);
    expect(outcome.headers.get('refresh')).toBeNull();
    expect(await prisma().subscription.findUniqueOrThrow({ where: { id: subscription!.id } })).toMatchObject({ status: 'active', failedAttempts: 0 });
    expect((await show())).not.toContain(`id="pay-${renewal!.id}"`);
  }, 60_000);
});

describe('the payment methods section with Stripe, in a browser', () => {
  // A stand-in for Stripe.js, served at its address: it tells the test what the page asks of it
  // (through `stripeCalled`), refuses the first submit as Stripe would an incomplete card, and
  // answers createConfirmationToken with `window.nextToken`.
  const fakeStripeJs = `let submits = 0;
window.Stripe = (key) => {
  stripeCalled('Stripe', key);
  return {
    elements(options) {
      stripeCalled('elements', options);
      return {
        create(type) {
          return { mount(node) { node.textContent = 'Stripe card field: ' + options.mode; } };
        },
        async submit() {
          submits += 1;
          return submits === 1 && !window.cardComplete ? { error: { message: 'Your card number is incomplete.' } } : {};
        },
      };
    },
    async createConfirmationToken() {
      stripeCalled('createConfirmationToken', null);
      return { confirmationToken: { id: window.nextToken } };
    },
    async handleNextAction(options) {
      const outcome = await stripeCalled('handleNextAction', options);
      return outcome === 'closed' ? { error: { message: 'You closed the window before confirming.' } } : {};
    },
  };
};`;

  /** What the customer does in the bank's window, once Stripe.js opens it. */
  let inBanksWindow: (argument: { clientSecret: string }) => 'closed' | undefined = () => undefined;

  async function stripePage(): Promise<{ page: Page; calls: [string, unknown][]; violations: string[] }> {
    const context = await browser.newContext({ viewport: desktop });
    context.setDefaultTimeout(10_000);
    const calls: [string, unknown][] = [];
    await context.exposeFunction('stripeCalled', (name: string, argument: unknown) => {
      calls.push([name, argument]);
      return name === 'handleNextAction' ? inBanksWindow(argument as { clientSecret: string }) : undefined;
    });
    await context.route('https://js.stripe.com/v3/', (route) => route.fulfill({ status: 200, contentType: 'application/javascript', body: fakeStripeJs }));
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    return { page, calls, violations };
  }

  /**
   * axe-core's serious and critical violations on a page that enforces its policy: the policy
   * refuses an injected script, so axe runs through the DevTools protocol, which it does not govern.
   */
  async function seriousViolationsUnderPolicy(page: Page): Promise<string[]> {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Runtime.evaluate', { expression: readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') });
    const { result } = await cdp.send('Runtime.evaluate', {
      expression: `axe.run().then((r) => JSON.stringify(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ': ' + v.help)))`,
      awaitPromise: true,
      returnByValue: true,
    });
    await cdp.detach();
    return JSON.parse(result.value as string);
  }

  const setWindow = (page: Page, values: Record<string, unknown>) => page.evaluate((entries) => Object.assign(window, entries), values);

  test('adds a card with the Payment Element, pays a declined order with a new card (declined again), then with the saved one', async () => {
    const { customerId, orderId } = await declinedPurchase('browser-cards@example.com');
    const { page, calls, violations } = await stripePage();
    await page.goto(await portalLink(customerId));
    await page.getByRole('button', { name: /^Continue as / }).click();
    await page.waitForURL((url) => !url.search.includes('customer_session_token'));
    await expect.poll(() => page.locator('#new-card-element').textContent()).toBe('Stripe card field: setup');
    expect(await page.locator(`#pay-${orderId}-card-element`).textContent()).toBe('Stripe card field: payment');
    expect(calls.slice(0, 3)).toEqual([
      ['Stripe', keys.publishable],
      ['elements', { mode: 'payment', amount: 4900, currency: 'usd', paymentMethodCreation: 'manual' }],
      ['elements', { mode: 'setup', currency: 'usd', paymentMethodCreation: 'manual' }],
    ]);
    expect(await seriousViolationsUnderPolicy(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-stripe-desktop.png`, fullPage: true });

    // Add a card: Stripe's complaint is shown next to its field; then the token is posted.
    const add = page.locator('form', { has: page.getByRole('button', { name: 'Save card' }) });
    await add.getByRole('button', { name: 'Save card' }).click();
    await expect.poll(() => page.locator('#new-card-element-error').textContent()).toBe('Your card number is incomplete.');
    expect(await page.locator('#new-card-element-error').isVisible()).toBe(true);
    await setWindow(page, { nextToken: token('pm_card_visa') });
    await add.getByRole('button', { name: 'Save card' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Your Visa ending in 4242 is saved.');
    const stripeCustomer = await stripeCustomerOf(customerId);
    expect(double().objects<Stripe.PaymentMethod>('payment_method').filter((m) => m.customer === stripeCustomer).map((m) => m.card?.last4)).toEqual(['4242']);

    // Pay with a new card that is declined: the outcome page says why.
    const item = page.locator(`#pay-${orderId}`);
    expect(await item.getByLabel(/Visa ending in 4242/).isChecked()).toBe(true);
    await item.getByLabel('A new card').check();
    await setWindow(page, { nextToken: token('pm_card_chargeDeclinedInsufficientFunds'), cardComplete: true });
    await item.getByRole('button', { name: 'Pay $49.00 now' }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/orders/${orderId}/payment`));
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Payment declined');
    expect(await page.getByRole('alert').textContent()).toContain('The card has insufficient funds.');
    expect(await seriousViolationsUnderPolicy(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-stripe-declined-desktop.png`, fullPage: true });

    // Back to the section: the saved card pays, with no call to Stripe.js.
    await page.getByRole('link', { name: 'Pay with another card' }).click();
    const tokensBefore = calls.filter(([name]) => name === 'createConfirmationToken').length;
    await page.locator(`#pay-${orderId}`).getByRole('button', { name: 'Pay $49.00 now' }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/orders/${orderId}/payment`));
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    expect(calls.filter(([name]) => name === 'createConfirmationToken').length).toBe(tokensBefore);
    const payments = await paymentsOf(orderId);
    expect(payments.map((p) => p.status)).toEqual(['failed', 'failed', 'succeeded']);
    expect(payments[2].paymentMethod).toMatch(/^pm_/);
    expect(attachedTo(payments[2].paymentMethod)).toBe(await stripeCustomerOf(customerId));
    // The paid page runs no script and admits no Stripe origin.
    expect(await page.locator('script').count()).toBe(0);
    expect(violations).toEqual([]);
    await page.context().close();
  }, 60_000);

  test('a card the bank wants confirmed is saved once the customer passes the check in Stripe’s window; closing the window saves nothing', async () => {
    const customerId = await newCustomer('secure-browser@example.com');
    const { page, calls, violations } = await stripePage();
    await page.goto(await portalLink(customerId));
    await page.getByRole('button', { name: /^Continue as / }).click();
    await page.waitForURL((url) => !url.search.includes('customer_session_token'));
    await expect.poll(() => page.locator('#new-card-element').textContent()).toBe('Stripe card field: setup');

    // The customer closes the bank's window: the page says so, offers the way back, and saves nothing.
    inBanksWindow = () => 'closed';
    await setWindow(page, { nextToken: token('pm_card_authenticationRequired'), cardComplete: true });
    await page.getByRole('button', { name: 'Save card' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Confirm your card with your bank');
    await expect.poll(() => page.locator('#setup-next-action').textContent()).toBe('You closed the window before confirming.');
    expect(await page.getByRole('link', { name: 'Back to your payment methods' }).isVisible()).toBe(true);
    expect(await seriousViolationsUnderPolicy(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-stripe-bank-check-desktop.png`, fullPage: true });
    expect(await stripeCustomerOf(customerId).then((c) => double().objects<Stripe.PaymentMethod>('payment_method').filter((m) => c && m.customer === c))).toEqual([]);
    await page.getByRole('link', { name: 'Back to your payment methods' }).click();
    expect(new URL(page.url()).hash).toBe('#payment-methods');

    // Again, and this time the customer passes the check: the same token is posted again and the card saved.
    inBanksWindow = ({ clientSecret }) => {
      const [intent] = double().objects<Stripe.SetupIntent>('setup_intent').filter((s) => s.client_secret === clientSecret);
      double().authenticate(intent.id, 'succeed');
      return undefined;
    };
    await expect.poll(() => page.locator('#new-card-element').textContent()).toBe('Stripe card field: setup');
    await setWindow(page, { nextToken: token('pm_card_authenticationRequired'), cardComplete: true });
    await page.getByRole('button', { name: 'Save card' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent(), { timeout: 15_000 }).toContain('Your Visa ending in 3184 is saved.');
    expect(calls.filter(([name]) => name === 'handleNextAction')).toHaveLength(2);
    expect(await seriousViolationsUnderPolicy(page)).toEqual([]);
    expect(violations).toEqual([]);
    await page.context().close();
  }, 60_000);
});

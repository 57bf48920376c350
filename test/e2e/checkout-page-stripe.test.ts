// The hosted checkout page when Stripe takes the sandbox's payments (the Stripe API double behind
// STRIPE_API_URL, as in stripe.test.ts): the card field is Stripe's Payment Element, the status
// page runs the bank's 3-D Secure check, and only those two pages' policies admit Stripe's
// origins. js.stripe.com cannot be reached from the tests: the form is posted with tokens the
// double makes, as Stripe.js would, and the browser test serves a small stand-in for Stripe.js.
import { createHash } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { desktop, launchChromium, screenshots } from '../helpers/chromium.ts';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';
import { useSandboxStripe } from '../helpers/stripe.ts';

const stripeOrigins = /stripe\.com|stripe\.network/;

const { keys, env, double } = useSandboxStripe('pagekey1', { JOB_POLL_INTERVAL_MS: '50' });
const t = useTestServer({ env, organizations: { shop: 'sandbox' } });
let browser: Browser;
beforeAll(async () => {
  double().webhooks.addTarget({ url: `${t.server.base('sandbox')}/integrations/stripe/webhook`, secret: keys.webhook });
  browser = await launchChromium();
});
afterAll(() => browser?.close());

async function checkoutFor(prices: Record<string, unknown>[], recurringInterval: string | null = null) {
  const product = await t.shop.polar.products.create({ name: recurringInterval ? 'Pro plan' : 'Field guide', recurringInterval: recurringInterval as never, prices: prices as never });
  return t.shop.polar.checkouts.create({ products: [product.id] });
}
const usd = (priceAmount: number) => [{ amountType: 'fixed', priceAmount, priceCurrency: 'usd' }];

/** A page's policy, directive by directive. */
function policy(headers: Headers): Map<string, string[]> {
  const header = headers.get('content-security-policy') ?? '';
  return new Map(header.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...sources]) => [name, sources]));
}

/** The page's inline scripts, as the policy hashes them. */
function inlineScriptHashes(page: string): string[] {
  return [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, text]) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`);
}

/** Buys through the page's form, posting a ConfirmationToken of the card as Stripe.js would. */
async function postForm(url: string, card: string, fields: Record<string, string> = {}) {
  const buyer = new FormBrowser(t.server.url);
  const shown = await buyer.get(url);
  const token = double().confirmationToken(card).id;
  const posted = await buyer.post(url, { ...formFields(shown.text), email: 'buyer@example.com', country: 'US', ...fields, card: token });
  return { posted, token };
}

async function checkoutWhen(id: string, done: (c: { status: string; payment_processor_metadata: Record<string, string> }) => boolean, what: string) {
  return eventually(async () => (await t.shop.api('GET', `/checkouts/${id}`)).body, done, what);
}

async function intentOf(checkoutId: string): Promise<Stripe.PaymentIntent> {
  const payment = await eventually(
    () => t.server.kassa.environments.sandbox.environment.prisma.payment.findFirst({ where: { order: { checkoutId } } }),
    (p) => p?.processorId?.startsWith('pi_') ?? false,
    'the payment to reach Stripe',
  );
  return double().object<Stripe.PaymentIntent>(payment!.processorId!)!;
}

describe('the checkout page with Stripe', () => {
  test('mounts the Payment Element with the publishable key and the amount in minor units, behind a policy that admits Stripe and its own script by hash', async () => {
    const checkout = await checkoutFor(usd(1999));
    const shown = await new FormBrowser(t.server.url).get(checkout.url);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(`<div id="payment-element" data-publishable-key="${keys.publishable}" data-setup-future-usage="" data-amount="1999" data-amount-decimals="2" data-currency="usd"></div>`);
    expect(shown.text).toContain('<input type="hidden" name="card" value="">');
    expect(shown.text).not.toContain('tok_visa');
    expect(shown.text).toContain('<script src="https://js.stripe.com/v3/"></script>');

    const csp = policy(shown.headers);
    const hashes = inlineScriptHashes(shown.text);
    expect(hashes).toHaveLength(1);
    expect(csp.get('script-src')).toEqual([...hashes, 'https://js.stripe.com', 'https://*.js.stripe.com']);
    expect(csp.get('frame-src')).toEqual(['https://js.stripe.com', 'https://*.js.stripe.com', 'https://hooks.stripe.com']);
    expect(csp.get('connect-src')).toEqual(['https://api.stripe.com']);
    expect(csp.get('default-src')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(shown.headers.get('content-security-policy')).not.toContain('unsafe');
  });

  test('a subscription’s element saves the card for renewals; yen and krónur amounts are in Stripe’s unit', async () => {
    const plan = await new FormBrowser(t.server.url).get((await checkoutFor(usd(900), 'month')).url);
    expect(plan.text).toContain('data-setup-future-usage="off_session" data-amount="900" data-amount-decimals="2" data-currency="usd"');
    const yen = await new FormBrowser(t.server.url).get((await checkoutFor([{ amountType: 'fixed', priceAmount: 1999, priceCurrency: 'jpy' }])).url);
    expect(yen.text).toContain('data-amount="1999" data-amount-decimals="0" data-currency="jpy"');
    // ISK has no decimals in ISO 4217, and two in Stripe's API: 1,000 krónur are 100000.
    const kronur = await new FormBrowser(t.server.url).get((await checkoutFor([{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'isk' }])).url);
    expect(kronur.text).toContain('data-amount="100000" data-amount-decimals="2" data-currency="isk"');
  });

  test('posting the form with a ConfirmationToken in card confirms the checkout and pays the order', async () => {
    const checkout = await checkoutFor(usd(2500));
    const { posted, token } = await postForm(checkout.url, 'pm_card_visa');
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(`${new URL(checkout.url).pathname}/confirmation`);
    await checkoutWhen(checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    const orders = (await t.shop.api('GET', `/orders/?checkout_id=${checkout.id}`)).body.items;
    expect(orders.map((o: { status: string }) => o.status)).toEqual(['paid']);
    expect((await intentOf(checkout.id)).amount).toBe(2500);
    expect(double().requests.some((r) => r.method === 'GET' && r.path === `/v1/confirmation_tokens/${token}`)).toBe(true);
  });

  test('a refused token is shown next to the card field, on the page with the Payment Element', async () => {
    const checkout = await checkoutFor(usd(1500));
    const buyer = new FormBrowser(t.server.url);
    const shown = await buyer.get(checkout.url);
    const refused = await buyer.post(checkout.url, { ...formFields(shown.text), email: 'buyer@example.com', country: 'US', card: 'ctoken_doesnotexist' });
    expect(refused.status).toBe(422);
    expect(refused.text).toMatch(/<p class="error" id="card-error">[^<]*[Uu]nknown confirmation token/);
    expect(refused.text).toContain('id="payment-element"');
    // The refused token is not put back in the form.
    expect(refused.text).toContain('<input type="hidden" name="card" value="">');
  });

  test('the status page of a payment the bank wants confirmed runs Stripe’s check with that checkout’s secret only, and does not refresh under it', async () => {
    const checkout = await checkoutFor(usd(3100));
    const other = await checkoutFor(usd(3200));
    await postForm(checkout.url, 'pm_card_authenticationRequired');
    await postForm(other.url, 'pm_card_authenticationRequired');
    const waiting = await checkoutWhen(checkout.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the bank to ask the buyer');
    await checkoutWhen(other.id, (c) => c.payment_processor_metadata.intent_status === 'requires_action', 'the bank to ask the other buyer');
    const secret = waiting.payment_processor_metadata.intent_client_secret;
    expect(secret).toBe((await intentOf(checkout.id)).client_secret);

    const buyer = new FormBrowser(t.server.url);
    const status = await buyer.get(`${checkout.url}/confirmation`);
    expect(status.status).toBe(200);
    expect(status.text).toContain('<h1>Confirm with your bank</h1>');
    expect(status.text).toContain(`data-publishable-key="${keys.publishable}" data-client-secret="${secret}"`);
    expect(status.headers.get('refresh')).toBeNull();
    expect(status.text).not.toMatch(/http-equiv="refresh"/i);
    const csp = policy(status.headers);
    expect(csp.get('script-src')).toEqual([...inlineScriptHashes(status.text), 'https://js.stripe.com', 'https://*.js.stripe.com']);
    expect(csp.get('frame-src')).toContain('https://hooks.stripe.com');

    const otherStatus = await buyer.get(`${other.url}/confirmation`);
    expect(otherStatus.text).not.toContain(secret);
    expect(otherStatus.text).toContain((await intentOf(other.id)).client_secret!);

    // Back from Stripe's window: no secret, no Stripe, and the page refreshes until the webhook settles it.
    const back = await buyer.get(`${checkout.url}/confirmation?authenticated`);
    expect(back.text).toContain('Processing your payment');
    expect(back.text).not.toContain(secret);
    expect(back.headers.get('refresh')).toBe('2');
    expect(back.headers.get('content-security-policy')).not.toMatch(stripeOrigins);

    double().authenticate((await intentOf(checkout.id)).id, 'succeed');
    await checkoutWhen(checkout.id, (c) => c.status === 'succeeded', 'the checkout to succeed');
    const paid = await buyer.get(`${checkout.url}/confirmation`);
    expect(paid.text).toContain('<h1>Paid</h1>');
    expect(paid.headers.get('content-security-policy')).not.toMatch(stripeOrigins);
  });

  test('the portal and sign-in pages admit no Stripe origin and run no script', async () => {
    const customer = await t.shop.api('POST', '/customers/', { email: 'portal@example.com' });
    const session = await t.shop.api('POST', '/customer-sessions/', { customer_id: customer.body.id });
    const visitor = new FormBrowser(t.server.url);
    const portal = await visitor.get(session.body.customer_portal_url);
    expect(portal.status).toBe(200);
    const signIn = await visitor.get(`${t.server.url}/sandbox/oauth2/login`);
    expect(signIn.status).toBe(200);
    for (const shown of [portal, signIn]) {
      expect(shown.headers.get('content-security-policy')).not.toMatch(stripeOrigins);
      expect(shown.headers.get('content-security-policy')).not.toContain('script-src');
      expect(shown.text).not.toContain('<script');
    }
  });
});

describe('the checkout page with Stripe, in a browser', () => {
  // A stand-in for Stripe.js, served at its address: it tells the test what the page asks of it
  // (through `stripeCalled`, which outlives the page's navigations), refuses the first submit as
  // Stripe would an incomplete card, and answers createConfirmationToken with `window.nextToken`.
  const fakeStripeJs = `let submits = 0;
window.Stripe = (key) => {
  stripeCalled('Stripe', key);
  return {
    elements(options) {
      stripeCalled('elements', options);
      return {
        create(type) {
          return { mount(node) { node.textContent = 'Stripe card field: ' + type; } };
        },
        update(options) { stripeCalled('update', options); },
        async submit() {
          submits += 1;
          return submits === 1 && !window.cardComplete ? { error: { message: 'Your card number is incomplete.' } } : {};
        },
      };
    },
    async createConfirmationToken(options) {
      stripeCalled('createConfirmationToken', options.params);
      return { confirmationToken: { id: window.nextToken } };
    },
    async handleNextAction(options) {
      stripeCalled('handleNextAction', options);
      return {};
    },
  };
};`;

  /** A page that enforces the policy (no bypass), with Stripe.js's address answered by the stand-in. */
  async function stripePage(): Promise<{ page: Page; calls: [string, unknown][]; violations: string[] }> {
    const context = await browser.newContext({ viewport: desktop });
    context.setDefaultTimeout(10_000);
    const calls: [string, unknown][] = [];
    await context.exposeFunction('stripeCalled', (name: string, argument: unknown) => void calls.push([name, argument]));
    await context.route('https://js.stripe.com/v3/', (route) => route.fulfill({ status: 200, contentType: 'application/javascript', body: fakeStripeJs }));
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    return { page, calls, violations };
  }

  const setWindow = (page: Page, values: Record<string, unknown>) => page.evaluate((entries) => Object.assign(window, entries), values);

  test('submit shows Stripe’s error next to the field, then posts the ConfirmationToken in the form, which pays', async () => {
    const checkout = await checkoutFor([{ amountType: 'custom', minimumAmount: 500, maximumAmount: 5000, presetAmount: 1000, priceCurrency: 'usd' }]);
    const { page, calls, violations } = await stripePage();
    await page.goto(checkout.url);
    await expect.poll(() => page.locator('#payment-element').textContent()).toBe('Stripe card field: payment');
    await expect.poll(() => calls.length).toBe(2);
    expect(calls).toEqual([
      ['Stripe', keys.publishable],
      ['elements', { mode: 'payment', amount: 1000, currency: 'usd', paymentMethodCreation: 'manual' }],
    ]);

    await page.getByLabel(/^Amount/).fill('12.50');
    await expect.poll(() => calls.at(-1)).toEqual(['update', { amount: 1250 }]);
    await page.getByLabel('Email').fill('browser@example.com');
    await page.getByLabel('Name').fill('Ada Buyer');
    await page.getByLabel('Country').selectOption('DE');
    await page.getByLabel('Postal code').fill('10115');
    await page.getByRole('button', { name: 'Pay' }).click();
    await expect.poll(() => page.locator('#payment-element-error').textContent()).toBe('Your card number is incomplete.');
    expect(await page.locator('#payment-element-error').isVisible()).toBe(true);
    expect(page.url()).toBe(checkout.url);
    await page.screenshot({ path: `${screenshots}/checkout-stripe-error-desktop.png`, fullPage: true });

    const token = double().confirmationToken('pm_card_visa').id;
    await setWindow(page, { nextToken: token });
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(`${checkout.url}/confirmation`);
    expect(calls.find(([name]) => name === 'createConfirmationToken')).toEqual([
      'createConfirmationToken',
      { payment_method_data: { billing_details: { email: 'browser@example.com', name: 'Ada Buyer', address: { postal_code: '10115', country: 'DE' } } } },
    ]);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    expect((await t.shop.api('GET', `/checkouts/${checkout.id}`)).body.total_amount).toBe(1250);
    expect(double().object<Stripe.ConfirmationToken>(token)?.payment_intent).toBe((await intentOf(checkout.id)).id);
    expect(violations).toEqual([]);
    await page.context().close();
  });

  test('the status page opens the bank’s check with the intent’s secret, then refreshes until Stripe’s webhook pays the order', async () => {
    const checkout = await checkoutFor(usd(4200));
    const { page, calls, violations } = await stripePage();
    await page.goto(checkout.url);
    await expect.poll(() => page.locator('#payment-element').textContent()).toBe('Stripe card field: payment');
    await setWindow(page, { nextToken: double().confirmationToken('pm_card_authenticationRequired').id, cardComplete: true });
    await page.getByLabel('Email').fill('secure@example.com');
    await page.getByLabel('Country').selectOption('US');
    await page.getByRole('button', { name: 'Pay $42.00' }).click();
    await page.waitForURL(`${checkout.url}/confirmation`);
    // The status page refreshes while the payment job runs; once the bank asks, it opens the check, then comes back marked.
    await page.waitForURL(`${checkout.url}/confirmation?authenticated`, { timeout: 15_000 });
    const intent = await intentOf(checkout.id);
    expect(calls.filter(([name]) => name === 'handleNextAction')).toEqual([['handleNextAction', { clientSecret: intent.client_secret }]]);
    double().authenticate(intent.id, 'succeed');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    expect(violations).toEqual([]);
    await page.context().close();
  });
});

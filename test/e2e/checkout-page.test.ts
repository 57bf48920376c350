// The hosted checkout page in a real headless Chromium, as a buyer meets it: the checkout `url`
// made with the official client opens a page; the buyer pays with a test card and watches the
// order reach paid; a declined card and an amount out of bounds are explained next to their field.
// Screenshots at desktop and phone width go to test-artifacts/screenshots/; axe-core finds no
// serious or critical accessibility violation.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { desktop, launchChromium, openPage as openIn, phone, screenshots, seriousViolations } from '../helpers/chromium.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '200', JOB_POLL_INTERVAL_MS: '50' }, organizations: { org: 'sandbox' } });
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function checkoutFor(prices: Record<string, unknown>[], recurringInterval: string | null = null, extra: Record<string, unknown> = {}) {
  const product = await t.org.polar.products.create({ name: recurringInterval ? 'Pro plan' : 'Field guide', recurringInterval: recurringInterval as never, prices: prices as never });
  const checkout = await t.org.polar.checkouts.create({ products: [product.id], ...extra });
  return checkout;
}

async function pay(page: Page, email: string, card: string) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name').fill('Ada Buyer');
  await page.getByLabel('Country').selectOption('US');
  await page.getByLabel('Card').fill(card);
  await page.getByRole('button', { name: /^(Pay|Get it)/ }).click();
}

describe('the checkout page', () => {
  test('a buyer pays a one-time product with the test card and sees it paid, at desktop and phone width', async () => {
    for (const [size, viewport] of [['desktop', desktop], ['phone', phone]] as const) {
      const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 1999, priceCurrency: 'usd' }]);
      const page = await openPage(viewport);
      await page.goto(checkout.url);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Field guide');
      expect(await page.locator('.banner').textContent()).toContain('Sandbox');
      expect(await page.getByRole('button', { name: 'Pay $19.99' }).isVisible()).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: `${screenshots}/checkout-${size}.png`, fullPage: true });
      if (size === 'phone') expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

      await pay(page, `buyer-${size}@example.com`, 'tok_visa');
      // The status view refreshes itself until the order is paid: no reload by the buyer.
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: `${screenshots}/checkout-paid-${size}.png`, fullPage: true });
      const orders = await t.org.polar.orders.list({ checkoutId: checkout.id } as never);
      expect(orders.result.items.map((o) => o.status)).toEqual(['paid']);
      await page.context().close();
    }
  }, 90_000); // two viewports, each through two pages checked by axe-core

  test('a subscription is bought the same way, and the buyer lands on the success URL', async () => {
    const successOrigin = `http://localhost:${new URL(t.server.url).port}`;
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd' }], 'month', { successUrl: `${successOrigin}/healthz?merci=日本&checkout={CHECKOUT_ID}` });
    const page = await openPage();
    await page.goto(checkout.url);
    expect(await page.locator('.price').textContent()).toBe('$9.00 every month');
    await pay(page, 'subscriber@example.com', 'tok_visa');
    // Another origin than the page's, reached through the form's post: the page's policy allows it.
    await page.waitForURL(`${successOrigin}/healthz?merci=%E6%97%A5%E6%9C%AC&checkout=${checkout.id}`, { timeout: 15_000 });
    const subscriptions = await t.org.polar.subscriptions.list({ productId: checkout.productId } as never);
    expect(subscriptions.result.items.map((s) => s.status)).toEqual(['active']);
    await page.context().close();
  });

  test('works by keyboard alone: Tab through every field in order, type, Enter to pay, with a visible focus', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 300, priceCurrency: 'usd' }]);
    const page = await openPage();
    await page.goto(checkout.url);
    const focused = () => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.id || document.activeElement?.tagName.toLowerCase());
    const order: string[] = [];
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Tab');
      order.push((await focused())!);
      if (order.at(-1) === 'button') break;
    }
    // The discount code comes first, in its own form beside the order summary.
    expect(order).toEqual(['discount_code', 'apply-discount', 'email', 'name', 'country', 'line1', 'line2', 'postalCode', 'city', 'state', 'card', 'button']);
    // The focus ring is drawn (the stylesheet's :focus-visible outline), not left to chance.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await page.focus('#email');
    await page.keyboard.type('keys@example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    // The country picker chooses by typing the start of a name.
    await page.keyboard.type('Germany');
    expect(await page.locator('#country').inputValue()).toBe('DE');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    await page.context().close();
  });

  test('a declined card is said in words, nothing is charged, and the buyer pays with another card', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 500, priceCurrency: 'usd' }]);
    const page = await openPage();
    await page.goto(checkout.url);
    await pay(page, 'declined@example.com', 'tok_chargeDeclined');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Payment failed');
    expect(await page.getByRole('alert').textContent()).toBe('The card was declined. Nothing was charged.');
    await page.screenshot({ path: `${screenshots}/checkout-declined-desktop.png`, fullPage: true });

    await page.getByRole('link', { name: 'Try another card' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Your payment was declined');
    expect(await page.getByRole('alert').textContent()).toContain('The card was declined.');
    expect(await page.locator('table.summary').textContent()).toContain('$5.00');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/checkout-retry-desktop.png`, fullPage: true });
    await page.getByLabel('Card').fill('');
    await page.getByRole('button', { name: 'Pay $5.00' }).click();
    await expect.poll(() => page.locator('#card-error').textContent()).toContain('Required');
    await page.getByLabel('Card').fill('tok_visa');
    await page.getByRole('button', { name: 'Pay $5.00' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    const orders = await t.org.polar.orders.list({ checkoutId: checkout.id } as never);
    expect(orders.result.items.map((o) => [o.status, o.totalAmount])).toEqual([['paid', 500]]);
    await page.context().close();
  });

  test('the buyer applies a discount code: the summary shows it, an unknown code is said next to the field, and the order is discounted', async () => {
    const code = `SPRING${Date.now()}`;
    const discount = await t.org.polar.discounts.create({ name: 'Spring sale', code, type: 'percentage', basisPoints: 2500, duration: 'once' });
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 4000, priceCurrency: 'usd' }]);
    const page = await openPage();
    await page.goto(checkout.url);
    const summary = page.locator('table.summary');
    expect((await summary.innerText()).replace(/\s+/g, ' ')).toBe('Field guide $40.00 Total $40.00');

    await page.getByLabel('Discount code').fill('NOT-A-CODE');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('#discount_code-error').textContent()).toBeTruthy();
    expect(await page.getByLabel('Discount code').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Discount code').inputValue()).toBe('NOT-A-CODE');

    await page.getByLabel('Discount code').fill(code.toLowerCase());
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(async () => (await summary.innerText()).replace(/\s+/g, ' ')).toBe('Field guide $40.00 Spring sale −$10.00 Total $30.00');
    expect(await page.getByText(`Discount code ${code.toUpperCase()} applied.`).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Pay $30.00' }).isVisible()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/checkout-discount-desktop.png`, fullPage: true });

    await page.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(async () => (await summary.innerText()).replace(/\s+/g, ' ')).toBe('Field guide $40.00 Total $40.00');
    await page.getByLabel('Discount code').fill(code);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Pay $30.00' }).isVisible()).toBe(true);
    await pay(page, 'spring@example.com', 'tok_visa');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    const orders = await t.org.polar.orders.list({ checkoutId: checkout.id } as never);
    expect(orders.result.items.map((o) => [o.discountId, o.discountAmount, o.totalAmount])).toEqual([[discount.id, 1000, 3000]]);
    await page.context().close();
  });

  test('a checkout of several products lets the buyer choose one; the country is picked by name', async () => {
    const first = await t.org.polar.products.create({ name: 'Paperback', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'usd' }] });
    const second = await t.org.polar.products.create({ name: 'Hardcover', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 3500, priceCurrency: 'usd' }] });
    const checkout = await t.org.polar.checkouts.create({ products: [first.id, second.id], allowDiscountCodes: false });
    const page = await openPage();
    await page.goto(checkout.url);
    expect(await page.getByLabel('Discount code').count()).toBe(0);
    await page.getByLabel('Hardcover').check();
    await page.getByRole('button', { name: 'Update' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Hardcover');
    expect(await page.getByRole('button', { name: 'Pay $35.00' }).isVisible()).toBe(true);
    await page.getByLabel('Email').fill('picker@example.com');
    await page.getByLabel('Country').selectOption({ label: 'Germany' });
    await page.getByLabel('Card').fill('tok_visa');
    await page.getByRole('button', { name: 'Pay $35.00' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    const orders = await t.org.polar.orders.list({ checkoutId: checkout.id } as never);
    expect(orders.result.items.map((o) => [o.productId, o.billingAddress?.country])).toEqual([[second.id, 'DE']]);
    await page.context().close();
  });

  test('a success URL that is not http(s) is refused when the checkout is made or changed', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 500, priceCurrency: 'usd' }]);
    const changed = await t.org.api('PATCH', `/checkouts/${checkout.id}`, { success_url: 'javascript:alert(1)' });
    expect(changed.status).toBe(422);
    expect(changed.body.detail[0].loc).toEqual(['body', 'success_url']);
    const made = await t.org.api('POST', '/checkouts/', { products: [checkout.productId], success_url: 'https://' });
    expect(made.status).toBe(422);
  });

  test('an amount out of bounds, a missing email and an unknown card are shown next to their fields', async () => {
    const checkout = await checkoutFor([{ amountType: 'custom', minimumAmount: 500, maximumAmount: 5000, priceCurrency: 'usd' }]);
    const page = await openPage();
    await page.goto(checkout.url);
    await page.getByLabel(/^Amount/).fill('99.00');
    await page.getByLabel('Email').fill('tipper@example.com');
    await page.getByLabel('Country').selectOption('US');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.locator('#amount-error').textContent()).toBe('Enter an amount the seller accepts: from $5.00 to $50.00.');
    expect(await page.getByLabel(/^Amount/).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel(/^Amount/).inputValue()).toBe('99.00');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/checkout-errors-desktop.png`, fullPage: true });

    await page.getByLabel(/^Amount/).fill('999999999.99');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.locator('#amount-error').textContent()).toBe('Enter an amount, such as 12.50.');

    await page.getByLabel(/^Amount/).fill('12.50');
    await page.getByLabel('Email').fill('');
    await page.getByLabel('Card').fill('tok_nonsense');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.locator('#email-error').textContent()).toContain('Required');
    await page.getByLabel('Email').fill('tipper@example.com');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.locator('#card-error').textContent()).toBeTruthy();
    await page.getByLabel('Card').fill('tok_visa');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    const paid = await t.org.polar.checkouts.get({ id: checkout.id });
    expect(paid.totalAmount).toBe(1250);
    await page.context().close();
  });
});

describe('the checkout page without a browser', () => {
  test('refuses a post from another site or without its form token, and an unknown checkout is a 404 page', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 700, priceCurrency: 'usd' }]);
    const buyer = new FormBrowser(t.server.url);
    const shown = await buyer.get(checkout.url);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(shown.headers.get('x-frame-options')).toBe('DENY');
    const fields = { email: 'x@example.com', country: 'US', card: 'tok_visa' };
    const forged = await buyer.post(checkout.url, { ...formFields(shown.text), ...fields }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(forged.status).toBe(403);
    const tokenless = await buyer.post(checkout.url, { ...fields, form_token: 'forged' });
    expect(tokenless.status).toBe(403);
    expect((await t.org.polar.checkouts.get({ id: checkout.id })).status).toBe('open');
    const unknown = await buyer.get(`${t.server.url}/sandbox/checkout/service_c_${'x'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('Checkout not found');
  });

  test('the country picker offers the ISO 3166-1 countries by name; a code that is none is refused next to the field', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 700, priceCurrency: 'usd' }]);
    const buyer = new FormBrowser(t.server.url);
    const shown = await buyer.get(checkout.url);
    const options = [...shown.text.matchAll(/<option value="([A-Z]{2})"/g)].map((m) => m[1]);
    expect(options).toHaveLength(250);
    expect(options).toEqual(expect.arrayContaining(['US', 'DE', 'GB', 'XK']));
    expect(options).not.toContain('UK');
    expect(shown.text).toContain('<option value="DE">Germany</option>');
    // A post from an older page or a hand-made form: UK is no ISO code (GB is).
    const refused = await buyer.post(checkout.url, { ...formFields(shown.text), email: 'uk@example.com', country: 'UK', card: 'tok_visa' });
    expect(refused.status).toBe(422);
    expect(refused.text).toMatch(/<p class="error" id="country-error">[^<]*ISO 3166-1/);
    expect((await t.org.polar.checkouts.get({ id: checkout.id })).status).toBe('open');
  });

  test('the change form refuses a post from another site, an unknown action and an empty code, and changes nothing', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd' }]);
    const buyer = new FormBrowser(t.server.url);
    const shown = await buyer.get(checkout.url);
    const fields = formFields(shown.text);
    const forged = await buyer.post(`${checkout.url}/update`, { ...fields, action: 'remove_discount' }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(forged.status).toBe(403);
    const unknown = await buyer.post(`${checkout.url}/update`, { ...fields, action: 'set_price' });
    expect(unknown.status).toBe(400);
    const empty = await buyer.post(`${checkout.url}/update`, { ...fields, action: 'apply_discount', discount_code: '  ' });
    expect(empty.status).toBe(422);
    expect(empty.text).toContain('Enter a discount code.');
    const otherProduct = await buyer.post(`${checkout.url}/update`, { ...fields, action: 'choose_product', product_id: '00000000-0000-4000-8000-000000000000' });
    expect(otherProduct.status).toBe(422);
    expect(otherProduct.text).toContain('Choose one of the products offered.');
    const malformed = await buyer.post(`${checkout.url}/update`, { ...fields, action: 'choose_product', product_id: 'not-a-uuid' });
    expect(malformed.status).toBe(422);
    expect(malformed.text).toContain('Choose one of the products offered.');
    expect(malformed.text).not.toContain('Variable');
    const after = await t.org.polar.checkouts.get({ id: checkout.id });
    expect([after.status, after.productId, after.discountId, after.totalAmount]).toEqual(['open', checkout.productId, null, 900]);
  });

  test('without Stripe, the card field is the test card token field, and the page and its status page run no script and admit no other origin', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 800, priceCurrency: 'usd' }]);
    const buyer = new FormBrowser(t.server.url);
    const shown = await buyer.get(checkout.url);
    expect(shown.text).toMatch(/<input type="text" id="card" name="card" value="tok_visa" required autocomplete="off" aria-describedby="card-hint">/);
    expect(shown.text).not.toContain('payment-element');
    await buyer.post(checkout.url, { ...formFields(shown.text), email: 'plain@example.com', country: 'US', card: 'tok_visa' });
    const status = await buyer.get(`${checkout.url}/confirmation`);
    for (const answer of [shown, status]) {
      const policy = answer.headers.get('content-security-policy')!;
      expect(policy).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/);
      expect(answer.text).not.toContain('<script');
    }
  });

  test('shows a yen price without decimals and a Kuwaiti dinar price with three, and reads a typed amount in them', async () => {
    const buyer = new FormBrowser(t.server.url);
    const yen = await buyer.get((await checkoutFor([{ amountType: 'fixed', priceAmount: 1999, priceCurrency: 'jpy' }])).url);
    expect(yen.text).toContain('<p class="price"><strong>¥1,999</strong></p>');
    expect(yen.text).toContain('Pay ¥1,999</button>');
    const dinars = await buyer.get((await checkoutFor([{ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'kwd' }])).url);
    expect(dinars.text).toContain('<p class="price"><strong>KWD\u00a01.500</strong></p>');

    const custom = await checkoutFor([{ amountType: 'custom', minimumAmount: 1000, maximumAmount: 50000, presetAmount: 2000, priceCurrency: 'kwd' }]);
    const shown = await buyer.get(custom.url);
    expect(shown.text).toContain('Pay what you want, from KWD\u00a01.000 to KWD\u00a050.000');
    expect(shown.text).toMatch(/id="amount" name="amount" value="2\.000"/);
    const tooPrecise = await buyer.post(custom.url, { ...formFields(shown.text), amount: '2.5005', email: 'dinar@example.com', country: 'KW', card: 'tok_visa' });
    expect(tooPrecise.text).toContain('Enter an amount, such as 12.500.');
    await buyer.post(custom.url, { ...formFields(shown.text), amount: '2.5', email: 'dinar@example.com', country: 'KW', card: 'tok_visa' });
    expect((await t.org.polar.checkouts.get({ id: custom.id })).totalAmount).toBe(2500);
  });

  test('an expired checkout says so instead of taking a payment', async () => {
    const checkout = await checkoutFor([{ amountType: 'fixed', priceAmount: 700, priceCurrency: 'usd' }]);
    t.server.clock.now = new Date(Date.now() + 2 * 3600_000);
    try {
      await eventually(() => t.org.polar.checkouts.get({ id: checkout.id }), (c) => c.status === 'expired', 'the checkout to expire');
      const buyer = new FormBrowser(t.server.url);
      for (const url of [checkout.url, `${checkout.url}/confirmation`]) {
        const shown = await buyer.get(url);
        expect(shown.status).toBe(410);
        expect(shown.text).toContain('Checkout expired');
      }
      const posted = await buyer.post(checkout.url, { email: 'late@example.com', card: 'tok_visa' });
      expect(posted.status).toBe(410);
      expect((await t.org.polar.checkouts.get({ id: checkout.id })).status).toBe('expired');
    } finally {
      t.server.clock.now = null;
    }
  });
});

/** A fresh page of this file's browser. */
function openPage(viewport = desktop): Promise<Page> {
  return openIn(browser, viewport);
}

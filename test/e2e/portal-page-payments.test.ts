// The portal page's "Payment methods" section with the built-in test processor, in a real headless
// Chromium and by plain form posts: a customer whose card was declined sees the failed payment at
// the top, pays it again from the section with a test card token, watches the outcome (declined
// again, with the reason in words; then paid), and a missing card is said next to its field. The
// test processor keeps no cards, so the section lists none and offers no "Add a card". From the
// attacker's side: a post from another origin or without the form's token, another customer's
// order and a method that is not the customer's change nothing. The failed-payment email's link
// opens the portal at the section, after signing in.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { desktop, launchChromium, openPage, phone, screenshots, seriousViolations } from '../helpers/chromium.ts';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { declinedOrder, fixedProduct } from '../helpers/purchases.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

// The slow test cards answer after two seconds: the tests read the pending page and post a second
// payment while the first is in flight, which a loaded machine did not always manage within 100 ms.
const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '2000', JOB_POLL_INTERVAL_MS: '50' }, organizations: { org: 'sandbox' } });
let browser: Browser;
let productId: string;

beforeAll(async () => {
  browser = await launchChromium();
  productId = (await fixedProduct(t.org, 'Course', 4900)).id;
});
afterAll(async () => {
  await browser?.close();
});

const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;
const paymentsOf = (orderId: string) => prisma().payment.findMany({ where: { orderId }, orderBy: { createdAt: 'asc' }, select: { id: true, status: true, paymentMethod: true } });

async function portalLink(customerId: string): Promise<string> {
  const session = await t.org.api('POST', '/customer-sessions/', { customer_id: customerId });
  expect(session.status).toBe(201);
  return session.body.customer_portal_url;
}

/** A customer whose purchase was declined: their id, the unpaid order, and the failed payment written. */
async function declinedCustomer(email: string) {
  const order = await declinedOrder(t.org, productId, email);
  await eventually(() => paymentsOf(order.id), (p) => p.length === 1 && p[0].status === 'failed', 'the payment to fail');
  return { customerId: order.customerId, orderId: order.id };
}

async function signIn(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: /^Continue as / }).click();
  await page.waitForURL((url) => !url.search.includes('customer_session_token'));
}

/** Signs a form browser in from the link; answers the portal page's address and its text. */
async function signInByForm(visitor: FormBrowser, link: string) {
  const shown = await visitor.get(link);
  const continued = await visitor.post(`${new URL(link).origin}${new URL(link).pathname}/continue`, formFields(shown.text));
  expect(continued.status).toBe(303);
  const portal = new URL(continued.location!, t.server.url).toString();
  const page = await visitor.get(portal);
  expect(page.status).toBe(200);
  return { portal, page: page.text, formToken: /name="form_token" value="([^"]+)"/.exec(page.text)![1] };
}

describe('the payment methods section with the test processor, in a browser', () => {
  test('shows the failed payment, pays it again: declined again with the reason in words, then paid', async () => {
    const { customerId, orderId } = await declinedCustomer('declined-browser@example.com');
    for (const [size, viewport] of [['desktop', desktop], ['phone', phone]] as const) {
      const page = await openPage(browser, viewport);
      await signIn(page, await portalLink(customerId));
      expect(await page.getByRole('note').filter({ hasText: 'A payment failed' }).count()).toBe(1);
      const section = page.locator('section[aria-labelledby="payment-methods"]');
      expect(await section.getByRole('heading', { name: 'Payment methods' }).count()).toBe(1);
      const item = section.locator(`#pay-${orderId}`);
      expect(await item.textContent()).toContain('The card was declined.');
      expect(await item.textContent()).toContain('$49.00');
      expect(await section.textContent()).toContain('Cards are not kept here');
      expect(await section.getByRole('button', { name: 'Save card' }).count()).toBe(0);
      // The test processor needs no script: the page runs none and admits no other origin.
      expect(await page.locator('script').count()).toBe(0);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: `${screenshots}/portal-payment-failed-${size}.png`, fullPage: true });
      if (size === 'phone') expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await page.context().close();
    }

    const page = await openPage(browser);
    await signIn(page, await portalLink(customerId));
    // The reminder's link goes to the section.
    await page.getByRole('link', { name: 'Pay it now' }).click();
    expect(new URL(page.url()).hash).toBe('#payment-methods');

    // No card: said next to the field, and nothing is charged.
    const item = page.locator(`#pay-${orderId}`);
    await item.getByRole('button', { name: 'Pay $49.00 now' }).click();
    await expect.poll(() => page.locator(`#pay-${orderId}-card-error`).textContent()).toBe('Required: the card to pay with.');
    expect(await page.locator(`#pay-${orderId}-card`).getAttribute('aria-invalid')).toBe('true');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-payment-card-missing-desktop.png`, fullPage: true });
    expect(await paymentsOf(orderId)).toHaveLength(1);

    // A card that is declined again: the outcome page says why.
    await page.locator(`#pay-${orderId}`).getByLabel('Card').fill('tok_chargeDeclined');
    await page.locator(`#pay-${orderId}`).getByRole('button', { name: 'Pay $49.00 now' }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/orders/${orderId}/payment`));
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Payment declined');
    expect(await page.getByRole('alert').textContent()).toContain('The card was declined.');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-payment-declined-desktop.png`, fullPage: true });

    // Another card, from the link back to the section: paid.
    await page.getByRole('link', { name: 'Pay with another card' }).click();
    expect(new URL(page.url()).hash).toBe('#payment-methods');
    await page.locator(`#pay-${orderId}`).getByLabel('Card').fill('tok_delayedSuccess');
    await page.locator(`#pay-${orderId}`).getByRole('button', { name: 'Pay $49.00 now' }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/orders/${orderId}/payment`));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Processing your payment…');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-payment-pending-desktop.png`, fullPage: true });
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-payment-paid-desktop.png`, fullPage: true });
    expect((await paymentsOf(orderId)).map((p) => [p.status, p.paymentMethod])).toEqual([
      ['failed', 'tok_chargeDeclined'],
      ['failed', 'tok_chargeDeclined'],
      ['succeeded', 'tok_delayedSuccess'],
    ]);
    expect(await t.org.polar.orders.get({ id: orderId })).toMatchObject({ status: 'paid', paid: true });

    // Paid, the order leaves the section and the reminder goes.
    await page.getByRole('link', { name: 'Back to your purchases' }).click();
    expect(await page.locator(`#pay-${orderId}`).count()).toBe(0);
    expect(await page.getByRole('note').filter({ hasText: 'A payment failed' }).count()).toBe(0);
    await page.context().close();
  }, 90_000);
});

describe('the payment posts, without a browser', () => {
  test('a post from another origin, or without the form token, is refused and charges nothing', async () => {
    const { customerId, orderId } = await declinedCustomer('forged@example.com');
    const visitor = new FormBrowser(t.server.url);
    const { portal, formToken } = await signInByForm(visitor, await portalLink(customerId));
    const pay = `${portal}/orders/${orderId}/pay`;

    const forged = await visitor.post(pay, { form_token: formToken, payment_method: 'new', card: 'tok_visa' }, { origin: 'https://evil.example' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('This form did not come from this page.');
    const crossSite = await visitor.post(pay, { form_token: formToken, payment_method: 'new', card: 'tok_visa' }, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const noToken = await visitor.post(pay, { payment_method: 'new', card: 'tok_visa' });
    expect(noToken.status).toBe(403);
    const wrongToken = await visitor.post(pay, { form_token: 'x'.repeat(43), payment_method: 'new', card: 'tok_visa' });
    expect(wrongToken.status).toBe(403);
    for (const path of ['payment-methods', 'payment-methods/pm_card_visa/default', 'payment-methods/pm_card_visa/remove']) {
      expect((await visitor.post(`${portal}/${path}`, { card: 'tok_visa' }, { origin: 'https://evil.example' })).status).toBe(403);
    }
    // Signed out, nothing is done either.
    const stranger = new FormBrowser(t.server.url);
    expect((await stranger.post(pay, { form_token: formToken, payment_method: 'new', card: 'tok_visa' })).status).toBe(401);
    expect(await paymentsOf(orderId)).toHaveLength(1);
  });

  test("another customer's order is answered as not theirs, and charges nothing", async () => {
    const ada = await declinedCustomer('ada-pay@example.com');
    const bob = await declinedCustomer('bob-pay@example.com');
    const visitor = new FormBrowser(t.server.url);
    const { portal, page, formToken } = await signInByForm(visitor, await portalLink(ada.customerId));
    expect(page).toContain(`id="pay-${ada.orderId}"`);
    expect(page).not.toContain(bob.orderId);

    const refused = await visitor.post(`${portal}/orders/${bob.orderId}/pay`, { form_token: formToken, payment_method: 'new', card: 'tok_visa' });
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('This order is not one of yours: nothing was changed.');
    expect(await paymentsOf(bob.orderId)).toHaveLength(1);
    const status = await visitor.get(`${portal}/orders/${bob.orderId}/payment`);
    expect(status.status).toBe(404);
    expect(status.text).toContain('This order is not one of yours.');
    expect(status.text).not.toContain(bob.orderId);
    expect((await visitor.post(`${portal}/orders/not-an-order/pay`, { form_token: formToken, card: 'tok_visa' })).status).toBe(404);
    expect((await visitor.get(`${portal}/orders/not-an-order/payment`)).status).toBe(404);
  });

  test('bad input is said next to its field, in words, and charges nothing', async () => {
    const { customerId, orderId } = await declinedCustomer('bad-input@example.com');
    const visitor = new FormBrowser(t.server.url);
    const { portal, formToken } = await signInByForm(visitor, await portalLink(customerId));
    const pay = `${portal}/orders/${orderId}/pay`;

    const unknown = await visitor.post(pay, { form_token: formToken, payment_method: 'new', card: 'tok_unknown' });
    expect(unknown.status).toBe(422);
    expect(unknown.text).toMatch(new RegExp(`<p class="error" id="pay-${orderId}-card-error">Unknown payment method. In sandbox, use a test card: tok_visa`));
    expect(unknown.text).toContain('Nothing was changed: see Payment methods below.');
    const empty = await visitor.post(pay, { form_token: formToken, payment_method: 'new', card: '  ' });
    expect(empty.status).toBe(422);
    expect(empty.text).toContain(`<p class="error" id="pay-${orderId}-card-error">Required: the card to pay with.</p>`);
    // A saved method that is not the customer's (the test processor keeps none).
    const saved = await visitor.post(pay, { form_token: formToken, payment_method: 'pm_someone_else' });
    expect(saved.status).toBe(422);
    expect(saved.text).toMatch(new RegExp(`<p class="error" id="pay-${orderId}-method-error">Unknown payment method`));
    expect(await paymentsOf(orderId)).toHaveLength(1);

    // Cards are not kept by the test processor: none to add, make default or remove.
    const add = await visitor.post(`${portal}/payment-methods`, { form_token: formToken, card: 'tok_visa', set_default: 'yes' });
    expect(add.status).toBe(400);
    expect(add.text).toContain('<p class="error" role="alert">This environment&#39;s payment processor (test) keeps no saved payment methods');
    for (const change of ['default', 'remove']) {
      const refused = await visitor.post(`${portal}/payment-methods/tok_visa/${change}`, { form_token: formToken });
      expect(refused.status).toBe(404);
      expect(refused.text).toContain('This payment method is not one of yours: nothing was changed.');
    }
  });

  test('a pending retry refuses a second one; the outcome page refreshes itself until it is settled', async () => {
    const { customerId, orderId } = await declinedCustomer('pending@example.com');
    const visitor = new FormBrowser(t.server.url);
    const { portal, formToken } = await signInByForm(visitor, await portalLink(customerId));
    const pay = `${portal}/orders/${orderId}/pay`;
    const first = await visitor.post(pay, { form_token: formToken, payment_method: 'new', card: 'tok_delayedFailure' });
    expect(first.status).toBe(303);
    expect(first.location).toBe(`${new URL(portal).pathname}/orders/${orderId}/payment`);
    const pending = await visitor.get(first.location!);
    expect(pending.text).toContain('<h1>Processing your payment…</h1>');
    expect(pending.headers.get('refresh')).toBe('2');
    const second = await visitor.post(pay, { form_token: formToken, payment_method: 'new', card: 'tok_visa' });
    expect(second.status).toBe(409);
    expect(second.text).toContain('A payment of this order is being processed');
    const declined = await eventually(() => visitor.get(first.location!), (r) => r.text.includes('<h1>Payment declined</h1>'), 'the retry to fail');
    expect(declined.text).toContain('An error occurred while processing the card. Try again later. Nothing was charged.');
    expect(declined.headers.get('refresh')).toBeNull();
    expect((await paymentsOf(orderId)).map((p) => p.status)).toEqual(['failed', 'failed']);
  });
});

describe('the failed-payment email’s link', () => {
  test('opens the portal at the payment methods, once the customer is signed in', async () => {
    const { customerId } = await declinedCustomer('email-link@example.com');
    const slug = (await t.org.api('GET', `/organizations/${t.org.organizationId}`)).body.slug as string;
    const signInUrl = `${t.server.url}/sandbox/portal/${slug}/sign-in?next=payment-methods`;

    // Signed out: the sign-in form remembers where to go, and signing in lands there.
    const visitor = new FormBrowser(t.server.url);
    const form = await visitor.get(signInUrl);
    expect(form.status).toBe(200);
    expect(visitor.cookies.get('kassa_sandbox_portal_next')).toBe('payment-methods');
    const link = await portalLink(customerId);
    const shown = await visitor.get(link);
    const continued = await visitor.post(`${new URL(link).origin}${new URL(link).pathname}/continue`, formFields(shown.text));
    expect(continued.status).toBe(303);
    expect(continued.location).toBe(`/sandbox/portal/${slug}#payment-methods`);
    expect(visitor.cookies.has('kassa_sandbox_portal_next')).toBe(false);

    // Signed in already: straight to the section. Any other section name is ignored.
    const again = await visitor.get(signInUrl);
    expect(again.status).toBe(303);
    expect(again.location).toBe(`/sandbox/portal/${slug}#payment-methods`);
    const other = await visitor.get(signInUrl.replace('payment-methods', 'https://evil.example'));
    expect(other.location).toBe(`/sandbox/portal/${slug}`);
    expect(visitor.cookies.has('kassa_sandbox_portal_next')).toBe(false);
  });
});

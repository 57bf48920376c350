// The customer portal page in a real headless Chromium: the customer follows the portal link from
// a customer session, confirms whose portal it is ("Continue as …"), lands signed in with the token
// gone from the address bar, generates and
// downloads an invoice, cancels and resumes a subscription, sees benefits and license keys, and
// signs out. Another customer's link never shows this customer's data, and forms from elsewhere
// change nothing. Screenshots at desktop and phone width; axe-core finds nothing serious.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { desktop, launchChromium, openPage as openIn, phone, screenshots, seriousViolations } from '../helpers/chromium.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '100', JOB_POLL_INTERVAL_MS: '50' }, organizations: { org: 'sandbox' } });
let browser: Browser;
let customerId: string;
let subscriptionId: string;

beforeAll(async () => {
  browser = await launchChromium();
  const guide = await fixedProduct(t.org, 'Field guide', 1999);
  const key = await t.org.api('POST', '/benefits/', { type: 'license_keys', description: 'Field guide license', properties: {} });
  expect(key.status).toBe(201);
  expect((await t.org.api('POST', `/products/${guide.id}/benefits`, { benefits: [key.body.id] })).status).toBe(200);
  const plan = await fixedProduct(t.org, 'Pro plan', 900, 'month');
  // The organization creates the buyer, so both checkouts reach one customer.
  expect((await t.org.api('POST', '/customers/', { email: 'portal-buyer@example.com' })).status).toBe(201);
  const order = await buy(t.org, guide.id, 'portal-buyer@example.com', 'Ada Buyer');
  customerId = order.customerId;
  await buy(t.org, plan.id, 'portal-buyer@example.com', 'Ada Buyer');
  const subscriptions = await eventually(() => t.org.polar.subscriptions.list({ customerId } as never), (r) => r.result.items.length === 1 && r.result.items[0].status === 'active', 'the subscription to be active');
  subscriptionId = subscriptions.result.items[0].id;
  await eventually(() => t.org.api('GET', `/license-keys/?organization_id=${t.org.organizationId}`), (r) => r.body.items?.length === 1, 'the license key to be granted');
});
afterAll(async () => {
  await browser?.close();
});

async function portalLink(id = customerId): Promise<string> {
  const session = await t.org.api('POST', '/customer-sessions/', { customer_id: id });
  expect(session.status).toBe(201);
  return session.body.customer_portal_url;
}

/** Opens the link and continues as its customer, as the customer does. */
async function signIn(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: /^Continue as / }).click();
  await page.waitForURL((url) => !url.search.includes('customer_session_token'));
}

/** The same without a browser: the link's page, then its form; answers the portal's address. */
async function signInByForm(visitor: FormBrowser, link: string): Promise<string> {
  const shown = await visitor.get(link);
  expect(shown.status).toBe(200);
  const continued = await visitor.post(`${new URL(link).origin}${new URL(link).pathname}/continue`, formFields(shown.text));
  expect(continued.status).toBe(303);
  return new URL(continued.location!, t.server.url).toString();
}

describe('the customer portal page', () => {
  test('signs the customer in from the link once they continue, drops the token from the address, and lists what they bought', async () => {
    for (const [size, viewport] of [['desktop', desktop], ['phone', phone]] as const) {
      const link = await portalLink();
      const page = await openPage(viewport);
      await page.goto(link);
      // Opening the link names the customer and signs nobody in.
      expect(await page.getByRole('button', { name: 'Continue as portal-buyer@example.com' }).count()).toBe(1);
      expect(await page.context().cookies()).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: `${screenshots}/portal-continue-${size}.png`, fullPage: true });
      await page.getByRole('button', { name: 'Continue as portal-buyer@example.com' }).click();
      await page.waitForURL((url) => !url.search.includes('customer_session_token'));
      expect(page.url()).not.toContain('customer_session_token');
      expect(new URL(page.url()).pathname).toMatch(/^\/sandbox\/portal\/[\w-]+$/);
      const cookie = (await page.context().cookies()).find((c) => c.name === 'kassa_sandbox_portal')!;
      expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/sandbox/portal' });
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your purchases');
      const text = await page.locator('main').textContent();
      for (const expected of ['Field guide', 'Pro plan', '$19.99', '$9.00 every month', 'Field guide license', 'portal-buyer@example.com']) expect(text).toContain(expected);
      expect(await page.locator('.banner').textContent()).toContain('Sandbox');
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: `${screenshots}/portal-${size}.png`, fullPage: true });
      if (size === 'phone') expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await page.context().close();
    }
  }, 90_000); // two viewports, each through two pages checked by axe-core

  test('generates the invoice with the billing details given, then downloads it as a PDF; the details are frozen after', async () => {
    const page = await openPage();
    await signIn(page, await portalLink());
    const item = page.locator('li.item', { hasText: 'Field guide' }).first();
    await item.getByLabel('Billing name').fill('Ada Buyer Ltd');
    await item.getByLabel('Country').selectOption('GB');
    await item.getByLabel('City').fill('London');
    await item.getByLabel('Address line 2').fill('Flat 9');
    await item.getByLabel('State or region').fill('Greater London');
    await item.getByRole('button', { name: 'Generate invoice' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The invoice is ready');
    const href = await page.getByRole('link', { name: 'Download invoice' }).getAttribute('href');
    const pdf = await page.context().request.get(new URL(href!, t.server.url).toString());
    expect(pdf.status()).toBe(200);
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    expect((await pdf.body()).subarray(0, 5).toString()).toBe('%PDF-');
    expect(await page.locator('li.item', { hasText: 'Field guide' }).getByRole('button', { name: 'Generate invoice' }).count()).toBe(0);
    const orders = await t.org.polar.orders.list({ customerId } as never);
    const invoiced = orders.result.items.find((o) => o.product.name === 'Field guide')!;
    expect(invoiced).toMatchObject({ billingName: 'Ada Buyer Ltd', isInvoiceGenerated: true, billingAddress: { country: 'GB', city: 'London', line2: 'Flat 9', state: 'Greater London' } });
    await page.screenshot({ path: `${screenshots}/portal-invoice-desktop.png`, fullPage: true });
    await page.context().close();
  });

  test('cancels the subscription at period end, then resumes it', async () => {
    const page = await openPage();
    await signIn(page, await portalLink());
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('will end at the end of the paid period');
    expect(await page.locator('section[aria-labelledby="subscriptions"] li.item', { hasText: 'Pro plan' }).textContent()).toContain('Cancels on');
    expect((await t.org.polar.subscriptions.get({ id: subscriptionId })).cancelAtPeriodEnd).toBe(true);
    await page.screenshot({ path: `${screenshots}/portal-canceled-desktop.png`, fullPage: true });
    await page.getByRole('button', { name: 'Resume subscription' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('goes on');
    expect((await t.org.polar.subscriptions.get({ id: subscriptionId })).cancelAtPeriodEnd).toBe(false);
    await page.context().close();
  });

  test('works by keyboard alone: Tab reaches every form and button, Enter acts', async () => {
    const page = await openPage();
    await signIn(page, await portalLink());
    const reached: string[] = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      const label = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        return element?.tagName === 'BUTTON' || element?.tagName === 'A' ? element.textContent!.trim() : (element?.id ?? '');
      });
      reached.push(label);
      if (label === 'Sign out') break;
    }
    for (const control of ['Download invoice', 'Generate invoice', 'Cancel subscription', 'Sign out']) expect(reached).toContain(control);
    // Back to the cancel button, by keyboard, and Enter cancels.
    for (let i = 0; i < 40 && (await page.evaluate(() => document.activeElement?.textContent?.trim())) !== 'Cancel subscription'; i++) await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('will end at the end of the paid period');
    await page.getByRole('button', { name: 'Resume subscription' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('goes on');
    await page.context().close();
  });

  test('the link signs in once; signing out ends the session for the page and for the API', async () => {
    const link = await portalLink();
    const linkToken = new URL(link).searchParams.get('customer_session_token')!;
    const me = (token: string) => fetch(`${t.server.base('sandbox')}/customer-portal/customers/me`, { headers: { authorization: `Bearer ${token}` } });
    const page = await openPage();
    await signIn(page, link);
    const cookieToken = (await page.context().cookies()).find((c) => c.name === 'kassa_sandbox_portal')!.value;
    // The cookie holds a session of its own; the link's token was spent on the way in.
    expect(cookieToken).not.toBe(linkToken);
    expect((await me(linkToken)).status).toBe(401);
    expect((await me(cookieToken)).status).toBe(200);
    const again = await new FormBrowser(t.server.url).get(link);
    expect(again.status).toBe(401);
    expect(again.text).not.toContain('Continue as');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Signed out');
    await page.reload();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Signed out');
    expect((await me(cookieToken)).status).toBe(401);
    await page.context().close();
  });

  test("a page on another site that posts a victim's browser into the attacker's portal leaves it signed out", async () => {
    // The attacker opens their own link, copies its form, and has the victim's browser submit it.
    const link = await portalLink();
    const fields = formFields((await new FormBrowser(t.server.url).get(link)).text);
    const action = `${new URL(link).origin}${new URL(link).pathname}/continue`;
    const page = await openPage();
    const hidden = Object.entries(fields).map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`).join('');
    await page.setContent(`<form method="post" action="${action}">${hidden}</form>`);
    await Promise.all([page.waitForURL(action), page.locator('form').evaluate((form: HTMLFormElement) => form.submit())]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not signed in');
    expect(await page.context().cookies()).toEqual([]);
    await page.context().close();
  });
});

describe('the portal page without a browser', () => {
  test("opening a link sets no cookie and spends nothing; only the page's own form signs in", async () => {
    const link = await portalLink();
    const attacker = new FormBrowser(t.server.url);
    const shown = await attacker.get(link);
    expect(shown.status).toBe(200);
    expect(shown.headers.getSetCookie()).toEqual([]);
    expect(shown.headers.get('referrer-policy')).toBe('no-referrer');
    expect(shown.text).toContain('Continue as portal-buyer@example.com');
    expect(shown.text).not.toContain('Field guide');
    const fields = formFields(shown.text);
    const action = `${new URL(link).origin}${new URL(link).pathname}/continue`;
    // Posted from another site, from a page that hides where it comes from, or with a forged token: refused, no cookie.
    for (const [form, headers] of [
      [fields, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
      [fields, { origin: 'https://evil.example' }],
      [fields, { origin: 'null' }],
      [fields, { 'sec-fetch-site': 'same-site' }],
      [{ ...fields, form_token: 'forged' }, {}],
    ] as [Record<string, string>, Record<string, string>][]) {
      const victim = new FormBrowser(t.server.url);
      const refused = await victim.post(action, form, headers);
      expect(refused.status).toBe(403);
      expect(refused.headers.getSetCookie()).toEqual([]);
    }
    // A post that says nothing of where it comes from is refused too: this form's token is no secret to the link's sender.
    const silent = await fetch(action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
    expect(silent.status).toBe(403);
    expect(silent.headers.getSetCookie()).toEqual([]);
    // None of that spent the link: its customer can still continue, once.
    const customer = new FormBrowser(t.server.url);
    const portal = await signInByForm(customer, link);
    expect((await customer.get(portal)).text).toContain('Your purchases');
    expect((await new FormBrowser(t.server.url).post(action, fields)).status).toBe(401);
  });

  test("another customer's link shows only their own purchases; a link for another organization's portal or a used link shows nothing", async () => {
    const other = await t.org.api('POST', '/customers/', { email: 'someone-else@example.com' });
    const visitor = new FormBrowser(t.server.url);
    const shown = await visitor.get(await signInByForm(visitor, await portalLink(other.body.id)));
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('someone-else@example.com');
    expect(shown.text).not.toContain('Field guide');
    expect(shown.text).not.toContain('portal-buyer@example.com');

    const link = new URL(await portalLink());
    const elsewhere = await new FormBrowser(t.server.url).get(`${t.server.url}/sandbox/portal/another-org${link.search}`);
    expect(elsewhere.status).toBe(401);
    // A checkout's session (handed to whoever confirmed it) is no portal sign-in.
    const checkout = await t.org.polar.checkouts.create({ products: [(await fixedProduct(t.org, 'Sticker', 300)).id] });
    const confirmed = await t.org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: 'sticker@example.com', confirmationTokenId: 'tok_visa' } });
    const slug = new URL(link).pathname.split('/').at(-1);
    const checkoutSession = await new FormBrowser(t.server.url).get(`${t.server.url}/sandbox/portal/${slug}?customer_session_token=${confirmed.customerSessionToken}`);
    expect(checkoutSession.status).toBe(401);
    const garbage = await new FormBrowser(t.server.url).get(`${t.server.url}/sandbox/portal/x?customer_session_token=service_cst_nope`);
    expect(garbage.status).toBe(401);
    expect(garbage.headers.getSetCookie()).toEqual([]);
  });

  test('a form posted from another site, or without its token, changes nothing', async () => {
    const visitor = new FormBrowser(t.server.url);
    const portal = await signInByForm(visitor, await portalLink());
    const shown = await visitor.get(portal);
    const token = formFields(shown.text).form_token;
    const cancel = `${portal}/subscriptions/${subscriptionId}/cancel`;
    expect((await visitor.post(cancel, { form_token: token }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await visitor.post(cancel, { form_token: 'forged' })).status).toBe(403);
    expect((await t.org.polar.subscriptions.get({ id: subscriptionId })).cancelAtPeriodEnd).toBe(false);
    // An id that is not the customer's is refused by the schema, as over the API.
    const foreign = await visitor.post(`${portal}/subscriptions/00000000-0000-4000-8000-000000000000/cancel`, { form_token: token });
    expect(foreign.status).toBe(422);
    expect(foreign.text).toContain('not found');
  });
});

/** A fresh page of this file's browser. */
function openPage(viewport = desktop): Promise<Page> {
  return openIn(browser, viewport);
}

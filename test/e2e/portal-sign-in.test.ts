// Signing in to the customer portal by email: the customer types their address on the portal's
// page, follows the mailed link, confirms, and lands signed in. From the attacker's side: an
// address that is no customer gets the same answer and no mail, a link works once, for 15 minutes,
// in its own organization's portal only, a cross-site post spends nothing, and requests are
// limited per address and per client address alike for customers and strangers.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MemoryTransport } from '../../src/email/transport.ts';
import { portalSignInLimit } from '../../src/auth/portal-sign-in.ts';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { clockFrom } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

// 127.0.0.1 is a trusted proxy: a test of the per-network limit asks from addresses of its own.
const t = useTestServer({ env: { EMAIL_TRANSPORT: 'memory', JOB_POLL_INTERVAL_MS: '20', TRUSTED_PROXIES: '127.0.0.1' }, organizations: { shop: 'sandbox', other: 'sandbox' } });

const mailbox = () => t.server.kassa.environments.sandbox.environment.email as MemoryTransport;
const mailTo = (to: string) => mailbox().sent.filter((m) => m.to === to);
const address = (name: string) => `${name}-${randomUUID()}@example.com`;
const linkIn = (text: string) => /(https?:\/\/\S+\/sign-in\?token=\S+)/.exec(text)?.[1];

let shopSlug: string;
let otherSlug: string;
const slugOf = async (org: Org) => (await org.api('GET', `/organizations/${org.organizationId}`)).body.slug as string;
const signInPage = (slug: string) => `${t.server.url}/sandbox/portal/${slug}/sign-in`;

beforeAll(async () => {
  shopSlug = await slugOf(t.shop);
  otherSlug = await slugOf(t.other);
});

async function customer(org: Org, email = address('customer')) {
  const created = await org.api('POST', '/customers/', { email, name: 'Ada' });
  expect(created.status).toBe(201);
  return email;
}

/** Asks for a sign-in link on the page, as a person does; answers the page shown. */
async function ask(email: string, slug = shopSlug, browser = new FormBrowser(t.server.url), headers: Record<string, string> = {}) {
  const form = await browser.get(signInPage(slug));
  expect(form.status).toBe(200);
  return browser.post(signInPage(slug), { ...formFields(form.text), email }, headers);
}

async function linkSentTo(email: string, count = 1): Promise<string> {
  const mails = await eventually(async () => mailTo(email), (m) => m.length >= count, `mail to ${email}`);
  return linkIn(mails.at(-1)!.text)!;
}

/** Opens the link and presses "Continue as …": answers the post. */
async function follow(link: string, browser = new FormBrowser(t.server.url)) {
  const shown = await browser.get(link);
  if (shown.status !== 200) return shown;
  const action = new URL(link);
  return browser.post(`${action.origin}${action.pathname}/continue`, formFields(shown.text));
}

describe('signing in to the portal by email', () => {
  it('the page mails a link; opening it signs nobody in; continuing does, once, with the cookie', async () => {
    const email = await customer(t.shop);
    // Each step's page names the organization whose portal it is.
    const { name } = (await t.shop.api('GET', `/organizations/${t.shop.organizationId}`)).body;
    const named = (text: string) => {
      expect(text).toContain(`<title>${name}: customer portal`);
      expect(text).toContain(`<p class="muted">${name}</p>`);
    };
    named((await new FormBrowser(t.server.url).get(signInPage(shopSlug))).text);
    const asked = await ask(email.toUpperCase());
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('Check your email');
    named(asked.text);
    expect(asked.text).toContain(`is the address of a customer of ${name}, a sign-in link`);
    const link = await linkSentTo(email);
    expect(link).toContain(`/sandbox/portal/${shopSlug}/sign-in?token=`);
    const [mail] = mailTo(email);
    expect(mail.subject).toMatch(/^Sign in to your customer portal at /);
    expect(mail.html).toContain('Sign in to the customer portal');

    const browser = new FormBrowser(t.server.url);
    const shown = await browser.get(link);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(`Continue as ${email}`);
    named(shown.text);
    expect(shown.headers.getSetCookie()).toEqual([]);
    const continued = await browser.post(`${t.server.url}/sandbox/portal/${shopSlug}/sign-in/continue`, formFields(shown.text));
    expect(continued.status).toBe(303);
    expect(continued.location).toBe(`/sandbox/portal/${shopSlug}`);
    const portal = await browser.get(`${t.server.url}${continued.location}`);
    expect(portal.status).toBe(200);
    expect(portal.text).toContain(`Signed in as <strong>${email}</strong>`);

    // Used: refused, by its page and by its form.
    const again = await follow(link);
    expect(again.status).toBe(400);
    expect(again.text).toContain('already used');
  });

  it('an address that is no customer gets the same page and no mail', async () => {
    const customerEmail = await customer(t.shop);
    const stranger = address('stranger');
    const [known, unknown] = [await ask(customerEmail), await ask(stranger)];
    expect(unknown.status).toBe(known.status);
    expect(unknown.text.replace(stranger, 'X')).toBe(known.text.replace(customerEmail, 'X'));
    await linkSentTo(customerEmail);
    // The jobs have run: the stranger got nothing.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mailTo(stranger)).toEqual([]);
    // A customer of another organization is a stranger to this one.
    const elsewhere = await customer(t.other);
    expect((await ask(elsewhere)).text).toContain('Check your email');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mailTo(elsewhere)).toEqual([]);
  });

  it("a link expires after 15 minutes, and signs in only at its own organization's portal", async () => {
    const email = await customer(t.shop);
    await ask(email);
    const link = await linkSentTo(email);
    const foreign = link.replace(`/portal/${shopSlug}/`, `/portal/${otherSlug}/`);
    const refused = await follow(foreign);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('not valid');
    expect(refused.headers.getSetCookie()).toEqual([]);
    t.server.clock.now = new Date(Date.now() + 15 * 60_000 + 1000);
    try {
      const late = await follow(link);
      expect(late.status).toBe(400);
      expect(late.text).toContain('expired');
    } finally {
      t.server.clock.now = null;
    }
  });

  it("a deleted customer's link signs nobody in, though it was mailed before the deletion", async () => {
    const email = await customer(t.shop);
    await ask(email);
    const link = await linkSentTo(email);
    const { id } = (await t.shop.api('GET', `/customers/?email=${encodeURIComponent(email)}`)).body.items[0];
    expect((await t.shop.api('DELETE', `/customers/${id}`)).status).toBe(204);
    const refused = await follow(link);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('This link is not valid: ask for a new one.');
    expect(refused.headers.getSetCookie()).toEqual([]);
  });

  it('a continue posted from another site, or with a forged form token, is refused and spends nothing', async () => {
    const email = await customer(t.shop);
    await ask(email);
    const link = await linkSentTo(email);
    const fields = formFields((await new FormBrowser(t.server.url).get(link)).text);
    const action = `${t.server.url}/sandbox/portal/${shopSlug}/sign-in/continue`;
    for (const [form, headers] of [
      [fields, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
      [{ ...fields, form_token: 'forged' }, {}],
    ] as [Record<string, string>, Record<string, string>][]) {
      const refused = await new FormBrowser(t.server.url).post(action, form, headers);
      expect(refused.status).toBe(403);
      expect(refused.headers.getSetCookie()).toEqual([]);
    }
    expect((await follow(link)).status).toBe(303);
  });

  it(`an address may ask ${portalSignInLimit.perEmail} times an hour, a customer's and a stranger's alike; then 429`, async () => {
    for (const email of [await customer(t.other), address('stranger')]) {
      for (let i = 0; i < portalSignInLimit.perEmail; i++) expect((await ask(email, otherSlug)).status).toBe(200);
      const limited = await ask(email, otherSlug);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it(`of concurrent requests for one address, only ${portalSignInLimit.perEmail} are recorded`, async () => {
    const email = await customer(t.other);
    const answers = await Promise.all(Array.from({ length: portalSignInLimit.perEmail + 3 }, (_, i) => ask(email, otherSlug, undefined, { 'x-forwarded-for': `10.31.0.${i + 1}` })));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(portalSignInLimit.perEmail).fill(200), 429, 429, 429]);
    expect(await t.server.kassa.environments.sandbox.environment.prisma.emailToken.count({ where: { email } })).toBe(portalSignInLimit.perEmail);
  });

  it('a malformed address is refused on the page; an unknown portal is 404', async () => {
    const malformed = await ask('not an address');
    expect(malformed.status).toBe(422);
    expect(malformed.text).toContain('Enter a valid email address.');
    expect((await new FormBrowser(t.server.url).get(signInPage('no-such-shop'))).status).toBe(404);
  });

  it('an address of up to 254 characters, with no space and one @, may ask; any other is refused and recorded nowhere', async () => {
    const longest = `${'a'.repeat(254 - '@example.com'.length)}@example.com`;
    expect(longest).toHaveLength(254);
    expect((await ask(longest)).text).toContain('Check your email');
    const prisma = t.server.kassa.environments.sandbox.environment.prisma;
    for (const refused of [`a${longest}`, 'ada lovelace@example.com', 'ada@example .com', 'ada@@example.com', 'ada@', '@example.com']) {
      const answer = await ask(refused);
      expect(answer.status, refused).toBe(422);
      expect(answer.text).toContain('Enter a valid email address.');
      expect(await prisma.emailToken.count({ where: { email: refused.toLowerCase() } })).toBe(0);
    }
  });

  it(`a client address may ask ${portalSignInLimit.perIp} times an hour for any addresses; then it waits for the oldest to leave the hour`, async () => {
    const at = clockFrom(t.server, 50);
    const from = { 'x-forwarded-for': '10.30.0.1' };
    try {
      for (let i = 0; i < portalSignInLimit.perIp; i++) {
        at(i * 60);
        expect((await ask(address(`network-${i}`), otherSlug, undefined, from)).status, `request ${i + 1}`).toBe(200);
      }
      at(portalSignInLimit.perIp * 60);
      const limited = await ask(address('one-more'), otherSlug, undefined, from);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe(String(3600 - portalSignInLimit.perIp * 60));
      expect(limited.text).toContain(`Try again in ${60 - portalSignInLimit.perIp} minutes.`);
      expect((await ask(address('another-network'), otherSlug, undefined, { 'x-forwarded-for': '10.30.0.2' })).status).toBe(200);
      // At one hour the first request (at 0) is out of the window, its start excluded.
      at(3600);
      expect((await ask(address('an-hour-on'), otherSlug, undefined, from)).status).toBe(200);
    } finally {
      t.server.clock.now = null;
    }
  });
});

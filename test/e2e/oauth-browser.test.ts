// The sign-in and consent pages in a real headless Chromium, as a user meets them: a client's page
// sends the browser to the authorization page, the user signs in, picks an organization, allows
// (or denies), and the browser lands on the client's redirect URI, a real page on loopback. Also
// by keyboard alone, and at desktop and phone widths (screenshots in test-artifacts/screenshots/).
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { createOrganization } from '../../src/modules/organizations/service.ts';
import { restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { issuerOf, postForm, registerClient, userSessionToken, type RegisteredClient } from '../helpers/oauth.ts';

/** CI installs the Debian package (see .ci/run); without it this file fails rather than skips. */
const chromiumPath = '/usr/bin/chromium';
const screenshots = 'test-artifacts/screenshots';
const desktop = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };
const scope = 'openid email products:read';

/**
 * The client application: a loopback HTTP server with a start page linking to the authorization
 * request, and the redirect URI, a real page the browser lands on.
 */
interface ClientApp {
  /** `http://127.0.0.1:PORT`, where the redirect URI lives. */
  origin: string;
  /** The same server under the name `localhost`: another site than the provider's 127.0.0.1. */
  siteOrigin: string;
  redirectUri: string;
  /** The authorization request the start page links to. */
  authorizationUrl: string;
  close(): Promise<void>;
}

async function startClientApp(): Promise<ClientApp> {
  const app = { authorizationUrl: '' } as ClientApp;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://client.invalid');
    const body =
      url.pathname === '/callback'
        ? `<h1>Back at the client</h1><p id="result">${url.searchParams.has('code') ? 'Got a code' : `Got ${escapeHtml(url.searchParams.get('error') ?? 'nothing')}`}</p>`
        : `<h1>Example client</h1><a href="${escapeHtml(app.authorizationUrl)}">Sign in with Kassa</a>`;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html lang="en"><title>Example client</title>${body}</html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  app.origin = `http://127.0.0.1:${port}`;
  app.siteOrigin = `http://localhost:${port}`;
  app.redirectUri = `${app.origin}/callback`;
  app.close = () => new Promise((resolve) => server.close(() => resolve()));
  return app;
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

interface Site {
  environment: EnvironmentName;
  issuer: string;
  org: Org;
  secondOrganizationId: string;
  client: RegisteredClient;
}

const t = useTestServer();
let browser: Browser;
let app: ClientApp;
const sites = {} as Record<EnvironmentName, Site>;

async function prepareSite(environment: EnvironmentName): Promise<Site> {
  const org = await newOrganization(t.server, environment);
  const prisma = t.server.kassa.environments[environment].environment.prisma;
  const owner = await prisma.user.findUniqueOrThrow({ where: { email: org.userEmail } });
  const second = await createOrganization(prisma, { name: 'Second Org', ownerId: owner.id });
  const userToken = await userSessionToken(t.server, environment, org.userEmail, org.userPassword);
  const client = await registerClient(t.server, environment, userToken, { client_name: 'Example client', redirect_uris: [app.redirectUri], scope, token_endpoint_auth_method: 'client_secret_post' });
  return { environment, issuer: issuerOf(t.server, environment), org, secondOrganizationId: second.id, client };
}

beforeAll(async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium is missing at ${chromiumPath}: install the Debian package "chromium" (apt-get install -y chromium), as .ci/run does.`);
  }
  mkdirSync(screenshots, { recursive: true });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  app = await startClientApp();
  for (const environment of ['production', 'sandbox'] as const) sites[environment] = await prepareSite(environment);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** A fresh browser profile (no cookies) at the given size; closed by the caller. */
async function newContext(viewport = desktop): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, ...(viewport === phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
  // Well inside the test's 30 seconds, so a stuck page fails with what it shows.
  context.setDefaultTimeout(10_000);
  return context;
}

function authorizationUrl(site: Site, state: string): string {
  const params = new URLSearchParams({ response_type: 'code', client_id: site.client.client_id, redirect_uri: app.redirectUri, scope, state, nonce: `nonce-${state}` });
  return `${site.issuer}/oauth2/authorize?${params}`;
}

function pagesPath(site: Site): string {
  return `${site.environment === 'sandbox' ? '/sandbox' : ''}/oauth2`;
}

/** The client's start page, and a click on its link: the top-level, cross-site navigation a real flow starts with. */
async function startAtClient(page: Page, site: Site, state: string): Promise<void> {
  app.authorizationUrl = authorizationUrl(site, state);
  await page.goto(`${app.siteOrigin}/`);
  await page.getByRole('link', { name: 'Sign in with Kassa' }).click();
}

/** Waits for the page at `path` showing `heading`; otherwise fails saying what the browser shows instead. */
async function expectPage(page: Page, path: string, heading: string): Promise<void> {
  try {
    await page.waitForURL((url) => url.pathname === path);
    await page.getByRole('heading', { name: heading }).waitFor();
  } catch {
    const shown = (await page.locator('body').innerText({ timeout: 1000 }).catch(() => '')).replace(/\s+/g, ' ').trim();
    throw new Error(`expected "${heading}" at ${path}; the browser is at ${page.url()} showing: ${shown.slice(0, 400)}`);
  }
}

function expectSignInPage(page: Page, site: Site): Promise<void> {
  return expectPage(page, `${pagesPath(site)}/login`, 'Sign in to Kassa');
}

function expectConsentPage(page: Page, site: Site): Promise<void> {
  return expectPage(page, `${pagesPath(site)}/authorize`, 'Allow Example client to access your account?');
}

async function signIn(page: Page, site: Site): Promise<void> {
  await page.getByLabel('Email').fill(site.org.userEmail);
  await page.getByLabel('Password').fill(site.org.userPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Where the browser landed: the client's redirect URI, with the authorization response in the query. */
async function landing(page: Page): Promise<URL> {
  try {
    await page.waitForURL((url) => url.origin === app.origin && url.pathname === '/callback');
  } catch {
    const shown = (await page.locator('body').innerText({ timeout: 1000 }).catch(() => '')).replace(/\s+/g, ' ').trim();
    throw new Error(`expected to land on ${app.redirectUri}; the browser is at ${page.url()} showing: ${shown.slice(0, 400)}`);
  }
  return new URL(page.url());
}

function exchange(site: Site, code: string) {
  return postForm(t.server, site.environment, '/oauth2/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: app.redirectUri,
    client_id: site.client.client_id,
    client_secret: site.client.client_secret!,
  });
}

function introspect(site: Site, token: string) {
  return postForm(t.server, site.environment, '/oauth2/introspect', { token, client_id: site.client.client_id, client_secret: site.client.client_secret! });
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${screenshots}/${name}.png`, fullPage: true });
}

/** Nothing sticks out sideways: the page fits the window's width. */
async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const widths = await page.evaluate(() => ({ content: document.documentElement.scrollWidth, window: window.innerWidth }));
  expect(widths.content).toBeLessThanOrEqual(widths.window);
}

describe.each(['production', 'sandbox'] as const)('%s', (environment) => {
  const site = () => sites[environment];

  test('a user signs in, picks an organization and allows; the browser lands on the redirect URI with a code and the state', async () => {
    const context = await newContext();
    try {
      const page = await context.newPage();
      await startAtClient(page, site(), 'state-mouse');
      await expectSignInPage(page, site());
      if (environment === 'sandbox') await expect.poll(() => page.getByRole('note').textContent()).toContain('Sandbox');
      await screenshot(page, `${environment}-sign-in-desktop`);
      await expectNoSidewaysScroll(page);
      await signIn(page, site());
      await expectConsentPage(page, site());

      // The session cookie as Chromium keeps it: Secure is honoured on http://127.0.0.1, a secure context.
      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === (environment === 'sandbox' ? 'kassa_sandbox_session' : 'kassa_session'));
      expect(session, `Chromium kept no session cookie; it has: ${cookies.map((c) => c.name).join(', ')}`).toBeDefined();
      expect(session).toMatchObject({ domain: '127.0.0.1', path: pagesPath(site()), secure: true, httpOnly: true, sameSite: 'Lax' });
      expect(await page.evaluate(() => document.cookie)).toBe('');

      await screenshot(page, `${environment}-consent-desktop`);
      await expectNoSidewaysScroll(page);
      const choices = page.getByRole('radio');
      await expect.poll(() => choices.count()).toBe(2);
      await page.getByRole('radio', { name: /Second Org/ }).check();
      await page.getByRole('button', { name: 'Allow' }).click();

      const back = await landing(page);
      expect(back.searchParams.get('state')).toBe('state-mouse');
      expect(back.searchParams.get('iss')).toBe(site().issuer);
      const code = back.searchParams.get('code');
      expect(code).toMatch(/^service_ac_/);
      await expect.poll(() => page.locator('#result').textContent()).toBe('Got a code');

      const tokens = await exchange(site(), code!);
      expect(tokens.status).toBe(200);
      expect((await introspect(site(), tokens.body.access_token)).body).toMatchObject({ active: true, sub_type: 'organization', sub: site().secondOrganizationId });
      const products = await restClient(t.server.base(environment), tokens.body.access_token)('GET', '/products/');
      expect(products.status).toBe(200);
      expect(products.body.items).toEqual([]);

      // Signed in, a second request from the client's site goes straight to consent: the Lax
      // cookie rides on the cross-site top-level navigation.
      await startAtClient(page, site(), 'state-again');
      await expectConsentPage(page, site());
    } finally {
      await context.close();
    }
  });
});

test('the pages work by keyboard: Tab to each field, type, Enter to submit, arrows to choose', async () => {
  const site = sites.production;
  const context = await newContext();
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl(site, 'state-keys'));
    await expectSignInPage(page, site);
    const focused = () => page.evaluate(() => {
      const element = document.activeElement as HTMLInputElement | null;
      return element ? `${element.tagName.toLowerCase()}#${element.id}[${element.name}]` : 'none';
    });
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('input#email[email]');
    await page.keyboard.type(site.org.userEmail);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('input#password[password]');
    await page.keyboard.type(site.org.userPassword);
    await page.keyboard.press('Enter');

    await expectConsentPage(page, site);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe(`input#organization-${site.org.organizationId}[organization_id]`);
    // Arrow keys move through a radio group and check what they land on; "Second Org" sorts after "My Organization".
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe(`input#organization-${site.secondOrganizationId}[organization_id]`);
    expect(await page.getByRole('radio', { name: /Second Org/ }).isChecked()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLButtonElement).value)).toBe('approve');
    await page.keyboard.press('Enter');

    const back = await landing(page);
    expect(back.searchParams.get('state')).toBe('state-keys');
    const tokens = await exchange(site, back.searchParams.get('code')!);
    expect(tokens.status).toBe(200);
    expect((await introspect(site, tokens.body.access_token)).body).toMatchObject({ active: true, sub: site.secondOrganizationId });
  } finally {
    await context.close();
  }
});

test('a wrong password shows the error on the page, tied to the fields, and keeps the email', async () => {
  const site = sites.production;
  const context = await newContext();
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl(site, 'state-wrong'));
    await expectSignInPage(page, site);
    await page.getByLabel('Email').fill(site.org.userEmail);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Unknown email or wrong password.');
    expect(await page.getByLabel('Email').inputValue()).toBe(site.org.userEmail);
    expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toBe('sign-in-error');
    // The request survives the failed attempt: the right password goes on to consent.
    await page.getByLabel('Password').fill(site.org.userPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectConsentPage(page, site);
  } finally {
    await context.close();
  }
});

test('Deny lands on the redirect URI with error=access_denied and the state, and no code', async () => {
  const site = sites.production;
  const context = await newContext();
  try {
    const page = await context.newPage();
    await startAtClient(page, site, 'state-deny');
    await expectSignInPage(page, site);
    await signIn(page, site);
    await expectConsentPage(page, site);
    await page.getByRole('button', { name: 'Deny' }).click();
    const back = await landing(page);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('state-deny');
    expect(back.searchParams.get('iss')).toBe(site.issuer);
    expect(back.searchParams.has('code')).toBe(false);
    await expect.poll(() => page.locator('#result').textContent()).toBe('Got access_denied');
  } finally {
    await context.close();
  }
});

test('at phone width the pages fit the screen and still complete the flow', async () => {
  const site = sites.production;
  const context = await newContext(phone);
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl(site, 'state-phone'));
    await expectSignInPage(page, site);
    await screenshot(page, 'production-sign-in-phone');
    await expectNoSidewaysScroll(page);
    await signIn(page, site);
    await expectConsentPage(page, site);
    await screenshot(page, 'production-consent-phone');
    await expectNoSidewaysScroll(page);
    await page.getByRole('radio', { name: /My Organization/ }).check();
    await page.getByRole('button', { name: 'Allow' }).click();
    const back = await landing(page);
    expect(back.searchParams.get('state')).toBe('state-phone');
    expect((await exchange(site, back.searchParams.get('code')!)).status).toBe(200);
  } finally {
    await context.close();
  }
});

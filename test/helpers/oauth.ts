// The OAuth provider seen from outside: a browser (a cookie jar and manual redirects over fetch)
// that signs in and answers the consent page, and a client that registers and exchanges codes.
import { createHash, randomBytes } from 'node:crypto';
import type { EnvironmentName } from '../../src/config.ts';
import type { TestServer } from './server.ts';

/** The root of an environment's provider: `http://127.0.0.1:PORT` or `.../sandbox`. */
export function issuerOf(server: TestServer, environment: EnvironmentName = 'production'): string {
  return `${server.url}${environment === 'sandbox' ? '/sandbox' : ''}`;
}

/** A browser as far as the pages need one: cookies kept per name, redirects seen, not followed. */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(readonly origin: string) {}

  async request(url: string, init: { method?: string; form?: Record<string, string> | URLSearchParams; headers?: Record<string, string> } = {}) {
    const target = new URL(url, this.origin);
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers.origin ??= this.origin;
      body = new URLSearchParams(init.form as Record<string, string>).toString();
    }
    const response = await fetch(target, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
  }

  async get(url: string) {
    return this.request(url);
  }

  async post(url: string, form: Record<string, string> | URLSearchParams, headers?: Record<string, string>) {
    return this.request(url, { form, headers });
  }
}

/** The values of a page's form fields, by name (hidden inputs and checked radios). */
export function formFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input ([^>]*)>/g)) {
    const attributes = Object.fromEntries([...match[1].matchAll(/([\w-]+)(?:="([^"]*)")?/g)].map((m) => [m[1], unescapeHtml(m[2] ?? '')]));
    if (attributes.type === 'radio' && !('checked' in attributes)) continue;
    if (attributes.name && (attributes.type === 'hidden' || attributes.type === 'radio')) fields[attributes.name] = attributes.value ?? '';
  }
  return fields;
}

/** The values a page offers for a radio group. */
export function radioValues(page: string, name: string): string[] {
  return [...page.matchAll(new RegExp(`<input type="radio"[^>]*name="${name}" value="([^"]*)"`, 'g'))].map((m) => m[1]);
}

function unescapeHtml(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** A PKCE pair (RFC 7636): a random verifier and its S256 challenge. */
export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A user session token, signed in through the GraphQL API. */
export async function userSessionToken(server: TestServer, environment: EnvironmentName, email: string, password: string): Promise<string> {
  const response = await fetch(`${server.base(environment)}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', variables: { email, password } }),
  });
  const body = (await response.json()) as { data?: { signIn: { token: string } } };
  if (!body.data) throw new Error(`sign-in failed: ${JSON.stringify(body)}`);
  return body.data.signIn.token;
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  registration_access_token: string;
  redirect_uris: string[];
  scope: string;
  token_endpoint_auth_method: string;
}

/** Registers a client (RFC 7591) as a signed-in user. */
export async function registerClient(server: TestServer, environment: EnvironmentName, userToken: string, metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const response = await fetch(`${server.base(environment)}/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${userToken}` },
    body: JSON.stringify({
      client_name: 'Test App',
      redirect_uris: ['http://127.0.0.1:9/callback'],
      scope: 'openid profile email products:read products:write orders:read',
      token_endpoint_auth_method: 'client_secret_post',
      ...metadata,
    }),
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(`registration failed (${response.status}): ${JSON.stringify(body)}`);
  return body as RegisteredClient;
}

/** Posts a form to an endpoint of the provider's API (token, revoke, introspect), as a client does. */
export async function postForm(server: TestServer, environment: EnvironmentName, path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.base(environment)}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: response.status, body, headers: response.headers };
}

/**
 * Opens the authorization request `params` in `browser`, signing `user` in on the way if the
 * browser is not signed in. Returns the answer after sign-in: the consent page, an error page, or a
 * redirect back to the client.
 */
export async function openAuthorization(browser: Browser, issuer: string, params: Record<string, string>, user: { email: string; password: string }) {
  const response = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(params)}`);
  if (response.status !== 303 || !response.location?.includes('/oauth2/login')) return response;
  const signInPage = await browser.get(new URL(response.location, issuer).toString());
  const fields = formFields(signInPage.text);
  const signedIn = await browser.post(`${issuer}/oauth2/login`, { ...fields, email: user.email, password: user.password });
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.text.slice(0, 300)}`);
  return browser.get(new URL(signedIn.location!, issuer).toString());
}

/**
 * Signs `browser` in (if it is not) and answers the consent page for the authorization request
 * `params`, choosing `organizationId` when the page asks for one. Returns the redirect back to the client.
 */
export async function authorizeInBrowser(
  browser: Browser,
  issuer: string,
  params: Record<string, string>,
  user: { email: string; password: string },
  choice: { decision?: 'approve' | 'deny'; organizationId?: string } = {},
): Promise<URL> {
  const response = await openAuthorization(browser, issuer, params, user);
  if (response.status === 303) return new URL(response.location!);
  if (response.status !== 200) throw new Error(`authorization page answered ${response.status}: ${response.text.slice(0, 300)}`);
  const fields = formFields(response.text);
  if (choice.organizationId) fields.organization_id = choice.organizationId;
  const decided = await browser.post(`${issuer}/oauth2/authorize`, { ...fields, decision: choice.decision ?? 'approve' });
  if (decided.status !== 303) throw new Error(`consent answered ${decided.status}: ${decided.text.slice(0, 500)}`);
  return new URL(decided.location!);
}

/** Exchanges the code of a redirect back from the consent page, as a confidential client with PKCE does. */
export function exchangeCode(server: TestServer, environment: EnvironmentName, client: RegisteredClient, redirectUri: string, back: URL, verifier: string) {
  return postForm(server, environment, '/oauth2/token', {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code')!,
    redirect_uri: redirectUri,
    client_id: client.client_id,
    client_secret: client.client_secret!,
    code_verifier: verifier,
  });
}

/**
 * The authorization-code flow with PKCE through the real pages, in a new browser: `user` signs in and
 * consents to `scope` for `client` (choosing `organizationId` when asked), and the code is exchanged.
 * `params` adds to or overrides the authorization request (`nonce`, `sub_type`). Returns the token
 * endpoint's answer.
 */
export async function codeFlowTokens(
  server: TestServer,
  environment: EnvironmentName,
  client: RegisteredClient,
  flow: { scope: string; user: { email: string; password: string }; organizationId?: string; redirectUri?: string; params?: Record<string, string> },
) {
  const redirectUri = flow.redirectUri ?? client.redirect_uris[0];
  const { verifier, challenge } = pkcePair();
  const params = { response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope: flow.scope, state: 's', code_challenge: challenge, code_challenge_method: 'S256', ...flow.params };
  const back = await authorizeInBrowser(new Browser(server.url), issuerOf(server, environment), params, flow.user, { organizationId: flow.organizationId });
  return exchangeCode(server, environment, client, redirectUri, back, verifier);
}

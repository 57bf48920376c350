// The authorization code flow against a live server, through the sign-in and consent pages, and
// each attack on it refused with the RFC's error.
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { createOrganization, endMembership } from '../../src/modules/organizations/service.ts';
import { createUser } from '../../src/modules/users/service.ts';
import { allScopes } from '../../src/auth/scopes.ts';
import { hashToken } from '../../src/auth/tokens.ts';
import { codeLifetimeSeconds, refreshTokenLifetimeSeconds } from '../../src/oauth/grants.ts';
import { restClient, graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { Browser, authorizeInBrowser, formFields, issuerOf, openAuthorization, pkcePair, postForm, radioValues, registerClient, userSessionToken, type RegisteredClient } from '../helpers/oauth.ts';

const t = useTestServer({ organizations: { org: 'production', other: 'production' } });
let client: RegisteredClient;
let publicClient: RegisteredClient;
/** Another client of the same user, presenting what was issued to `client`. */
let thief: RegisteredClient;
let issuer: string;
const redirectUri = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  issuer = issuerOf(t.server);
  const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
  client = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_post' });
  publicClient = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', client_name: 'Public App' });
  thief = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri], client_name: 'Thief' });
});

const user = () => ({ email: t.org.userEmail, password: t.org.userPassword });

function authorizationParams(c: RegisteredClient, extra: Record<string, string> = {}) {
  return { response_type: 'code', client_id: c.client_id, redirect_uri: redirectUri, scope: 'openid email products:read', state: 'state-123', nonce: 'nonce-456', ...extra };
}

/** `params` with the parameter `name` left out altogether. */
function without(params: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter(([key]) => key !== name));
}

async function codeFor(c: RegisteredClient, extra: Record<string, string> = {}, browser = new Browser(t.server.url)) {
  const back = await authorizeInBrowser(browser, issuer, authorizationParams(c, extra), user(), { organizationId: t.org.organizationId });
  expect(back.origin + back.pathname).toBe(redirectUri);
  expect(back.searchParams.get('state')).toBe('state-123');
  expect(back.searchParams.get('iss')).toBe(issuer);
  const code = back.searchParams.get('code');
  expect(code).toMatch(/^service_ac_[0-9A-Za-z]{36}$/);
  return code!;
}

/** A browser whose user has signed in (and approved once): errors of its requests go back to the client. */
async function signedInBrowser() {
  const browser = new Browser(t.server.url);
  await authorizeInBrowser(browser, issuer, authorizationParams(client), user(), { organizationId: t.org.organizationId });
  return browser;
}

function exchange(c: RegisteredClient, code: string, extra: Record<string, string> = {}) {
  const secret: Record<string, string> = c.client_secret ? { client_secret: c.client_secret } : {};
  return postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: c.client_id, ...secret, ...extra });
}

function refresh(c: RegisteredClient, refreshToken: string, extra: Record<string, string> = {}) {
  const secret: Record<string, string> = c.client_secret ? { client_secret: c.client_secret } : {};
  return postForm(t.server, 'production', '/oauth2/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: c.client_id, ...secret, ...extra });
}

const prisma = () => t.server.kassa.environments.production.environment.prisma;
/** The stored row of a grant's tokens, found by its access or its refresh token. */
const accessRow = (accessToken: string) => prisma().oAuthToken.findFirstOrThrow({ where: { accessTokenHash: hashToken(accessToken) } });
const tokenRow = (refreshToken: string) => prisma().oAuthToken.findFirstOrThrow({ where: { refreshTokenHash: hashToken(refreshToken) } });

describe('authorization code flow', () => {
  test('a confidential client gets an organization-scoped token that works on the Core API within its scopes', async () => {
    const code = await codeFor(client);
    const tokens = await exchange(client, code);
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid email products:read' });
    expect(tokens.body.access_token).toMatch(/^service_at_/);
    expect(tokens.body.refresh_token).toMatch(/^service_rt_/);
    expect(typeof tokens.body.id_token).toBe('string');

    const api = restClient(t.server.base(), tokens.body.access_token);
    const products = await api('GET', '/products/');
    expect(products.status).toBe(200);
    // products:write was not granted.
    const created = await api('POST', '/products/', { name: 'X', prices: [{ amount_type: 'free' }] });
    expect(created.status).toBe(403);
    expect(created.body.detail).toContain('products:write');
    // The token is stored only as a hash.
    const row = await t.server.kassa.environments.production.environment.prisma.oAuthToken.findFirst({ where: { accessTokenHash: hashToken(tokens.body.access_token) } });
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(tokens.body.access_token);
  });

  test('a public client must use PKCE, and then needs no secret', async () => {
    const browser = new Browser(t.server.url);
    const refused = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(publicClient))}`);
    // Not signed in: the error is shown here, not sent to the redirect URI (RFC 9700 §4.11.2).
    expect(refused.status).toBe(400);
    expect(refused.location).toBeNull();
    expect(refused.text).toContain('PKCE');
    // Signed in, the same request goes back to the client with the error and the state.
    await authorizeInBrowser(browser, issuer, authorizationParams(client), user(), { organizationId: t.org.organizationId });
    const redirected = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(publicClient))}`);
    expect(redirected.status).toBe(303);
    const error = new URL(redirected.location!);
    expect(error.searchParams.get('error')).toBe('invalid_request');
    expect(error.searchParams.get('state')).toBe('state-123');

    const pkce = pkcePair();
    const code = await codeFor(publicClient, { code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    // The code records the challenge and how it is checked.
    expect(await prisma().oAuthAuthorizationCode.findFirstOrThrow({ where: { codeHash: hashToken(code) }, select: { codeChallenge: true, codeChallengeMethod: true } })).toEqual({
      codeChallenge: pkce.challenge,
      codeChallengeMethod: 'S256',
    });
    const tokens = await exchange(publicClient, code, { code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
  });

  test('sub_type=user gives a user-scoped token that reaches every organization of the user', async () => {
    const prisma = t.server.kassa.environments.production.environment.prisma;
    const owner = await prisma.user.findUniqueOrThrow({ where: { email: t.org.userEmail } });
    const second = await createOrganization(prisma, { name: 'Second Org', ownerId: owner.id });
    const browser = new Browser(t.server.url);
    const back = await authorizeInBrowser(browser, issuer, authorizationParams(client, { sub_type: 'user' }), user());
    const tokens = await exchange(client, back.searchParams.get('code')!);
    expect(tokens.status).toBe(200);
    const gql = graphqlClient(t.server.base(), tokens.body.access_token);
    const orgs = await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, client_id: client.client_id, client_secret: client.client_secret! });
    expect(orgs.body).toMatchObject({ active: true, sub_type: 'user', sub: owner.id });
    const row = await prisma.oAuthToken.findFirstOrThrow({ where: { accessTokenHash: hashToken(tokens.body.access_token) } });
    expect([row.subType, row.organizationId]).toEqual(['user', null]);
    const listed = await gql('{ core { products(organizationId: ["' + second.id + '"]) { pagination { totalCount } } } }');
    expect(listed.body.errors).toBeUndefined();
  });

  test('deny sends access_denied back with the state', async () => {
    const browser = new Browser(t.server.url);
    const back = await authorizeInBrowser(browser, issuer, authorizationParams(client), user(), { decision: 'deny' });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toBe('The user denied the request.');
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.has('code')).toBe(false);
  });

  test('the pages forbid framing, carry a strict CSP and refuse a consent posted from elsewhere', async () => {
    const browser = new Browser(t.server.url);
    const first = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client))}`);
    const signIn = await browser.get(new URL(first.location!, issuer).toString());
    expect(signIn.headers.get('x-frame-options')).toBe('DENY');
    expect(signIn.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(signIn.headers.get('content-security-policy')).toContain("default-src 'none'");
    const setCookie = (await browser.post(`${issuer}/oauth2/login`, { ...formFields(signIn.text), ...user() })).headers.getSetCookie().join('\n');
    expect(setCookie).toMatch(/kassa_session=service_us_[^;]+; Path=\/oauth2; Max-Age=\d+; HttpOnly; Secure; SameSite=Lax/);
    const consent = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client))}`);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Read products and prices');
    const fields = formFields(consent.text);
    // Without the CSRF token, and from another origin: no code.
    const forged = await browser.post(`${issuer}/oauth2/authorize`, { ...fields, csrf_token: 'forged', decision: 'approve', organization_id: t.org.organizationId });
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('<p class="error" role="alert">The consent form has expired or did not come from this site. Start the authorization again.</p>');
    expect(forged.text).toContain('(error: invalid_request)');
    expect(forged.text).toContain('<title>Authorization error · Kassa</title>');
    const crossSite = await browser.post(`${issuer}/oauth2/authorize`, { ...fields, decision: 'approve', organization_id: t.org.organizationId }, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(400);
    // Another user's organization cannot be chosen.
    const foreign = await browser.post(`${issuer}/oauth2/authorize`, { ...fields, decision: 'approve', organization_id: t.other.organizationId });
    expect(foreign.status).toBe(400);
    expect(foreign.text).toContain('Choose one of your organizations');
  });
});

describe('prompt=none, as the relying party sees it', () => {
  /** The answer to a prompt=none request: a redirect back to the client, read as the client reads it. */
  async function silently(browser: Browser, extra: Record<string, string> = {}) {
    const response = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { prompt: 'none', ...extra }))}`);
    expect(response.status).toBe(303);
    const back = new URL(response.location!);
    expect(back.origin + back.pathname).toBe(redirectUri);
    expect(back.searchParams.has('code')).toBe(false);
    return back;
  }

  test('a signed-out user is sent back with login_required, the state and the issuer, and no page is shown', async () => {
    const browser = new Browser(t.server.url);
    const back = await silently(browser);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'login_required', error_description: 'The user must sign in.', state: 'state-123', iss: issuer });
    expect(browser.cookies.size).toBe(0);
    // openid-client checks the state and the issuer of the response, then reports the error.
    const config = await oidc.discovery(new URL(issuer), client.client_id, undefined, oidc.ClientSecretPost(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const failure = await oidc.authorizationCodeGrant(config, back, { expectedState: 'state-123' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(oidc.AuthorizationResponseError);
    expect((failure as oidc.AuthorizationResponseError).error).toBe('login_required');
  });

  test('a signed-in user is sent back with consent_required, and with login_required when max_age asks for a fresh sign-in', async () => {
    const browser = await signedInBrowser();
    expect(Object.fromEntries((await silently(browser)).searchParams)).toMatchObject({
      error: 'consent_required',
      error_description: 'The user must consent on the authorization page.',
      state: 'state-123',
      iss: issuer,
    });
    expect((await silently(browser, { max_age: '0' })).searchParams.get('error')).toBe('login_required');
  });

  test("a signed-out user's malformed request goes back to the client too, but without prompt=none it stays on an error page", async () => {
    const browser = new Browser(t.server.url);
    const back = await silently(browser, { scope: 'openid nonsense' });
    expect(back.searchParams.get('error')).toBe('invalid_scope');
    expect(back.searchParams.get('state')).toBe('state-123');
    const interactive = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { scope: 'openid nonsense' }))}`);
    expect(interactive.status).toBe(400);
    expect(interactive.location).toBeNull();
  });

  test('an unregistered redirect_uri or an unknown client gets the error page, never a redirect', async () => {
    const browser = new Browser(t.server.url);
    for (const extra of [{ redirect_uri: 'https://evil.example/callback' }, { client_id: 'service_ci_unknown' }] as Record<string, string>[]) {
      const response = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { prompt: 'none', ...extra }))}`);
      expect(response.status).toBe(400);
      expect(response.location).toBeNull();
    }
  });
});

/** A new organization's owner: the organization, the user's row, and the credentials to sign in with. */
async function freshOwner() {
  const fresh = await newOrganization(t.server);
  const owner = await prisma().user.findUniqueOrThrow({ where: { email: fresh.userEmail } });
  return { fresh, owner, credentials: { email: fresh.userEmail, password: fresh.userPassword } };
}

describe('GET /v1/oauth2/authorize: the request as JSON, for a frontend of the integrator’s own', () => {
  async function describeRequest(params: Record<string, string>, authorization?: string) {
    const response = await fetch(`${issuer}/v1/oauth2/authorize?${new URLSearchParams(params)}`, { headers: authorization ? { authorization } : {} });
    return { status: response.status, body: await response.json(), headers: response.headers };
  }
  const bearer = (token: string) => `Bearer ${token}`;

  /** A user of their own with three organizations (one created with them, two more named to sort around it), signed in. */
  async function userOfThreeOrganizations() {
    const { fresh, owner } = await freshOwner();
    const last = await createOrganization(prisma(), { name: 'zzz Last', ownerId: owner.id });
    const first = await createOrganization(prisma(), { name: 'AAA First', ownerId: owner.id });
    const own = await prisma().organization.findUniqueOrThrow({ where: { id: fresh.organizationId } });
    const session = await userSessionToken(t.server, 'production', fresh.userEmail, fresh.userPassword);
    return { fresh, owner, session, organizations: [first, own, last] };
  }

  test('describes the client, the scopes and the user’s organizations by name, for an organization grant', async () => {
    const { session, organizations } = await userOfThreeOrganizations();
    const uris = { client_uri: 'https://described.example', logo_uri: 'https://described.example/logo.png', tos_uri: 'https://described.example/terms', policy_uri: 'https://described.example/privacy' };
    const described = await registerClient(t.server, 'production', session, { redirect_uris: [redirectUri], client_name: 'Described App', ...uris });
    const row = await prisma().oAuthClient.findFirstOrThrow({ where: { clientId: described.client_id } });
    const answer = await describeRequest(authorizationParams(described), bearer(session));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      client: { created_at: row.createdAt.toISOString(), modified_at: row.modifiedAt!.toISOString(), client_id: described.client_id, client_name: 'Described App', ...uris },
      sub_type: 'organization',
      sub: null,
      scopes: ['openid', 'email', 'products:read'],
      organizations: organizations.map((o) => ({ id: o.id, slug: o.slug, avatar_url: null })),
    });
    // A client changed since: its time of change.
    await prisma().oAuthClient.update({ where: { id: row.id }, data: { clientName: 'Renamed App' } });
    const changed = await prisma().oAuthClient.findUniqueOrThrow({ where: { id: row.id } });
    expect(changed.modifiedAt).not.toBeNull();
    expect((await describeRequest(authorizationParams(described), bearer(session))).body.client).toMatchObject({ client_name: 'Renamed App', modified_at: changed.modifiedAt!.toISOString() });
  });

  test('names the signed-in user for a user grant, and lists no organizations', async () => {
    const { session, owner, fresh } = await userOfThreeOrganizations();
    const answer = await describeRequest(authorizationParams(client, { sub_type: 'user', scope: 'products:read openid' }), bearer(session));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      client: expect.objectContaining({ client_id: client.client_id, client_name: 'Test App', client_uri: null, logo_uri: null, tos_uri: null, policy_uri: null }),
      sub_type: 'user',
      sub: { id: owner.id, email: fresh.userEmail, avatar_url: null },
      scopes: ['products:read', 'openid'],
    });
  });

  test('answers only a live session token of a user of this environment: anything else is refused with 401 and a Bearer challenge', async () => {
    const oauthToken = (await exchange(client, await codeFor(client, { sub_type: 'user' }))).body.access_token as string;
    const session = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    expect((await describeRequest(authorizationParams(client), bearer(session))).status).toBe(200);
    const signedOut = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    expect((await graphqlClient(t.server.base(), signedOut)('mutation { signOut }')).body).toEqual({ data: { signOut: true } });
    const sandbox = await t.server.bootstrap('sandbox');
    const sandboxSession = await userSessionToken(t.server, 'sandbox', sandbox.userEmail, sandbox.userPassword);
    const notASession = 'Send the signed-in user\'s session token as "Authorization: Bearer <token>".';
    const unknown = 'The access token is invalid, expired or revoked.';
    const cases: [string | undefined, string][] = [
      [undefined, notASession],
      [`Basic ${Buffer.from(`${t.org.userEmail}:${t.org.userPassword}`).toString('base64')}`, 'The Authorization header must be "Bearer <token>".'],
      [bearer('service_us_000000000000000000000000000000000000'), unknown],
      [bearer(signedOut), unknown],
      [bearer(sandboxSession), unknown],
      [bearer(t.org.token), notASession],
      [bearer(oauthToken), notASession],
    ];
    for (const [authorization, description] of cases) {
      const answer = await describeRequest(authorizationParams(client), authorization);
      expect([answer.status, answer.body], String(authorization)).toEqual([401, { error: 'invalid_token', error_description: description }]);
      expect(answer.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", error_description="${description.replace(/"/g, '')}"`);
    }
  });

  test('answers a bad request with its OAuth error as JSON, never a redirect, whether or not the client is known', async () => {
    const session = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const cases: [Record<string, string>, string, string][] = [
      [{ client_id: '' }, 'invalid_request', 'The request names no client: client_id is missing.'],
      [{ client_id: 'service_ci_unknown' }, 'invalid_client', 'No client is registered with this client_id.'],
      [{ redirect_uri: 'https://evil.example/callback' }, 'invalid_request', 'redirect_uri is not one the client registered (it must match exactly).'],
      [{ scope: 'openid orders:write' }, 'invalid_scope', 'The client is not registered for the scope(s): orders:write.'],
      [{ sub_type: 'team' }, 'invalid_request', 'sub_type must be "organization" or "user" (got "team").'],
      [{ state: 'x'.repeat(2049) }, 'invalid_request', 'state is longer than 2048 characters.'],
    ];
    for (const [extra, error, description] of cases) {
      const answer = await describeRequest(authorizationParams(client, extra), bearer(session));
      expect([answer.status, answer.body], JSON.stringify(extra)).toEqual([400, { error, error_description: description }]);
      expect(answer.headers.get('location')).toBeNull();
    }
  });

  test('names the rule a request breaks, one rule at a time, and accepts each value at its limit', async () => {
    const session = bearer(await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword));
    const challenge = pkcePair().challenge;
    const pkceRule = 'code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" or "~" (the base64url SHA-256 of the verifier).';
    const cases: [Record<string, string>, string, string][] = [
      [{ response_type: '' }, 'invalid_request', 'response_type is missing: use response_type=code.'],
      [{ response_type: 'token' }, 'unsupported_response_type', 'response_type "token" is not supported: use response_type=code.'],
      [{ request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported', 'Request objects (the request parameter) are not supported.'],
      [{ request_uri: 'https://client.example/request.jwt' }, 'request_uri_not_supported', 'The request_uri parameter is not supported.'],
      [{ scope: '' }, 'invalid_scope', `scope is missing: ask for at least one of the client's scopes (${client.scope}).`],
      [{ scope: 'openid orders:steal products:read refunds:steal' }, 'invalid_scope', `Unknown scope(s): orders:steal refunds:steal. Known scopes: ${allScopes.join(' ')}.`],
      [{ scope: 'openid orders:write products:read refunds:write' }, 'invalid_scope', 'The client is not registered for the scope(s): orders:write refunds:write.'],
      [{ code_challenge_method: 'S256' }, 'invalid_request', 'code_challenge_method was given without a code_challenge.'],
      [{ code_challenge: challenge }, 'invalid_request', 'code_challenge_method must be S256; the plain method is not accepted.'],
      [{ code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request', 'code_challenge_method must be S256; the plain method is not accepted.'],
      [{ code_challenge: challenge, code_challenge_method: 'S512' }, 'invalid_request', 'code_challenge_method "S512" is not supported; use S256.'],
      [{ code_challenge: 'a'.repeat(42), code_challenge_method: 'S256' }, 'invalid_request', pkceRule],
      [{ code_challenge: 'a'.repeat(129), code_challenge_method: 'S256' }, 'invalid_request', pkceRule],
      [{ code_challenge: `${'a'.repeat(42)}+`, code_challenge_method: 'S256' }, 'invalid_request', pkceRule],
      [{ prompt: 'select_account' }, 'invalid_request', 'prompt "select_account" is not supported (none, login, consent).'],
      [{ prompt: 'none login' }, 'invalid_request', 'prompt=none cannot be combined with other prompt values.'],
      [{ prompt: 'login none' }, 'invalid_request', 'prompt=none cannot be combined with other prompt values.'],
      [{ max_age: '-1' }, 'invalid_request', 'max_age must be a whole number of seconds (got "-1").'],
      [{ max_age: '1e3' }, 'invalid_request', 'max_age must be a whole number of seconds (got "1e3").'],
      [{ max_age: '9'.repeat(30) }, 'invalid_request', `max_age must be a whole number of seconds (got "${'9'.repeat(20)}").`],
      [{ nonce: 'n'.repeat(513) }, 'invalid_request', 'nonce is longer than 512 characters.'],
    ];
    for (const [extra, error, description] of cases) {
      const answer = await describeRequest(authorizationParams(client, extra), session);
      expect([answer.status, answer.body], JSON.stringify(extra)).toEqual([400, { error, error_description: description }]);
    }
    // No scope parameter at all is the same as an empty one.
    const unscoped = without(authorizationParams(client), 'scope');
    expect([(await describeRequest(unscoped, session)).body]).toEqual([
      { error: 'invalid_scope', error_description: `scope is missing: ask for at least one of the client's scopes (${client.scope}).` },
    ]);
    // A parameter given twice is refused by name, wherever it stands.
    for (const name of ['client_id', 'scope', 'nonce', 'prompt']) {
      const params = new URLSearchParams(authorizationParams(client, { prompt: 'consent' }));
      params.append(name, params.get(name)!);
      const answer = await fetch(`${issuer}/v1/oauth2/authorize?${params}`, { headers: { authorization: session } });
      expect([answer.status, await answer.json()], name).toEqual([400, { error: 'invalid_request', error_description: `The parameter "${name}" was given more than once.` }]);
    }
    // At the limits, and with every optional rule satisfied, the request stands.
    const limits: Record<string, string>[] = [
      { code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' },
      { code_challenge: `${'A-._~'.repeat(25)}aaa`, code_challenge_method: 'S256' },
      { nonce: 'n'.repeat(512), state: 's'.repeat(2048), max_age: '999999999', prompt: 'login consent' },
    ];
    for (const extra of limits) {
      const answer = await describeRequest(authorizationParams(client, extra), session);
      expect(answer.status, JSON.stringify(extra)).toBe(200);
    }
  });

  test('refuses a client whose registration no longer covers the code flow with unauthorized_client', async () => {
    const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    for (const narrowed of [{ responseTypes: [] }, { grantTypes: ['refresh_token'] }]) {
      const app = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri] });
      await prisma().oAuthClient.update({ where: { clientId: app.client_id }, data: narrowed });
      const answer = await describeRequest(authorizationParams(app), bearer(userToken));
      expect([answer.status, answer.body], JSON.stringify(narrowed)).toEqual([
        400,
        { error: 'unauthorized_client', error_description: 'This client is not registered for the authorization code grant.' },
      ]);
    }
  });

  test('lets plain OAuth leave out redirect_uri only when the client registered exactly one', async () => {
    const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const twoUris = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri, `${redirectUri}/second`] });
    const withoutRedirect = (c: RegisteredClient, scope: string) => {
      return describeRequest(without(authorizationParams(c, { scope }), 'redirect_uri'), bearer(userToken));
    };
    const missing = [400, { error: 'invalid_request', error_description: 'redirect_uri is missing: name one of the redirect URIs the client registered.' }];
    const plain = await withoutRedirect(client, 'products:read products:read');
    expect([plain.status, plain.body.scopes]).toEqual([200, ['products:read']]);
    const openid = await withoutRedirect(client, 'openid products:read');
    expect([openid.status, openid.body]).toEqual(missing);
    const ambiguous = await withoutRedirect(twoUris, 'products:read');
    expect([ambiguous.status, ambiguous.body]).toEqual(missing);
  });
});

describe('the consent page', () => {
  /** The consent page for `params`, in a new browser that signs `credentials` in on the way. */
  async function consentPage(params: Record<string, string>, credentials: { email: string; password: string }) {
    const browser = new Browser(t.server.url);
    return { browser, page: await openAuthorization(browser, issuer, params, credentials) };
  }

  test('names the client, its site, the signed-in user and each scope, and checks the only organization', async () => {
    const { fresh, credentials } = await freshOwner();
    const session = await userSessionToken(t.server, 'production', fresh.userEmail, fresh.userPassword);
    const named = await registerClient(t.server, 'production', session, { redirect_uris: [redirectUri], client_name: 'Consent <App>', client_uri: 'https://consent.example' });
    const { page } = await consentPage(authorizationParams(named, { scope: 'openid products:read' }), credentials);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Authorize application · Kassa</title>');
    expect(page.text).toContain('<h1>Allow Consent &lt;App&gt; to access your account?</h1>');
    expect(page.text).toContain(`<p>Signed in as <strong>${fresh.userEmail}</strong>.</p>`);
    expect(page.text).toContain('Application: <a href="https://consent.example" rel="noopener noreferrer">https://consent.example</a>');
    expect(page.text).toMatch(/<li>[^<]+<span class="muted">\(openid\)<\/span><\/li>\s*<li>Read products and prices <span class="muted">\(products:read\)<\/span><\/li>/);
    expect(radioValues(page.text, 'organization_id')).toEqual([fresh.organizationId]);
    expect(formFields(page.text).organization_id).toBe(fresh.organizationId);
    expect(page.text).toContain('<button type="submit" name="decision" value="approve">Allow</button>');
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9;");
    // A client without a site of its own shows none, and nothing in its place.
    const siteless = (await consentPage(authorizationParams(client), credentials)).page.text;
    expect(siteless).not.toContain('Application:');
    expect(siteless).toMatch(/<p>Signed in as <strong>[^<]+<\/strong>\.<\/p>\s*<form method="post" action="\/oauth2\/authorize">/);
  });

  test('checks no organization for a user of two, offers only Deny to a user of none, and names none for a user grant', async () => {
    const { fresh, owner, credentials } = await freshOwner();
    const second = await createOrganization(prisma(), { name: 'Second of two', ownerId: owner.id });
    const two = (await consentPage(authorizationParams(client), credentials)).page;
    expect(radioValues(two.text, 'organization_id').sort()).toEqual([fresh.organizationId, second.id].sort());
    expect(formFields(two.text)).not.toHaveProperty('organization_id');
    expect(two.text).toContain('<fieldset>\n<legend>For which organization?</legend>');
    for (const id of [fresh.organizationId, second.id]) expect(two.text).toContain(`<input type="radio" id="organization-${id}" name="organization_id" value="${id}" required>`);

    const loner = { email: `loner-${Date.now()}@example.com`, password: 'a long enough password' };
    await createUser(prisma(), loner);
    const none = (await consentPage(authorizationParams(client), loner)).page;
    expect(none.status).toBe(200);
    expect(none.text).toContain('You do not belong to any organization, so there is nothing to grant access to.');
    expect(none.text).not.toContain('value="approve"');
    expect(none.text).toMatch(/<div class="actions">\s*<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny<\/button>\s*<\/div>/);
    const forUser = (await consentPage(authorizationParams(client, { sub_type: 'user' }), loner)).page;
    expect(forUser.text).toContain('Access is to your user account, with every organization you belong to.');
    expect(forUser.text).toContain('value="approve"');
    expect(radioValues(forUser.text, 'organization_id')).toEqual([]);
  });

  test('an approval without an organization shows the page again with why; a form without a decision is refused', async () => {
    const { fresh, owner, credentials } = await freshOwner();
    await createOrganization(prisma(), { name: 'Second of two', ownerId: owner.id });
    const { browser, page } = await consentPage(authorizationParams(client), credentials);
    const fields = formFields(page.text);
    const unchosen = await browser.post(`${issuer}/oauth2/authorize`, { ...fields, decision: 'approve' });
    expect(unchosen.status).toBe(400);
    expect(unchosen.location).toBeNull();
    expect(unchosen.text).toContain('<p class="error" role="alert" id="consent-error">Choose one of your organizations.</p>');
    expect(unchosen.text).toContain('<fieldset aria-describedby="consent-error">');
    const undecided = await browser.post(`${issuer}/oauth2/authorize`, { ...formFields(unchosen.text) });
    expect(undecided.status).toBe(400);
    expect(undecided.location).toBeNull();
    expect(undecided.text).toContain('The consent form carried no decision.');
    expect(undecided.text).toContain('(error: invalid_request)');
    expect(await prisma().oAuthAuthorizationCode.count({ where: { userId: owner.id } })).toBe(0);
  });

  /** Where a redirect to the sign-in page asks to come back to, and whether it asks for the password again. */
  function signInAsked(response: { status: number; location: string | null }) {
    expect(response.status).toBe(303);
    const login = new URL(response.location!, issuer);
    expect(login.pathname).toBe('/oauth2/login');
    return { again: login.searchParams.get('again'), returnTo: login.searchParams.get('return_to') };
  }

  test('sends a visitor who is not signed in to sign in, from the link and from a posted form, and never back to the client', async () => {
    const { page } = await consentPage(authorizationParams(client), user());
    const fields = { ...formFields(page.text), decision: 'approve', organization_id: t.org.organizationId };
    const stranger = new Browser(t.server.url);
    const codes = await prisma().oAuthAuthorizationCode.count();
    expect(signInAsked(await stranger.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client))}`))).toEqual({
      again: null,
      returnTo: expect.stringMatching(/^\/oauth2\/authorize\?response_type=code&client_id=/),
    });
    expect(signInAsked(await stranger.post(`${issuer}/oauth2/authorize`, fields)).again).toBeNull();
    // A form whose request is wrong, posted by a stranger: the error page, not the client's redirect URI.
    const wrong = await stranger.post(`${issuer}/oauth2/authorize`, { ...fields, scope: 'openid nonsense' });
    expect([wrong.status, wrong.location]).toEqual([400, null]);
    expect(wrong.text).toContain('(error: invalid_scope)');
    expect(await prisma().oAuthAuthorizationCode.count()).toBe(codes);
  });

  test('max_age holds at the decision too: a sign-in older than it asks for the password again, a fresh one approves', async () => {
    const params = authorizationParams(client, { max_age: '60' });
    // Signing in honours max_age, and the request goes on without it; asked again, the page carries it.
    const { browser } = await consentPage(params, user());
    const consent = () => browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(params)}`);
    const approve = (page: string) => browser.post(`${issuer}/oauth2/authorize`, { ...formFields(page), decision: 'approve', organization_id: t.org.organizationId });
    const fresh = await consent();
    expect([fresh.status, formFields(fresh.text).max_age]).toEqual([200, '60']);
    const back = await approve(fresh.text);
    expect(back.status).toBe(303);
    expect(new URL(back.location!).searchParams.get('code')).toBeTruthy();

    const again = await consent();
    expect(again.status).toBe(200);
    t.server.clock.now = new Date(Date.now() + 120_000);
    try {
      expect(signInAsked(await approve(again.text))).toEqual({ again: '1', returnTo: expect.stringContaining('max_age=60') });
      // The same at the link: a signed-in user past max_age is asked for the password again.
      expect(signInAsked(await consent()).again).toBe('1');
    } finally {
      t.server.clock.now = null;
    }
  });
});

describe('attacks', () => {
  test('a replayed code fails and revokes every token issued from it', async () => {
    const code = await codeFor(client);
    const first = await exchange(client, code);
    expect(first.status).toBe(200);
    const again = await exchange(client, code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect((await restClient(t.server.base(), first.body.access_token)('GET', '/products/')).status).toBe(401);
    expect((await refresh(client, first.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('two concurrent exchanges of one code give tokens to at most one, and those are revoked', async () => {
    const code = await codeFor(client);
    const results = await Promise.all([exchange(client, code), exchange(client, code)]);
    expect(results.filter((r) => r.status === 200).length).toBe(1);
    const winner = results.find((r) => r.status === 200)!;
    expect((await restClient(t.server.base(), winner.body.access_token)('GET', '/products/')).status).toBe(401);
  });

  test("a token reaches none of another organization's data, organization-scoped or user-scoped", async () => {
    const foreignProduct = await t.other.api('POST', '/products/', { name: 'Not yours', recurring_interval: null, prices: [{ amount_type: 'free' }] });
    expect(foreignProduct.status).toBe(201);
    const organizationScoped = (await exchange(client, await codeFor(client))).body.access_token;
    const back = await authorizeInBrowser(new Browser(t.server.url), issuer, authorizationParams(client, { sub_type: 'user' }), user());
    const userScoped = (await exchange(client, back.searchParams.get('code')!)).body.access_token;
    for (const token of [organizationScoped, userScoped]) {
      const api = restClient(t.server.base(), token);
      expect((await api('GET', `/products/${foreignProduct.body.id}`)).status).toBe(404);
      const listed = await api('GET', `/products/?organization_id=${t.other.organizationId}`);
      // Asking for the other organization by id filters down to nothing, as for an organization token.
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ items: [], pagination: { total_count: 0 } });
      const own = await api('GET', '/products/');
      expect(own.status).toBe(200);
      expect(own.body.items.map((p: { id: string }) => p.id)).not.toContain(foreignProduct.body.id);
    }
  });

  test('a replayed code also revokes the tokens its refresh token was exchanged for', async () => {
    const code = await codeFor(client);
    const first = await exchange(client, code);
    const refreshed = await refresh(client, first.body.refresh_token);
    expect(refreshed.status).toBe(200);
    expect((await exchange(client, code)).body.error).toBe('invalid_grant');
    expect((await restClient(t.server.base(), refreshed.body.access_token)('GET', '/products/')).status).toBe(401);
    expect((await refresh(client, refreshed.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('an OAuth token cannot mint an organization access token, whatever its scopes', async () => {
    const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const minting = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri], scope: 'organization_access_tokens:write organization_access_tokens:read' });
    const back = await authorizeInBrowser(new Browser(t.server.url), issuer, { ...authorizationParams(minting), scope: 'organization_access_tokens:write', sub_type: 'user' }, user());
    const tokens = await exchange(minting, back.searchParams.get('code')!);
    expect(tokens.status).toBe(200);
    const minted = await graphqlClient(t.server.base(), tokens.body.access_token)(
      'mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { token } } }',
      { input: { organizationId: t.org.organizationId, comment: 'escalation', scopes: ['refunds_write', 'webhooks_write'] } },
    );
    expect(minted.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
    expect(minted.body.data?.core?.organizationAccessTokenCreate ?? null).toBeNull();
  });

  test('an unknown client and a client using another auth method get the same invalid_client answer', async () => {
    const code = await codeFor(client);
    const unknown = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: 'service_ci_nobody' });
    const wrongMethod = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: client.client_id });
    expect(unknown.status).toBe(401);
    expect(wrongMethod.status).toBe(401);
    expect(wrongMethod.body).toEqual(unknown.body);
  });

  test('malformed cookies, NUL characters and unknown prompt values get 4xx answers, never 500', async () => {
    const withBadCookie = await fetch(`${issuer}/oauth2/login`, { headers: { cookie: 'other_app=%E0%A4%A; kassa_session=%' } });
    expect(withBadCookie.status).toBe(200);
    const nulClient = await fetch(`${issuer}/oauth2/authorize?client_id=a%00b&response_type=code`);
    expect(nulClient.status).toBe(400);
    const nulToken = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', code: 'x', client_id: 'a\u0000b' });
    expect(nulToken.status).toBe(400);
    expect(nulToken.body.error).toBe('invalid_request');
    const browser = new Browser(t.server.url);
    await authorizeInBrowser(browser, issuer, authorizationParams(client), user(), { organizationId: t.org.organizationId });
    const bogus = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { prompt: 'bogus' }))}`);
    expect(bogus.status).toBe(303);
    expect(new URL(bogus.location!).searchParams.get('error')).toBe('invalid_request');
  });

  test('prompt=login asks a signed-in user for the password again; without it the consent page comes at once', async () => {
    const browser = await signedInBrowser();
    const open = (extra: Record<string, string>) => browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, extra))}`);
    const asked = await open({ prompt: 'login' });
    expect(asked.status).toBe(303);
    const login = new URL(asked.location!, issuer);
    expect([login.pathname, login.searchParams.get('again')]).toEqual(['/oauth2/login', '1']);
    expect(login.searchParams.get('return_to')).toContain('prompt=login');
    expect((await open({ prompt: 'consent' })).status).toBe(200);
    expect((await open({})).status).toBe(200);
  });

  test('max_age counts whole milliseconds: a sign-in exactly max_age old still stands, one a millisecond older does not', async () => {
    const browser = await signedInBrowser();
    const owner = await prisma().user.findUniqueOrThrow({ where: { email: t.org.userEmail } });
    const { createdAt } = await prisma().userSession.findFirstOrThrow({ where: { userId: owner.id }, orderBy: { createdAt: 'desc' } });
    const open = () => browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { max_age: '60' }))}`);
    try {
      t.server.clock.now = new Date(createdAt.getTime() + 60_000);
      expect((await open()).status).toBe(200);
      t.server.clock.now = new Date(createdAt.getTime() + 60_001);
      const asked = await open();
      expect([asked.status, new URL(asked.location!, issuer).pathname]).toEqual([303, '/oauth2/login']);
    } finally {
      t.server.clock.now = null;
    }
  });

  test('max_age=0 asks for the password once, then goes on to consent', async () => {
    const browser = new Browser(t.server.url);
    const back = await authorizeInBrowser(browser, issuer, authorizationParams(client, { max_age: '0' }), user(), { organizationId: t.org.organizationId });
    expect(back.searchParams.get('code')).toBeTruthy();
  });

  test('a code issued to one client is refused to another', async () => {
    const code = await codeFor(client);
    const stolen = await exchange(thief, code);
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
  });

  test('an authorization code past its expiry is refused with invalid_grant', async () => {
    const code = await codeFor(client);
    t.server.clock.now = new Date(Date.now() + (codeLifetimeSeconds + 60) * 1000);
    try {
      const late = await exchange(client, code);
      expect(late.status).toBe(400);
      expect(late.body.error).toBe('invalid_grant');
      expect(late.body.error_description).toContain('expired');
    } finally {
      t.server.clock.now = null;
    }
  });

  test('a refresh token presented by another client is refused with invalid_grant, and stays its own client’s', async () => {
    const tokens = await exchange(client, await codeFor(client));
    const stolen = await refresh(thief, tokens.body.refresh_token);
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    expect(stolen.body.access_token).toBeUndefined();
    expect((await refresh(client, tokens.body.refresh_token)).status).toBe(200);
  });

  test('a refresh token past its expiry is refused with invalid_grant', async () => {
    const tokens = await exchange(client, await codeFor(client));
    t.server.clock.now = new Date(Date.now() + (refreshTokenLifetimeSeconds + 60) * 1000);
    try {
      const late = await refresh(client, tokens.body.refresh_token);
      expect(late.status).toBe(400);
      expect(late.body.error).toBe('invalid_grant');
      expect(late.body.error_description).toContain('expired');
    } finally {
      t.server.clock.now = null;
    }
  });

  test('a client no longer registered for the refresh_token grant is refused it with unauthorized_client', async () => {
    const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const scope = 'openid email products:read';
    const app = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri], scope, grant_types: ['authorization_code', 'refresh_token'] });
    const tokens = await exchange(app, await codeFor(app));
    expect(tokens.body.refresh_token).toMatch(/^service_rt_/);
    const narrowed = await fetch(`${t.server.base()}/oauth2/register/${app.client_id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${app.registration_access_token}` },
      body: JSON.stringify({ client_id: app.client_id, client_name: 'Test App', redirect_uris: [redirectUri], scope, token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'] }),
    });
    expect(narrowed.status).toBe(200);
    const refused = await refresh(app, tokens.body.refresh_token);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('unauthorized_client');
    expect(refused.body.access_token).toBeUndefined();
  });

  test('a wrong, missing or unneeded PKCE verifier is refused', async () => {
    const pkce = pkcePair();
    const withChallenge = () => codeFor(client, { code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    expect((await exchange(client, await withChallenge(), { code_verifier: pkcePair().verifier })).body.error).toBe('invalid_grant');
    expect((await exchange(client, await withChallenge())).body.error).toBe('invalid_grant');
    expect((await exchange(client, await codeFor(client), { code_verifier: pkce.verifier })).body.error).toBe('invalid_grant');
  });

  test("an error goes back with the client's state, unless that state is too long or given twice", async () => {
    const browser = await signedInBrowser();
    const errorOf = async (params: URLSearchParams) => {
      const response = await browser.get(`${issuer}/oauth2/authorize?${params}`);
      expect(response.status).toBe(303);
      const back = new URL(response.location!);
      expect(back.origin + back.pathname).toBe(redirectUri);
      return { error: back.searchParams.get('error'), description: back.searchParams.get('error_description'), state: back.searchParams.getAll('state'), iss: back.searchParams.get('iss') };
    };
    const longest = 's'.repeat(2048);
    expect(await errorOf(new URLSearchParams(authorizationParams(client, { state: longest, prompt: 'select_account' })))).toEqual({
      error: 'invalid_request',
      description: 'prompt "select_account" is not supported (none, login, consent).',
      state: [longest],
      iss: issuer,
    });
    expect(await errorOf(new URLSearchParams(authorizationParams(client, { state: `${longest}s` })))).toEqual({
      error: 'invalid_request',
      description: 'state is longer than 2048 characters.',
      state: [],
      iss: issuer,
    });
    const twice = new URLSearchParams(authorizationParams(client));
    twice.append('state', 'other');
    expect(await errorOf(twice)).toEqual({ error: 'invalid_request', description: 'The parameter "state" was given more than once.', state: [], iss: issuer });
  });

  test('the plain PKCE method is refused', async () => {
    const browser = await signedInBrowser();
    const response = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }))}`);
    const back = new URL(response.location!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toContain('plain');
  });

  test('an unregistered redirect_uri gets an error page and no redirect', async () => {
    const browser = new Browser(t.server.url);
    for (const uri of ['https://evil.example/callback', `${redirectUri}/extra`, `${redirectUri}?x=1`]) {
      const response = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { redirect_uri: uri }))}`);
      expect(response.status).toBe(400);
      expect(response.location).toBeNull();
      expect(response.text).toContain('redirect_uri');
    }
    const unknownClient = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { client_id: 'service_ci_unknown' }))}`);
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.location).toBeNull();
  });

  test('a redirect_uri differing from the authorization request is refused at the token endpoint', async () => {
    const code = await codeFor(client);
    const response = await exchange(client, code, { redirect_uri: 'http://127.0.0.1:9/other' });
    expect(response.body.error).toBe('invalid_grant');
  });

  test('scopes beyond the client registration are refused, and a refresh cannot widen the grant', async () => {
    const browser = await signedInBrowser();
    const escalate = await browser.get(`${issuer}/oauth2/authorize?${new URLSearchParams(authorizationParams(client, { scope: 'openid webhooks:write' }))}`);
    expect(new URL(escalate.location!).searchParams.get('error')).toBe('invalid_scope');
    const tokens = await exchange(client, await codeFor(client));
    const wider = await refresh(client, tokens.body.refresh_token, { scope: 'openid email products:read products:write' });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe('invalid_scope');
    const narrower = await refresh(client, tokens.body.refresh_token, { scope: 'products:read' });
    expect(narrower.status).toBe(200);
    expect(narrower.body.scope).toBe('products:read');
  });

  test('refresh rotates the token, and reuse of a rotated refresh token revokes the whole family', async () => {
    const tokens = await exchange(client, await codeFor(client));
    const rotated = await refresh(client, tokens.body.refresh_token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(tokens.body.refresh_token);
    const reused = await refresh(client, tokens.body.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await restClient(t.server.base(), rotated.body.access_token)('GET', '/products/')).status).toBe(401);
    expect((await refresh(client, rotated.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('a production token is unknown in sandbox', async () => {
    const tokens = await exchange(client, await codeFor(client));
    expect((await restClient(t.server.base('sandbox'), tokens.body.access_token)('GET', '/products/')).status).toBe(401);
  });

  test('client authentication is required at the token endpoint', async () => {
    const code = await codeFor(client);
    const noSecret = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: client.client_id });
    expect(noSecret.status).toBe(401);
    expect(noSecret.body.error).toBe('invalid_client');
    const wrongSecret = await exchange({ ...client, client_secret: 'service_cs_wrong' }, code);
    expect(wrongSecret.status).toBe(401);
    // The code survived the failed attempts.
    expect((await exchange(client, code)).status).toBe(200);
  });

  test('an unsupported grant type and a non-form body are refused with RFC errors', async () => {
    const password = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'password', client_id: client.client_id, client_secret: client.client_secret! });
    expect(password.body.error).toBe('unsupported_grant_type');
    const jsonBody = await fetch(`${t.server.base()}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(jsonBody.status).toBe(400);
    expect((await jsonBody.json()).error).toBe('invalid_request');
  });
});

describe('the token endpoint’s refusals, exactly', () => {
  const codeRow = (code: string) => prisma().oAuthAuthorizationCode.findFirstOrThrow({ where: { codeHash: hashToken(code) } });
  const refusal = (status: number, error: string, description: string) => [status, { error, error_description: description }];
  const answer = (response: { status: number; body: unknown }) => [response.status, response.body];
  /** A client registered for authorization_code alone. */
  let codeOnly: RegisteredClient;
  beforeAll(async () => {
    const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    codeOnly = await registerClient(t.server, 'production', userToken, { redirect_uris: [redirectUri], grant_types: ['authorization_code'], client_name: 'Code only' });
  });

  test('a code: each refusal says what is wrong and leaves the code usable, up to the last millisecond of its life', async () => {
    const code = await codeFor(client);
    const { expiresAt } = await codeRow(code);
    expect(answer(await exchange(client, '', {}))).toEqual(refusal(400, 'invalid_request', 'code is missing.'));
    expect(answer(await exchange(client, 'service_ac_000000000000000000000000000000000000'))).toEqual(refusal(400, 'invalid_grant', 'The authorization code is unknown.'));
    expect(answer(await exchange(thief, code))).toEqual(refusal(400, 'invalid_grant', 'The authorization code was issued to another client.'));
    const withoutRedirect = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', code, client_id: client.client_id, client_secret: client.client_secret! });
    expect(answer(withoutRedirect)).toEqual(refusal(400, 'invalid_request', 'redirect_uri is missing: send the redirect_uri of the authorization request.'));
    expect(answer(await exchange(client, code, { redirect_uri: 'http://127.0.0.1:9/other' }))).toEqual(
      refusal(400, 'invalid_grant', 'redirect_uri differs from the one of the authorization request.'),
    );
    expect(answer(await exchange(client, code, { code_verifier: pkcePair().verifier }))).toEqual(
      refusal(400, 'invalid_grant', 'code_verifier was sent, but the authorization request had no code_challenge.'),
    );
    try {
      t.server.clock.now = expiresAt;
      expect(answer(await exchange(client, code))).toEqual(refusal(400, 'invalid_grant', 'The authorization code has expired: start the authorization again.'));
      t.server.clock.now = new Date(expiresAt.getTime() - 1);
      const tokens = await exchange(client, code);
      expect(tokens.status).toBe(200);
      const row = await tokenRow(tokens.body.refresh_token);
      expect(row.accessExpiresAt.getTime()).toBe(expiresAt.getTime() - 1 + 3600 * 1000);
    } finally {
      t.server.clock.now = null;
    }
    expect(answer(await exchange(client, code))).toEqual(
      refusal(400, 'invalid_grant', 'The authorization code was already used; every token issued from it has been revoked.'),
    );
  });

  test('PKCE: a missing, malformed or wrong verifier is refused with its reason, and verifiers of 43 and 128 characters are taken', async () => {
    const pkce = pkcePair();
    const code = await codeFor(client, { code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    expect(answer(await exchange(client, code))).toEqual(refusal(400, 'invalid_grant', 'code_verifier is missing: the authorization request carried a code_challenge.'));
    const malformed = 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" or "~".';
    for (const verifier of [pkce.verifier.slice(1), `${pkce.verifier}!`, `!${pkce.verifier}`, 'a'.repeat(129), `${'a'.repeat(42)} `]) {
      expect(answer(await exchange(client, code, { code_verifier: verifier })), verifier).toEqual(refusal(400, 'invalid_grant', malformed));
    }
    expect(answer(await exchange(client, code, { code_verifier: pkcePair().verifier }))).toEqual(refusal(400, 'invalid_grant', 'code_verifier does not match the code_challenge.'));
    expect(pkce.verifier).toHaveLength(43);
    expect((await exchange(client, code, { code_verifier: pkce.verifier })).status).toBe(200);

    const long = `${'A-._~'.repeat(25)}abc`;
    expect(long).toHaveLength(128);
    const challenge = createHash('sha256').update(long).digest('base64url');
    const longCode = await codeFor(client, { code_challenge: challenge, code_challenge_method: 'S256' });
    expect((await exchange(client, longCode, { code_verifier: long })).status).toBe(200);
  });

  test('a refresh token: each refusal says what is wrong, up to the last millisecond of its life', async () => {
    const code = await codeFor(client);
    const issuedAt = new Date(Date.now() + 1000);
    t.server.clock.now = issuedAt;
    const tokens = await exchange(client, code).finally(() => (t.server.clock.now = null));
    const { refreshExpiresAt } = await tokenRow(tokens.body.refresh_token);
    expect(refreshExpiresAt!.getTime()).toBe(issuedAt.getTime() + refreshTokenLifetimeSeconds * 1000);
    expect(answer(await refresh(client, ''))).toEqual(refusal(400, 'invalid_request', 'refresh_token is missing.'));
    expect(answer(await refresh(client, 'service_rt_000000000000000000000000000000000000'))).toEqual(refusal(400, 'invalid_grant', 'The refresh token is unknown.'));
    expect(answer(await refresh(thief, tokens.body.refresh_token))).toEqual(refusal(400, 'invalid_grant', 'The refresh token was issued to another client.'));
    expect(answer(await refresh(client, tokens.body.refresh_token, { scope: '' }))).toEqual(refusal(400, 'invalid_scope', 'scope is empty: omit it to keep the granted scopes.'));
    expect(answer(await refresh(client, tokens.body.refresh_token, { scope: 'products:read products:write webhooks:read' }))).toEqual(
      refusal(400, 'invalid_scope', 'The refresh asks for scope(s) never granted: products:write webhooks:read.'),
    );
    try {
      t.server.clock.now = refreshExpiresAt;
      expect(answer(await refresh(client, tokens.body.refresh_token))).toEqual(refusal(400, 'invalid_grant', 'The refresh token has expired: authorize again.'));
      t.server.clock.now = new Date(refreshExpiresAt!.getTime() - 1);
      const narrowed = await refresh(client, tokens.body.refresh_token, { scope: ' products:read  products:read ' });
      expect([narrowed.status, narrowed.body.scope]).toEqual([200, 'products:read']);
      expect((await tokenRow(narrowed.body.refresh_token)).scopes).toEqual(['products:read']);
    } finally {
      t.server.clock.now = null;
    }
    expect(answer(await refresh(client, tokens.body.refresh_token))).toEqual(
      refusal(400, 'invalid_grant', 'The refresh token was already used; every token of its grant has been revoked.'),
    );
  });

  test('a revoked refresh token is refused as revoked, and a client without the refresh grant gets no refresh token', async () => {
    const tokens = await exchange(client, await codeFor(client));
    const revoked = await postForm(t.server, 'production', '/oauth2/revoke', { token: tokens.body.access_token, client_id: client.client_id, client_secret: client.client_secret! });
    expect(revoked.status).toBe(200);
    expect(answer(await refresh(client, tokens.body.refresh_token))).toEqual(refusal(400, 'invalid_grant', 'The refresh token has been revoked.'));

    // A rotated token presented after its family was revoked: refused as reused, the revocation times kept.
    const family = await exchange(client, await codeFor(client));
    const rotated = await refresh(client, family.body.refresh_token);
    await postForm(t.server, 'production', '/oauth2/revoke', { token: rotated.body.access_token, client_id: client.client_id, client_secret: client.client_secret! });
    const { familyId } = await tokenRow(family.body.refresh_token);
    const revokedAt = async () => (await prisma().oAuthToken.findMany({ where: { familyId }, orderBy: { createdAt: 'asc' } })).map((row) => row.revokedAt?.getTime());
    const before = await revokedAt();
    expect(before.every((time) => typeof time === 'number')).toBe(true);
    t.server.clock.now = new Date(Date.now() + 60_000);
    try {
      expect(answer(await refresh(client, family.body.refresh_token))).toEqual(
        refusal(400, 'invalid_grant', 'The refresh token was already used; every token of its grant has been revoked.'),
      );
    } finally {
      t.server.clock.now = null;
    }
    expect(await revokedAt()).toEqual(before);

    const issued = await exchange(codeOnly, await codeFor(codeOnly));
    expect(issued.status).toBe(200);
    expect(issued.body).not.toHaveProperty('refresh_token');
    const row = await accessRow(issued.body.access_token);
    expect([row.refreshTokenHash, row.refreshExpiresAt]).toEqual([null, null]);
  });

  test('introspection calls a token inactive from its expiry on, and a refresh token once exchanged', async () => {
    const auth = { client_id: client.client_id, client_secret: client.client_secret! };
    const introspect = (token: string) => postForm(t.server, 'production', '/oauth2/introspect', { token, ...auth }).then((response) => response.body.active);
    const tokens = await exchange(client, await codeFor(client));
    const row = await tokenRow(tokens.body.refresh_token);
    try {
      t.server.clock.now = new Date(row.accessExpiresAt.getTime() - 1);
      expect(await introspect(tokens.body.access_token)).toBe(true);
      t.server.clock.now = row.accessExpiresAt;
      expect(await introspect(tokens.body.access_token)).toBe(false);
      t.server.clock.now = new Date(row.refreshExpiresAt!.getTime() - 1);
      expect(await introspect(tokens.body.refresh_token)).toBe(true);
      t.server.clock.now = row.refreshExpiresAt;
      expect(await introspect(tokens.body.refresh_token)).toBe(false);
    } finally {
      t.server.clock.now = null;
    }
    const rotated = await refresh(client, tokens.body.refresh_token);
    expect(await introspect(tokens.body.refresh_token)).toBe(false);
    expect(await introspect(rotated.body.refresh_token)).toBe(true);
  });

  test('the grant type: missing, unsupported, or not registered for the client', async () => {
    const auth = { client_id: client.client_id, client_secret: client.client_secret! };
    expect(answer(await postForm(t.server, 'production', '/oauth2/token', auth))).toEqual(
      refusal(400, 'invalid_request', 'grant_type is missing: use authorization_code or refresh_token.'),
    );
    expect(answer(await postForm(t.server, 'production', '/oauth2/token', { ...auth, grant_type: 'client_credentials' }))).toEqual(
      refusal(400, 'unsupported_grant_type', 'grant_type "client_credentials" is not supported: use authorization_code or refresh_token.'),
    );
    const secret = { client_id: codeOnly.client_id, client_secret: codeOnly.client_secret! };
    expect(answer(await postForm(t.server, 'production', '/oauth2/token', { ...secret, grant_type: 'refresh_token', refresh_token: 'service_rt_x' }))).toEqual(
      refusal(400, 'unauthorized_client', 'This client is not registered for the refresh_token grant.'),
    );
  });
});

describe('revoking one grant', () => {

  test('by a replayed code, a reused refresh token or the revocation endpoint leaves every other grant working', async () => {
    const bystander = await exchange(client, await codeFor(client));
    const works = async () => {
      expect((await accessRow(bystander.body.access_token)).revokedAt).toBeNull();
      expect((await restClient(t.server.base(), bystander.body.access_token)('GET', '/products/')).status).toBe(200);
    };

    const code = await codeFor(client);
    const replayed = await exchange(client, code);
    expect((await exchange(client, code)).body.error).toBe('invalid_grant');
    expect((await accessRow(replayed.body.access_token)).revokedAt).not.toBeNull();
    await works();

    const reused = await exchange(client, await codeFor(client));
    const rotated = await refresh(client, reused.body.refresh_token);
    expect((await refresh(client, reused.body.refresh_token)).body.error).toBe('invalid_grant');
    expect((await accessRow(rotated.body.access_token)).revokedAt).not.toBeNull();
    await works();

    const revoked = await exchange(client, await codeFor(client));
    const answer = await postForm(t.server, 'production', '/oauth2/revoke', { token: revoked.body.refresh_token, client_id: client.client_id, client_secret: client.client_secret! });
    expect(answer.status).toBe(200);
    expect((await accessRow(revoked.body.access_token)).revokedAt).not.toBeNull();
    await works();
  });

  test('a user-scoped grant keeps no organization, even when the consent form names one', async () => {
    const back = await authorizeInBrowser(new Browser(t.server.url), issuer, authorizationParams(client, { sub_type: 'user' }), user(), { organizationId: t.org.organizationId });
    const tokens = await exchange(client, back.searchParams.get('code')!);
    expect(tokens.status).toBe(200);
    const row = await accessRow(tokens.body.access_token);
    expect([row.subType, row.organizationId]).toEqual(['user', null]);
  });

  test('an S256 challenge longer than a SHA-256 digest can never be met: refused as not matching, not a server error', async () => {
    const code = await codeFor(client, { code_challenge: 'A'.repeat(60), code_challenge_method: 'S256' });
    const refused = await exchange(client, code, { code_verifier: pkcePair().verifier });
    expect([refused.status, refused.body]).toEqual([400, { error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge.' }]);
  });
});

describe('revocation and introspection', () => {
  test('introspection answers the owning client only, and revocation ends the family at once', async () => {
    const tokens = await exchange(client, await codeFor(client));
    const auth = { client_id: client.client_id, client_secret: client.client_secret! };
    const active = await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, ...auth });
    expect(active.body).toMatchObject({ active: true, client_id: client.client_id, token_type: 'access_token', scope: 'openid email products:read', sub_type: 'organization', sub: t.org.organizationId, aud: client.client_id, iss: issuer });
    const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const stranger = await registerClient(t.server, 'production', userToken, { client_name: 'Stranger' });
    const foreign = await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, client_id: stranger.client_id, client_secret: stranger.client_secret! });
    expect(foreign.body).toEqual({ active: false });
    // Another client's revocation changes nothing.
    expect((await postForm(t.server, 'production', '/oauth2/revoke', { token: tokens.body.access_token, client_id: stranger.client_id, client_secret: stranger.client_secret! })).status).toBe(200);
    expect((await restClient(t.server.base(), tokens.body.access_token)('GET', '/products/')).status).toBe(200);

    const revoked = await postForm(t.server, 'production', '/oauth2/revoke', { token: tokens.body.refresh_token, token_type_hint: 'refresh_token', ...auth });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({});
    expect((await restClient(t.server.base(), tokens.body.access_token)('GET', '/products/')).status).toBe(401);
    expect((await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, ...auth })).body).toEqual({ active: false });
    // Revoking again, or revoking garbage, is still 200.
    expect((await postForm(t.server, 'production', '/oauth2/revoke', { token: tokens.body.refresh_token, ...auth })).status).toBe(200);
    expect((await postForm(t.server, 'production', '/oauth2/revoke', { token: 'garbage', ...auth })).status).toBe(200);
    // Without client authentication: refused.
    expect((await postForm(t.server, 'production', '/oauth2/revoke', { token: tokens.body.refresh_token })).status).toBe(401);
  });
});

describe('revocation, introspection and userinfo, exactly', () => {
  const auth = () => ({ client_id: client.client_id, client_secret: client.client_secret! });
  const userinfo = (headers: Record<string, string> = {}) =>
    fetch(`${t.server.base('production')}/oauth2/userinfo`, { headers }).then(async (response) => ({ status: response.status, body: await response.json(), headers: response.headers }));

  test('revocation and introspection refuse a missing token and an unknown hint, and take both known hints', async () => {
    const tokens = await exchange(client, await codeFor(client));
    for (const [path, verb] of [['/oauth2/revoke', 'revoke'], ['/oauth2/introspect', 'introspect']] as const) {
      const missing = await postForm(t.server, 'production', path, { ...auth() });
      expect([missing.status, missing.body]).toEqual([400, { error: 'invalid_request', error_description: `token is missing: send the access or refresh token to ${verb}.` }]);
      const hinted = await postForm(t.server, 'production', path, { token: tokens.body.access_token, token_type_hint: 'id_token', ...auth() });
      expect([hinted.status, hinted.body]).toEqual([
        400,
        { error: 'unsupported_token_type', error_description: 'token_type_hint "id_token" is not supported: use access_token or refresh_token.' },
      ]);
    }
    for (const hint of ['access_token', 'refresh_token']) {
      const answer = await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, token_type_hint: hint, ...auth() });
      expect([answer.status, answer.body.active]).toEqual([200, true]);
    }
    // The hint refused, nothing was revoked.
    expect((await restClient(t.server.base(), tokens.body.access_token)('GET', '/products/')).status).toBe(200);
  });

  test('introspection gives each token its own type, issue time and expiry, in whole seconds', async () => {
    const tokens = await exchange(client, await codeFor(client));
    const row = await t.server.kassa.environments.production.environment.prisma.oAuthToken.findFirstOrThrow({ where: { accessTokenHash: hashToken(tokens.body.access_token) } });
    const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
    const access = await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, ...auth() });
    expect(access.body).toMatchObject({ active: true, token_type: 'access_token', iat: seconds(row.createdAt), exp: seconds(row.accessExpiresAt) });
    const refresh = await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.refresh_token, ...auth() });
    expect(refresh.body).toMatchObject({ active: true, token_type: 'refresh_token', iat: seconds(row.createdAt), exp: seconds(row.refreshExpiresAt!) });
    expect(refresh.body.exp - refresh.body.iat).toBe(refreshTokenLifetimeSeconds);
    expect(access.body.exp - access.body.iat).toBe(3600);
  });

  test('userinfo refuses no token, a bad one, a token not from OAuth and one without openid, each with its Bearer challenge', async () => {
    const cases: [Record<string, string>, number, string, string][] = [
      [{}, 401, 'invalid_token', 'Send the access token as "Authorization: Bearer <token>".'],
      [{ authorization: 'Bearer service_at_000000000000000000000000000000000000' }, 401, 'invalid_token', 'The access token is invalid, expired or revoked.'],
      [{ authorization: `Bearer ${t.org.token}` }, 401, 'invalid_token', 'userinfo answers OAuth access tokens only, not organization, personal or session tokens.'],
    ];
    const withoutOpenid = await exchange(client, await codeFor(client, { scope: 'products:read' }));
    cases.push([{ authorization: `Bearer ${withoutOpenid.body.access_token}` }, 403, 'insufficient_scope', 'The access token was not granted the openid scope.']);
    for (const [headers, status, error, description] of cases) {
      const answer = await userinfo(headers);
      expect([answer.status, answer.body], JSON.stringify(headers)).toEqual([status, { error, error_description: description }]);
      expect(answer.headers.get('www-authenticate')).toBe(`Bearer error="${error}", error_description="${description.replace(/"/g, '')}"`);
    }
  });

  test('userinfo and the ID token release the name for profile alone, the email for email alone, and nothing more for openid alone', async () => {
    const prisma = t.server.kassa.environments.production.environment.prisma;
    const { name } = await prisma.user.findUniqueOrThrow({ where: { email: t.org.userEmail } });
    await prisma.user.update({ where: { email: t.org.userEmail }, data: { name: 'Ada Owner' } });
    onTestFinished(() => prisma.user.update({ where: { email: t.org.userEmail }, data: { name } }).then(() => undefined));
    const claimsOf = async (scope: string) => {
      const tokens = await exchange(client, await codeFor(client, { scope }));
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      const answer = await userinfo({ authorization: `Bearer ${tokens.body.access_token}` });
      expect(answer.status).toBe(200);
      const [header, payload] = tokens.body.id_token.split('.').slice(0, 2).map((part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()));
      expect(header.typ).toBe('JWT');
      return { userinfo: answer.body, idToken: payload };
    };
    const profile = await claimsOf('openid profile');
    expect(profile.userinfo).toEqual({ sub: t.org.organizationId, name: 'Ada Owner' });
    expect(profile.idToken).toMatchObject({ name: 'Ada Owner' });
    expect(profile.idToken).not.toHaveProperty('email');
    const email = await claimsOf('openid email');
    expect(email.userinfo).toEqual({ sub: t.org.organizationId, email: t.org.userEmail, email_verified: expect.any(Boolean) });
    expect(email.idToken).not.toHaveProperty('name');
    expect((await claimsOf('openid')).userinfo).toEqual({ sub: t.org.organizationId });
  });
});

describe('a user who leaves the organization', () => {
  test('takes its organization grants along: the API refuses them and introspection calls them inactive', async () => {
    const prisma = t.server.kassa.environments.production.environment.prisma;
    const owner = await prisma.user.findUniqueOrThrow({ where: { email: t.org.userEmail } });
    const left = await createOrganization(prisma, { name: 'Left Behind', ownerId: owner.id });
    const back = await authorizeInBrowser(new Browser(t.server.url), issuer, authorizationParams(client), user(), { organizationId: left.id });
    const tokens = await exchange(client, back.searchParams.get('code')!);
    const pending = await authorizeInBrowser(new Browser(t.server.url), issuer, authorizationParams(client), user(), { organizationId: left.id });
    const auth = { client_id: client.client_id, client_secret: client.client_secret! };
    expect((await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, ...auth })).body.active).toBe(true);
    // Used once, the token's principal is cached: ending the membership must reach the cache.
    expect((await restClient(t.server.base(), tokens.body.access_token)('GET', '/products/')).status).toBe(200);
    const { environment } = t.server.kassa.environments.production;
    expect(await endMembership(prisma, environment.principals, { organizationId: left.id, userId: owner.id })).toBe(true);
    expect(await endMembership(prisma, environment.principals, { organizationId: left.id, userId: owner.id })).toBe(false);
    expect((await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.access_token, ...auth })).body).toEqual({ active: false });
    expect((await postForm(t.server, 'production', '/oauth2/introspect', { token: tokens.body.refresh_token, ...auth })).body).toEqual({ active: false });
    expect((await restClient(t.server.base(), tokens.body.access_token)('GET', '/products/')).status).toBe(401);
    const gone = { error: 'invalid_grant', error_description: 'The user no longer belongs to the organization this grant was made for.' };
    expect((await refresh(client, tokens.body.refresh_token)).body).toEqual(gone);
    expect((await exchange(client, pending.searchParams.get('code')!)).body).toEqual(gone);
  });
});

describe('sign-in', () => {
  test('a sign-out posted from another site leaves the session and its cookie alone', async () => {
    const browser = new Browser(t.server.url);
    await authorizeInBrowser(browser, issuer, authorizationParams(client), user(), { organizationId: t.org.organizationId });
    const session = browser.cookies.get('kassa_session');
    expect(session).toBeTruthy();
    const forged = await browser.post(`${issuer}/oauth2/logout`, {}, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(forged.headers.getSetCookie()).toEqual([]);
    expect(browser.cookies.get('kassa_session')).toBe(session);
    expect((await browser.get(`${issuer}/oauth2/login`)).text).toContain('Signed in');
  });

  test('wrong passwords are throttled per account, with Retry-After, and a right one then waits too', async () => {
    const target = await newOrganization(t.server);
    const browser = new Browser(t.server.url);
    const attempt = async (password: string) => {
      const page = await browser.get(`${issuer}/oauth2/login`);
      return browser.post(`${issuer}/oauth2/login`, { ...formFields(page.text), email: target.userEmail, password });
    };
    for (let i = 0; i < 5; i++) expect((await attempt('wrong password!')).status).toBe(401);
    const throttled = await attempt(target.userPassword);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(throttled.text).toContain('Too many failed sign-in attempts');
    expect(throttled.headers.getSetCookie().join('')).not.toContain('kassa_session=');
  });

  test('concurrent guesses get no more tries than the limit', async () => {
    const target = await newOrganization(t.server);
    const browser = new Browser(t.server.url);
    const page = await browser.get(`${issuer}/oauth2/login`);
    const fields = formFields(page.text);
    const results = await Promise.all(Array.from({ length: 12 }, () => browser.post(`${issuer}/oauth2/login`, { ...fields, email: target.userEmail, password: 'wrong password!' })));
    expect(results.filter((r) => r.status === 401).length).toBe(5);
    expect(results.filter((r) => r.status === 429).length).toBe(7);
  });

  test('the sign-in form refuses a post without its CSRF token and never redirects off-site', async () => {
    const browser = new Browser(t.server.url);
    const page = await browser.get(`${issuer}/oauth2/login`);
    const forged = await browser.post(`${issuer}/oauth2/login`, { email: t.org.userEmail, password: t.org.userPassword });
    expect(forged.status).toBe(403);
    const offSite = await browser.post(`${issuer}/oauth2/login`, { ...formFields(page.text), ...user(), return_to: 'https://evil.example/' });
    expect(offSite.status).toBe(303);
    expect(offSite.location).toBe('/oauth2/login');
  });
});

describe('signing in through the API', () => {
  test('signing in through GraphQL is throttled like the page: after five wrong passwords even the right one waits', async () => {
    // An hour on: the failures of the tests above have left the throttle's window.
    t.server.clock.now = new Date(Date.now() + 3600_000);
    try {
      const victim = await newOrganization(t.server);
      const signIn = (password: string) =>
        graphqlClient(t.server.base(), undefined)('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', { email: victim.userEmail, password });
      for (let i = 0; i < 5; i++) expect((await signIn('wrong-password')).body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
      const throttled = await signIn(victim.userPassword);
      expect(throttled.status).toBe(429);
      expect(throttled.body.errors![0].extensions.code).toBe('TOO_MANY_ATTEMPTS');
      expect(throttled.body.data?.signIn ?? null).toBeNull();
    } finally {
      t.server.clock.now = null;
    }
  });
});

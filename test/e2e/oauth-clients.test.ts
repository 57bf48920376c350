// OAuth clients: dynamic registration (RFC 7591) by a signed-in user, its management with the
// registration access token (RFC 7592), client authentication at the token endpoint (RFC 6749
// §2.3), and the same clients managed over GraphQL. Every rule is tried from the attacker's side
// too: the wrong kind of token, another client's registration token, another user's client.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { allScopes } from '../../src/auth/scopes.ts';
import { generateToken, hashToken } from '../../src/auth/tokens.ts';
import { graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { issuerOf, postForm, registerClient, userSessionToken, type RegisteredClient } from '../helpers/oauth.ts';

const t = useTestServer({ organizations: { owner: 'production', stranger: 'production' } });
let ownerSession: string;
let ownerId: string;
let strangerSession: string;

const prisma = () => t.server.kassa.environments.production.environment.prisma;
const clientCount = () => prisma().oAuthClient.count();

beforeAll(async () => {
  ownerSession = await userSessionToken(t.server, 'production', t.owner.userEmail, t.owner.userPassword);
  strangerSession = await userSessionToken(t.server, 'production', t.stranger.userEmail, t.stranger.userPassword);
  ownerId = (await prisma().user.findUniqueOrThrow({ where: { email: t.owner.userEmail } })).id;
});

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(method: string, path: string, token: string | undefined, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const response = await fetch(`${t.server.base()}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': contentType } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

const validMetadata = { client_name: 'My App', redirect_uris: ['https://app.example.com/callback'], scope: 'openid email products:read' };
const register = (body: unknown, token: string | undefined = ownerSession) => call('POST', '/oauth2/register', token, body);
const manage = (method: 'GET' | 'PUT' | 'DELETE', clientId: string, token: string | undefined, body?: unknown) => call(method, `/oauth2/register/${clientId}`, token, body);

/** A request to the token endpoint that fails after client authentication (the code is unknown). */
function tokenRequest(form: Record<string, string>, headers: Record<string, string> = {}) {
  return postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', code: 'service_ac_unknown', redirect_uri: 'https://app.example.com/callback', ...form }, headers);
}

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

/** The client got past authentication: the token endpoint then refuses the unknown code. */
function expectAuthenticated(answer: { status: number; body: any }) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.error).toBe('invalid_grant');
}

/** One answer for an unknown client, a wrong secret and a method other than the registered one. */
const authenticationFailed = 'Client authentication failed: unknown client, wrong secret, or not the method the client registered (token_endpoint_auth_method).';

function expectInvalidClient(answer: { status: number; body: any; headers: Headers }, description: string = authenticationFailed) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(401);
  expect(answer.body).toEqual({ error: 'invalid_client', error_description: description });
  expect(answer.headers.get('www-authenticate')).toMatch(/^Basic /);
}

function expectInvalidToken(answer: Answer) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(401);
  expect(answer.body).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
  expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
}

/** A live OAuth access token of `clientId` for the owner (and an unused code), written as the token endpoint would. */
async function grantFor(clientUuid: string) {
  const accessToken = generateToken(t.server.config.tokenPrefix, 'at');
  const now = new Date();
  const token = await prisma().oAuthToken.create({
    data: {
      familyId: randomUUID(),
      clientId: clientUuid,
      userId: ownerId,
      subType: 'user',
      scopes: ['user:read'],
      accessTokenHash: hashToken(accessToken),
      accessExpiresAt: new Date(now.getTime() + 3600_000),
      authTime: now,
    },
  });
  const code = await prisma().oAuthAuthorizationCode.create({
    data: {
      codeHash: hashToken(generateToken(t.server.config.tokenPrefix, 'ac')),
      clientId: clientUuid,
      userId: ownerId,
      subType: 'user',
      scopes: ['user:read'],
      redirectUri: 'https://app.example.com/callback',
      authTime: now,
      expiresAt: new Date(now.getTime() + 300_000),
    },
  });
  return { accessToken, tokenId: token.id, codeId: code.id };
}

const meStatus = async (accessToken: string) => (await graphqlClient(t.server.base(), accessToken)('query { core { me { id } } }')).status;

describe('registration (RFC 7591)', () => {
  it('registers a confidential client: secrets shown once, stored hashed', async () => {
    const answer = await register({ ...validMetadata, client_uri: 'https://app.example.com', logo_uri: 'https://app.example.com/logo.png', unknown_field: 'ignored' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const body = answer.body;
    expect(body).toEqual({
      client_id: expect.stringMatching(/^service_ci_[0-9A-Za-z]{36}$/),
      client_id_issued_at: expect.any(Number),
      client_secret: expect.stringMatching(/^service_cs_[0-9A-Za-z]{36}$/),
      client_secret_expires_at: 0,
      registration_access_token: expect.stringMatching(/^service_rat_[0-9A-Za-z]{36}$/),
      registration_client_uri: `${issuerOf(t.server)}/v1/oauth2/register/${body.client_id}`,
      client_name: 'My App',
      redirect_uris: ['https://app.example.com/callback'],
      scope: 'openid email products:read',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_uri: 'https://app.example.com',
      logo_uri: 'https://app.example.com/logo.png',
      tos_uri: null,
      policy_uri: null,
      created_at: expect.any(String),
      modified_at: body.modified_at,
    });
    expect(body.modified_at === null || typeof body.modified_at === 'string').toBe(true);
    expect(Math.abs(body.client_id_issued_at - Date.now() / 1000)).toBeLessThan(60);

    const row = await prisma().oAuthClient.findUniqueOrThrow({ where: { clientId: body.client_id } });
    expect(row.clientSecretHash).toBe(hashToken(body.client_secret));
    expect(row.registrationAccessTokenHash).toBe(hashToken(body.registration_access_token));
    expect(row.userId).toBe(ownerId);
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(body.client_secret);
    expect(stored).not.toContain(body.registration_access_token);

    // The secret works, and is never shown again.
    expectAuthenticated(await tokenRequest({}, basic(body.client_id, body.client_secret)));
    const read = await manage('GET', body.client_id, body.registration_access_token);
    expect(read.body.client_secret).toBeUndefined();
    expect(read.body.registration_access_token).toBeUndefined();
  });

  it('registers a public client without a secret, with every scope by default', async () => {
    const answer = await register({ client_name: 'Browser App', redirect_uris: ['http://127.0.0.1:8080/cb', 'http://localhost:3000/cb', 'http://[::1]:9000/cb'], token_endpoint_auth_method: 'none' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.client_secret).toBeUndefined();
    expect(answer.body.client_secret_expires_at).toBeUndefined();
    expect(answer.body.token_endpoint_auth_method).toBe('none');
    expect(answer.body.scope).toBe(allScopes.join(' '));
    expect(answer.body.redirect_uris).toEqual(['http://127.0.0.1:8080/cb', 'http://localhost:3000/cb', 'http://[::1]:9000/cb']);
    const row = await prisma().oAuthClient.findUniqueOrThrow({ where: { clientId: answer.body.client_id } });
    expect(row.clientSecretHash).toBeNull();
  });

  const redirect = (uri: string, rest: string) => `The redirect URI "${uri}" ${rest}`;
  const grantWords = (types: string) => `Unsupported grant type(s): ${types}. Supported: authorization_code, refresh_token.`;
  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['missing client_name', { client_name: undefined }, 'invalid_client_metadata', 'client_name is required: name the application users will see on the consent page.'],
    ['an empty client_name', { client_name: '  ' }, 'invalid_client_metadata', 'client_name must not be empty.'],
    ['a client_name too long', { client_name: 'x'.repeat(201) }, 'invalid_client_metadata', 'client_name must be at most 200 characters.'],
    ['a client_name not a string', { client_name: 42 }, 'invalid_client_metadata', 'client_name must be a string.'],
    ['missing redirect_uris', { redirect_uris: undefined }, 'invalid_redirect_uri', 'redirect_uris is required: register at least one URI to send users back to.'],
    ['null redirect_uris', { redirect_uris: null }, 'invalid_redirect_uri', 'redirect_uris is required: register at least one URI to send users back to.'],
    ['empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri', 'redirect_uris must name at least one URI.'],
    ['redirect_uris not an array', { redirect_uris: 'https://app.example.com/cb' }, 'invalid_redirect_uri', 'redirect_uris must be an array of URLs.'],
    ['a redirect URI not a string', { redirect_uris: ['https://app.example.com/cb', 42] }, 'invalid_redirect_uri', 'Each redirect URI must be a string.'],
    ['an http redirect URI off loopback', { redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri', redirect('http://app.example.com/cb', 'uses http: use https, or http on a loopback address (127.0.0.1, [::1], localhost).')],
    ['a redirect URI with a fragment', { redirect_uris: ['https://app.example.com/cb#frag'] }, 'invalid_redirect_uri', redirect('https://app.example.com/cb#frag', 'has a fragment; redirect URIs must not (RFC 6749 §3.1.2).')],
    ['a redirect URI with an empty fragment', { redirect_uris: ['https://app.example.com/cb#'] }, 'invalid_redirect_uri', redirect('https://app.example.com/cb#', 'has a fragment; redirect URIs must not (RFC 6749 §3.1.2).')],
    ['a redirect URI with userinfo', { redirect_uris: ['https://user:pass@app.example.com/cb'] }, 'invalid_redirect_uri', redirect('https://user:pass@app.example.com/cb', 'carries user information; remove the "user@" part.')],
    ['a redirect URI with an empty userinfo', { redirect_uris: ['https://@app.example.com/cb'] }, 'invalid_redirect_uri', redirect('https://@app.example.com/cb', 'carries user information; remove the "user@" part.')],
    ['a redirect URI with whitespace', { redirect_uris: ['https://app.example.com/c b'] }, 'invalid_redirect_uri', redirect('https://app.example.com/c b', 'contains whitespace.')],
    ['a relative redirect URI', { redirect_uris: ['/callback'] }, 'invalid_redirect_uri', redirect('/callback', 'is not an absolute URL.')],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri', redirect('javascript:alert(1)', 'uses the scheme javascript: use https, or http on a loopback address.')],
    ['an ftp: redirect URI on a loopback host', { redirect_uris: ['ftp://localhost/cb'] }, 'invalid_redirect_uri', redirect('ftp://localhost/cb', 'uses the scheme ftp: use https, or http on a loopback address.')],
    ['a mailto: redirect URI', { redirect_uris: ['mailto:me@example.com'] }, 'invalid_redirect_uri', redirect('mailto:me@example.com', 'uses the scheme mailto: use https, or http on a loopback address.')],
    ['a redirect URI too long', { redirect_uris: [`https://app.example.com/${'a'.repeat(1977)}`] }, 'invalid_redirect_uri', 'A redirect URI must be at most 2000 characters.'],
    ['too many redirect URIs', { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://app.example.com/cb${i}`) }, 'invalid_redirect_uri', 'redirect_uris may name at most 20 URIs.'],
    ['an unknown scope', { scope: 'openid admin root' }, 'invalid_client_metadata', `Unknown scope(s): admin root. Known scopes: ${allScopes.join(' ')}.`],
    ['an empty scope', { scope: ' ' }, 'invalid_client_metadata', 'scope is empty: name at least one scope, or omit it for all of them.'],
    ['a scope array', { scope: ['openid'] }, 'invalid_client_metadata', 'scope must be a string of space-separated scopes.'],
    ['an unsupported auth method', { token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', 'token_endpoint_auth_method must be one of client_secret_basic, client_secret_post, none.'],
    ['an auth method not a string', { token_endpoint_auth_method: 1 }, 'invalid_client_metadata', 'token_endpoint_auth_method must be one of client_secret_basic, client_secret_post, none.'],
    ['an unsupported grant type', { grant_types: ['authorization_code', 'client_credentials', 'password'] }, 'invalid_client_metadata', grantWords('client_credentials, password')],
    ['the implicit grant', { grant_types: ['implicit'] }, 'invalid_client_metadata', grantWords('implicit')],
    ['grant_types not an array', { grant_types: 'authorization_code' }, 'invalid_client_metadata', 'grant_types must be an array of strings.'],
    ['a grant type not a string', { grant_types: ['authorization_code', 7] }, 'invalid_client_metadata', 'grant_types must be an array of strings.'],
    ['refresh_token without authorization_code', { grant_types: ['refresh_token'] }, 'invalid_client_metadata', 'grant_types must include authorization_code: it is how a client obtains tokens.'],
    ['an unsupported response type', { response_types: ['code', 'token', 'id_token'] }, 'invalid_client_metadata', 'Unsupported response type(s): token, id_token. Supported: code.'],
    ['no response type', { response_types: [] }, 'invalid_client_metadata', 'response_types must include code, to go with the authorization_code grant.'],
    ['response_types not an array', { response_types: 'code' }, 'invalid_client_metadata', 'response_types must be an array of strings.'],
    ['an http client_uri', { client_uri: 'http://app.example.com' }, 'invalid_client_metadata', 'client_uri must be an absolute https URL.'],
    ['a policy_uri not a URL', { policy_uri: 'our policy' }, 'invalid_client_metadata', 'policy_uri must be an absolute https URL.'],
    ['a logo_uri not a string', { logo_uri: 42 }, 'invalid_client_metadata', 'logo_uri must be a string URL or null.'],
    ['a tos_uri too long', { tos_uri: `https://app.example.com/${'t'.repeat(1977)}` }, 'invalid_client_metadata', 'tos_uri must be at most 2000 characters.'],
    ['a client_uri with userinfo', { client_uri: 'https://me@app.example.com' }, 'invalid_client_metadata', 'client_uri must not carry user information.'],
  ];

  for (const [what, change, error, description] of invalid) {
    it(`refuses ${what} with ${error}, saying why, writing nothing`, async () => {
      const before = await clientCount();
      const answer = await register({ ...validMetadata, ...change });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body).toEqual({ error, error_description: description });
      expect(await clientCount()).toBe(before);
    });
  }

  it('takes each redirect URI and scope once, trims the name, and defaults what is left out', async () => {
    // An @ past the authority is no user information.
    const uris = ['https://app.example.com/a?by=me@example.com', 'http://127.0.0.1:7000/b', 'https://app.example.com/a?by=me@example.com', `https://app.example.com/${'u'.repeat(1976)}`];
    const answer = await register({ client_name: '  Tidy App ', redirect_uris: uris, scope: ' openid  openid email ', token_endpoint_auth_method: null, grant_types: null, response_types: null, tos_uri: null });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({
      client_name: 'Tidy App',
      redirect_uris: [uris[0], uris[1], uris[3]],
      scope: 'openid email',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_uri: null,
      logo_uri: null,
      tos_uri: null,
      policy_uri: null,
    });
    const only = await register({ ...validMetadata, grant_types: ['authorization_code', 'authorization_code'], response_types: ['code', 'code'], redirect_uris: Array.from({ length: 20 }, (_, i) => `https://app.example.com/cb${i}`) });
    expect(only.status, JSON.stringify(only.body)).toBe(201);
    expect([only.body.grant_types, only.body.response_types, only.body.redirect_uris.length]).toEqual([['authorization_code'], ['code'], 20]);
    const tos = `https://app.example.com/${'t'.repeat(1976)}`;
    const longest = await register({ ...validMetadata, client_name: 'n'.repeat(200), tos_uri: tos });
    expect([longest.status, longest.body.client_name, longest.body.tos_uri]).toEqual([201, 'n'.repeat(200), tos]);
  });

  it('refuses a body that is not a JSON object', async () => {
    expect((await call('POST', '/oauth2/register', ownerSession, 'not json')).body.error).toBe('invalid_request');
    expect((await call('POST', '/oauth2/register', ownerSession, [validMetadata])).body.error).toBe('invalid_request');
    expect((await call('POST', '/oauth2/register', ownerSession, 'client_name=x', 'application/x-www-form-urlencoded')).body.error).toBe('invalid_request');
  });

  it('requires the session of a signed-in user', async () => {
    const before = await clientCount();
    const customer = await t.owner.api('POST', '/customers/', { email: `buyer-${randomUUID()}@example.com` });
    expect(customer.status).toBe(201);
    const customerSession = await t.owner.api('POST', '/customer-sessions/', { customer_id: customer.body.id });
    expect(customerSession.status).toBe(201);
    const pat = await graphqlClient(t.server.base(), ownerSession)(
      'mutation { core { personalAccessTokenCreate(input: { comment: "script", scopes: [user_read] }) { token } } }',
    );
    expect(pat.body.errors).toBeUndefined();
    const sandboxUser = await t.server.bootstrap('sandbox');
    const sandboxSession = await userSessionToken(t.server, 'sandbox', sandboxUser.userEmail, sandboxUser.userPassword);

    expectInvalidToken(await register(validMetadata, ''));
    expectInvalidToken(await register(validMetadata, 'not-a-token'));
    expectInvalidToken(await register(validMetadata, generateToken(t.server.config.tokenPrefix, 'us')));
    expectInvalidToken(await register(validMetadata, t.owner.token));
    expectInvalidToken(await register(validMetadata, customerSession.body.token));
    expectInvalidToken(await register(validMetadata, pat.body.data.core.personalAccessTokenCreate.token));
    expectInvalidToken(await register(validMetadata, sandboxSession));
    const basicAuth = await fetch(`${t.server.base()}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      body: JSON.stringify(validMetadata),
    });
    expect(basicAuth.status).toBe(401);
    expect(await clientCount()).toBe(before);
  });
});

describe('client configuration (RFC 7592)', () => {
  it('reads the registration with its registration access token only', async () => {
    const mine = await registerClient(t.server, 'production', ownerSession);
    const theirs = await registerClient(t.server, 'production', strangerSession);
    const read = await manage('GET', mine.client_id, mine.registration_access_token);
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBe('no-store');
    expect(read.body).toMatchObject({
      client_id: mine.client_id,
      client_secret_expires_at: 0,
      registration_client_uri: `${issuerOf(t.server)}/v1/oauth2/register/${mine.client_id}`,
      client_name: 'Test App',
      redirect_uris: mine.redirect_uris,
      scope: mine.scope,
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(read.body.client_secret).toBeUndefined();

    const refused = [
      await manage('GET', mine.client_id, theirs.registration_access_token),
      await manage('GET', mine.client_id, undefined),
      await manage('GET', mine.client_id, ownerSession),
      await manage('GET', mine.client_id, mine.client_secret!),
      await manage('GET', `service_ci_${'x'.repeat(36)}`, mine.registration_access_token),
      await manage('PUT', mine.client_id, theirs.registration_access_token, { ...validMetadata, client_name: 'Hijacked' }),
      await manage('DELETE', mine.client_id, theirs.registration_access_token),
    ];
    for (const answer of refused) expectInvalidToken(answer);
    // An unknown client and a wrong token look alike.
    expect(refused[4].body).toEqual(refused[0].body);
    const row = await prisma().oAuthClient.findUniqueOrThrow({ where: { clientId: mine.client_id } });
    expect(row.clientName).toBe('Test App');
    expect(row.deletedAt).toBeNull();
  });

  it('replaces the metadata as a whole with PUT', async () => {
    const mine = await registerClient(t.server, 'production', ownerSession, { scope: 'openid products:read', client_uri: 'https://app.example.com' });
    const put = await manage('PUT', mine.client_id, mine.registration_access_token, {
      client_id: mine.client_id,
      client_secret: mine.client_secret,
      client_name: 'Renamed',
      redirect_uris: ['https://new.example.com/cb'],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code'],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({
      client_id: mine.client_id,
      client_name: 'Renamed',
      redirect_uris: ['https://new.example.com/cb'],
      scope: allScopes.join(' '),
      grant_types: ['authorization_code'],
      client_uri: null,
      modified_at: expect.any(String),
    });
    expect(put.body.client_secret).toBeUndefined();
    // The secret is unchanged and still works.
    expectAuthenticated(await tokenRequest({ client_id: mine.client_id, client_secret: mine.client_secret! }));
    expect((await manage('GET', mine.client_id, mine.registration_access_token)).body.client_name).toBe('Renamed');
  });

  it('refuses a PUT naming another client, a wrong secret or bad metadata, and changes nothing', async () => {
    const mine = await registerClient(t.server, 'production', ownerSession);
    const other = await registerClient(t.server, 'production', ownerSession);
    const attempts = [
      [{ ...validMetadata, client_id: other.client_id }, 'invalid_request'],
      [{ ...validMetadata, client_secret: other.client_secret }, 'invalid_request'],
      [{ ...validMetadata, redirect_uris: ['http://evil.example.com/cb'] }, 'invalid_redirect_uri'],
      [{ ...validMetadata, scope: 'everything' }, 'invalid_client_metadata'],
      [{ redirect_uris: validMetadata.redirect_uris }, 'invalid_client_metadata'],
    ] as const;
    for (const [body, error] of attempts) {
      const answer = await manage('PUT', mine.client_id, mine.registration_access_token, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error).toBe(error);
    }
    const row = await prisma().oAuthClient.findUniqueOrThrow({ where: { clientId: mine.client_id } });
    expect(row.clientName).toBe('Test App');
    expect(row.redirectUris).toEqual(mine.redirect_uris);
  });

  it('issues a secret when a PUT makes a public client confidential, and drops it when made public', async () => {
    const open = await registerClient(t.server, 'production', ownerSession, { token_endpoint_auth_method: 'none' });
    const confidential = await manage('PUT', open.client_id, open.registration_access_token, { ...validMetadata, token_endpoint_auth_method: 'client_secret_post' });
    expect(confidential.status).toBe(200);
    expect(confidential.body.client_secret).toMatch(/^service_cs_/);
    expectAuthenticated(await tokenRequest({ client_id: open.client_id, client_secret: confidential.body.client_secret }));
    expectInvalidClient(await tokenRequest({ client_id: open.client_id }));

    const backToPublic = await manage('PUT', open.client_id, open.registration_access_token, { ...validMetadata, token_endpoint_auth_method: 'none' });
    expect(backToPublic.status).toBe(200);
    expect(backToPublic.body.client_secret).toBeUndefined();
    expect((await prisma().oAuthClient.findUniqueOrThrow({ where: { clientId: open.client_id } })).clientSecretHash).toBeNull();
    expectInvalidClient(await tokenRequest({ client_id: open.client_id, client_secret: confidential.body.client_secret }));
  });

  it('says exactly why each registration request is refused', async () => {
    const customer = await t.owner.api('POST', '/customers/', { email: `buyer-${randomUUID()}@example.com` });
    const customerSession = await t.owner.api('POST', '/customer-sessions/', { customer_id: customer.body.id });
    expect(customerSession.status).toBe(201);
    const description = (answer: Answer) => {
      expectInvalidToken(answer);
      return answer.body.error_description;
    };
    expect(description(await register(validMetadata, ''))).toBe('Registering a client requires a signed-in user: send "Authorization: Bearer <user session token>".');
    expect(description(await register(validMetadata, 'not-a-token'))).toBe('The access token is invalid, expired or revoked.');
    expect(description(await register(validMetadata, t.owner.token))).toBe('Registering a client requires the session token of a signed-in user.');
    expect(description(await register(validMetadata, customerSession.body.token))).toBe('Registering a client requires the session token of a signed-in user.');

    const mine = await registerClient(t.server, 'production', ownerSession);
    const open = await registerClient(t.server, 'production', ownerSession, { token_endpoint_auth_method: 'none' });
    expect(description(await manage('GET', mine.client_id, undefined))).toBe('Send the registration access token as "Authorization: Bearer <token>".');
    expect(description(await manage('GET', mine.client_id, open.registration_access_token))).toBe('The registration access token is invalid for this client.');

    // A registration read back: no secret, no registration token.
    const read = await manage('GET', mine.client_id, mine.registration_access_token);
    expect(read.status).toBe(200);
    expect(read.body.registration_access_token).toBeUndefined();
    expect(read.body.client_secret).toBeUndefined();
    expect(read.body.client_id_issued_at).toBe(Math.floor(Date.parse(read.body.created_at) / 1000));

    const refusedPut = async (clientId: string, token: string, body: Record<string, unknown>) => {
      const answer = await manage('PUT', clientId, token, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error).toBe('invalid_request');
      return answer.body.error_description;
    };
    const wrongSecret = 'client_secret in the body is not the current secret of this client; omit it, or send the current one.';
    expect(await refusedPut(mine.client_id, mine.registration_access_token, { ...validMetadata, client_id: open.client_id })).toBe(
      'client_id in the body differs from the client being updated.',
    );
    expect(await refusedPut(mine.client_id, mine.registration_access_token, { ...validMetadata, client_secret: 12345 })).toBe(wrongSecret);
    expect(await refusedPut(mine.client_id, mine.registration_access_token, { ...validMetadata, client_secret: `${mine.client_secret}x` })).toBe(wrongSecret);
    expect(await refusedPut(open.client_id, open.registration_access_token, { ...validMetadata, token_endpoint_auth_method: 'none', client_secret: 'anything' })).toBe(wrongSecret);
    expect((await manage('GET', mine.client_id, mine.registration_access_token)).body.modified_at).toBe(read.body.modified_at);

    // A PUT with its own client_id and no secret is accepted, and says nothing of the tokens.
    const put = await manage('PUT', mine.client_id, mine.registration_access_token, { ...validMetadata, client_id: mine.client_id });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.registration_access_token).toBeUndefined();
    expect(put.body.client_secret).toBeUndefined();
    expect(Date.parse(put.body.modified_at)).toBeGreaterThanOrEqual(Date.parse(put.body.created_at));

    const deleted = await manage('DELETE', mine.client_id, mine.registration_access_token);
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('cache-control')).toBe('no-store');
  });

  it('deletes the client: it stops authenticating, its tokens are revoked and its codes gone', async () => {
    const mine = await registerClient(t.server, 'production', ownerSession);
    const row = await prisma().oAuthClient.findUniqueOrThrow({ where: { clientId: mine.client_id } });
    const grant = await grantFor(row.id);
    expect(await meStatus(grant.accessToken)).toBe(200);
    expectAuthenticated(await tokenRequest({ client_id: mine.client_id, client_secret: mine.client_secret! }));
    // Another client's token and code, which the deletion must leave alone.
    const other = await registerClient(t.server, 'production', ownerSession);
    const otherGrant = await grantFor((await prisma().oAuthClient.findUniqueOrThrow({ where: { clientId: other.client_id } })).id);

    const deleted = await manage('DELETE', mine.client_id, mine.registration_access_token);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();

    expectInvalidClient(await tokenRequest({ client_id: mine.client_id, client_secret: mine.client_secret! }));
    expectInvalidToken(await manage('GET', mine.client_id, mine.registration_access_token));
    expectInvalidToken(await manage('DELETE', mine.client_id, mine.registration_access_token));
    expect(await meStatus(grant.accessToken)).toBe(401);
    expect((await prisma().oAuthToken.findUniqueOrThrow({ where: { id: grant.tokenId } })).revokedAt).not.toBeNull();
    expect(await prisma().oAuthAuthorizationCode.count({ where: { id: grant.codeId } })).toBe(0);
    expect((await prisma().oAuthClient.findUniqueOrThrow({ where: { id: row.id } })).deletedAt).not.toBeNull();
    expect(await meStatus(otherGrant.accessToken)).toBe(200);
    expect((await prisma().oAuthToken.findUniqueOrThrow({ where: { id: otherGrant.tokenId } })).revokedAt).toBeNull();
    expect(await prisma().oAuthAuthorizationCode.count({ where: { id: otherGrant.codeId } })).toBe(1);
  });
});

describe('client authentication at the token endpoint (RFC 6749 §2.3)', () => {
  let post: RegisteredClient;
  let basicClient: RegisteredClient;
  let publicClient: RegisteredClient;

  beforeAll(async () => {
    post = await registerClient(t.server, 'production', ownerSession, { token_endpoint_auth_method: 'client_secret_post' });
    basicClient = await registerClient(t.server, 'production', ownerSession, { token_endpoint_auth_method: 'client_secret_basic' });
    publicClient = await registerClient(t.server, 'production', ownerSession, { token_endpoint_auth_method: 'none' });
  });

  it('admits each client by its registered method', async () => {
    expectAuthenticated(await tokenRequest({ client_id: post.client_id, client_secret: post.client_secret! }));
    expectAuthenticated(await tokenRequest({}, basic(basicClient.client_id, basicClient.client_secret!)));
    // client_id may be repeated in the body, if it is the same.
    expectAuthenticated(await tokenRequest({ client_id: basicClient.client_id }, basic(basicClient.client_id, basicClient.client_secret!)));
    expectAuthenticated(await tokenRequest({ client_id: publicClient.client_id }));
  });

  it('form-decodes the Basic credentials', async () => {
    const percentEncoded = (value: string) => [...value].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    expectAuthenticated(await tokenRequest({}, basic(percentEncoded(basicClient.client_id), percentEncoded(basicClient.client_secret!))));
    expectInvalidClient(await tokenRequest({}, basic(basicClient.client_id, '%zz')), 'The Basic credentials are not correctly form-urlencoded.');
    expectInvalidClient(await tokenRequest({}, basic('%E0%A4%A', basicClient.client_secret!)), 'The Basic credentials are not correctly form-urlencoded.');
    const noColon = { authorization: `Basic ${Buffer.from(`${basicClient.client_id}${basicClient.client_secret}`).toString('base64')}` };
    expectInvalidClient(await tokenRequest({}, noColon), 'The Basic credentials must be "client_id:client_secret", base64-encoded.');
    // An empty client id before the colon is an unknown client.
    expectInvalidClient(await tokenRequest({}, basic('', basicClient.client_secret!)));
  });

  it('refuses a wrong secret, an unknown client and no credentials with invalid_client', async () => {
    // The last character changed to another one (a secret that already ends in x would be unchanged by an x).
    const changed = `${post.client_secret!.slice(0, -1)}${post.client_secret!.endsWith('x') ? 'y' : 'x'}`;
    expectInvalidClient(await tokenRequest({ client_id: post.client_id, client_secret: changed }));
    expectInvalidClient(await tokenRequest({ client_id: post.client_id, client_secret: basicClient.client_secret! }));
    expectInvalidClient(await tokenRequest({}, basic(basicClient.client_id, 'wrong')));
    expectInvalidClient(await tokenRequest({ client_id: `service_ci_${'x'.repeat(36)}`, client_secret: post.client_secret! }));
    expectInvalidClient(await tokenRequest({}, basic(`service_ci_${'x'.repeat(36)}`, 'whatever')));
    const required = 'Client authentication is required: send client_id (and client_secret, for a confidential client) or a Basic header.';
    expectInvalidClient(await tokenRequest({}), required);
    expectInvalidClient(await tokenRequest({ client_id: '' }), required);
    expectInvalidClient(await tokenRequest({ client_id: post.client_id }));
    const scheme = 'Authenticate the client with "Authorization: Basic <base64(client_id:client_secret)>" or with client_id and client_secret in the body.';
    expectInvalidClient(await tokenRequest({}, { authorization: 'Bearer something' }), scheme);
    expectInvalidClient(await tokenRequest({}, { authorization: 'Basic !!!' }), scheme);
    expectInvalidClient(await tokenRequest({}, { authorization: `Basic ${Buffer.from(`${basicClient.client_id}:${basicClient.client_secret}`).toString('base64')}!` }), scheme);
    expectInvalidClient(await tokenRequest({}, { authorization: `Basic !${Buffer.from(`${basicClient.client_id}:${basicClient.client_secret}`).toString('base64')}` }), scheme);
  });

  it('refuses a method other than the registered one', async () => {
    expectInvalidClient(await tokenRequest({}, basic(post.client_id, post.client_secret!)));
    expectInvalidClient(await tokenRequest({ client_id: basicClient.client_id, client_secret: basicClient.client_secret! }));
    expectInvalidClient(await tokenRequest({ client_id: publicClient.client_id, client_secret: 'anything' }));
    expectInvalidClient(await tokenRequest({}, basic(publicClient.client_id, '')));
  });

  it('refuses two methods at once', async () => {
    const both = await tokenRequest({ client_secret: basicClient.client_secret! }, basic(basicClient.client_id, basicClient.client_secret!));
    expect(both.status).toBe(400);
    expect(both.body).toEqual({ error: 'invalid_request', error_description: 'The client authenticated twice: use either the Basic header or client_secret in the body, not both.' });
    const twoClients = await tokenRequest({ client_id: post.client_id }, basic(basicClient.client_id, basicClient.client_secret!));
    expect(twoClients.status).toBe(400);
    expect(twoClients.body).toEqual({ error: 'invalid_request', error_description: 'client_id in the body differs from the client of the Basic header.' });
  });

  it('lets a public client through authentication, to fail on the grant itself', async () => {
    const noCode = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'authorization_code', client_id: publicClient.client_id });
    expect(noCode.status).toBe(400);
    expect(noCode.body.error).toBe('invalid_request');
    expectAuthenticated(await tokenRequest({ client_id: publicClient.client_id }));
  });

  it('refuses an expired secret', async () => {
    const expiring = await registerClient(t.server, 'production', ownerSession);
    await prisma().oAuthClient.update({ where: { clientId: expiring.client_id }, data: { clientSecretExpiresAt: new Date(Date.now() - 1000) } });
    expectInvalidClient(await tokenRequest({ client_id: expiring.client_id, client_secret: expiring.client_secret! }), 'The client secret has expired: rotate it.');
    // A wrong secret of that client says nothing of the expiry.
    expectInvalidClient(await tokenRequest({ client_id: expiring.client_id, client_secret: `${expiring.client_secret}x` }));
    // It stops working at the instant it expires, not a millisecond before.
    const at = new Date('2030-06-01T12:00:00.000Z');
    await prisma().oAuthClient.update({ where: { clientId: expiring.client_id }, data: { clientSecretExpiresAt: at } });
    try {
      t.server.clock.now = new Date(at.getTime() - 1);
      expectAuthenticated(await tokenRequest({ client_id: expiring.client_id, client_secret: expiring.client_secret! }));
      t.server.clock.now = at;
      expectInvalidClient(await tokenRequest({ client_id: expiring.client_id, client_secret: expiring.client_secret! }), 'The client secret has expired: rotate it.');
    } finally {
      t.server.clock.now = null;
    }
    const read = await manage('GET', expiring.client_id, expiring.registration_access_token);
    expect(read.body.client_secret_expires_at).toBeGreaterThan(0);
  });

  it('refuses the same secret on the other environment', async () => {
    const sandbox = await postForm(t.server, 'sandbox', '/oauth2/token', { grant_type: 'authorization_code', code: 'x', client_id: post.client_id, client_secret: post.client_secret! });
    expect(sandbox.status).toBe(401);
    expect(sandbox.body.error).toBe('invalid_client');
  });
});

describe('OAuth clients over GraphQL', () => {
  const fields = 'id clientId clientName redirectUris scopes tokenEndpointAuthMethod grantTypes responseTypes clientUri logoUri tosUri policyUri isPublic clientSecretExpiresAt createdAt modifiedAt';
  const createMutation = `mutation ($input: OAuth2ClientCreateInput!) { core { oauth2ClientCreate(input: $input) { clientSecret registrationAccessToken client { ${fields} } } } }`;
  const updateMutation = `mutation ($id: UUID!, $input: OAuth2ClientUpdateInput!) { core { oauth2ClientUpdate(id: $id, input: $input) { clientSecret client { ${fields} } } } }`;
  const rotateMutation = `mutation ($id: UUID!) { core { oauth2ClientRotateSecret(id: $id) { clientSecret client { id } } } }`;
  const deleteMutation = `mutation ($id: UUID!) { core { oauth2ClientDelete(id: $id) { id clientId } } }`;
  const listQuery = `query { core { oauth2Clients(page: 1, limit: 100) { items { ${fields} } pagination { totalCount maxPage } } } }`;
  const gql = (token: string) => graphqlClient(t.server.base(), token);

  it('lets the owner create, list, update, rotate and delete a client', async () => {
    const created = await gql(ownerSession)(createMutation, { input: { clientName: 'GraphQL App', redirectUris: ['https://gql.example.com/cb'], scopes: ['openid', 'orders_read'] } });
    expect(created.body.errors).toBeUndefined();
    const { clientSecret, registrationAccessToken, client } = created.body.data.core.oauth2ClientCreate;
    expect(clientSecret).toMatch(/^service_cs_/);
    expect(registrationAccessToken).toMatch(/^service_rat_/);
    expect(client).toMatchObject({
      clientId: expect.stringMatching(/^service_ci_/),
      clientName: 'GraphQL App',
      scopes: ['openid', 'orders_read'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      grantTypes: ['authorization_code', 'refresh_token'],
      responseTypes: ['code'],
      isPublic: false,
      clientSecretExpiresAt: null,
    });
    expect((await prisma().oAuthClient.findUniqueOrThrow({ where: { id: client.id } })).clientSecretHash).toBe(hashToken(clientSecret));
    expectAuthenticated(await tokenRequest({}, basic(client.clientId, clientSecret)));
    // The registration access token manages the same client over RFC 7592.
    expect((await manage('GET', client.clientId, registrationAccessToken)).body.client_name).toBe('GraphQL App');

    const list = await gql(ownerSession)(listQuery);
    expect(list.body.errors).toBeUndefined();
    const items = list.body.data.core.oauth2Clients.items;
    expect(items[0].id).toBe(client.id);
    expect(list.body.data.core.oauth2Clients.pagination.totalCount).toBe(items.length);
    expect(JSON.stringify(list.body)).not.toContain(clientSecret);

    const updated = await gql(ownerSession)(updateMutation, { id: client.id, input: { clientName: 'Renamed', logoUri: 'https://gql.example.com/logo.png' } });
    expect(updated.body.errors).toBeUndefined();
    expect(updated.body.data.core.oauth2ClientUpdate.clientSecret).toBeNull();
    expect(updated.body.data.core.oauth2ClientUpdate.client).toMatchObject({ clientName: 'Renamed', logoUri: 'https://gql.example.com/logo.png', scopes: ['openid', 'orders_read'], redirectUris: ['https://gql.example.com/cb'] });

    const rotated = await gql(ownerSession)(rotateMutation, { id: client.id });
    expect(rotated.body.errors).toBeUndefined();
    const newSecret = rotated.body.data.core.oauth2ClientRotateSecret.clientSecret;
    expect(newSecret).toMatch(/^service_cs_/);
    expect(newSecret).not.toBe(clientSecret);
    expectInvalidClient(await tokenRequest({}, basic(client.clientId, clientSecret)));
    expectAuthenticated(await tokenRequest({}, basic(client.clientId, newSecret)));

    const grant = await grantFor(client.id);
    expect(await meStatus(grant.accessToken)).toBe(200);
    const deleted = await gql(ownerSession)(deleteMutation, { id: client.id });
    expect(deleted.body.errors).toBeUndefined();
    expect(deleted.body.data.core.oauth2ClientDelete.clientId).toBe(client.clientId);
    expectInvalidClient(await tokenRequest({}, basic(client.clientId, newSecret)));
    expect(await meStatus(grant.accessToken)).toBe(401);
    const after = await gql(ownerSession)(listQuery);
    expect(after.body.data.core.oauth2Clients.items.map((c: { id: string }) => c.id)).not.toContain(client.id);
  });

  it('reports invalid metadata as a validation error on the input field', async () => {
    const before = await clientCount();
    const answer = await gql(ownerSession)(createMutation, { input: { clientName: 'Bad', redirectUris: ['http://evil.example.com/cb'] } });
    expect(answer.body.errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(answer.body.errors?.[0].extensions.issues[0].loc).toEqual(['input', 'redirectUris']);
    // Each rule points at its own field.
    for (const [change, field] of [
      [{ clientName: '   ' }, 'clientName'],
      [{ clientName: 'n'.repeat(201) }, 'clientName'],
      [{ scopes: [] }, 'scopes'],
      [{ grantTypes: ['refresh_token'] }, 'grantTypes'],
      [{ responseTypes: [] }, 'responseTypes'],
    ] as const) {
      const refused = await gql(ownerSession)(createMutation, { input: Object.assign({ clientName: 'Fine', redirectUris: ['https://ok.example.com/cb'] }, change) });
      expect([field, refused.body.errors?.[0].extensions.issues?.[0].loc]).toEqual([field, ['input', field]]);
    }
    // A scope outside the catalogue, or spelt as OAuth spells it, is refused by the schema's Scope enum.
    for (const scopes of [['root'], ['orders:read']]) {
      const scope = await gql(ownerSession)(createMutation, { input: { clientName: 'Bad', redirectUris: ['https://ok.example.com/cb'], scopes } });
      expect(scope.body.errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
      expect(scope.body.errors?.[0].message).toContain(`at "input.scopes[0]"; Value "${scopes[0]}" does not exist in "Scope" enum.`);
    }
    expect(await clientCount()).toBe(before);
  });

  it('refuses to rotate the secret of a public client', async () => {
    const created = await gql(ownerSession)(createMutation, { input: { clientName: 'SPA', redirectUris: ['https://spa.example.com/cb'], tokenEndpointAuthMethod: 'none' } });
    expect(created.body.data.core.oauth2ClientCreate.clientSecret).toBeNull();
    expect(created.body.data.core.oauth2ClientCreate.client.isPublic).toBe(true);
    const rotated = await gql(ownerSession)(rotateMutation, { id: created.body.data.core.oauth2ClientCreate.client.id });
    expect(rotated.body.errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(rotated.body.errors?.[0].message).toBe('id: A public client (token_endpoint_auth_method none) has no secret to rotate.');
  });

  it("treats another user's client as not found, and leaves it alone", async () => {
    const created = await gql(ownerSession)(createMutation, { input: { clientName: 'Mine', redirectUris: ['https://mine.example.com/cb'] } });
    const { client, clientSecret } = created.body.data.core.oauth2ClientCreate;
    const attacker = gql(strangerSession);
    for (const [query, variables] of [
      [updateMutation, { id: client.id, input: { redirectUris: ['https://attacker.example.com/cb'] } }],
      [rotateMutation, { id: client.id }],
      [deleteMutation, { id: client.id }],
    ] as const) {
      const answer = await attacker(query, variables);
      expect(answer.body.errors?.[0].extensions.code, JSON.stringify(answer.body)).toBe('RESOURCE_NOT_FOUND');
    }
    const theirList = await attacker(listQuery);
    expect(theirList.body.data.core.oauth2Clients.items.map((c: { id: string }) => c.id)).not.toContain(client.id);
    const row = await prisma().oAuthClient.findUniqueOrThrow({ where: { id: client.id } });
    expect(row).toMatchObject({ redirectUris: ['https://mine.example.com/cb'], deletedAt: null, clientSecretHash: hashToken(clientSecret) });
  });

  it('admits only a signed-in user, not an organization or personal token', async () => {
    const byOrganization = await gql(t.owner.token)(listQuery);
    expect(byOrganization.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
    const create = await gql(t.owner.token)(createMutation, { input: { clientName: 'X', redirectUris: ['https://x.example.com/cb'] } });
    expect(create.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
    const pat = await gql(ownerSession)('mutation { core { personalAccessTokenCreate(input: { comment: "x", scopes: [user_read] }) { token } } }');
    const byPat = await gql(pat.body.data.core.personalAccessTokenCreate.token)(listQuery);
    expect(byPat.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
  });
});

// openid-client, the certified relying-party library, against a live server as a real client uses
// it: discovery, the authorization code flow with PKCE through the real sign-in and consent pages,
// the ID token it validates (signature against the JWKS, iss, aud, nonce, and the `iss` of the
// authorization response), userinfo, refresh with rotation, revocation and introspection. For
// confidential (client_secret_post, client_secret_basic) and public clients, organization and
// user grants, in both environments.
import * as oidc from 'openid-client';
import { beforeAll, describe, expect, test } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { createOrganization } from '../../src/modules/organizations/service.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { Browser, authorizeInBrowser, issuerOf, registerClient, userSessionToken, type RegisteredClient } from '../helpers/oauth.ts';

const environments = ['production', 'sandbox'] as const satisfies readonly EnvironmentName[];
const authMethods = ['client_secret_post', 'client_secret_basic', 'none'] as const;
type AuthMethod = (typeof authMethods)[number];
type SubType = 'organization' | 'user';
const subTypes: SubType[] = ['organization', 'user'];
// Never fetched: the test reads the authorization response from the provider's redirect.
const redirectUri = 'http://127.0.0.1:9/callback';
const scope = 'openid profile email products:read';

/** An environment as the relying party meets it: its issuer, a user with two organizations, and one client per authentication method. */
interface Site {
  environment: EnvironmentName;
  issuer: string;
  org: Org;
  user: { id: string; email: string; password: string; name: string | null; emailVerified: boolean };
  /** The user's other organization: the consent page must ask which one. */
  secondOrganizationId: string;
  productId: string;
  clients: Record<AuthMethod, RegisteredClient>;
  /** The user's browser, signed in after the first authorization. */
  browser: Browser;
}

const t = useTestServer();
const sites = {} as Record<EnvironmentName, Site>;

async function prepareSite(environment: EnvironmentName): Promise<Site> {
  const org = await newOrganization(t.server, environment);
  const prisma = t.server.kassa.environments[environment].environment.prisma;
  // No API sets a user's name or verifies an email yet. Production's user has both, sandbox's
  // neither, so the claims are checked for each case.
  const profile = environment === 'production' ? { name: 'Ada Lovelace', emailVerified: true } : { name: null, emailVerified: false };
  const owner = await prisma.user.update({ where: { email: org.userEmail }, data: profile });
  const second = await createOrganization(prisma, { name: 'Second Org', ownerId: owner.id });
  const product = await org.api('POST', '/products/', { name: `Sold in ${environment}`, recurring_interval: null, prices: [{ amount_type: 'free' }] });
  expect(product.status).toBe(201);
  const userToken = await userSessionToken(t.server, environment, org.userEmail, org.userPassword);
  const clients = {} as Record<AuthMethod, RegisteredClient>;
  for (const method of authMethods) {
    clients[method] = await registerClient(t.server, environment, userToken, { client_name: `Relying party (${method})`, redirect_uris: [redirectUri], scope, token_endpoint_auth_method: method });
  }
  return {
    environment,
    issuer: issuerOf(t.server, environment),
    org,
    user: { id: owner.id, email: org.userEmail, password: org.userPassword, ...profile },
    secondOrganizationId: second.id,
    productId: product.body.id,
    clients,
    browser: new Browser(t.server.url),
  };
}

beforeAll(async () => {
  for (const environment of environments) sites[environment] = await prepareSite(environment);
});

function clientAuthentication(client: RegisteredClient): oidc.ClientAuth {
  switch (client.token_endpoint_auth_method) {
    case 'client_secret_post':
      return oidc.ClientSecretPost(client.client_secret);
    case 'client_secret_basic':
      return oidc.ClientSecretBasic(client.client_secret);
    default:
      return oidc.None();
  }
}

/**
 * The relying party's configuration from discovery. The test issuer is plain http on loopback
 * (no TLS in the test server), and openid-client refuses every non-https request unless told:
 * allowInsecureRequests lifts that for discovery and every later request of this configuration.
 */
function discover(site: Site, method: AuthMethod): Promise<oidc.Configuration> {
  const client = site.clients[method];
  return oidc.discovery(new URL(site.issuer), client.client_id, undefined, clientAuthentication(client), { execute: [oidc.allowInsecureRequests] });
}

interface SignIn {
  config: oidc.Configuration;
  tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  claims: oidc.IDToken;
  nonce: string;
}

/** What a relying party does: build the request, send the user through the pages, redeem the code. */
async function signIn(site: Site, method: AuthMethod, subType: SubType, config?: oidc.Configuration): Promise<SignIn> {
  config ??= await discover(site, method);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const parameters: Record<string, string> = {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  if (subType === 'user') parameters.sub_type = 'user';
  const authorizationUrl = oidc.buildAuthorizationUrl(config, parameters);
  expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${site.issuer}/oauth2/authorize`);
  const callback = await authorizeInBrowser(site.browser, site.issuer, Object.fromEntries(authorizationUrl.searchParams), site.user, subType === 'organization' ? { organizationId: site.org.organizationId } : {});
  expect(callback.searchParams.get('iss')).toBe(site.issuer);
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  return { config, tokens, claims: tokens.claims()!, nonce };
}

/** The subject a grant is about: the chosen organization, or the user. */
function subjectOf(site: Site, subType: SubType): string {
  return subType === 'organization' ? site.org.organizationId : site.user.id;
}

/** The status of a call to the API with an access token, made through openid-client as a relying party would. */
async function apiStatus(config: oidc.Configuration, site: Site, subType: SubType, accessToken: string): Promise<{ status: number; body: any }> {
  const base = t.server.base(site.environment);
  try {
    const response =
      subType === 'organization'
        ? await oidc.fetchProtectedResource(config, accessToken, new URL(`${base}/products/`), 'GET')
        : await oidc.fetchProtectedResource(
            config,
            accessToken,
            new URL(`${base}/graphql`),
            'POST',
            JSON.stringify({ query: 'query ($org: [UUID!]) { core { products(organizationId: $org) { items { id } } } }', variables: { org: [site.org.organizationId] } }),
            new Headers({ 'content-type': 'application/json' }),
          );
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  } catch (error) {
    if (error instanceof oidc.WWWAuthenticateChallengeError) return { status: error.status, body: null };
    throw error;
  }
}

function productIdsOf(subType: SubType, body: any): string[] {
  const items = subType === 'organization' ? body.items : body.data.core.products.items;
  return items.map((item: { id: string }) => item.id);
}

/** The HTTP status of a failed openid-client call, from whichever error it threw. */
async function failureOf(call: Promise<unknown>): Promise<{ status?: number; error?: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) return { status: error.status, error: error.error };
    if (error instanceof oidc.WWWAuthenticateChallengeError) return { status: error.status, error: error.cause[0]?.parameters.error };
    if (error instanceof oidc.ClientError && error.cause instanceof Response) return { status: error.cause.status };
    throw error;
  }
  throw new Error('the call succeeded');
}

describe.each(environments)('%s', (environment) => {
  const site = () => sites[environment];

  test('discovery gives the relying party every endpoint, and the library insists on https unless told', async () => {
    const config = await discover(site(), 'client_secret_post');
    const metadata = config.serverMetadata();
    const { issuer } = site();
    expect(metadata).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth2/authorize`,
      token_endpoint: `${issuer}/v1/oauth2/token`,
      userinfo_endpoint: `${issuer}/v1/oauth2/userinfo`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      revocation_endpoint: `${issuer}/v1/oauth2/revoke`,
      introspection_endpoint: `${issuer}/v1/oauth2/introspect`,
      registration_endpoint: `${issuer}/v1/oauth2/register`,
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.supportsPKCE()).toBe(true);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining([...authMethods]));
    expect(metadata.response_types_supported).toContain('code');
    expect(metadata.id_token_signing_alg_values_supported?.length).toBeGreaterThan(0);

    const client = site().clients.client_secret_post;
    await expect(oidc.discovery(new URL(issuer), client.client_id, client.client_secret)).rejects.toMatchObject({ code: 'OAUTH_HTTP_REQUEST_FORBIDDEN' });
  });

  for (const method of authMethods) {
    for (const subType of subTypes) {
      const name = `${method === 'none' ? 'a public client' : `a confidential client (${method})`}, sub_type ${subType}`;

      test(`${name}: code with PKCE, a valid ID token, userinfo and the API`, async () => {
        const started = Math.floor(Date.now() / 1000);
        const { config, tokens, claims, nonce } = await signIn(site(), method, subType);
        const { issuer, user, clients } = site();
        const clientId = clients[method].client_id;

        expect(tokens.token_type.toLowerCase()).toBe('bearer');
        expect(tokens.scope).toBe(scope);
        expect(tokens.expiresIn()).toBeGreaterThan(0);
        expect(typeof tokens.refresh_token).toBe('string');

        expect(claims.iss).toBe(issuer);
        expect(claims.sub).toBe(subjectOf(site(), subType));
        expect([claims.aud].flat()).toEqual([clientId]);
        expect(claims.nonce).toBe(nonce);
        expect(claims.iat).toBeGreaterThanOrEqual(started - 5);
        expect(claims.iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 5);
        expect(claims.exp).toBeGreaterThan(claims.iat);
        expect(typeof claims.auth_time).toBe('number');
        expect(claims.auth_time!).toBeLessThanOrEqual(claims.iat);
        expect(claims.email).toBe(user.email);
        expect(claims.email_verified).toBe(user.emailVerified);
        if (user.name) expect(claims.name).toBe(user.name);
        else expect(claims).not.toHaveProperty('name');

        const userInfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        expect(userInfo).toMatchObject({ sub: claims.sub, email: user.email, email_verified: user.emailVerified });
        if (user.name) expect(userInfo.name).toBe(user.name);
        else expect(userInfo).not.toHaveProperty('name');
        // A subject the ID token did not name is refused by the library: the check has teeth.
        await expect(oidc.fetchUserInfo(config, tokens.access_token, site().secondOrganizationId)).rejects.toBeInstanceOf(oidc.ClientError);

        const api = await apiStatus(config, site(), subType, tokens.access_token);
        expect(api.status).toBe(200);
        expect(productIdsOf(subType, api.body)).toEqual([site().productId]);

        const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
        expect(introspected).toMatchObject({ active: true, client_id: clientId, scope, sub_type: subType, sub: claims.sub, iss: issuer });
        expect(introspected.exp).toBeGreaterThan(Math.floor(Date.now() / 1000));
      });

      test(`${name}: refresh rotates the tokens, the old refresh token then fails, and revocation ends the grant`, async () => {
        const { config, tokens, claims } = await signIn(site(), method, subType);
        const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
        expect(refreshed.access_token).not.toBe(tokens.access_token);
        expect(refreshed.refresh_token).toBeDefined();
        expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
        expect(refreshed.scope).toBe(scope);
        // A refreshed ID token, if any, is about the same subject for the same client (OpenID Connect Core §12.2).
        const refreshedClaims = refreshed.claims();
        if (refreshedClaims) expect(refreshedClaims).toMatchObject({ iss: claims.iss, sub: claims.sub, aud: claims.aud });
        expect((await apiStatus(config, site(), subType, refreshed.access_token)).status).toBe(200);
        expect(await oidc.tokenIntrospection(config, tokens.refresh_token!)).toEqual({ active: false });
        expect(await oidc.tokenIntrospection(config, refreshed.refresh_token!)).toMatchObject({ active: true, sub: claims.sub });

        // The replaced refresh token is refused, and its reuse ends the grant (RFC 9700 §4.14.2).
        expect(await failureOf(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toEqual({ status: 400, error: 'invalid_grant' });
        expect((await apiStatus(config, site(), subType, refreshed.access_token)).status).toBe(401);
        expect(await failureOf(oidc.refreshTokenGrant(config, refreshed.refresh_token!))).toEqual({ status: 400, error: 'invalid_grant' });

        // Revoking an access token ends its grant: the token, its refresh token, userinfo (RFC 7009 §2.1).
        const second = await signIn(site(), method, subType, config);
        expect((await apiStatus(config, site(), subType, second.tokens.access_token)).status).toBe(200);
        await oidc.tokenRevocation(config, second.tokens.access_token, { token_type_hint: 'access_token' });
        expect(await oidc.tokenIntrospection(config, second.tokens.access_token)).toEqual({ active: false });
        expect((await apiStatus(config, site(), subType, second.tokens.access_token)).status).toBe(401);
        expect((await failureOf(oidc.fetchUserInfo(config, second.tokens.access_token, claims.sub))).status).toBe(401);
        expect(await failureOf(oidc.refreshTokenGrant(config, second.tokens.refresh_token!))).toEqual({ status: 400, error: 'invalid_grant' });
        // Revoking again, and revoking by refresh token, are still answered 200.
        await oidc.tokenRevocation(config, second.tokens.access_token);
        await oidc.tokenRevocation(config, second.tokens.refresh_token!, { token_type_hint: 'refresh_token' });
      });
    }
  }

  test('a token of this environment is unknown to the other one', async () => {
    const other = sites[environment === 'production' ? 'sandbox' : 'production'];
    for (const subType of subTypes) {
      const { config, tokens, claims } = await signIn(site(), 'client_secret_post', subType);
      expect((await apiStatus(config, site(), subType, tokens.access_token)).status).toBe(200);
      expect((await apiStatus(config, other, subType, tokens.access_token)).status).toBe(401);
      const userInfoElsewhere = await fetch(`${other.issuer}/v1/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(userInfoElsewhere.status).toBe(401);
      // The other environment's configuration refuses the ID token's issuer before anything else.
      const otherConfig = await discover(other, 'client_secret_post');
      expect(otherConfig.serverMetadata().issuer).not.toBe(claims.iss);
      expect(await oidc.tokenIntrospection(otherConfig, tokens.access_token)).toEqual({ active: false });
    }
  });

  test('an authorization response from the other environment is refused by its iss before the code is sent (RFC 9207)', async () => {
    const other = sites[environment === 'production' ? 'sandbox' : 'production'];
    const config = await discover(site(), 'client_secret_post');
    const state = oidc.randomState();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const otherConfig = await discover(other, 'client_secret_post');
    const url = oidc.buildAuthorizationUrl(otherConfig, { redirect_uri: redirectUri, scope, state, code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256' });
    const callback = await authorizeInBrowser(other.browser, other.issuer, Object.fromEntries(url.searchParams), other.user, { organizationId: other.org.organizationId });
    expect(callback.searchParams.get('iss')).toBe(other.issuer);
    const mixedUp = oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    await expect(mixedUp).rejects.toMatchObject({ code: 'OAUTH_INVALID_RESPONSE', cause: { message: expect.stringContaining('"iss"') } });
    const withoutIss = new URL(callback);
    withoutIss.searchParams.delete('iss');
    await expect(oidc.authorizationCodeGrant(otherConfig, withoutIss, { pkceCodeVerifier: codeVerifier, expectedState: state })).rejects.toMatchObject({ code: 'OAUTH_INVALID_RESPONSE' });
    // The code is still good for its own client: nothing above reached the token endpoint.
    const tokens = await oidc.authorizationCodeGrant(otherConfig, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    expect(tokens.access_token).toBeDefined();
  });

  test('a denied request reaches the client as access_denied with its state', async () => {
    const config = await discover(site(), 'none');
    const state = oidc.randomState();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope, state, nonce: oidc.randomNonce(), code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256' });
    const callback = await authorizeInBrowser(site().browser, site().issuer, Object.fromEntries(url.searchParams), site().user, { decision: 'deny' });
    const denied = oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state });
    await expect(denied).rejects.toBeInstanceOf(oidc.AuthorizationResponseError);
    await expect(denied).rejects.toMatchObject({ error: 'access_denied' });
  });

  test('max_age older than the sign-in sends the user to sign in again (OpenID Connect Core §3.1.2.1)', async () => {
    const browser = new Browser(t.server.url);
    const config = await discover(site(), 'client_secret_post');
    const request = async () => {
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope, state: oidc.randomState(), nonce: oidc.randomNonce(), max_age: '60' });
      return browser.get(url.toString());
    };
    await authorizeInBrowser(browser, site().issuer, { response_type: 'code', client_id: site().clients.client_secret_post.client_id, redirect_uri: redirectUri, scope, nonce: 'n' }, site().user, {
      organizationId: site().org.organizationId,
    });
    expect((await request()).status).toBe(200);
    t.server.clock.now = new Date(Date.now() + 120_000);
    try {
      const stale = await request();
      expect(stale.status).toBe(303);
      expect(stale.location).toContain('/oauth2/login');
    } finally {
      t.server.clock.now = null;
    }
  });
});

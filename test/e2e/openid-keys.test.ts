// OpenID Connect's published parts: the discovery document (every endpoint it names answers), the
// JWKS and its signing keys (made at start, rotated with overlap, switched to ES256), and the
// userinfo endpoint's refusals.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { beforeAll, describe, expect, test } from 'vitest';
import { ensureSigningKey, idTokenLifetimeSeconds, rotateSigningKey } from '../../src/oauth/signing-keys.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { codeFlowTokens, issuerOf, postForm, registerClient, userSessionToken, type RegisteredClient } from '../helpers/oauth.ts';

const t = useTestServer({ organizations: { org: 'production' } });
let client: RegisteredClient;
let issuer: string;
const redirectUri = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  issuer = issuerOf(t.server);
  const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
  client = await registerClient(t.server, 'production', userToken, {
    redirect_uris: [redirectUri],
    scope: 'openid profile email products:read',
    token_endpoint_auth_method: 'client_secret_post',
  });
});

const environment = () => t.server.kassa.environments.production.environment;

/** Tokens for `scope`, through the real pages. */
async function tokensFor(scope: string) {
  const user = { email: t.org.userEmail, password: t.org.userPassword };
  const tokens = await codeFlowTokens(t.server, 'production', client, { scope, user, organizationId: t.org.organizationId, redirectUri, params: { nonce: 'n' } });
  expect(tokens.status).toBe(200);
  return tokens.body as { access_token: string; refresh_token: string; id_token?: string; scope: string };
}

async function jwks(): Promise<JSONWebKeySet> {
  const response = await fetch(`${issuer}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  // Public, and cacheable by relying parties for five minutes.
  expect([response.headers.get('cache-control'), response.headers.get('access-control-allow-origin'), response.headers.get('pragma')]).toEqual(['public, max-age=300', '*', null]);
  return (await response.json()) as JSONWebKeySet;
}

function verify(idToken: string, keys: JSONWebKeySet, at: Date = new Date()) {
  return jwtVerify(idToken, createLocalJWKSet(keys), { issuer, audience: client.client_id, currentDate: at });
}

describe('discovery', () => {
  test('the document says what the provider does, and every endpoint it names answers', async () => {
    const response = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect([response.headers.get('cache-control'), response.headers.get('access-control-allow-origin'), response.headers.get('pragma')]).toEqual(['public, max-age=3600', '*', null]);
    const metadata = (await response.json()) as Record<string, any>;
    expect(metadata).toMatchObject({
      issuer,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['public'],
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    });
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'user:read', 'organizations:read', 'products:write']));
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified', 'name', 'nonce', 'auth_time']));
    // RFC 8414 names the same document.
    expect(await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()).toEqual(metadata);

    const endpoints = ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'registration_endpoint', 'revocation_endpoint', 'introspection_endpoint'];
    for (const name of endpoints) {
      const method = ['token_endpoint', 'registration_endpoint', 'revocation_endpoint', 'introspection_endpoint'].includes(name) ? 'POST' : 'GET';
      const { status } = await fetch(metadata[name], { method, redirect: 'manual' });
      // Each answers something of its own (a page, a refusal of the empty request), never "no such endpoint".
      expect([name, status]).not.toEqual([name, 404]);
      expect([name, status]).not.toEqual([name, 405]);
      expect(status, name).toBeLessThan(500);
    }
  });

  test("the sandbox issuer is its own, with its own keys", async () => {
    const sandbox = issuerOf(t.server, 'sandbox');
    const metadata = (await (await fetch(`${sandbox}/.well-known/openid-configuration`)).json()) as Record<string, string>;
    expect(metadata.issuer).toBe(sandbox);
    expect(metadata.jwks_uri).toBe(`${sandbox}/.well-known/jwks.json`);
    const sandboxKeys = (await (await fetch(metadata.jwks_uri)).json()) as JSONWebKeySet;
    const productionKids = (await jwks()).keys.map((k) => k.kid);
    expect(sandboxKeys.keys.length).toBeGreaterThan(0);
    for (const key of sandboxKeys.keys) expect(productionKids).not.toContain(key.kid);
  });
});

describe('signing keys', () => {
  test('the JWKS publishes public keys only, and verifies the ID token', async () => {
    const { keys } = await jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
    expect(Buffer.from(keys[0].n!, 'base64url')).toHaveLength(256); // a 2048-bit modulus
    for (const privatePart of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(keys[0]).not.toHaveProperty(privatePart);
    const tokens = await tokensFor('openid email');
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'RS256', kid: keys[0].kid });
    const { payload } = await verify(tokens.id_token!, { keys });
    expect(payload).toMatchObject({ sub: t.org.organizationId, nonce: 'n', email: t.org.userEmail });
  });

  test('the private key is stored encrypted, not as a JWK', async () => {
    const rows = await environment().prisma.signingKey.findMany();
    for (const row of rows) {
      expect(Buffer.from(row.privateJwk).toString('utf8')).not.toContain('"d"');
      expect(row.publicJwk).not.toHaveProperty('d');
    }
  });

  test('rotation signs with the new key at once and keeps the old one published until its ID tokens expire', async () => {
    const before = await tokensFor('openid');
    const oldKid = decodeProtectedHeader(before.id_token!).kid;
    const rotatedAt = new Date();
    const rotated = await rotateSigningKey(environment(), rotatedAt, 'ES256');
    expect(rotated.retired).toEqual([oldKid]);

    const overlap = await jwks();
    expect(overlap.keys.map((k) => k.kid)).toEqual([rotated.kid, oldKid]);
    expect(overlap.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    // The ID token signed before the rotation still verifies against what is published now.
    await expect(verify(before.id_token!, overlap)).resolves.toBeDefined();
    const after = await tokensFor('openid');
    expect(decodeProtectedHeader(after.id_token!)).toMatchObject({ alg: 'ES256', kid: rotated.kid });
    await expect(verify(after.id_token!, overlap)).resolves.toBeDefined();

    // Once every token the old key signed has expired (plus the leeway), the old key is gone.
    t.server.clock.now = new Date(rotatedAt.getTime() + (idTokenLifetimeSeconds + 301) * 1000);
    try {
      const later = await jwks();
      expect(later.keys.map((k) => k.kid)).toEqual([rotated.kid]);
      await expect(verify(before.id_token!, later, t.server.clock.now)).rejects.toThrow();
    } finally {
      t.server.clock.now = null;
    }
    await rotateSigningKey(environment(), new Date(), 'RS256');
  });

  test('a change of OIDC_SIGNING_ALGORITHM takes effect at start, once, even when two processes start together', async () => {
    const es256 = { ...environment(), config: { ...environment().config, idTokenSigningAlgorithm: 'ES256' as const } };
    const prisma = environment().prisma;
    const now = new Date();
    const keysBefore = await prisma.signingKey.count();
    await Promise.all([ensureSigningKey(es256, now), ensureSigningKey(es256, now)]);
    const signing = await prisma.signingKey.findMany({ where: { retiredAt: null } });
    expect(signing.map((k) => k.algorithm)).toEqual(['ES256']);
    // One key made, not one per process.
    expect(await prisma.signingKey.count()).toBe(keysBefore + 1);
    await ensureSigningKey(es256, now);
    expect(await prisma.signingKey.count({ where: { retiredAt: null } })).toBe(1);
    expect((await prisma.signingKey.findFirstOrThrow({ where: { retiredAt: null } })).id).toBe(signing[0].id);
    // What the process that lost the race is told: the key that signs, nothing retired.
    expect(await rotateSigningKey(es256, now, 'ES256', { onlyIfNot: 'ES256' })).toEqual({ kid: signing[0].id, retired: [] });
    expect(await prisma.signingKey.count()).toBe(keysBefore + 1);

    // Back to RS256 at the next start, though retired RS256 keys are still published.
    expect(await prisma.signingKey.count({ where: { algorithm: 'RS256', retiredAt: { not: null } } })).toBeGreaterThan(0);
    await ensureSigningKey(environment(), new Date());
    const back = await prisma.signingKey.findMany({ where: { retiredAt: null } });
    expect(back.map((k) => k.algorithm)).toEqual(['RS256']);
    expect(await prisma.signingKey.count()).toBe(keysBefore + 2);
  });
});

describe('userinfo', () => {
  const userinfo = (authorization?: string, method = 'GET') => fetch(`${issuer}/v1/oauth2/userinfo`, { method, headers: authorization ? { authorization } : {} });

  test('answers GET and POST with the claims the scopes release', async () => {
    const tokens = await tokensFor('openid email');
    for (const method of ['GET', 'POST']) {
      const response = await userinfo(`Bearer ${tokens.access_token}`, method);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json()).toEqual({ sub: t.org.organizationId, email: t.org.userEmail, email_verified: true }); // made by bootstrap: the operator vouches for the address
    }
    const bare = await tokensFor('openid products:read');
    expect(await (await userinfo(`Bearer ${bare.access_token}`)).json()).toEqual({ sub: t.org.organizationId });
  });

  test('refuses a missing, unknown or revoked token with 401 and a Bearer challenge', async () => {
    const missing = await userinfo();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    const unknown = await userinfo('Bearer service_at_unknown');
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error).toBe('invalid_token');

    const tokens = await tokensFor('openid');
    const revoke = await postForm(t.server, 'production', '/oauth2/revoke', { token: tokens.access_token, client_id: client.client_id, client_secret: client.client_secret! });
    expect(revoke.status).toBe(200);
    expect((await userinfo(`Bearer ${tokens.access_token}`)).status).toBe(401);
  });

  test('refuses tokens that are not OAuth access tokens, and one without openid', async () => {
    const organizationToken = await userinfo(`Bearer ${t.org.token}`);
    expect(organizationToken.status).toBe(401);
    expect((await organizationToken.json()).error).toBe('invalid_token');
    const session = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    expect((await userinfo(`Bearer ${session}`)).status).toBe(401);

    const withoutOpenid = await tokensFor('products:read');
    expect(withoutOpenid.id_token).toBeUndefined();
    const refused = await userinfo(`Bearer ${withoutOpenid.access_token}`);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/);
  });
});

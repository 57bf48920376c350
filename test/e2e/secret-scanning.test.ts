// A secret-scanning service reports leaked tokens, signed with its ECDSA P-256 key. Live tokens of
// every kind stop working at once, each entry is labelled, the organization gets an event saying
// where the token leaked, and a report that is unsigned or tampered with changes nothing.
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { generateToken, hashToken } from '../../src/auth/tokens.ts';
import { startTestServer, restClient, graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes } from '../helpers/organizations.ts';
import { codeFlowTokens, postForm, registerClient, userSessionToken } from '../helpers/oauth.ts';

const reporter = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const keyId = 'reporter-key-1';
const publicKeys = JSON.stringify({ public_keys: [{ key_identifier: keyId, key: reporter.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] });

const t = useTestServer({ env: { SECRET_SCANNING_PUBLIC_KEYS: publicKeys }, organizations: { org: 'production' } });

type Entry = { token: string; type: string; url: string; source: string };

function signed(body: string, key = reporter.privateKey) {
  return sign('sha256', Buffer.from(body), { key, dsaEncoding: 'der' }).toString('base64');
}

function report(body: string, headers: Record<string, string>) {
  return fetch(`${t.server.base()}/integrations/secret-scanning`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

function reportSigned(entries: Entry[]) {
  const body = JSON.stringify(entries);
  return report(body, { 'github-public-key-identifier': keyId, 'github-public-key-signature': signed(body) });
}

const leak = (token: string, type = 'kassa_token'): Entry => ({ token, type, url: 'https://github.com/acme/app/blob/main/.env', source: 'content' });
const productsStatus = async (token: string) => (await restClient(t.server.base(), token)('GET', '/products/')).status;

/** A live OAuth grant (sub_type organization), through the real pages. */
async function oauthGrant() {
  const userToken = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
  const client = await registerClient(t.server, 'production', userToken, { scope: 'openid products:read', token_endpoint_auth_method: 'client_secret_post' });
  const user = { email: t.org.userEmail, password: t.org.userPassword };
  const tokens = await codeFlowTokens(t.server, 'production', client, { scope: 'products:read', user, organizationId: t.org.organizationId });
  expect(tokens.status).toBe(200);
  return { client, accessToken: tokens.body.access_token as string, refreshToken: tokens.body.refresh_token as string };
}

async function revokedOrganizationToken(): Promise<string> {
  const token = await tokenWithScopes(t.server, t.org, ['products:read'], 'revoked before it leaked');
  const prisma = t.server.kassa.environments.production.environment.prisma;
  await prisma.organizationAccessToken.update({ where: { tokenHash: hashToken(token) }, data: { revokedAt: new Date() } });
  return token;
}

const leakedEvents = () => t.server.kassa.environments.production.environment.prisma.event.findMany({ where: { type: 'token.leaked' }, orderBy: { sequence: 'asc' } });

describe('a signed report', () => {
  test('revokes the live tokens at once, labels every entry, and records where each leaked', async () => {
    const organizationToken = await tokenWithScopes(t.server, t.org, ['products:read'], 'leaked in a repository');
    const grant = await oauthGrant();
    const revoked = await revokedOrganizationToken();
    const customer = await t.org.api('POST', '/customers/', { email: `leak-${randomUUID()}@example.com` });
    const session = await t.org.api('POST', '/customer-sessions/', { customer_id: customer.body.id });
    const customerToken = session.body.token as string;
    const wellFormedUnknown = generateToken('service', 'oat');
    expect(await productsStatus(organizationToken)).toBe(200);
    expect(await productsStatus(grant.accessToken)).toBe(200);
    const before = (await leakedEvents()).length;

    const entries = [leak(organizationToken), leak(grant.refreshToken), leak(revoked), leak('not a token at all'), leak(wellFormedUnknown), leak(customerToken)];
    const response = await reportSigned(entries);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { token_hash: hashToken(organizationToken), token_type: 'kassa_token', label: 'true_positive' },
      { token_hash: hashToken(grant.refreshToken), token_type: 'kassa_token', label: 'true_positive' },
      { token_hash: hashToken(revoked), token_type: 'kassa_token', label: 'true_positive' },
      { token_hash: hashToken('not a token at all'), token_type: 'kassa_token', label: 'false_positive' },
      { token_hash: hashToken(wellFormedUnknown), token_type: 'kassa_token', label: 'false_positive' },
      { token_hash: hashToken(customerToken), token_type: 'kassa_token', label: 'true_positive' },
    ]);

    // The next call with any of them is refused: the OAT, the refresh token's whole grant, the customer session.
    expect(await productsStatus(organizationToken)).toBe(401);
    expect(await productsStatus(grant.accessToken)).toBe(401);
    const refreshed = await postForm(t.server, 'production', '/oauth2/token', { grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.client.client_id, client_secret: grant.client.client_secret! });
    expect(refreshed.body.error).toBe('invalid_grant');
    expect((await restClient(t.server.base(), customerToken)('GET', '/customer-portal/customers/me')).status).toBe(401);
    // The organization's own token is untouched.
    expect(await productsStatus(t.org.token)).toBe(200);

    const events = (await leakedEvents()).slice(before);
    expect(events.map((e) => (e.data as { token_kind: string }).token_kind)).toEqual(['organization_access_token', 'oauth_refresh_token', 'customer_session_token']);
    for (const event of events) {
      expect(event.organizationId).toBe(t.org.organizationId);
      expect(event.data).toMatchObject({ url: 'https://github.com/acme/app/blob/main/.env', source: 'content', reported_type: 'kassa_token' });
      expect(JSON.stringify(event.data)).not.toMatch(/service_(oat|rt|cst)_/);
    }
  });

  test('a personal access token is revoked too', async () => {
    const session = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const created = await graphqlClient(t.server.base(), session)(
      'mutation ($input: PersonalAccessTokenCreateInput!) { core { personalAccessTokenCreate(input: $input) { token } } }',
      { input: { comment: 'leaked', scopes: ['products_read'] } },
    );
    const token = created.body.data.core.personalAccessTokenCreate.token as string;
    expect(await productsStatus(token)).toBe(200);
    const response = await reportSigned([leak(token)]);
    expect((await response.json())[0].label).toBe('true_positive');
    expect(await productsStatus(token)).toBe(401);
  });

  test('a user session token is revoked too', async () => {
    const session = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const me = () => graphqlClient(t.server.base(), session)('{ core { me { email } } }');
    expect((await me()).status).toBe(200);
    const response = await reportSigned([leak(session)]);
    expect((await response.json())[0].label).toBe('true_positive');
    expect((await me()).status).toBe(401);
  });

  test('a NUL in where the token leaked is left out of the event, not a failure', async () => {
    const token = await tokenWithScopes(t.server, t.org, ['products:read'], 'leaked with a NUL');
    const response = await reportSigned([{ ...leak(token), url: 'https://example.com/\u0000paste', source: 'gist\u0000' }]);
    expect(response.status).toBe(200);
    expect(await productsStatus(token)).toBe(401);
    const [event] = (await leakedEvents()).slice(-1);
    expect(event.data).toMatchObject({ url: 'https://example.com/paste', source: 'gist' });
  });

  test('reporting the same token again, or twice in one batch, is harmless: one revocation, one event', async () => {
    const token = await tokenWithScopes(t.server, t.org, ['products:read'], 'reported twice');
    const before = (await leakedEvents()).length;
    const first = await reportSigned([leak(token), leak(token)]);
    expect((await first.json()).map((e: { label: string }) => e.label)).toEqual(['true_positive', 'true_positive']);
    const again = await reportSigned([leak(token)]);
    expect(again.status).toBe(200);
    expect((await again.json())[0].label).toBe('true_positive');
    expect((await leakedEvents()).length).toBe(before + 1);
  });
});

describe('a report that is not signed by a configured key', () => {
  test.each([
    ['no signature', () => ({})],
    ['an unknown key id', (body: string) => ({ 'github-public-key-identifier': 'other-key', 'github-public-key-signature': signed(body) })],
    ["another party's key", (body: string) => ({ 'github-public-key-identifier': keyId, 'github-public-key-signature': signed(body, stranger.privateKey) })],
    ['a signature that is not base64 DER', () => ({ 'github-public-key-identifier': keyId, 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' })],
  ])('%s: 401, and nothing is revoked', async (_name, headersFor) => {
    const token = await tokenWithScopes(t.server, t.org, ['products:read']);
    const body = JSON.stringify([leak(token)]);
    const response = await report(body, headersFor(body) as Record<string, string>);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'Unauthorized' });
    expect(await productsStatus(token)).toBe(200);
  });

  test('a tampered body fails the signature and changes nothing', async () => {
    const token = await tokenWithScopes(t.server, t.org, ['products:read']);
    const other = await tokenWithScopes(t.server, t.org, ['products:read']);
    const body = JSON.stringify([leak(token)]);
    const signature = signed(body);
    const tampered = body.replace(token, other);
    const response = await report(tampered, { 'github-public-key-identifier': keyId, 'github-public-key-signature': signature });
    expect(response.status).toBe(401);
    expect(await productsStatus(token)).toBe(200);
    expect(await productsStatus(other)).toBe(200);
  });

  test('a signed body that is not a list of reports gets 422', async () => {
    const body = JSON.stringify({ token: 'x' });
    const response = await report(body, { 'github-public-key-identifier': keyId, 'github-public-key-signature': signed(body) });
    expect(response.status).toBe(422);
    expect((await response.json()).detail[0].loc).toEqual(['body']);
  });
});

test('without configured keys the endpoint does not exist', async () => {
  const bare = await startTestServer();
  try {
    const response = await fetch(`${bare.base()}/integrations/secret-scanning`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
    expect(response.status).toBe(404);
  } finally {
    await bare.close();
  }
});

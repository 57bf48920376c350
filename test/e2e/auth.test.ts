// Every way a request can fail to authenticate or to be permitted, over REST and GraphQL, and the
// attacks a token or user might try across organizations. Also: token plaintext is shown once
// and never stored.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/auth/tokens.ts';
import { graphqlClient, restClient, type TestServer } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectNoData } from '../helpers/responses.ts';

const t = useTestServer({ resetClockAfterEach: true });
/** Organization A: its owner's credentials, its all-scopes token, and a signed-in session of its owner. */
let a: Awaited<ReturnType<TestServer['bootstrap']>> & { session: string };
/** Organization B, owned by another user. */
let b: Awaited<ReturnType<TestServer['bootstrap']>> & { session: string };

const signInMutation = 'mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }';
const createTokenMutation =
  'mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { token organizationAccessToken { id organizationId comment scopes expiresAt } } } }';
const revokeTokenMutation = 'mutation ($id: UUID!) { core { organizationAccessTokenRevoke(id: $id) { id revokedAt } } }';
const listTokensQuery =
  'query ($organizationId: [UUID!]) { core { organizationAccessTokens(organizationId: $organizationId, limit: 100) { items { id organizationId comment scopes expiresAt lastUsedAt revokedAt createdAt } pagination { totalCount } } } }';
const productsQuery = 'query { core { products { items { id } pagination { totalCount } } } }';
const productCreateMutation =
  'mutation { core { productCreate(input: { name: "Scoped product", prices: [{ amountType: free }] }) { id } } }';
const freeProduct = { name: 'Auth test product', recurring_interval: null, prices: [{ amount_type: 'free' }] };

const rest = (token?: string) => restClient(t.server.base(), token);
const graphql = (token?: string) => graphqlClient(t.server.base(), token);

async function signIn(email: string, password: string): Promise<string> {
  const response = await graphql()(signInMutation, { email, password });
  expect(response.body.errors).toBeUndefined();
  return response.body.data.signIn.token;
}

/** Creates an organization access token as a signed-in user; returns the plaintext and its id. */
async function createToken(session: string, input: { organizationId: string; comment: string; scopes: string[]; expiresAt?: string }) {
  const response = await graphql(session)(createTokenMutation, { input });
  expect(response.body.errors).toBeUndefined();
  const created = response.body.data.core.organizationAccessTokenCreate;
  return { token: created.token as string, id: created.organizationAccessToken.id as string, record: created.organizationAccessToken };
}

/** A request with a literal Authorization header (or none), to REST and to GraphQL. */
async function withHeader(authorization: string | undefined) {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  const restResponse = await fetch(`${t.server.base()}/products/`, { headers });
  const graphqlResponse = await fetch(`${t.server.base()}/graphql`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ query: productsQuery }),
  });
  return {
    rest: { status: restResponse.status, headers: restResponse.headers, body: await restResponse.json() },
    graphql: { status: graphqlResponse.status, headers: graphqlResponse.headers, body: (await graphqlResponse.json()) as { data?: any; errors?: any[] } },
  };
}

function expectRestUnauthorized(response: { status: number; body: any }) {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ error: 'Unauthorized', detail: expect.any(String) });
  expect(response.body.detail.length).toBeGreaterThan(0);
}

function expectGraphQLUnauthenticated(response: { status: number; body: { data?: any; errors?: any[] } }) {
  expect(response.status).toBe(401);
  expectNoData(response.body.data);
  expect(response.body.errors).toHaveLength(1);
  expect(response.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
}

function expectRestNotPermitted(response: { status: number; body: any }, scope: string) {
  expect(response.status).toBe(403);
  expect(response.body).toEqual({ error: 'NotPermitted', detail: expect.stringContaining(scope) });
}

function expectGraphQLNotPermitted(response: { status: number; body: { data?: any; errors?: any[] } }, mention: string) {
  expect(response.status).toBe(403);
  expectNoData(response.body.data);
  expect(response.body.errors).toHaveLength(1);
  expect(response.body.errors![0].extensions.code).toBe('NOT_PERMITTED');
  expect(response.body.errors![0].message).toContain(mention);
}

async function tokenCount(organizationId: string): Promise<number> {
  return t.server.kassa.environments.production.environment.prisma.organizationAccessToken.count({ where: { organizationId } });
}

beforeAll(async () => {
  const first = await t.server.bootstrap('production');
  const second = await t.server.bootstrap('production', { organizationName: 'Other Organization' });
  a = { ...first, session: await signIn(first.userEmail, first.userPassword) };
  b = { ...second, session: await signIn(second.userEmail, second.userPassword) };
});

describe('a request without an Authorization header', () => {
  it('gets 401 Unauthorized with a detail from the REST API', async () => {
    const { rest: response } = await withHeader(undefined);
    expectRestUnauthorized(response);
    expectRestUnauthorized(await rest()('POST', '/products/', freeProduct));
  });

  it('gets UNAUTHENTICATED and no data from GraphQL', async () => {
    const { graphql: response } = await withHeader(undefined);
    expectGraphQLUnauthenticated(response);
    expectGraphQLUnauthenticated(await graphql()(productCreateMutation));
  });

  it('is told how to authenticate with a WWW-Authenticate: Bearer challenge', async () => {
    // RFC 7235 section 3.1: a 401 response must carry a WWW-Authenticate challenge.
    const { rest: restResponse, graphql: graphqlResponse } = await withHeader(undefined);
    expect(restResponse.status).toBe(401);
    expect(String(restResponse.headers.get('www-authenticate'))).toMatch(/^Bearer\b/);
    expect(graphqlResponse.status).toBe(401);
    expect(String(graphqlResponse.headers.get('www-authenticate'))).toMatch(/^Bearer\b/);
  });

  it('can still sign in, the one operation that needs no token', async () => {
    const response = await graphql()(signInMutation, { email: a.userEmail, password: a.userPassword });
    expect(response.status).toBe(200);
    expect(response.body.data.signIn.token).toMatch(/^service_us_/);
  });
});

describe('a malformed Authorization header', () => {
  it.each(['Basic abc', 'Bearer', 'Token abc', 'Bearer two words'])('"%s" gets 401 from REST and GraphQL', async (header) => {
    const { rest: restResponse, graphql: graphqlResponse } = await withHeader(header);
    expectRestUnauthorized(restResponse);
    expect(restResponse.body.detail).toMatch(/Bearer/);
    expectGraphQLUnauthenticated(graphqlResponse);
    expect(String(restResponse.headers.get('www-authenticate'))).toMatch(/^Bearer\b/);
    expect(String(graphqlResponse.headers.get('www-authenticate'))).toMatch(/^Bearer\b/);
  });

  it('with a valid token after "Basic" is still refused', async () => {
    const { rest: restResponse, graphql: graphqlResponse } = await withHeader(`Basic ${a.token}`);
    expectRestUnauthorized(restResponse);
    expectGraphQLUnauthenticated(graphqlResponse);
  });

  it('refuses signIn too, rather than treating the request as anonymous', async () => {
    const response = await fetch(`${t.server.base()}/graphql`, {
      method: 'POST',
      headers: { authorization: 'Basic abc', 'content-type': 'application/json' },
      body: JSON.stringify({ query: signInMutation, variables: { email: a.userEmail, password: a.userPassword } }),
    });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { data?: any; errors?: any[] };
    expect(body.data?.signIn ?? null).toBeNull();
    expect(body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('an unknown token of the right shape', () => {
  it.each([
    ['organization access token', () => generateToken(t.server.config.tokenPrefix, 'oat')],
    ['user session token', () => generateToken(t.server.config.tokenPrefix, 'us')],
    ['token with one character changed', () => a.token.slice(0, -1) + (a.token.endsWith('A') ? 'B' : 'A')],
    ['token with an unknown kind', () => a.token.replace('_oat_', '_xyz_')],
  ])('(%s) gets 401 from REST and GraphQL', async (_kind, make) => {
    const token = make();
    expectRestUnauthorized(await rest(token)('GET', '/products/'));
    expectGraphQLUnauthenticated(await graphql(token)(productsQuery));
  });
});

describe('an expired organization access token', () => {
  it('works until its expiry, then gets 401 from REST and GraphQL', async () => {
    const expiresAt = new Date(Date.now() + 5_000);
    const { token, record } = await createToken(a.session, {
      organizationId: a.organizationId,
      comment: 'short-lived',
      scopes: ['products_read'],
      expiresAt: expiresAt.toISOString(),
    });
    expect(new Date(record.expiresAt).getTime()).toBe(expiresAt.getTime());
    expect((await rest(token)('GET', '/products/')).status).toBe(200);

    t.server.clock.now = new Date(Date.now() + 3600_000);
    try {
      expectRestUnauthorized(await rest(token)('GET', '/products/'));
      expectGraphQLUnauthenticated(await graphql(token)(productsQuery));
      // The user's session (valid for days) and a token without expiry are unaffected.
      expect((await rest(a.session)('GET', '/products/')).status).toBe(200);
      expect((await rest(a.token)('GET', '/products/')).status).toBe(200);
    } finally {
      t.server.clock.now = null;
    }
    expect((await rest(token)('GET', '/products/')).status).toBe(200);
  });

  it('cannot be created already expired', async () => {
    const before = await tokenCount(a.organizationId);
    const response = await graphql(a.session)(createTokenMutation, {
      input: { organizationId: a.organizationId, comment: 'born dead', scopes: ['products_read'], expiresAt: new Date(Date.now() - 1_000).toISOString() },
    });
    expect(response.status).toBe(422);
    expectNoData(response.body.data);
    expect(response.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(response.body.errors![0].extensions.issues).toEqual([expect.objectContaining({ loc: ['input', 'expiresAt'] })]);
    expect(await tokenCount(a.organizationId)).toBe(before);
  });
});

describe('an expired user session', () => {
  it('gets 401 from REST and GraphQL once its lifetime has passed', async () => {
    const response = await graphql()('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token expiresAt } }', {
      email: a.userEmail,
      password: a.userPassword,
    });
    const { token: session, expiresAt } = response.body.data.signIn as { token: string; expiresAt: string };
    expect((await rest(session)('GET', '/products/')).status).toBe(200);

    t.server.clock.now = new Date(new Date(expiresAt).getTime() + 1_000);
    try {
      expectRestUnauthorized(await rest(session)('GET', '/products/'));
      expectGraphQLUnauthenticated(await graphql(session)(productsQuery));
      // The organization's token never expires.
      expect((await rest(a.token)('GET', '/products/')).status).toBe(200);
    } finally {
      t.server.clock.now = null;
    }
  });
});

describe('a revoked organization access token', () => {
  it('gets 401 on its next REST and GraphQL call', async () => {
    const { token, id } = await createToken(a.session, { organizationId: a.organizationId, comment: 'to revoke', scopes: ['products_read'] });
    expect((await rest(token)('GET', '/products/')).status).toBe(200);

    const revoked = await graphql(a.session)(revokeTokenMutation, { id });
    expect(revoked.body.errors).toBeUndefined();
    expect(revoked.body.data.core.organizationAccessTokenRevoke.id).toBe(id);
    expect(revoked.body.data.core.organizationAccessTokenRevoke.revokedAt).toEqual(expect.any(String));

    expectRestUnauthorized(await rest(token)('GET', '/products/'));
    expectGraphQLUnauthenticated(await graphql(token)(productsQuery));
  });

  it('cannot be revoked twice, and leaves the token list', async () => {
    const { id } = await createToken(a.session, { organizationId: a.organizationId, comment: 'revoke twice', scopes: ['products_read'] });
    expect((await graphql(a.session)(revokeTokenMutation, { id })).body.errors).toBeUndefined();
    const again = await graphql(a.session)(revokeTokenMutation, { id });
    expect(again.body.errors![0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    const list = await graphql(a.session)(listTokensQuery);
    expect(list.body.data.core.organizationAccessTokens.items.map((t: { id: string }) => t.id)).not.toContain(id);
  });
});

describe('a signed-out user session', () => {
  it('gets 401 on its next call', async () => {
    const session = await signIn(a.userEmail, a.userPassword);
    expect((await rest(session)('GET', '/products/')).status).toBe(200);
    const signedOut = await graphql(session)('mutation { signOut }');
    expect(signedOut.body).toEqual({ data: { signOut: true } });
    expectRestUnauthorized(await rest(session)('GET', '/products/'));
    expectGraphQLUnauthenticated(await graphql(session)(productsQuery));
    // Other sessions of the same user are unaffected.
    expect((await rest(a.session)('GET', '/products/')).status).toBe(200);
  });
});

describe('a token lacking the scope', () => {
  it('may read products with products:read but gets 403 naming products:write when creating one', async () => {
    const { token } = await createToken(a.session, { organizationId: a.organizationId, comment: 'read only', scopes: ['products_read'] });
    expect((await rest(token)('GET', '/products/')).status).toBe(200);
    expectRestNotPermitted(await rest(token)('POST', '/products/', freeProduct), 'products:write');
    expectGraphQLNotPermitted(await graphql(token)(productCreateMutation), 'products:write');
    expect(await t.server.kassa.environments.production.environment.prisma.product.count({ where: { name: 'Scoped product' } })).toBe(0);
  });

  it('gets 403 naming products:read when listing, fetching or updating products', async () => {
    const created = await rest(a.token)('POST', '/products/', freeProduct);
    expect(created.status).toBe(201);
    const { token } = await createToken(a.session, { organizationId: a.organizationId, comment: 'no products', scopes: ['organizations_read'] });
    expectRestNotPermitted(await rest(token)('GET', '/products/'), 'products:read');
    expectRestNotPermitted(await rest(token)('GET', `/products/${created.body.id}`), 'products:read');
    expectRestNotPermitted(await rest(token)('PATCH', `/products/${created.body.id}`, { name: 'Renamed' }), 'products:write');
    expectGraphQLNotPermitted(await graphql(token)(productsQuery), 'products:read');
    expect((await rest(a.token)('GET', `/products/${created.body.id}`)).body.name).toBe(freeProduct.name);
  });

  it('gets 403 naming organization_access_tokens:read when listing tokens', async () => {
    const { token } = await createToken(a.session, { organizationId: a.organizationId, comment: 'products only', scopes: ['products_read', 'products_write'] });
    expectGraphQLNotPermitted(await graphql(token)(listTokensQuery), 'organization_access_tokens:read');
    expectGraphQLNotPermitted(await graphql(token)(revokeTokenMutation, { id: a.organizationId }), 'organization_access_tokens:write');
  });
});

describe('an attacker', () => {
  it('holding an organization access token cannot create organization access tokens, even with every scope', async () => {
    const before = await tokenCount(a.organizationId);
    const response = await graphql(a.token)(createTokenMutation, {
      input: { organizationId: a.organizationId, comment: 'escalation', scopes: ['products_read'] },
    });
    expectGraphQLNotPermitted(response, 'user');
    const withoutOrganization = await graphql(a.token)(createTokenMutation, { input: { comment: 'escalation', scopes: ['products_read'] } });
    expectGraphQLNotPermitted(withoutOrganization, 'user');
    expect(await tokenCount(a.organizationId)).toBe(before);
  });

  it('signed in as a user cannot create a token for an organization they do not belong to', async () => {
    const before = await tokenCount(b.organizationId);
    const response = await graphql(a.session)(createTokenMutation, {
      input: { organizationId: b.organizationId, comment: 'foreign', scopes: ['products_read', 'products_write'] },
    });
    expect(response.status).toBe(422);
    expectNoData(response.body.data);
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(response.body.errors![0].message).toMatch(/organization/i);
    expect(response.body.errors![0].extensions.issues).toEqual([expect.objectContaining({ loc: ['input', 'organizationId'], msg: expect.stringMatching(/organization/i) })]);
    expect(await tokenCount(b.organizationId)).toBe(before);
  });

  it("signed in as a user lists only their own organization's tokens, even when filtering by another organization", async () => {
    const own = await graphql(a.session)(listTokensQuery);
    expect(own.body.errors).toBeUndefined();
    const ownItems = own.body.data.core.organizationAccessTokens.items as { organizationId: string }[];
    expect(ownItems.length).toBeGreaterThan(0);
    expect(ownItems.every((t) => t.organizationId === a.organizationId)).toBe(true);

    const foreign = await graphql(a.session)(listTokensQuery, { organizationId: [b.organizationId] });
    expect(foreign.body.errors).toBeUndefined();
    expect(foreign.body.data.core.organizationAccessTokens).toEqual({ items: [], pagination: { totalCount: 0 } });

    const mixed = await graphql(a.session)(listTokensQuery, { organizationId: [a.organizationId, b.organizationId] });
    const mixedItems = mixed.body.data.core.organizationAccessTokens.items as { organizationId: string }[];
    expect(mixedItems.every((t) => t.organizationId === a.organizationId)).toBe(true);
  });

  it("holding an organization access token lists only its own organization's tokens", async () => {
    const response = await graphql(b.token)(listTokensQuery, { organizationId: [a.organizationId] });
    expect(response.body.data.core.organizationAccessTokens).toEqual({ items: [], pagination: { totalCount: 0 } });
    const own = await graphql(b.token)(listTokensQuery);
    const items = own.body.data.core.organizationAccessTokens.items as { organizationId: string }[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((t) => t.organizationId === b.organizationId)).toBe(true);
  });

  it("cannot revoke another organization's token, which gets 404 and keeps working", async () => {
    const victim = await createToken(b.session, { organizationId: b.organizationId, comment: 'victim', scopes: ['products_read'] });

    for (const attacker of [a.session, a.token]) {
      const response = await graphql(attacker)(revokeTokenMutation, { id: victim.id });
      expect(response.status).toBe(404);
      expectNoData(response.body.data);
      expect(response.body.errors![0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    }

    expect((await rest(victim.token)('GET', '/products/')).status).toBe(200);
    const row = await t.server.kassa.environments.production.environment.prisma.organizationAccessToken.findUnique({ where: { id: victim.id } });
    expect(row?.revokedAt).toBeNull();
  });

  it('cannot tell a wrong password from an unknown email when signing in', async () => {
    const wrongPassword = await graphql()(signInMutation, { email: a.userEmail, password: 'not the right password' });
    const unknownEmail = await graphql()(signInMutation, { email: 'nobody-here@example.com', password: 'not the right password' });
    for (const response of [wrongPassword, unknownEmail]) {
      expect(response.status).toBe(401);
      expect(response.body.data?.signIn ?? null).toBeNull();
      expect(response.body.errors).toHaveLength(1);
      expect(response.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
    }
    expect(wrongPassword.body.errors![0].message).toBe(unknownEmail.body.errors![0].message);
    // Signing in as the owner of one organization never opens another's.
    const otherOwner = await graphql()(signInMutation, { email: b.userEmail, password: a.userPassword });
    expect(otherOwner.body.errors![0].message).toBe(unknownEmail.body.errors![0].message);
  });

  it('holding an organization access token is refused by the customer portal', async () => {
    const response = await graphql(a.token)('query { customerPortal { organization { id } } }');
    expect([401, 403]).toContain(response.status);
    expect(response.body.data?.customerPortal ?? null).toBeNull();
    expect(response.body.errors).toHaveLength(1);
    expect(['NOT_PERMITTED', 'UNAUTHENTICATED']).toContain(response.body.errors![0].extensions.code);
    expect(JSON.stringify(response.body)).not.toContain(a.organizationId);
  });

  it('signed in as a user is refused by the customer portal', async () => {
    const response = await graphql(a.session)('query { customerPortal { organization { id name } } }');
    expect(response.body.data?.customerPortal ?? null).toBeNull();
    expect(['NOT_PERMITTED', 'UNAUTHENTICATED']).toContain(response.body.errors![0].extensions.code);
  });
});

describe('organization access token secrecy', () => {
  it('shows the token only in the create response, never when listing', async () => {
    const { token, id } = await createToken(a.session, { organizationId: a.organizationId, comment: 'shown once', scopes: ['products_read'] });
    expect(token).toMatch(/^service_oat_[0-9A-Za-z]{36}$/);

    const list = await graphql(a.session)(listTokensQuery);
    expect(list.body.errors).toBeUndefined();
    const item = list.body.data.core.organizationAccessTokens.items.find((t: { id: string }) => t.id === id);
    expect(item).toMatchObject({ id, comment: 'shown once', scopes: ['products_read'], organizationId: a.organizationId });
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(JSON.stringify(list.body)).not.toContain(createHash('sha256').update(token).digest('hex'));

    for (const field of ['token', 'tokenHash']) {
      const asked = await graphql(a.session)(`query { core { organizationAccessTokens { items { id ${field} } } } }`);
      expectNoData(asked.body.data);
      expect(asked.body.errors![0].message).toContain(`Cannot query field "${field}"`);
    }
  });

  it('stores the SHA-256 hex of the token and no column holds the plaintext', async () => {
    const { token, id } = await createToken(a.session, { organizationId: a.organizationId, comment: 'hashed', scopes: ['products_read'] });
    const prisma = t.server.kassa.environments.production.environment.prisma;
    const rows = await prisma.organizationAccessToken.findMany();
    const row = rows.find((r) => r.id === id)!;
    expect(row.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);

    // Every column of every row, as the database holds it, including columns the client does not map.
    const raw = await prisma.$queryRawUnsafe<Record<string, unknown>[]>('SELECT * FROM organization_access_tokens');
    expect(raw).toHaveLength(rows.length);
    const stored = JSON.stringify(raw);
    expect(stored).toContain(row.tokenHash);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice('service_oat_'.length));
    expect(stored).not.toContain(a.token);
    expect(stored).not.toContain(b.token);
  });

  it('stores user session tokens as SHA-256 hex too', async () => {
    const session = await signIn(a.userEmail, a.userPassword);
    const prisma = t.server.kassa.environments.production.environment.prisma;
    const raw = JSON.stringify(await prisma.$queryRawUnsafe<Record<string, unknown>[]>('SELECT * FROM user_sessions'));
    expect(raw).toContain(createHash('sha256').update(session).digest('hex'));
    expect(raw).not.toContain(session);
    expect(raw).not.toContain(a.session);
  });

  it('never writes a token or password to the logs', async () => {
    const { token } = await createToken(a.session, { organizationId: a.organizationId, comment: 'not logged', scopes: ['products_read'] });
    await rest(token)('GET', '/products/');
    await rest(`${token}x`)('GET', '/products/');
    const logs = t.server.logs.join('\n');
    expect(t.server.logs.length).toBeGreaterThan(0);
    for (const secret of [token, a.token, a.session, b.session, a.userPassword]) expect(logs).not.toContain(secret);
  });
});

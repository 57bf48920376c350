// Personal access tokens: a user's own tokens, made by the user signed in, acting as that user for
// every organization they belong to and limited to their scopes. Every rule is tried from the
// attacker's side too: a token minting tokens, another user revoking, the wrong environment. Also
// `core.me`, and the `kassa pat` command against a data directory on disk.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoData } from '../helpers/responses.ts';
import { hashToken } from '../../src/auth/tokens.ts';
import { resourceScopes } from '../../src/auth/scopes.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createOrganization, issueAccessToken } from '../../src/modules/organizations/service.ts';
import { startKassa } from '../../src/server.ts';
import { graphqlClient, restClient, type Gql } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { enumName } from '../helpers/organizations.ts';

const t = useTestServer({ resetClockAfterEach: true });
/** A user who owns two organizations, signed in. */
let owner: { email: string; password: string; userId: string; session: string; first: string; second: string; firstToken: string; secondToken: string };
/** Another user with an organization of their own: the third organization, and the attacker. */
let stranger: { email: string; session: string; organizationId: string; token: string };
/** One product in each of the three organizations. */
const products: Record<'first' | 'second' | 'third', string> = { first: '', second: '', third: '' };

const signInMutation = 'mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token user { id } } }';
const createMutation =
  'mutation ($input: PersonalAccessTokenCreateInput!) { core { personalAccessTokenCreate(input: $input) { token personalAccessToken { id comment scopes expiresAt lastUsedAt revokedAt createdAt } } } }';
const revokeMutation = 'mutation ($id: UUID!) { core { personalAccessTokenRevoke(id: $id) { id revokedAt } } }';
const listQuery =
  'query ($includeRevoked: Boolean! = false, $page: Int! = 1, $limit: Int! = 100) { core { personalAccessTokens(includeRevoked: $includeRevoked, page: $page, limit: $limit) { items { id comment scopes expiresAt lastUsedAt revokedAt createdAt } pagination { totalCount maxPage } } } }';
const meQuery = 'query { core { me { id email name emailVerified createdAt } } }';
const productsQuery = 'query { core { products(limit: 100) { items { id organizationId } } } }';
const productCreateMutation = 'mutation ($organizationId: UUID!) { core { productCreate(input: { organizationId: $organizationId, name: "By a PAT", prices: [{ amountType: free }] }) { id } } }';

const rest = (token?: string, environment: 'production' | 'sandbox' = 'production') => restClient(t.server.base(environment), token);
const graphql = (token?: string, environment: 'production' | 'sandbox' = 'production'): Gql => graphqlClient(t.server.base(environment), token);
const prisma = () => t.server.kassa.environments.production.environment.prisma;

async function signIn(email: string, password: string, environment: 'production' | 'sandbox' = 'production') {
  const response = await graphql(undefined, environment)(signInMutation, { email, password });
  expect(response.body.errors).toBeUndefined();
  return { session: response.body.data.signIn.token as string, userId: response.body.data.signIn.user.id as string };
}

/** A personal access token created by a signed-in user through GraphQL. */
async function createPat(session: string, input: { comment?: string; scopes: string[]; expiresAt?: string | null }, environment: 'production' | 'sandbox' = 'production') {
  const response = await graphql(session, environment)(createMutation, { input: { comment: 'test', ...input, scopes: input.scopes.map(enumName) } });
  expect(response.body.errors).toBeUndefined();
  const created = response.body.data.core.personalAccessTokenCreate;
  return { token: created.token as string, id: created.personalAccessToken.id as string, record: created.personalAccessToken };
}

async function createProduct(organizationToken: string, name: string): Promise<string> {
  const response = await rest(organizationToken)('POST', '/products/', { name, recurring_interval: null, prices: [{ amount_type: 'free' }] });
  expect(response.status).toBe(201);
  return response.body.id;
}

const patCount = (userId: string) => prisma().personalAccessToken.count({ where: { userId } });

function expectUnauthorized(restResponse: { status: number; body: any }, graphqlResponse: { status: number; body: { data?: any; errors?: any[] } }) {
  expect(restResponse.status).toBe(401);
  expect(restResponse.body).toEqual({ error: 'Unauthorized', detail: expect.any(String) });
  expect(graphqlResponse.status).toBe(401);
  expectNoData(graphqlResponse.body.data);
  expect(graphqlResponse.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
}

function expectNotPermitted(response: { status: number; body: { data?: any; errors?: any[] } }, mention: string | RegExp) {
  expect(response.status).toBe(403);
  expectNoData(response.body.data);
  expect(response.body.errors).toHaveLength(1);
  expect(response.body.errors![0].extensions.code).toBe('NOT_PERMITTED');
  expect(response.body.errors![0].message).toMatch(mention);
}

function expectValidationError(response: { status: number; body: { data?: any; errors?: any[] } }, field: string, message: RegExp) {
  expect(response.status).toBe(422);
  expectNoData(response.body.data);
  expect(response.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
  expect(response.body.errors![0].extensions.issues).toEqual([expect.objectContaining({ loc: ['input', field], msg: expect.stringMatching(message) })]);
}

beforeAll(async () => {
  const boot = await t.server.bootstrap('production', { organizationName: 'First shop' });
  const other = await t.server.bootstrap('production', { organizationName: 'Third shop' });
  const { userId } = await signIn(boot.userEmail, boot.userPassword);
  // The owner's second organization exists before any of their tokens is first used.
  const second = await createOrganization(prisma(), { name: 'Second shop', ownerId: userId });
  const { token: secondToken } = await issueAccessToken(prisma(), t.server.config, second.id, { comment: 'second shop', scopes: [...resourceScopes] }, new Date());
  owner = {
    email: boot.userEmail,
    password: boot.userPassword,
    userId,
    session: (await signIn(boot.userEmail, boot.userPassword)).session,
    first: boot.organizationId,
    second: second.id,
    firstToken: boot.token,
    secondToken,
  };
  stranger = { email: other.userEmail, session: (await signIn(other.userEmail, other.userPassword)).session, organizationId: other.organizationId, token: other.token };
  products.first = await createProduct(owner.firstToken, 'First product');
  products.second = await createProduct(owner.secondToken, 'Second product');
  products.third = await createProduct(stranger.token, 'Third product');
});

describe('creating a personal access token', () => {
  it('returns the token once, of the pat kind, with its record; only its hash is stored', async () => {
    const { token, id, record } = await createPat(owner.session, { comment: 'ci script', scopes: ['products:read', 'products:read', 'user:read'] });
    expect(token).toMatch(/^service_pat_[0-9A-Za-z]{36}$/);
    expect(record).toEqual({ id, comment: 'ci script', scopes: ['products_read', 'user_read'], expiresAt: null, lastUsedAt: null, revokedAt: null, createdAt: expect.any(String) });
    const row = await prisma().personalAccessToken.findUniqueOrThrow({ where: { id } });
    expect(row.tokenHash).toBe(hashToken(token));
    expect(row.userId).toBe(owner.userId);
  });

  it('takes an expiry in the future', async () => {
    const expiresAt = new Date(Date.now() + 24 * 3600_000);
    const { record } = await createPat(owner.session, { scopes: ['products:read'], expiresAt: expiresAt.toISOString() });
    expect(new Date(record.expiresAt).getTime()).toBe(expiresAt.getTime());
  });

  it.each([
    ['an unknown scope', ['products_read', 'products_admin'], 'products_admin'],
    ['a scope as tokens spell it', ['products:read'], 'products:read'],
    ['a sign-in scope (openid)', ['openid'], 'openid'],
    ['the profile and email scopes', ['products_read', 'profile', 'email'], 'profile'],
  ])('refuses %s with BAD_USER_INPUT before anything runs: PersonalAccessTokenScope does not offer it', async (_case, scopes, refused) => {
    const before = await patCount(owner.userId);
    const response = await graphql(owner.session)(createMutation, { input: { comment: 'bad', scopes } });
    expectNoData(response.body.data);
    expect(response.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(response.body.errors![0].message).toContain(`Value "${refused}" does not exist in "PersonalAccessTokenScope" enum.`);
    expect(await patCount(owner.userId)).toBe(before);
  });

  it('refuses no scope at all with a 422 naming input.scopes, and creates nothing', async () => {
    const before = await patCount(owner.userId);
    expectValidationError(await graphql(owner.session)(createMutation, { input: { comment: 'bad', scopes: [] } }), 'scopes', /at least one scope/);
    expect(await patCount(owner.userId)).toBe(before);
  });

  it('refuses an expiry in the past, or now, with a 422 naming input.expiresAt', async () => {
    const before = await patCount(owner.userId);
    for (const expiresAt of [new Date(Date.now() - 1_000), new Date(Date.now() - 365 * 24 * 3600_000)]) {
      const response = await graphql(owner.session)(createMutation, { input: { comment: 'born dead', scopes: ['products_read'], expiresAt: expiresAt.toISOString() } });
      expectValidationError(response, 'expiresAt', /future/);
    }
    expect(await patCount(owner.userId)).toBe(before);
  });

  it('refuses a comment longer than 200 characters with a 422 naming input.comment', async () => {
    const before = await patCount(owner.userId);
    expectValidationError(await graphql(owner.session)(createMutation, { input: { comment: 'x'.repeat(201), scopes: ['products_read'] } }), 'comment', /at most 200/);
    expect((await createPat(owner.session, { comment: 'y'.repeat(200), scopes: ['products:read'] })).record.comment).toHaveLength(200);
    expect(await patCount(owner.userId)).toBe(before + 1);
  });

  it('reports every problem of one input at once', async () => {
    const response = await graphql(owner.session)(createMutation, {
      input: { comment: 'x'.repeat(201), scopes: [], expiresAt: new Date(Date.now() - 1_000).toISOString() },
    });
    expect(response.status).toBe(422);
    const locs = (response.body.errors![0].extensions.issues as { loc: string[] }[]).map((i) => i.loc.join('.'));
    expect(locs.sort()).toEqual(['input.comment', 'input.expiresAt', 'input.scopes']);
  });
});

describe('a personal access token in use', () => {
  it('reads products of both of its user’s organizations over REST and GraphQL, and nothing of a third', async () => {
    const { token } = await createPat(owner.session, { scopes: ['products:read'] });
    const listed = await rest(token)('GET', '/products/?limit=100');
    expect(listed.status).toBe(200);
    const ids = listed.body.items.map((p: { id: string }) => p.id);
    expect(ids).toEqual(expect.arrayContaining([products.first, products.second]));
    expect(ids).not.toContain(products.third);
    expect(new Set(listed.body.items.map((p: { organization_id: string }) => p.organization_id))).toEqual(new Set([owner.first, owner.second]));

    const viaGraphql = await graphql(token)(productsQuery);
    expect(viaGraphql.body.errors).toBeUndefined();
    expect(viaGraphql.body.data.core.products.items.map((p: { id: string }) => p.id).sort()).toEqual([...ids].sort());

    expect((await rest(token)('GET', `/products/${products.second}`)).status).toBe(200);
    const foreign = await rest(token)('GET', `/products/${products.third}`);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain('Third product');
    const filtered = await rest(token)('GET', `/products/?organization_id=${stranger.organizationId}`);
    expect(filtered.status).toBe(200);
    expect(filtered.body.items).toEqual([]);
  });

  it('gets 403 naming products:write when creating a product with only products:read, and nothing is created', async () => {
    const { token } = await createPat(owner.session, { scopes: ['products:read'] });
    const viaRest = await rest(token)('POST', '/products/', { name: 'By a PAT', organization_id: owner.first, recurring_interval: null, prices: [{ amount_type: 'free' }] });
    expect(viaRest.status).toBe(403);
    expect(viaRest.body).toEqual({ error: 'NotPermitted', detail: expect.stringContaining('products:write') });
    expectNotPermitted(await graphql(token)(productCreateMutation, { organizationId: owner.first }), /products:write/);
    expect(await prisma().product.count({ where: { name: 'By a PAT' } })).toBe(0);
  });

  it('creates a product in either organization with products:write, but not in a third', async () => {
    const { token } = await createPat(owner.session, { scopes: ['products:write'] });
    for (const organizationId of [owner.first, owner.second]) {
      const created = await graphql(token)(productCreateMutation, { organizationId });
      expect(created.body.errors).toBeUndefined();
    }
    const foreign = await graphql(token)(productCreateMutation, { organizationId: stranger.organizationId });
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors![0].extensions.issues).toEqual([expect.objectContaining({ loc: ['input', 'organizationId'] })]);
    expect(await prisma().product.count({ where: { name: 'By a PAT', organizationId: stranger.organizationId } })).toBe(0);
  });

  it('records when it was last used', async () => {
    const { token, id } = await createPat(owner.session, { scopes: ['products:read'] });
    expect((await rest(token)('GET', '/products/')).status).toBe(200);
    const listed = await graphql(owner.session)(listQuery);
    expect(listed.body.data.core.personalAccessTokens.items.find((t: { id: string }) => t.id === id).lastUsedAt).toEqual(expect.any(String));
  });

  it('gets 401 once expired, from REST and GraphQL', async () => {
    const { token } = await createPat(owner.session, { scopes: ['products:read'], expiresAt: new Date(Date.now() + 5_000).toISOString() });
    expect((await rest(token)('GET', '/products/')).status).toBe(200);
    t.server.clock.now = new Date(Date.now() + 3600_000);
    try {
      expectUnauthorized(await rest(token)('GET', '/products/'), await graphql(token)(productsQuery));
      // The owner's session (valid for days) is unaffected.
      expect((await rest(owner.session)('GET', '/products/')).status).toBe(200);
    } finally {
      t.server.clock.now = null;
    }
  });

  it('minted in the sandbox is unknown in production', async () => {
    const boot = await t.server.bootstrap('sandbox');
    const { session } = await signIn(boot.userEmail, boot.userPassword, 'sandbox');
    const { token } = await createPat(session, { scopes: ['products:read', 'user:read'] }, 'sandbox');
    expect((await rest(token, 'sandbox')('GET', '/products/')).status).toBe(200);
    expectUnauthorized(await rest(token)('GET', '/products/'), await graphql(token)(meQuery));
  });
});

describe('revoking a personal access token', () => {
  it('makes its next request get 401 at once, even right after a request that was answered from the token cache', async () => {
    const { token, id } = await createPat(owner.session, { scopes: ['products:read'] });
    expect((await rest(token)('GET', '/products/')).status).toBe(200);
    expect((await rest(token)('GET', '/products/')).status).toBe(200);

    const revoked = await graphql(owner.session)(revokeMutation, { id });
    expect(revoked.body.errors).toBeUndefined();
    expect(revoked.body.data.core.personalAccessTokenRevoke).toEqual({ id, revokedAt: expect.any(String) });

    expectUnauthorized(await rest(token)('GET', '/products/'), await graphql(token)(productsQuery));
  });

  it('cannot be done twice', async () => {
    const { id } = await createPat(owner.session, { scopes: ['products:read'] });
    expect((await graphql(owner.session)(revokeMutation, { id })).body.errors).toBeUndefined();
    const again = await graphql(owner.session)(revokeMutation, { id });
    expect(again.status).toBe(404);
    expect(again.body.errors![0].extensions.code).toBe('RESOURCE_NOT_FOUND');
  });

  it("is refused to another user, as if the token did not exist, and the token keeps working", async () => {
    const { token, id } = await createPat(owner.session, { scopes: ['products:read'] });
    const attempt = await graphql(stranger.session)(revokeMutation, { id });
    expect(attempt.status).toBe(404);
    expectNoData(attempt.body.data);
    expect(attempt.body.errors![0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    const unknown = await graphql(stranger.session)(revokeMutation, { id: crypto.randomUUID() });
    expect(unknown.body.errors![0].message).toBe(attempt.body.errors![0].message);

    expect((await rest(token)('GET', '/products/')).status).toBe(200);
    expect((await prisma().personalAccessToken.findUniqueOrThrow({ where: { id } })).revokedAt).toBeNull();
  });
});

describe('listing personal access tokens', () => {
  it("shows only the signed-in user's own tokens, newest first, without revoked ones unless asked", async () => {
    const kept = await createPat(owner.session, { comment: 'kept', scopes: ['orders:read'] });
    const gone = await createPat(owner.session, { comment: 'gone', scopes: ['orders:read'] });
    await graphql(owner.session)(revokeMutation, { id: gone.id });
    const strangers = await createPat(stranger.session, { comment: 'not yours', scopes: ['orders:read'] });

    const listed = await graphql(owner.session)(listQuery);
    expect(listed.body.errors).toBeUndefined();
    const { items, pagination } = listed.body.data.core.personalAccessTokens;
    const ids = items.map((t: { id: string }) => t.id);
    expect(ids).toContain(kept.id);
    expect(ids).not.toContain(gone.id);
    expect(ids).not.toContain(strangers.id);
    expect(items.every((t: { revokedAt: string | null }) => t.revokedAt === null)).toBe(true);
    expect(pagination.totalCount).toBe(await prisma().personalAccessToken.count({ where: { userId: owner.userId, revokedAt: null } }));
    const created = items.map((t: { createdAt: string }) => new Date(t.createdAt).getTime());
    expect(created).toEqual([...created].sort((x, y) => y - x));

    const withRevoked = await graphql(owner.session)(listQuery, { includeRevoked: true });
    const all = withRevoked.body.data.core.personalAccessTokens.items.map((t: { id: string }) => t.id);
    expect(all).toEqual(expect.arrayContaining([kept.id, gone.id]));
    expect(all).not.toContain(strangers.id);
  });

  it('pages with page and limit, and refuses a limit above 100 naming it', async () => {
    const page = await graphql(owner.session)(listQuery, { limit: 1, page: 2 });
    expect(page.body.data.core.personalAccessTokens.items).toHaveLength(1);
    expect(page.body.data.core.personalAccessTokens.pagination.maxPage).toBe(page.body.data.core.personalAccessTokens.pagination.totalCount);
    const tooMany = await graphql(owner.session)(listQuery, { limit: 101 });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors![0].extensions.issues).toEqual([expect.objectContaining({ loc: ['limit'] })]);
  });

  it('never shows a token or its hash', async () => {
    const { token } = await createPat(owner.session, { comment: 'secret', scopes: ['products:read'] });
    const listed = await graphql(owner.session)(listQuery, { includeRevoked: true });
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(JSON.stringify(listed.body)).not.toContain(hashToken(token));
    for (const field of ['token', 'tokenHash', 'userId']) {
      const asked = await graphql(owner.session)(`query { core { personalAccessTokens { items { id ${field} } } } }`);
      expect(asked.body.errors![0].message).toContain(`Cannot query field "${field}"`);
    }
  });
});

describe('an attacker holding a token', () => {
  const everyScope = [...resourceScopes, 'user:read'];

  it('holding a personal access token with every scope cannot create, list or revoke personal access tokens', async () => {
    const { token, id } = await createPat(owner.session, { comment: 'all of them', scopes: everyScope });
    const before = await patCount(owner.userId);
    expectNotPermitted(await graphql(token)(createMutation, { input: { comment: 'escalation', scopes: ['products_read'] } }), /signed-in user/);
    expectNotPermitted(await graphql(token)(listQuery), /signed-in user/);
    expectNotPermitted(await graphql(token)(revokeMutation, { id }), /signed-in user/);
    expect(await patCount(owner.userId)).toBe(before);
    expect((await rest(token)('GET', '/products/')).status).toBe(200);
  });

  it('holding an organization access token cannot create or list personal access tokens', async () => {
    const before = await prisma().personalAccessToken.count();
    expectNotPermitted(await graphql(owner.firstToken)(createMutation, { input: { comment: 'escalation', scopes: ['products_read'] } }), /signed-in user/);
    expectNotPermitted(await graphql(owner.firstToken)(listQuery), /signed-in user/);
    expect(await prisma().personalAccessToken.count()).toBe(before);
  });

  it('without a token is asked to authenticate', async () => {
    const response = await graphql()(createMutation, { input: { comment: 'anonymous', scopes: ['products_read'] } });
    expect(response.status).toBe(401);
    expect(response.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('core.me', () => {
  it('answers the user behind a personal access token with user:read', async () => {
    const { token } = await createPat(owner.session, { scopes: ['user:read'] });
    const response = await graphql(token)(meQuery);
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.core.me).toEqual({ id: owner.userId, email: owner.email, name: null, emailVerified: true, createdAt: expect.any(String) }); // made by bootstrap: verified
  });

  it('answers a signed-in user', async () => {
    const response = await graphql(owner.session)(meQuery);
    expect(response.body.data.core.me.id).toBe(owner.userId);
  });

  it('gets 403 naming user:read for a personal access token without it', async () => {
    const { token } = await createPat(owner.session, { scopes: ['products:read'] });
    expectNotPermitted(await graphql(token)(meQuery), /user:read/);
  });

  it('gets a clear 403 for an organization access token, which acts for no user', async () => {
    const response = await graphql(owner.firstToken)(meQuery);
    expectNotPermitted(response, /user/);
    expect(JSON.stringify(response.body)).not.toContain(owner.email);
  });
});

describe('kassa pat', () => {
  const bin = path.resolve('src/kassa.js');
  let dataDir: string;
  let user: { user_email: string; user_password: string; organization_id: string };

  function run(args: string[], options: { password?: string; stdin?: string } = {}) {
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, KASSA_PASSWORD: options.password };
    if (options.password === undefined) delete env.KASSA_PASSWORD;
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [bin, ...args], { env, stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    });
  }

  const listIds = async () => {
    const listed = await run(['pat', 'list', '--email', user.user_email, '--json'], { password: user.user_password });
    expect(listed.code).toBe(0);
    return (JSON.parse(listed.stdout) as { id: string }[]).map((t) => t.id);
  };

  /** Serves the data directory while `work` runs; the CLI cannot open it meanwhile. */
  async function serving(work: (base: string) => Promise<void>) {
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error' });
    const kassa = await startKassa(config, createLogger('error', new Writable({ write: (_c, _e, done) => done() })));
    try {
      await work(`${kassa.url}/v1`);
    } finally {
      await kassa.close();
    }
  }

  let created: { id: string; token: string; scopes: string[]; expires_at: string | null };
  let second: { id: string; token: string };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'kassa-pat-'));
    const boot = await run(['bootstrap', '--json']);
    expect(boot.code).toBe(0);
    user = JSON.parse(boot.stdout);
  }, 120_000);
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('refuses a wrong password, and creates nothing', async () => {
    const result = await run(['pat', 'create', '--email', user.user_email, '--scopes', 'products:read'], { password: 'not the password' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/wrong password.*nothing was changed/);
    const noPassword = await run(['pat', 'create', '--email', user.user_email, '--scopes', 'products:read']);
    expect(noPassword.code).toBe(1);
    expect(noPassword.stderr).toContain('KASSA_PASSWORD');
    const unknownUser = await run(['pat', 'create', '--email', 'nobody@example.com', '--scopes', 'products:read'], { password: user.user_password });
    expect(unknownUser.code).toBe(1);
    expect(await listIds()).toEqual([]);
  }, 120_000);

  it('refuses bad arguments with the usage, naming the flag', async () => {
    const cases: [string[], RegExp][] = [
      [['pat', 'create', '--email', user.user_email], /--scopes is required/],
      [['pat', 'create', '--email', user.user_email, '--scopes', 'products:read,openid'], /--scopes: .*openid/],
      [['pat', 'create', '--email', user.user_email, '--scopes', 'products:read', '--expires-in-days', '0'], /--expires-in-days must be a whole number/],
      [['pat', 'create', '--email', user.user_email, '--scopes', 'products:read', '--comment', 'x'.repeat(201)], /--comment: .*at most 200/],
      [['pat', 'revoke', '--email', user.user_email, '--id', 'not-a-uuid'], /--id must be/],
      [['pat', 'list', '--email', user.user_email, '--environment', 'staging'], /--environment must be production or sandbox/],
      [['pat', 'frobnicate'], /unknown subcommand/],
    ];
    for (const [args, message] of cases) {
      const result = await run(args, { password: user.user_password });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    expect(await listIds()).toEqual([]);
  }, 300_000);

  it('create --json prints one JSON object with the token, the password read from stdin', async () => {
    const result = await run(['pat', 'create', '--email', user.user_email, '--scopes', 'products:read,user:read', '--comment', 'deploys', '--json'], {
      stdin: `${user.user_password}\n`,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    created = JSON.parse(result.stdout);
    expect(Object.keys(created).sort()).toEqual(['expires_at', 'id', 'scopes', 'token']);
    expect(created.token).toMatch(/^service_pat_[0-9A-Za-z]{36}$/);
    expect(created.scopes).toEqual(['products:read', 'user:read']);
    expect(created.expires_at).toBeNull();
  }, 120_000);

  it('create without --json prints the token once with its expiry', async () => {
    const result = await run(['pat', 'create', '--email', user.user_email, '--scopes', 'products:read', '--expires-in-days', '30'], { password: user.user_password });
    expect(result.code, result.stderr).toBe(0);
    const token = /token:\s+(service_pat_\S+)/.exec(result.stdout)![1];
    const id = /id:\s+(\S+)/.exec(result.stdout)![1];
    const expires = new Date(/expires:\s+(\S+)/.exec(result.stdout)![1]).getTime();
    expect(Math.abs(expires - (Date.now() + 30 * 24 * 3600_000))).toBeLessThan(120_000);
    second = { id, token };
  }, 120_000);

  it('list shows both tokens, never a token itself', async () => {
    const listed = await run(['pat', 'list', '--email', user.user_email, '--json'], { password: user.user_password });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain('service_pat_');
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((t) => t.id).sort()).toEqual([created.id, second.id].sort());
    const human = await run(['pat', 'list', '--email', user.user_email], { password: user.user_password });
    expect(human.stdout).toContain('deploys');
    expect(human.stdout).not.toContain('service_pat_');
  }, 120_000);

  it('revoke refuses a wrong password and another id, then revokes the token', async () => {
    const wrong = await run(['pat', 'revoke', '--email', user.user_email, '--id', created.id], { password: 'not the password' });
    expect(wrong.code).toBe(1);
    const unknown = await run(['pat', 'revoke', '--email', user.user_email, '--id', crypto.randomUUID()], { password: user.user_password });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no live personal access token/);
    expect((await listIds()).sort()).toEqual([created.id, second.id].sort());

    const revoked = await run(['pat', 'revoke', '--email', user.user_email, '--id', created.id], { password: user.user_password });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(await listIds()).toEqual([second.id]);
  }, 300_000);

  it('the printed tokens work on the server until revoked', async () => {
    await serving(async (base) => {
      const live = await restClient(base, second.token)('GET', '/products/');
      expect(live.status).toBe(200);
      expect((await restClient(base, created.token)('GET', '/products/')).status).toBe(401);
      expect((await graphqlClient(base, second.token)(meQuery)).status).toBe(403);
    });
  }, 120_000);
});

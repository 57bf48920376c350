// Tokens are resolved once and then served from each process's principal cache. These tests pin
// down that the cache never outlives what ended a token: within one process at once, and across
// processes on one PostgreSQL database through its change announcements (only PostgreSQL lets two
// processes share a database; the embedded one is locked to a single process).
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/context.ts';
import { createLogger } from '../../src/logger.ts';
import { issueCustomerSession } from '../../src/auth/customer-sessions.ts';
import { announcePrincipalChange, listenForPrincipalChanges, PrincipalCache } from '../../src/auth/principal-cache.ts';
import { principalStillLive, resolvePrincipal } from '../../src/auth/principals.ts';
import type { Principal } from '../../src/context.ts';
import type { Db } from '../../src/db/client.ts';
import { endMembership } from '../../src/modules/organizations/service.ts';
import { issuePersonalAccessToken, revokeUserToken } from '../../src/modules/personal-access-tokens/service.ts';
import { findToken, revokeFamily } from '../../src/oauth/grants.ts';
import { startKassa, type Kassa } from '../../src/server.ts';
import { graphqlClient, restClient, usePostgres } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';
import { codeFlowTokens, registerClient, userSessionToken } from '../helpers/oauth.ts';

const t = useTestServer();

const tokenCreate = `mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { token organizationAccessToken { id } } } }`;
const tokenRevoke = 'mutation ($id: UUID!) { core { organizationAccessTokenRevoke(id: $id) { id } } }';

async function newToken(session: string, organizationId: string) {
  const { body } = await graphqlClient(t.server.base(), session)(tokenCreate, { input: { organizationId, comment: 'cached', scopes: ['products_read'] } });
  expect(body.errors).toBeUndefined();
  return { token: body.data.core.organizationAccessTokenCreate.token as string, id: body.data.core.organizationAccessTokenCreate.organizationAccessToken.id as string };
}

/** A new organization's owner, signed in. */
async function signedIn() {
  const { userEmail, userPassword, organizationId } = await t.server.bootstrap();
  return { session: await userSessionToken(t.server, 'production', userEmail, userPassword), organizationId, userEmail, userPassword };
}

describe('a cached token', () => {
  it('records its last use once a minute, though served from the cache', async () => {
    const { session, organizationId } = await signedIn();
    const { token, id } = await newToken(session, organizationId);
    const prisma = t.server.kassa.environments.production.environment.prisma;
    const start = Date.now();
    t.server.clock.now = new Date(start);
    try {
      expect((await restClient(t.server.base(), token)('GET', '/products/')).status).toBe(200);
      const first = (await prisma.organizationAccessToken.findUniqueOrThrow({ where: { id } })).lastUsedAt;
      t.server.clock.now = new Date(start + 30_000);
      await restClient(t.server.base(), token)('GET', '/products/');
      expect((await prisma.organizationAccessToken.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(first);
      t.server.clock.now = new Date(start + 61_000);
      await restClient(t.server.base(), token)('GET', '/products/');
      expect((await prisma.organizationAccessToken.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(new Date(start + 61_000));
    } finally {
      t.server.clock.now = null;
    }
  });

  it('stops working when its customer is deleted', async () => {
    const { token: organizationToken } = await t.server.bootstrap();
    const api = restClient(t.server.base(), organizationToken);
    const customer = (await api('POST', '/customers/', { email: 'cached@example.com' })).body;
    const { environment } = t.server.kassa.environments.production;
    const ctx = systemContext(environment, environment.prisma, customer.organization_id, () => new Date(), 'test');
    const { token } = await issueCustomerSession(ctx, environment.prisma, customer);
    const portal = graphqlClient(t.server.base(), token);
    expect((await portal('{ customerPortal { downloadables { pagination { totalCount } } } }')).status).toBe(200);
    expect((await api('DELETE', `/customers/${customer.id}`)).status).toBe(204);
    const after = await portal('{ customerPortal { downloadables { pagination { totalCount } } } }');
    expect(after.status).toBe(401);
    expect(after.body.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('stops working at its expiry, by the request’s clock', async () => {
    const { session, organizationId } = await signedIn();
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const { body } = await graphqlClient(t.server.base(), session)(tokenCreate, { input: { organizationId, comment: 'expiring', scopes: ['products_read'], expiresAt } });
    const token = body.data.core.organizationAccessTokenCreate.token;
    expect((await restClient(t.server.base(), token)('GET', '/products/')).status).toBe(200);
    t.server.clock.now = new Date(new Date(expiresAt).getTime() + 1);
    try {
      expect((await restClient(t.server.base(), token)('GET', '/products/')).status).toBe(401);
    } finally {
      t.server.clock.now = null;
    }
  });
});

describe('whether a principal still stands, as a stream authorized at its start asks', () => {
  /** The principal behind `token` now, and a question whether it still stands. */
  async function standing(token: string) {
    const { environment } = t.server.kassa.environments.production;
    const principal = await resolvePrincipal(environment, token, new Date());
    return () => principalStillLive(environment, principal, new Date());
  }

  /** OAuth tokens for the user of `who`, through the consent page: of the user, or of the organization. */
  async function oauthToken(who: { session: string; userEmail: string; userPassword: string; organizationId: string }, subType: 'user' | 'organization') {
    const redirectUri = 'http://127.0.0.1:9/callback';
    const client = await registerClient(t.server, 'production', who.session, { redirect_uris: [redirectUri], scope: 'products:read' });
    const user = { email: who.userEmail, password: who.userPassword };
    const tokens = await codeFlowTokens(t.server, 'production', client, { scope: 'products:read', user, organizationId: who.organizationId, redirectUri, params: { sub_type: subType } });
    expect(tokens.status).toBe(200);
    return tokens.body.access_token as string;
  }

  it('a user session: until it is signed out, or its user leaves an organization it reached', async () => {
    const signedOut = await signedIn();
    const stillSignedIn = await standing(signedOut.session);
    expect(await stillSignedIn()).toBe(true);
    expect((await graphqlClient(t.server.base(), signedOut.session)('mutation { signOut }')).body).toEqual({ data: { signOut: true } });
    expect(await stillSignedIn()).toBe(false);

    const leaving = await signedIn();
    const member = await standing(leaving.session);
    expect(await member()).toBe(true);
    const { environment } = t.server.kassa.environments.production;
    const user = await environment.prisma.user.findUniqueOrThrow({ where: { email: leaving.userEmail } });
    expect(await endMembership(environment.prisma, environment.principals, { organizationId: leaving.organizationId, userId: user.id })).toBe(true);
    expect(await member()).toBe(false);
  });

  it('a personal access token and a customer session: until revoked, or their customer deleted', async () => {
    const { userEmail, token: organizationToken } = await t.server.bootstrap();
    const { environment } = t.server.kassa.environments.production;
    const user = await environment.prisma.user.findUniqueOrThrow({ where: { email: userEmail } });
    const pat = await issuePersonalAccessToken(environment.prisma, environment.config, user.id, { comment: 'stream', scopes: ['products:read'] }, new Date());
    const personal = await standing(pat.token);
    expect(await personal()).toBe(true);
    await revokeUserToken(environment.prisma, user.id, pat.record.id, new Date());
    expect(await personal()).toBe(false);

    const organization = await standing(organizationToken);
    expect(await organization()).toBe(true);
    const api = restClient(t.server.base(), organizationToken);
    const customer = (await api('POST', '/customers/', { email: 'streaming@example.com' })).body;
    const ctx = systemContext(environment, environment.prisma, customer.organization_id, () => new Date(), 'test');
    const { token } = await issueCustomerSession(ctx, environment.prisma, customer);
    const portal = await standing(token);
    expect(await portal()).toBe(true);
    expect((await api('DELETE', `/customers/${customer.id}`)).status).toBe(204);
    expect(await portal()).toBe(false);
    expect(await organization()).toBe(true);
  });

  it('an OAuth token, of a user or of an organization: until revoked, and while its user belongs to the organization', async () => {
    const { environment } = t.server.kassa.environments.production;
    for (const subType of ['user', 'organization'] as const) {
      const who = await signedIn();
      const accessToken = await oauthToken(who, subType);
      const revoked = await standing(accessToken);
      expect(await revoked(), subType).toBe(true);
      const { record } = (await findToken(environment.prisma, accessToken))!;
      await revokeFamily(environment, record.familyId, new Date());
      expect(await revoked(), subType).toBe(false);

      const leaving = await standing(await oauthToken(who, subType));
      expect(await leaving(), subType).toBe(true);
      expect(await endMembership(environment.prisma, environment.principals, { organizationId: who.organizationId, userId: record.userId })).toBe(true);
      expect(await leaving(), subType).toBe(false);
    }
  });
});

describe('announcements of ended tokens', () => {
  const entry = { principal: { kind: 'anonymous' } as Principal, validUntil: null, lastUsedAt: null };
  const now = () => new Date();

  it('reach a cache that follows them after their commit: the token announced goes, the others stay; "*" empties it', async () => {
    const { environment, database } = t.server.kassa.environments.production;
    const cache = new PrincipalCache(10);
    cache.keep('early', entry, cache.currentGeneration);
    expect(cache.get('early', now())).toBeUndefined();
    const stop = listenForPrincipalChanges(database.notifications, cache);
    try {
      // On PostgreSQL the LISTEN takes a moment; until then nothing is kept.
      await eventually(
        async () => (cache.keep('a', entry, cache.currentGeneration), cache.get('a', now())),
        (found) => found === entry,
        'the cache to follow the announcements',
      );
      cache.keep('b', entry, cache.currentGeneration);
      await environment.prisma.$transaction((tx) => announcePrincipalChange(tx as Db, ['a']));
      await eventually(async () => cache.get('a', now()), (found) => found === undefined, 'the announced token to be forgotten');
      expect(cache.get('b', now())).toBe(entry);
      await environment.prisma.$transaction((tx) => announcePrincipalChange(tx as Db, ['*']));
      await eventually(async () => cache.get('b', now()), (found) => found === undefined, 'every token to be forgotten');
    } finally {
      stop();
    }
    cache.keep('late', entry, cache.currentGeneration);
    expect(cache.get('late', now())).toBeUndefined();
  });
});

describe.runIf(usePostgres)('two processes on one PostgreSQL database', () => {
  let other: Kassa;
  beforeAll(async () => {
    const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
    other = await startKassa(t.server.config, createLogger('info', discard));
  });
  afterAll(() => other?.close());

  const otherBase = () => `${other.url}/v1`;

  it('refuses, in the other process, a token revoked in this one', async () => {
    const { session, organizationId } = await signedIn();
    const { token, id } = await newToken(session, organizationId);
    // Both processes have resolved (and cached) the token.
    expect((await restClient(t.server.base(), token)('GET', '/products/')).status).toBe(200);
    await eventually(() => restClient(otherBase(), token)('GET', '/products/'), (r) => r.status === 200, 'the other process to accept the token');
    expect((await graphqlClient(t.server.base(), session)(tokenRevoke, { id })).body.errors).toBeUndefined();
    await eventually(() => restClient(otherBase(), token)('GET', '/products/'), (r) => r.status === 401, 'the other process to refuse the revoked token', 2000);
  });

  it('refuses, in this process, a session signed out in the other one', async () => {
    const { session } = await signedIn();
    await eventually(() => restClient(otherBase(), session)('GET', '/products/'), (r) => r.status === 200, 'the other process to accept the session');
    expect((await restClient(t.server.base(), session)('GET', '/products/')).status).toBe(200);
    expect((await graphqlClient(otherBase(), session)('mutation { signOut }')).body).toEqual({ data: { signOut: true } });
    await eventually(() => restClient(t.server.base(), session)('GET', '/products/'), (r) => r.status === 401, 'this process to refuse the signed-out session', 2000);
  });
});

// Last in the file: the background workers of production are stopped for good, so that only the
// resolution's own statements are counted.
describe('the principal cache, counted in statements', () => {
  /** Statements of a token lookup, and of writing its last use. */
  const LOOKUP = 1;
  const WRITE = 1;
  beforeAll(async () => {
    const { jobs, webhooks } = t.server.kassa.environments.production;
    await Promise.all([jobs.stop(), webhooks.stop()]);
  });

  /** The statements production's database is sent while `token` is resolved at `at` (ms). */
  async function statementsToResolve(token: string, at: number) {
    const { environment, database } = t.server.kassa.environments.production;
    const before = database.statements();
    await resolvePrincipal(environment, token, new Date(at));
    return database.statements() - before;
  }

  it('resolves a token seen before from memory, and writes its last use only once a full minute has passed', async () => {
    const { session, organizationId } = await signedIn();
    const { token } = await newToken(session, organizationId);
    const start = Date.now() + 3_600_000;
    // Looked up, and its first use written.
    expect(await statementsToResolve(token, start)).toBe(LOOKUP + WRITE);
    expect(await statementsToResolve(token, start + 1)).toBe(0);
    expect(await statementsToResolve(token, start + 60_000)).toBe(0);
    expect(await statementsToResolve(token, start + 60_001)).toBe(WRITE);
  });

  it('reads the last use from the row after a lookup, so a token looked up again is not written within the minute', async () => {
    const { session, organizationId, userEmail } = await signedIn();
    const { token: organizationToken } = await newToken(session, organizationId);
    const { environment } = t.server.kassa.environments.production;
    const user = await environment.prisma.user.findUniqueOrThrow({ where: { email: userEmail } });
    const { token: personalToken } = await issuePersonalAccessToken(environment.prisma, environment.config, user.id, { comment: 'cached', scopes: ['products:read'] }, new Date());
    const start = Date.now() + 7_200_000;
    for (const token of [organizationToken, personalToken]) {
      expect(await statementsToResolve(token, start)).toBe(LOOKUP + WRITE);
      // Forgotten, as any announced change makes the cache forget; the row says it was used 10 s ago.
      environment.principals.forget(['*']);
      expect(await statementsToResolve(token, start + 10_000)).toBe(LOOKUP);
    }
  });
});

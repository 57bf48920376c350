// Tokens are resolved once and then served from each process's principal cache. These tests pin
// down that the cache never outlives what ended a token: within one process at once, and across
// processes on one PostgreSQL database through its change announcements (only PostgreSQL lets two
// processes share a database; the embedded one is locked to a single process).
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/context.ts';
import { createLogger } from '../../src/logger.ts';
import { issueCustomerSession } from '../../src/auth/customer-sessions.ts';
import { startKassa, type Kassa } from '../../src/server.ts';
import { graphqlClient, restClient, usePostgres } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer();

const tokenCreate = `mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { token organizationAccessToken { id } } } }`;
const tokenRevoke = 'mutation ($id: UUID!) { core { organizationAccessTokenRevoke(id: $id) { id } } }';

async function newToken(session: string, organizationId: string) {
  const { body } = await graphqlClient(t.server.base(), session)(tokenCreate, { input: { organizationId, comment: 'cached', scopes: ['products_read'] } });
  expect(body.errors).toBeUndefined();
  return { token: body.data.core.organizationAccessTokenCreate.token as string, id: body.data.core.organizationAccessTokenCreate.organizationAccessToken.id as string };
}

async function signedIn() {
  const { userEmail, userPassword, organizationId } = await t.server.bootstrap();
  const { body } = await graphqlClient(t.server.base())('mutation ($e: String!, $p: String!) { signIn(email: $e, password: $p) { token } }', { e: userEmail, p: userPassword });
  return { session: body.data.signIn.token as string, organizationId };
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

// Production (/v1) and sandbox (/sandbox/v1) are two worlds: separate databases, separate tokens.
// Nothing made in one is visible, usable or even nameable in the other, over REST or GraphQL.
import { beforeAll, describe, expect, it } from 'vitest';
import { expectNoData } from '../helpers/responses.ts';
import type { EnvironmentName } from '../../src/config.ts';
import { graphqlClient, restClient, type TestServer } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer();
let production: Awaited<ReturnType<TestServer['bootstrap']>>;
let sandbox: Awaited<ReturnType<TestServer['bootstrap']>>;

beforeAll(async () => {
  production = await t.server.bootstrap('production');
  sandbox = await t.server.bootstrap('sandbox');
});

const other = (environment: EnvironmentName): EnvironmentName => (environment === 'production' ? 'sandbox' : 'production');
const credentials = (environment: EnvironmentName) => (environment === 'production' ? production : sandbox);

const productQuery = 'query ($id: UUID!) { core { product(id: $id) { id name } } }';
const productsQuery = 'query ($id: [UUID!]) { core { products(id: $id) { items { id } pagination { totalCount maxPage } } } }';

async function signIn(environment: EnvironmentName, email: string, password: string) {
  return graphqlClient(t.server.base(environment))('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', {
    email,
    password,
  });
}

function expectUnauthorizedRest(response: { status: number; body: any }) {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ error: 'Unauthorized', detail: expect.any(String) });
}

function expectUnauthenticatedGraphQL(response: { status: number; body: { data?: any; errors?: any[] } }) {
  expect(response.status).toBe(401);
  expectNoData(response.body.data);
  expect(response.body.errors).toHaveLength(1);
  expect(response.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
}

describe.each<EnvironmentName>(['production', 'sandbox'])('a %s token', (home) => {
  const away = other(home);

  it('works in its own environment', async () => {
    const api = restClient(t.server.base(home), credentials(home).token);
    const response = await api('GET', '/products/');
    expect(response.status).toBe(200);
    const graphql = await graphqlClient(t.server.base(home), credentials(home).token)(productsQuery);
    expect(graphql.body.errors).toBeUndefined();
    expect(graphql.body.data.core.products.pagination).toEqual(expect.objectContaining({ totalCount: expect.any(Number) }));
  });

  it(`is refused with 401 on the ${away} REST API`, async () => {
    const api = restClient(t.server.base(away), credentials(home).token);
    expectUnauthorizedRest(await api('GET', '/products/'));
    expectUnauthorizedRest(await api('POST', '/products/', { name: 'Smuggled', recurring_interval: null, prices: [{ amount_type: 'free' }] }));
  });

  it(`is refused with 401 on the ${away} GraphQL endpoint`, async () => {
    const graphql = graphqlClient(t.server.base(away), credentials(home).token);
    expectUnauthenticatedGraphQL(await graphql(productsQuery));
    expectUnauthenticatedGraphQL(await graphql('query { core { organizations { items { id } } } }'));
  });

  it(`signs its user in at home but not in ${away}`, async () => {
    const { userEmail, userPassword } = credentials(home);
    const atHome = await signIn(home, userEmail, userPassword);
    expect(atHome.body.errors).toBeUndefined();
    const session = atHome.body.data.signIn.token as string;

    const abroad = await signIn(away, userEmail, userPassword);
    expectNoData(abroad.body.data);
    expect(abroad.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');

    expectUnauthorizedRest(await restClient(t.server.base(away), session)('GET', '/products/'));
    expectUnauthenticatedGraphQL(await graphqlClient(t.server.base(away), session)('query { core { organizations { items { id } } } }'));
    expect((await restClient(t.server.base(home), session)('GET', '/products/')).status).toBe(200);
  });
});

describe.each<EnvironmentName>(['production', 'sandbox'])('a product created in %s', (home) => {
  const away = other(home);
  let productId: string;
  /** A product of the other environment, so that its list is known not to be empty. */
  let awayProductId: string;

  beforeAll(async () => {
    const created = await restClient(t.server.base(home), credentials(home).token)('POST', '/products/', {
      name: `Only in ${home}`,
      recurring_interval: 'month',
      prices: [{ amount_type: 'fixed', price_amount: 1200 }],
    });
    expect(created.status).toBe(201);
    productId = created.body.id;
    const ownAway = await restClient(t.server.base(away), credentials(away).token)('POST', '/products/', {
      name: `Only in ${away}`,
      recurring_interval: null,
      prices: [{ amount_type: 'free' }],
    });
    expect(ownAway.status).toBe(201);
    awayProductId = ownAway.body.id;
  });

  it('is readable at home', async () => {
    const fetched = await restClient(t.server.base(home), credentials(home).token)('GET', `/products/${productId}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.name).toBe(`Only in ${home}`);
  });

  it(`is not in the ${away} product list, even when asked for by its id`, async () => {
    const api = restClient(t.server.base(away), credentials(away).token);
    const all = await api('GET', '/products/');
    expect(all.status).toBe(200);
    expect(all.body.items.map((p: { id: string }) => p.id)).toContain(awayProductId);
    expect(all.body.items.map((p: { id: string }) => p.id)).not.toContain(productId);
    const byId = await api('GET', `/products/?id=${productId}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });

  it(`answers 404 in ${away} when fetched or updated by its id`, async () => {
    const api = restClient(t.server.base(away), credentials(away).token);
    const fetched = await api('GET', `/products/${productId}`);
    expect(fetched.status).toBe(404);
    expect(fetched.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
    const updated = await api('PATCH', `/products/${productId}`, { name: 'Renamed from afar' });
    expect(updated.status).toBe(404);
    expect(updated.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
    const still = await restClient(t.server.base(home), credentials(home).token)('GET', `/products/${productId}`);
    expect(still.body.name).toBe(`Only in ${home}`);
  });

  it(`is not found over the ${away} GraphQL API`, async () => {
    const graphql = graphqlClient(t.server.base(away), credentials(away).token);
    const single = await graphql(productQuery, { id: productId });
    expect(single.body.data?.core?.product ?? null).toBeNull();
    expect(single.body.errors?.[0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    const list = await graphql(productsQuery, { id: [productId] });
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data.core.products).toEqual({ items: [], pagination: { totalCount: 0, maxPage: 0 } });
  });

  it(`does not exist in the ${away} database at all`, async () => {
    const row = await t.server.kassa.environments[away].environment.prisma.product.findUnique({ where: { id: productId } });
    expect(row).toBeNull();
    const homeRow = await t.server.kassa.environments[home].environment.prisma.product.findUnique({ where: { id: productId } });
    expect(homeRow?.id).toBe(productId);
  });
});

describe.each<EnvironmentName>(['production', 'sandbox'])('the %s organization', (home) => {
  const away = other(home);

  it(`does not exist in ${away}`, async () => {
    const { organizationId } = credentials(home);
    expect(await t.server.kassa.environments[away].environment.prisma.organization.findUnique({ where: { id: organizationId } })).toBeNull();
    expect(await t.server.kassa.environments[home].environment.prisma.organization.findUnique({ where: { id: organizationId } })).not.toBeNull();

    const graphql = graphqlClient(t.server.base(away), credentials(away).token);
    const single = await graphql('query ($id: UUID!) { core { organization(id: $id) { id } } }', { id: organizationId });
    expect(single.body.data?.core?.organization ?? null).toBeNull();
    expect(single.body.errors?.[0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    const list = await graphql('query { core { organizations { items { id } } } }');
    expect(list.body.data.core.organizations.items.map((o: { id: string }) => o.id)).toEqual([credentials(away).organizationId]);
  });

  it(`cannot own a product created in ${away}, by token or by user session`, async () => {
    const { organizationId } = credentials(home);
    const body = { name: 'Cross-environment', recurring_interval: null, prices: [{ amount_type: 'free' }], organization_id: organizationId };

    const byToken = await restClient(t.server.base(away), credentials(away).token)('POST', '/products/', body);
    expect(byToken.status).toBe(422);
    expect(byToken.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'organization_id'] })]);

    const session = (await signIn(away, credentials(away).userEmail, credentials(away).userPassword)).body.data.signIn.token;
    const bySession = await restClient(t.server.base(away), session)('POST', '/products/', body);
    expect(bySession.status).toBe(422);
    expect(bySession.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'organization_id'] })]);

    const products = await t.server.kassa.environments[away].environment.prisma.product.count({ where: { name: 'Cross-environment' } });
    expect(products).toBe(0);
  });

  it(`cannot be given access tokens by a ${away} user`, async () => {
    const { organizationId } = credentials(home);
    const session = (await signIn(away, credentials(away).userEmail, credentials(away).userPassword)).body.data.signIn.token;
    const response = await graphqlClient(t.server.base(away), session)(
      'mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { token } } }',
      { input: { organizationId, comment: 'cross-environment', scopes: ['products_read'] } },
    );
    expect(response.body.data?.core?.organizationAccessTokenCreate ?? null).toBeNull();
    expect(response.body.errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(response.body.errors?.[0].message).toMatch(/organization/i);
    expect(await t.server.kassa.environments[away].environment.prisma.organizationAccessToken.count({ where: { organizationId } })).toBe(0);
  });
});

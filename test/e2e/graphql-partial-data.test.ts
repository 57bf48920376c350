// Partial data over GraphQL: a failure is null at its own path with an error there, and what ran
// beside it keeps its data (and, for a mutation, its committed result). The HTTP status is 200
// whenever the answer holds data; an answer that holds nothing keeps its error's status.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectStatus } from '../helpers/responses.ts';

const t = useTestServer({ organizations: { org: 'production' } });
let productId: string;
beforeAll(async () => {
  const product = expectStatus(await t.org.api('POST', '/products/', { name: 'Kept', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] }), 201);
  productId = product.id;
});

const unknownId = '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d';

describe('a query with one failing lookup', () => {
  it('answers 200 with the failure null at its path and the siblings whole', async () => {
    const response = await t.org.gql(`query ($missing: UUID!, $found: UUID!) {
      core { missing: product(id: $missing) { id } found: product(id: $found) { id name } products { items { id } pagination { totalCount } } }
    }`, { missing: unknownId, found: productId });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      core: { missing: null, found: { id: productId, name: 'Kept' }, products: { items: [{ id: productId }], pagination: { totalCount: 1 } } },
    });
    expect(response.body.errors).toEqual([
      expect.objectContaining({ path: ['core', 'missing'], extensions: expect.objectContaining({ code: 'RESOURCE_NOT_FOUND' }) }),
    ]);
  });

  it('keeps the lookup when a sibling list refuses its arguments', async () => {
    const response = await t.org.gql(`query ($id: UUID!) { core { product(id: $id) { id } products(limit: 1000) { items { id } } } }`, { id: productId });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ core: { product: { id: productId }, products: null } });
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors![0]).toMatchObject({ path: ['core', 'products'], extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('keeps the status of the error when nothing else was asked: 404 for a lone unknown id', async () => {
    const response = await t.org.gql(`query ($id: UUID!) { core { product(id: $id) { id } } }`, { id: unknownId });
    expect(response.status).toBe(404);
    expect(response.body.data).toEqual({ core: { product: null } });
    expect(response.body.errors![0].extensions.code).toBe('RESOURCE_NOT_FOUND');
  });
});

describe('under application/graphql-response+json', () => {
  it('answers 200 whenever data is not null, as GraphQL over HTTP requires, even when it holds nothing', async () => {
    const ask = (token: string | undefined, query: string) =>
      fetch(`${t.server.base()}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query }),
      });
    const lone = await ask(t.org.token, `{ core { product(id: "${unknownId}") { id } } }`);
    expect(lone.status).toBe(200);
    expect(lone.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(await lone.json()).toMatchObject({ data: { core: { product: null } }, errors: [{ extensions: { code: 'RESOURCE_NOT_FOUND' } }] });
    const anonymous = await ask(undefined, '{ core { products { items { id } } } }');
    expect(anonymous.status).toBe(200);
    expect(await anonymous.json()).toMatchObject({ data: { core: null }, errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
  });
});

describe('a document of two mutations, the second failing', () => {
  it("keeps the first one's committed result: 200, the product created and shown, the failure null", async () => {
    const response = await t.org.gql(`mutation ($good: ProductCreateInput!, $bad: ProductCreateInput!) {
      core { created: productCreate(input: $good) { id name } refused: productCreate(input: $bad) { id } }
    }`, {
      good: { name: 'Committed', prices: [{ amountType: 'fixed', priceAmount: 500, priceCurrency: 'usd' }] },
      bad: { name: '', prices: [{ amountType: 'fixed', priceAmount: 500, priceCurrency: 'usd' }] },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.core.created).toEqual({ id: expect.any(String), name: 'Committed' });
    expect(response.body.data.core.refused).toBeNull();
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors![0]).toMatchObject({ path: ['core', 'refused'], extensions: { code: 'BAD_USER_INPUT' } });
    const stored = expectStatus(await t.org.api('GET', `/products/${response.body.data.core.created.id}`), 200);
    expect(stored.name).toBe('Committed');
  });

  it('answers 422 when the only mutation is refused, and creates nothing', async () => {
    const before = expectStatus(await t.org.api('GET', '/products/?limit=100'), 200).pagination.total_count;
    const response = await t.org.gql(`mutation ($bad: ProductCreateInput!) { core { productCreate(input: $bad) { id } } }`, {
      bad: { name: '', prices: [{ amountType: 'fixed', priceAmount: 500, priceCurrency: 'usd' }] },
    });
    expect(response.status).toBe(422);
    expect(response.body.data).toEqual({ core: { productCreate: null } });
    expect(expectStatus(await t.org.api('GET', '/products/?limit=100'), 200).pagination.total_count).toBe(before);
  });
});

describe('mutations in one document', () => {
  it('run in the order given, each after the one before has finished: the second of two equal creations is the one refused', async () => {
    for (let i = 0; i < 5; i++) {
      const email = `twice-${i}@example.com`;
      const response = await t.org.gql(`mutation ($email: String!) {
        core { first: customerCreate(input: { email: $email }) { email } second: customerCreate(input: { email: $email }) { email } }
      }`, { email });
      expect(response.status).toBe(200);
      expect(response.body.data.core).toEqual({ first: { email }, second: null });
      expect(response.body.errors).toEqual([expect.objectContaining({ path: ['core', 'second'] })]);
    }
  });
});

describe('a surface the token may not reach', () => {
  it('answers 401 with core null and a challenge when there is no token', async () => {
    const response = await fetch(`${t.server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ core { products { items { id } } } }' }) });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    const body = await response.json();
    expect(body.data).toEqual({ core: null });
    expect(body.errors).toEqual([expect.objectContaining({ path: ['core'], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })]);
  });

  it("gives a customer's token its portal and null for core, with NOT_PERMITTED at core", async () => {
    const customer = expectStatus(await t.org.api('POST', '/customers/', { email: 'partial@example.com' }), 201);
    const session = expectStatus(await t.org.api('POST', '/customer-sessions/', { customer_id: customer.id }), 201);
    const response = await graphqlClient(t.server.base(), session.token)(`{ core { products { items { id } } } customerPortal { customer { email } } }`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ core: null, customerPortal: { customer: { email: 'partial@example.com' } } });
    expect(response.body.errors).toEqual([expect.objectContaining({ path: ['core'], extensions: expect.objectContaining({ code: 'NOT_PERMITTED' }) })]);
  });
});

describe('the schema', () => {
  it('makes every field of the roots and of both surfaces nullable, and nothing else changes nullability', async () => {
    const response = await t.org.gql(`{ __schema { types { name fields { name type { kind } } } } }`);
    const types: { name: string; fields: { name: string; type: { kind: string } }[] | null }[] = response.body.data.__schema.types;
    const boundaries = ['Query', 'Mutation', 'CoreQuery', 'CoreMutation', 'CustomerPortalQuery', 'CustomerPortalMutation'];
    const rootFields = types.filter((t) => boundaries.includes(t.name)).flatMap((t) => t.fields!.map((f) => ({ at: `${t.name}.${f.name}`, kind: f.type.kind })));
    expect(rootFields.length).toBeGreaterThan(90);
    expect(rootFields.filter((f) => f.kind === 'NON_NULL')).toEqual([]);
    const product = types.find((t) => t.name === 'Product')!;
    expect(product.fields!.find((f) => f.name === 'id')!.type.kind).toBe('NON_NULL');
  });
});

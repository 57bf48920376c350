// Products through GraphQL (POST /v1/graphql, under `core`): the same flows as over REST, the
// error codes GraphQL clients branch on, and the REST surface reading what GraphQL wrote.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient, type Gql } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { expectGraphQLError } from '../helpers/responses.ts';
import { datetime, nullableDatetime, uuid } from '../helpers/matchers.ts';

const t = useTestServer();

const unknownId = '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d';

const PRODUCT = /* GraphQL */ `
  fragment P on Product {
    id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId metadata
    prices {
      __typename id createdAt modifiedAt amountType isArchived productId type recurringInterval
      ... on ProductPriceFixed { priceCurrency priceAmount }
      ... on ProductPriceCustom { priceCurrency minimumAmount maximumAmount presetAmount }
    }
  }`;

const CREATE = `mutation ($input: ProductCreateInput!) { core { productCreate(input: $input) { ...P } } } ${PRODUCT}`;
const UPDATE = `mutation ($id: UUID!, $input: ProductUpdateInput!) { core { productUpdate(id: $id, input: $input) { ...P } } } ${PRODUCT}`;
const GET = `query ($id: UUID!) { core { product(id: $id) { ...P } } } ${PRODUCT}`;
const LIST = `query ($page: Int, $limit: Int, $id: [UUID!], $query: String, $isArchived: Boolean, $isRecurring: Boolean,
    $metadata: JSONObject, $sorting: [ProductSortOrder!]) {
  core { products(page: $page, limit: $limit, id: $id, query: $query, isArchived: $isArchived, isRecurring: $isRecurring,
      metadata: $metadata, sorting: $sorting) { items { ...P } pagination { totalCount maxPage } } }
} ${PRODUCT}`;

async function create(org: Org, input: Record<string, unknown>) {
  const response = await org.gql(CREATE, { input });
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  return response.body.data.core.productCreate;
}

async function list(org: Org, variables: Record<string, unknown> = {}) {
  const response = await org.gql(LIST, variables);
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  return response.body.data.core.products;
}

const names = (page: { items: { name: string }[] }) => page.items.map((p) => p.name);

describe('creating products', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server);
  });

  const priceCommon = (productId: string) => ({ id: uuid, createdAt: datetime, modifiedAt: nullableDatetime, isArchived: false, productId });

  it('creates a one-time product with a fixed price', async () => {
    const product = await create(org, {
      name: 'Lifetime Licence',
      description: 'Pay once',
      prices: [{ amountType: 'fixed', priceAmount: 4900, priceCurrency: 'usd' }],
      metadata: { sku: 'LT-1', seats: 3, beta: true },
    });
    expect(product).toEqual({
      id: uuid,
      createdAt: datetime,
      modifiedAt: nullableDatetime,
      name: 'Lifetime Licence',
      description: 'Pay once',
      recurringInterval: null,
      isRecurring: false,
      isArchived: false,
      organizationId: org.organizationId,
      metadata: { sku: 'LT-1', seats: 3, beta: true },
      prices: [{ __typename: 'ProductPriceFixed', ...priceCommon(product.id), amountType: 'fixed', type: 'one_time', recurringInterval: null, priceCurrency: 'usd', priceAmount: 4900 }],
    });
  });

  it('creates monthly and yearly subscriptions with recurring prices', async () => {
    for (const interval of ['month', 'year']) {
      const product = await create(org, { name: `Pro ${interval}`, recurringInterval: interval, prices: [{ amountType: 'fixed', priceAmount: 1500 }] });
      expect(product).toMatchObject({ recurringInterval: interval, isRecurring: true });
      expect(product.prices).toEqual([
        { __typename: 'ProductPriceFixed', ...priceCommon(product.id), amountType: 'fixed', type: 'recurring', recurringInterval: interval, priceCurrency: 'usd', priceAmount: 1500 },
      ]);
    }
  });

  it('creates a pay-what-you-want product with its bounds and preset', async () => {
    const product = await create(org, { name: 'Tip Jar', prices: [{ amountType: 'custom', minimumAmount: 100, maximumAmount: 10000, presetAmount: 2500 }] });
    expect(product.prices).toEqual([
      {
        __typename: 'ProductPriceCustom',
        ...priceCommon(product.id),
        amountType: 'custom',
        type: 'one_time',
        recurringInterval: null,
        priceCurrency: 'usd',
        minimumAmount: 100,
        maximumAmount: 10000,
        presetAmount: 2500,
      },
    ]);
  });

  it('creates a free product', async () => {
    const product = await create(org, { name: 'Free Sample', prices: [{ amountType: 'free' }] });
    expect(product.prices).toEqual([{ __typename: 'ProductPriceFree', ...priceCommon(product.id), amountType: 'free', type: 'one_time', recurringInterval: null }]);
  });

  it('trims the name', async () => {
    const product = await create(org, { name: '  Padded Name  ', prices: [{ amountType: 'free' }] });
    expect(product.name).toBe('Padded Name');
  });
});

describe('reading products', () => {
  let org: Org;
  let other: Org;
  let product: any;
  let foreign: any;
  beforeAll(async () => {
    [org, other] = [await newOrganization(t.server), await newOrganization(t.server)];
    product = await create(org, { name: 'Readable', description: 'text', prices: [{ amountType: 'fixed', priceAmount: 1234 }], metadata: { k: 'v' } });
    foreign = await create(other, { name: 'Foreign Thing', prices: [{ amountType: 'free' }] });
  });

  it('gets a product by id with the values it was created with', async () => {
    const response = await org.gql(GET, { id: product.id });
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.core.product).toEqual(product);
  });

  it('answers an unknown id with RESOURCE_NOT_FOUND', async () => {
    const response = await org.gql(GET, { id: unknownId });
    expectGraphQLError(response, 'RESOURCE_NOT_FOUND');
    expect(response.body.errors![0].path).toEqual(['core', 'product']);
    expect(response.body.data).toEqual({ core: { product: null } });
  });

  it("answers another organization's product id with RESOURCE_NOT_FOUND and never lists it", async () => {
    const unknown = expectGraphQLError(await org.gql(GET, { id: unknownId }), 'RESOURCE_NOT_FOUND');
    const hidden = expectGraphQLError(await org.gql(GET, { id: foreign.id }), 'RESOURCE_NOT_FOUND');
    expect(hidden.message).toBe(unknown.message);
    const page = await list(org, { limit: 100 });
    expect(page.items.map((p: { id: string }) => p.id)).toEqual([product.id]);
    expect((await list(org, { id: [foreign.id] })).pagination).toEqual({ totalCount: 0, maxPage: 0 });
  });

  it('reads a GraphQL-created product over REST with the same values, in snake_case', async () => {
    const rest = await restClient(t.server.base(), org.token)('GET', `/products/${product.id}`);
    expect(rest.status).toBe(200);
    const [price] = product.prices;
    expect(rest.body).toEqual({
      id: product.id,
      created_at: product.createdAt,
      modified_at: product.modifiedAt,
      name: 'Readable',
      description: 'text',
      recurring_interval: null,
      is_recurring: false,
      is_archived: false,
      organization_id: org.organizationId,
      metadata: { k: 'v' },
      prices: [
        {
          id: price.id,
          created_at: price.createdAt,
          modified_at: price.modifiedAt,
          amount_type: 'fixed',
          is_archived: false,
          product_id: product.id,
          type: 'one_time',
          recurring_interval: null,
          price_currency: 'usd',
          price_amount: 1234,
        },
      ],
      benefits: [],
      medias: [],
      attached_custom_fields: [],
    });
  });

  it('reads a REST-created product over GraphQL with the same values', async () => {
    const created = await restClient(t.server.base(), org.token)('POST', '/products/', {
      name: 'Made Over REST',
      recurring_interval: 'year',
      prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, preset_amount: 800 }],
      metadata: { source: 'rest' },
    });
    expect(created.status).toBe(201);
    const response = await org.gql(GET, { id: created.body.id });
    expect(response.body.errors).toBeUndefined();
    const [price] = created.body.prices;
    expect(response.body.data.core.product).toEqual({
      id: created.body.id,
      createdAt: created.body.created_at,
      modifiedAt: created.body.modified_at,
      name: 'Made Over REST',
      description: null,
      recurringInterval: 'year',
      isRecurring: true,
      isArchived: false,
      organizationId: org.organizationId,
      metadata: { source: 'rest' },
      prices: [
        {
          __typename: 'ProductPriceCustom',
          id: price.id,
          createdAt: price.created_at,
          modifiedAt: price.modified_at,
          amountType: 'custom',
          isArchived: false,
          productId: created.body.id,
          type: 'recurring',
          recurringInterval: 'year',
          priceCurrency: 'usd',
          minimumAmount: 500,
          maximumAmount: null,
          presetAmount: 800,
        },
      ],
    });
  });

  it('resolves a nested selection of prices and the owning organization', async () => {
    const response = await org.gql(`{ core { products(sorting: [name_asc]) { items { name prices { ... on ProductPriceFixed { priceAmount } } organization { name } } } } }`);
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.core.products.items).toEqual([
      { name: 'Made Over REST', prices: [{}], organization: { name: 'My Organization' } },
      { name: 'Readable', prices: [{ priceAmount: 1234 }], organization: { name: 'My Organization' } },
    ]);
  });
});

describe('listing products', () => {
  let org: Org;
  const ids: Record<string, string> = {};
  const catalogue = [
    { name: 'Alpha Plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1500 }], metadata: { tier: 'pro' } },
    { name: 'Bravo Pack', prices: [{ amountType: 'fixed', priceAmount: 700 }], metadata: { tier: 'basic' } },
    { name: 'Charlie Tip', prices: [{ amountType: 'custom', minimumAmount: 300 }] },
    { name: 'Delta Gift', prices: [{ amountType: 'free' }], metadata: { promo: true } },
    { name: 'Echo Annual', recurringInterval: 'year', prices: [{ amountType: 'fixed', priceAmount: 9900 }], metadata: { tier: 'pro' } },
  ];
  beforeAll(async () => {
    org = await newOrganization(t.server);
    for (const input of catalogue) ids[input.name] = (await create(org, input)).id;
    const archived = await org.gql(UPDATE, { id: ids['Delta Gift'], input: { isArchived: true } });
    expect(archived.body.errors).toBeUndefined();
  });

  it('pages with page and limit, newest first by default', async () => {
    const pages = [await list(org, { limit: 2, page: 1 }), await list(org, { limit: 2, page: 2 }), await list(org, { limit: 2, page: 3 })];
    expect(pages.map(names)).toEqual([['Echo Annual', 'Delta Gift'], ['Charlie Tip', 'Bravo Pack'], ['Alpha Plan']]);
    for (const page of pages) expect(page.pagination).toEqual({ totalCount: 5, maxPage: 3 });
    expect(await list(org, { limit: 2, page: 4 })).toEqual({ items: [], pagination: { totalCount: 5, maxPage: 3 } });
  });

  it('defaults to 10 items of page 1', async () => {
    const page = await list(org);
    expect(names(page)).toEqual(['Echo Annual', 'Delta Gift', 'Charlie Tip', 'Bravo Pack', 'Alpha Plan']);
    expect(page.pagination).toEqual({ totalCount: 5, maxPage: 1 });
  });

  it("takes a variable's default when the variable is left out, for non-null types as for nullable ones", async () => {
    const query = `query ($limit: Int! = 2, $page: Int = 2, $sorting: [ProductSortOrder!]! = [name_asc]) {
      core { products(limit: $limit, page: $page, sorting: $sorting) { items { name } pagination { totalCount maxPage } } } }`;
    const defaults = await org.gql(query);
    expect(defaults.body.errors).toBeUndefined();
    expect(defaults.body.data.core.products).toEqual({ items: [{ name: 'Charlie Tip' }, { name: 'Delta Gift' }], pagination: { totalCount: 5, maxPage: 3 } });
    const given = await org.gql(query, { limit: 1, page: 1 });
    expect(given.body.data.core.products.items).toEqual([{ name: 'Alpha Plan' }]);
    const nulled = await org.gql(query, { limit: null });
    expect(nulled.body.errors?.[0].message).toContain('$limit');
  });

  it('filters by isArchived, isRecurring, query, id and metadata', async () => {
    const byName = { sorting: ['name_asc'] };
    expect(names(await list(org, { ...byName, isArchived: true }))).toEqual(['Delta Gift']);
    expect(names(await list(org, { ...byName, isArchived: false }))).toEqual(['Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Echo Annual']);
    expect(names(await list(org, { ...byName, isRecurring: true }))).toEqual(['Alpha Plan', 'Echo Annual']);
    expect(names(await list(org, { ...byName, isRecurring: false }))).toEqual(['Bravo Pack', 'Charlie Tip', 'Delta Gift']);
    expect(names(await list(org, { ...byName, query: 'PACK' }))).toEqual(['Bravo Pack']);
    expect(names(await list(org, { ...byName, id: [ids['Alpha Plan'], ids['Delta Gift']] }))).toEqual(['Alpha Plan', 'Delta Gift']);
    expect(names(await list(org, { ...byName, metadata: { tier: 'pro' } }))).toEqual(['Alpha Plan', 'Echo Annual']);
    expect(names(await list(org, { ...byName, metadata: { tier: ['pro', 'basic'] } }))).toEqual(['Alpha Plan', 'Bravo Pack', 'Echo Annual']);
    expect(names(await list(org, { ...byName, metadata: { promo: true } }))).toEqual(['Delta Gift']);
    const combined = await list(org, { isRecurring: true, query: 'annual' });
    expect(names(combined)).toEqual(['Echo Annual']);
    expect(combined.pagination).toEqual({ totalCount: 1, maxPage: 1 });
  });

  const orders: [string, string[]][] = [
    ['name_asc', ['Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Delta Gift', 'Echo Annual']],
    ['name_desc', ['Echo Annual', 'Delta Gift', 'Charlie Tip', 'Bravo Pack', 'Alpha Plan']],
    ['created_at_asc', ['Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Delta Gift', 'Echo Annual']],
    ['price_amount_asc', ['Delta Gift', 'Charlie Tip', 'Bravo Pack', 'Alpha Plan', 'Echo Annual']],
    ['price_amount_desc', ['Echo Annual', 'Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Delta Gift']],
  ];
  it.each(orders)('sorts by %s', async (sorting, expected) => {
    expect(names(await list(org, { sorting: [sorting] }))).toEqual(expected);
  });

  it('refuses limit 0 and a limit above 100 with BAD_USER_INPUT naming limit', async () => {
    for (const limit of [0, 101]) {
      const error = expectGraphQLError(await org.gql(LIST, { limit }), 'BAD_USER_INPUT');
      expect(error.extensions.issues).toEqual([{ loc: ['limit'], msg: expect.any(String), type: expect.any(String) }]);
    }
  });

  it('refuses page 0 with BAD_USER_INPUT naming page', async () => {
    const error = expectGraphQLError(await org.gql(LIST, { page: 0 }), 'BAD_USER_INPUT');
    expect(error.extensions.issues).toEqual([{ loc: ['page'], msg: expect.any(String), type: expect.any(String) }]);
  });

  it('refuses a sort order the enum does not have, and the REST spelling, before anything runs', async () => {
    for (const sorting of ['bogus', '-name', 'name']) {
      const response = await org.gql(LIST, { sorting: [sorting] });
      expect(response.body.data).toBeUndefined();
      expectGraphQLError(response, 'BAD_USER_INPUT');
      expect(response.body.errors?.[0].message).toContain('ProductSortOrder');
    }
  });

  it('refuses an unknown sort order written in the document as a validation error', async () => {
    const response = await org.gql(`{ core { products(sorting: [name_sideways]) { items { name } } } }`);
    expect(response.body.data).toBeUndefined();
    expectGraphQLError(response, 'GRAPHQL_VALIDATION_FAILED');
  });

  it('sorts by several orders, the first deciding and the next breaking ties', async () => {
    const byType = await list(org, { sorting: ['price_amount_type_asc', 'name_desc'] });
    expect(names(byType)).toEqual(['Echo Annual', 'Bravo Pack', 'Alpha Plan', 'Charlie Tip', 'Delta Gift']);
  });
});

describe('updating products', () => {
  let org: Org;
  let other: Org;
  beforeAll(async () => {
    [org, other] = [await newOrganization(t.server), await newOrganization(t.server)];
  });

  it('renames, describes and clears the description', async () => {
    const product = await create(org, { name: 'Before', prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const renamed = await org.gql(UPDATE, { id: product.id, input: { name: 'After', description: 'Words' } });
    expect(renamed.body.errors).toBeUndefined();
    expect(renamed.body.data.core.productUpdate).toEqual({ ...product, name: 'After', description: 'Words', modifiedAt: nullableDatetime });
    const cleared = await org.gql(UPDATE, { id: product.id, input: { description: null } });
    expect(cleared.body.data.core.productUpdate.description).toBeNull();
    expect((await org.gql(GET, { id: product.id })).body.data.core.product).toMatchObject({ name: 'After', description: null });
  });

  it('archives and unarchives', async () => {
    const product = await create(org, { name: 'Seasonal', prices: [{ amountType: 'free' }] });
    const archived = await org.gql(UPDATE, { id: product.id, input: { isArchived: true } });
    expect(archived.body.data.core.productUpdate.isArchived).toBe(true);
    expect(names(await list(org, { isArchived: true }))).toEqual(['Seasonal']);
    const restored = await org.gql(UPDATE, { id: product.id, input: { isArchived: false } });
    expect(restored.body.data.core.productUpdate.isArchived).toBe(false);
    expect(names(await list(org, { isArchived: true }))).toEqual([]);
  });

  it('replaces metadata as a whole', async () => {
    const product = await create(org, { name: 'Tagged', prices: [{ amountType: 'free' }], metadata: { a: 1, b: 'x' } });
    const response = await org.gql(UPDATE, { id: product.id, input: { metadata: { c: false } } });
    expect(response.body.data.core.productUpdate.metadata).toEqual({ c: false });
  });

  it('replaces the price with a new one and keeps a price by its id', async () => {
    const product = await create(org, { name: 'Repriced', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const replaced = await org.gql(UPDATE, { id: product.id, input: { prices: [{ amountType: 'fixed', priceAmount: 2500 }] } });
    expect(replaced.body.errors).toBeUndefined();
    const [price] = replaced.body.data.core.productUpdate.prices;
    expect(replaced.body.data.core.productUpdate.prices).toHaveLength(1);
    expect(price).toMatchObject({ amountType: 'fixed', priceAmount: 2500, type: 'recurring', recurringInterval: 'month', isArchived: false });
    expect(price.id).not.toBe(product.prices[0].id);

    const kept = await org.gql(UPDATE, { id: product.id, input: { name: 'Repriced Again', prices: [{ id: price.id }] } });
    expect(kept.body.errors).toBeUndefined();
    expect(kept.body.data.core.productUpdate.prices).toEqual([{ ...price, modifiedAt: nullableDatetime }]);

    const archived = expectGraphQLError(await org.gql(UPDATE, { id: product.id, input: { prices: [{ id: product.prices[0].id }] } }), 'BAD_USER_INPUT');
    expect(archived.extensions.issues).toEqual([{ loc: ['input', 'prices', 0, 'id'], msg: expect.any(String), type: expect.any(String) }]);
  });

  it('refuses a change of recurring interval with BAD_USER_INPUT and changes nothing', async () => {
    const product = await create(org, { name: 'Monthly Only', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const error = expectGraphQLError(await org.gql(UPDATE, { id: product.id, input: { recurringInterval: 'year', name: 'Nope' } }), 'BAD_USER_INPUT');
    expect(error.extensions.issues).toEqual([{ loc: ['input', 'recurringInterval'], msg: expect.any(String), type: expect.any(String) }]);
    expect((await org.gql(GET, { id: product.id })).body.data.core.product).toEqual(product);
  });

  it("answers an update of another organization's product with RESOURCE_NOT_FOUND and changes nothing", async () => {
    const foreign = await create(other, { name: 'Theirs', prices: [{ amountType: 'free' }] });
    expectGraphQLError(await org.gql(UPDATE, { id: foreign.id, input: { name: 'Mine Now' } }), 'RESOURCE_NOT_FOUND');
    expect((await other.gql(GET, { id: foreign.id })).body.data.core.product).toEqual(foreign);
  });
});

describe('GraphQL errors', () => {
  let org: Org;
  let readOnly: Gql;
  beforeAll(async () => {
    org = await newOrganization(t.server);
    readOnly = graphqlClient(t.server.base(), await tokenWithScopes(t.server, org, ['products:read'], 'read only'));
  });

  it('answers a request without a token with UNAUTHENTICATED', async () => {
    const response = await graphqlClient(t.server.base())(LIST);
    expectGraphQLError(response, 'UNAUTHENTICATED');
    expect(response.body.data).toEqual({ core: null });
  });

  it('lets a products:read token list products', async () => {
    await create(org, { name: 'Visible', prices: [{ amountType: 'free' }] });
    const response = await readOnly(LIST);
    expect(response.body.errors).toBeUndefined();
    expect(names(response.body.data.core.products)).toEqual(['Visible']);
  });

  it('refuses productCreate with a products:read token as NOT_PERMITTED naming products:write, creating nothing', async () => {
    const before = (await list(org)).pagination.totalCount;
    const error = expectGraphQLError(await readOnly(CREATE, { input: { name: 'Sneaky', prices: [{ amountType: 'free' }] } }), 'NOT_PERMITTED');
    expect(error.message).toContain('products:write');
    expect(error.path).toEqual(['core', 'productCreate']);
    expect((await list(org)).pagination.totalCount).toBe(before);
  });

  it('refuses a too-short name with BAD_USER_INPUT listing the issue', async () => {
    const before = (await list(org)).pagination.totalCount;
    const error = expectGraphQLError(await org.gql(CREATE, { input: { name: 'ab', prices: [{ amountType: 'free' }] } }), 'BAD_USER_INPUT');
    expect(error.extensions.issues).toEqual([{ loc: ['input', 'name'], msg: expect.any(String), type: 'string_too_short' }]);
    expect((await list(org)).pagination.totalCount).toBe(before);
  });

  it('refuses a name containing a NUL character with BAD_USER_INPUT, not an internal error', async () => {
    const before = (await list(org)).pagination.totalCount;
    const error = expectGraphQLError(await org.gql(CREATE, { input: { name: 'Bad\u0000Name', prices: [{ amountType: 'free' }] } }), 'BAD_USER_INPUT');
    expect(error.extensions.issues).toEqual([{ loc: ['input', 'name'], msg: expect.any(String), type: expect.any(String) }]);
    expect((await list(org)).pagination.totalCount).toBe(before);
  });

  it('offers no day or week interval: the enum refuses them before anything runs', async () => {
    for (const recurringInterval of ['day', 'week']) {
      const before = (await list(org)).pagination.totalCount;
      const response = await org.gql(CREATE, { input: { name: 'Daily', recurringInterval, prices: [{ amountType: 'free' }] } });
      expect(response.body.data).toBeUndefined();
      expect(expectGraphQLError(response, 'BAD_USER_INPUT').message).toContain(`Value "${recurringInterval}" does not exist in "RecurringInterval" enum`);
      expect((await list(org)).pagination.totalCount).toBe(before);
    }
  });

  it('lists every problem of one input in extensions.issues', async () => {
    const error = expectGraphQLError(
      await org.gql(CREATE, { input: { name: 'ab', prices: [{ amountType: 'fixed', priceAmount: 10, priceCurrency: 'xyz' }] } }),
      'BAD_USER_INPUT',
    );
    const locs = error.extensions.issues.map((i: { loc: unknown[] }) => JSON.stringify(i.loc));
    expect(locs).toEqual(
      expect.arrayContaining([
        JSON.stringify(['input', 'name']),
        JSON.stringify(['input', 'prices', 0, 'priceAmount']),
        JSON.stringify(['input', 'prices', 0, 'priceCurrency']),
      ]),
    );
  });
});

describe('requests refused before any field runs', () => {
  it('answers a variable its type refuses with BAD_USER_INPUT', async () => {
    const org = await newOrganization(t.server);
    const response = await org.gql(CREATE, { input: { name: 'Starter', prices: [{ amountType: 'fixed', priceAmount: 2 ** 31 }], unknownField: 1 } });
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors!.length).toBeGreaterThan(0);
    for (const error of response.body.errors!) {
      expect(error.extensions.code).toBe('BAD_USER_INPUT');
      expect(error.extensions.issues).toEqual([{ loc: [expect.any(String)], msg: error.message, type: 'value_error' }]);
    }
    const missing = await org.gql(GET, {});
    expectGraphQLError(missing, 'BAD_USER_INPUT');
  });

  it('answers a body of a media type GraphQL is not read from with 415 and an error body', async () => {
    const org = await newOrganization(t.server);
    const response = await fetch(`${t.server.base()}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.token}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ core { products { items { id } } } }' }),
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ errors: [{ message: expect.stringContaining('application/json'), extensions: { code: 'BAD_REQUEST' } }] });
  });
});

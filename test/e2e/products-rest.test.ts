// Products over REST (/v1/products/), in the snake_case wire format of the @polar-sh/sdk client.
// One server for the file; each group of tests works in an organization of its own (bootstrapped
// through the services), so counts and orders are exact.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Api, RestResponse } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, restClientCheckingRequestId, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { expectErrorBody } from '../helpers/responses.ts';
import { datetime, nullableDatetime, uuid } from '../helpers/matchers.ts';

const t = useTestServer();

const unknownId = '6f1c2b9e-4a57-4c1f-9a0e-3d2b7c8e5f10';

const oneTimeFixed = (amount = 900) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

async function create(org: Org, body: Record<string, unknown>) {
  const response = await org.api('POST', '/products/', { recurring_interval: null, ...body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

async function totalCount(org: Org): Promise<number> {
  const response = await org.api('GET', '/products/?limit=100');
  expect(response.status).toBe(200);
  return response.body.pagination.total_count;
}

const names = (response: RestResponse) => response.body.items.map((item: { name: string }) => item.name);

/** A 422 in the documented shape, with an issue whose loc begins with `loc`. */
function expectValidationError(response: RestResponse, loc: (string | number)[], type?: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(Object.keys(response.body)).toEqual(['detail']);
  expect(response.body.detail.length).toBeGreaterThan(0);
  for (const issue of response.body.detail) {
    expect(issue).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
    expect(issue.loc.length).toBeGreaterThan(0);
  }
  const issue = response.body.detail.find((i: { loc: unknown[] }) => JSON.stringify(i.loc.slice(0, loc.length)) === JSON.stringify(loc));
  expect(issue, `no issue at ${JSON.stringify(loc)} in ${JSON.stringify(response.body.detail)}`).toBeDefined();
  if (type) expect(issue.type).toBe(type);
  return issue;
}

describe('creating products', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
  });

  const priceCommon = (productId: string) => ({
    id: uuid,
    created_at: datetime,
    modified_at: nullableDatetime,
    is_archived: false,
    product_id: productId,
  });
  const productCommon = () => ({
    id: uuid,
    created_at: datetime,
    modified_at: nullableDatetime,
    is_archived: false,
    organization_id: org.organizationId,
    benefits: [],
    medias: [],
    attached_custom_fields: [],
  });

  it('creates a one-time product with a fixed price and answers 201 with the full wire body', async () => {
    const response = await org.api('POST', '/products/', {
      name: 'Lifetime Licence',
      description: 'Pay once, use forever',
      recurring_interval: null,
      prices: [{ amount_type: 'fixed', price_amount: 4900, price_currency: 'usd' }],
      metadata: { sku: 'LT-1', seats: 3, ratio: 0.5, beta: true },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const id = response.body.id;
    expect(response.body).toEqual({
      ...productCommon(),
      name: 'Lifetime Licence',
      description: 'Pay once, use forever',
      recurring_interval: null,
      is_recurring: false,
      metadata: { sku: 'LT-1', seats: 3, ratio: 0.5, beta: true },
      prices: [{ ...priceCommon(id), amount_type: 'fixed', type: 'one_time', recurring_interval: null, price_currency: 'usd', price_amount: 4900 }],
    });
  });

  it('creates a monthly subscription whose fixed price is recurring monthly', async () => {
    const response = await org.api('POST', '/products/', {
      name: 'Pro Monthly',
      recurring_interval: 'month',
      prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }],
    });
    expect(response.status).toBe(201);
    const id = response.body.id;
    expect(response.body).toEqual({
      ...productCommon(),
      name: 'Pro Monthly',
      description: null,
      recurring_interval: 'month',
      is_recurring: true,
      metadata: {},
      prices: [{ ...priceCommon(id), amount_type: 'fixed', type: 'recurring', recurring_interval: 'month', price_currency: 'usd', price_amount: 1500 }],
    });
  });

  it('creates a yearly subscription whose fixed price is recurring yearly', async () => {
    const response = await org.api('POST', '/products/', {
      name: 'Pro Yearly',
      recurring_interval: 'year',
      prices: [{ amount_type: 'fixed', price_amount: 15000, price_currency: 'usd' }],
    });
    expect(response.status).toBe(201);
    const id = response.body.id;
    expect(response.body).toEqual({
      ...productCommon(),
      name: 'Pro Yearly',
      description: null,
      recurring_interval: 'year',
      is_recurring: true,
      metadata: {},
      prices: [{ ...priceCommon(id), amount_type: 'fixed', type: 'recurring', recurring_interval: 'year', price_currency: 'usd', price_amount: 15000 }],
    });
  });

  it('creates a pay-what-you-want product with its minimum, maximum and preset amounts', async () => {
    const response = await org.api('POST', '/products/', {
      name: 'Tip Jar',
      recurring_interval: null,
      prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 100, maximum_amount: 10000, preset_amount: 2500 }],
    });
    expect(response.status).toBe(201);
    const id = response.body.id;
    expect(response.body).toEqual({
      ...productCommon(),
      name: 'Tip Jar',
      description: null,
      recurring_interval: null,
      is_recurring: false,
      metadata: {},
      prices: [
        {
          ...priceCommon(id),
          amount_type: 'custom',
          type: 'one_time',
          recurring_interval: null,
          price_currency: 'usd',
          minimum_amount: 100,
          maximum_amount: 10000,
          preset_amount: 2500,
        },
      ],
    });
  });

  it('sends null bounds for a custom price created without them', async () => {
    const body = await create(org, { name: 'Open Donation', prices: [{ amount_type: 'custom', price_currency: 'usd' }] });
    expect(body.prices).toEqual([
      { ...priceCommon(body.id), amount_type: 'custom', type: 'one_time', recurring_interval: null, price_currency: 'usd', minimum_amount: null, maximum_amount: null, preset_amount: null },
    ]);
  });

  it('creates a free product whose price carries no currency or amount', async () => {
    const response = await org.api('POST', '/products/', { name: 'Free Sample', recurring_interval: null, prices: [{ amount_type: 'free' }] });
    expect(response.status).toBe(201);
    const id = response.body.id;
    expect(response.body).toEqual({
      ...productCommon(),
      name: 'Free Sample',
      description: null,
      recurring_interval: null,
      is_recurring: false,
      metadata: {},
      prices: [{ ...priceCommon(id), amount_type: 'free', type: 'one_time', recurring_interval: null }],
    });
  });

  it('keeps metadata keys exactly as sent (no snake_case conversion inside metadata)', async () => {
    const body = await create(org, { name: 'Metadata Keys', prices: oneTimeFixed(), metadata: { orderRef: 'A-1', some_key: 'x' } });
    expect(body.metadata).toEqual({ orderRef: 'A-1', some_key: 'x' });
    const listed = await org.api('GET', '/products/?metadata%5BorderRef%5D=A-1');
    expect(listed.body.items.map((p: { id: string }) => p.id)).toEqual([body.id]);
  });

  it('lowercases the price currency', async () => {
    const body = await create(org, { name: 'Euro Thing', prices: [{ amount_type: 'fixed', price_amount: 500, price_currency: 'EUR' }] });
    expect(body.prices[0]).toMatchObject({ price_currency: 'eur', price_amount: 500 });
  });

  it('refuses to create a product in another organization than the token’s own', async () => {
    const other = await newOrganization(t.server, 'production', { checkRequestId: true });
    const before = await totalCount(other);
    const response = await org.api('POST', '/products/', { name: 'Intruder', recurring_interval: null, organization_id: other.organizationId, prices: [{ amount_type: 'free' }] });
    expectValidationError(response, ['body', 'organization_id']);
    expect(await totalCount(other)).toBe(before);
  });
});

describe('reading a product', () => {
  let org: Org;
  let other: Org;
  let product: any;
  let othersProduct: any;
  beforeAll(async () => {
    [org, other] = [await newOrganization(t.server, 'production', { checkRequestId: true }), await newOrganization(t.server, 'production', { checkRequestId: true })];
    product = await create(org, { name: 'Readable', description: 'something', prices: oneTimeFixed(1234), metadata: { k: 'v' } });
    othersProduct = await create(other, { name: 'Secret of the other org', prices: oneTimeFixed(999) });
  });

  it('gets a product by id with the same body the create answered', async () => {
    const response = await org.api('GET', `/products/${product.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(product);
  });

  it('answers 404 ResourceNotFound for an unknown id', async () => {
    const response = await org.api('GET', `/products/${unknownId}`);
    expectErrorBody(response, 404, 'ResourceNotFound');
  });

  it("answers another organization's product with the very same 404 as an unknown id", async () => {
    const unknown = await org.api('GET', `/products/${unknownId}`);
    const foreign = await org.api('GET', `/products/${othersProduct.id}`);
    expectErrorBody(foreign, 404, 'ResourceNotFound');
    expect(foreign.body).toEqual(unknown.body);
  });

  it("never lists another organization's products, whatever the filters", async () => {
    const all = await org.api('GET', '/products/?limit=100');
    expect(all.status).toBe(200);
    expect(all.body.items.map((p: { id: string }) => p.id)).toEqual([product.id]);
    expect(all.body.items.every((p: { organization_id: string }) => p.organization_id === org.organizationId)).toBe(true);
    const byId = await org.api('GET', `/products/?id=${othersProduct.id}`);
    expect(byId.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    const byOrg = await org.api('GET', `/products/?organization_id=${other.organizationId}`);
    expect(byOrg.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    const byName = await org.api('GET', '/products/?query=secret');
    expect(byName.body.items).toEqual([]);
  });

  it('answers 401 Unauthorized without a token', async () => {
    const response = await restClientCheckingRequestId(t.server.base())('GET', '/products/');
    expectErrorBody(response, 401, 'Unauthorized');
  });
});

describe('listing products page by page', () => {
  let org: Org;
  const created: string[] = [];
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    for (let i = 1; i <= 25; i++) created.push((await create(org, { name: `Paged ${String(i).padStart(2, '0')}`, prices: oneTimeFixed(100 + i) })).id);
  });

  it('pages 25 products by 10: pages 1 to 3 hold 10, 10 and 5 newest-first, with total_count 25 and max_page 3', async () => {
    const seen: string[] = [];
    for (const [page, size] of [[1, 10], [2, 10], [3, 5]]) {
      const response = await org.api('GET', `/products/?limit=10&page=${page}`);
      expect(response.status).toBe(200);
      expect(response.body.pagination).toEqual({ total_count: 25, max_page: 3 });
      expect(response.body.items).toHaveLength(size);
      seen.push(...response.body.items.map((p: { id: string }) => p.id));
    }
    expect(seen).toEqual([...created].reverse());
  });

  it('answers a page past the last with no items and the same totals', async () => {
    const response = await org.api('GET', '/products/?limit=10&page=4');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ items: [], pagination: { total_count: 25, max_page: 3 } });
  });

  it('defaults to page 1 with 10 items', async () => {
    const response = await org.api('GET', '/products/');
    expect(response.status).toBe(200);
    expect(response.body.items.map((p: { id: string }) => p.id)).toEqual([...created].reverse().slice(0, 10));
    expect(response.body.pagination).toEqual({ total_count: 25, max_page: 3 });
  });

  it('accepts the largest limit, 100', async () => {
    const response = await org.api('GET', '/products/?limit=100');
    expect(response.status).toBe(200);
    expect(response.body.items).toHaveLength(25);
    expect(response.body.pagination).toEqual({ total_count: 25, max_page: 1 });
  });
});

describe('filtering and sorting the list', () => {
  let org: Org;
  const ids: Record<string, string> = {};
  // In creation order. price_amount sorts by the fixed amount, the custom minimum, 0 when free.
  const catalogue = [
    { name: 'Alpha Plan', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }], metadata: { tier: 'pro', seats: 5 } },
    { name: 'Bravo Pack', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 700, price_currency: 'usd' }], metadata: { tier: 'basic' } },
    { name: 'Charlie Tip', recurring_interval: null, prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 300 }], metadata: {} },
    { name: 'Delta Gift', recurring_interval: null, prices: [{ amount_type: 'free' }], metadata: { promo: true } },
    { name: 'Echo Annual', recurring_interval: 'year', prices: [{ amount_type: 'fixed', price_amount: 9900, price_currency: 'usd' }], metadata: { tier: 'pro' } },
  ];
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    for (const product of catalogue) ids[product.name] = (await create(org, product)).id;
    const archived = await org.api('PATCH', `/products/${ids['Delta Gift']}`, { is_archived: true });
    expect(archived.status).toBe(200);
  });

  it('filters archived products with is_archived', async () => {
    expect(names(await org.api('GET', '/products/?is_archived=true&sorting=name'))).toEqual(['Delta Gift']);
    expect(names(await org.api('GET', '/products/?is_archived=false&sorting=name'))).toEqual(['Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Echo Annual']);
    expect(names(await org.api('GET', '/products/?sorting=name'))).toHaveLength(5);
  });

  it('filters subscriptions with is_recurring', async () => {
    expect(names(await org.api('GET', '/products/?is_recurring=true&sorting=name'))).toEqual(['Alpha Plan', 'Echo Annual']);
    expect(names(await org.api('GET', '/products/?is_recurring=false&sorting=name'))).toEqual(['Bravo Pack', 'Charlie Tip', 'Delta Gift']);
  });

  it('matches query against names case-insensitively, with totals for the match', async () => {
    const plan = await org.api('GET', '/products/?query=PLAN');
    expect(names(plan)).toEqual(['Alpha Plan']);
    expect(plan.body.pagination).toEqual({ total_count: 1, max_page: 1 });
    expect(names(await org.api('GET', '/products/?query=an&sorting=name'))).toEqual(['Alpha Plan', 'Echo Annual']);
    expect(names(await org.api('GET', '/products/?query=echo%20ANN'))).toEqual(['Echo Annual']);
    expect(names(await org.api('GET', '/products/?query=zulu'))).toEqual([]);
  });

  it('treats % and _ in query as literal characters, not as wildcards', async () => {
    // No product name here contains "%" or "_".
    const percent = await org.api('GET', '/products/?query=%25');
    expect(percent.status).toBe(200);
    expect(names(percent)).toEqual([]);
    const underscore = await org.api('GET', '/products/?query=_');
    expect(underscore.status).toBe(200);
    expect(names(underscore)).toEqual([]);
  });

  it('filters by repeated id parameters', async () => {
    const response = await org.api('GET', `/products/?id=${ids['Bravo Pack']}&id=${ids['Echo Annual']}&sorting=name`);
    expect(names(response)).toEqual(['Bravo Pack', 'Echo Annual']);
    expect(response.body.pagination).toEqual({ total_count: 2, max_page: 1 });
  });

  it('filters by metadata[key]=value, a repeated value matching either', async () => {
    expect(names(await org.api('GET', '/products/?metadata%5Btier%5D=pro&sorting=name'))).toEqual(['Alpha Plan', 'Echo Annual']);
    expect(names(await org.api('GET', '/products/?metadata%5Btier%5D=pro&metadata%5Btier%5D=basic&sorting=name'))).toEqual(['Alpha Plan', 'Bravo Pack', 'Echo Annual']);
    expect(names(await org.api('GET', '/products/?metadata%5Bseats%5D=5'))).toEqual(['Alpha Plan']);
    expect(names(await org.api('GET', '/products/?metadata%5Bpromo%5D=true'))).toEqual(['Delta Gift']);
    expect(names(await org.api('GET', '/products/?metadata%5Btier%5D=enterprise'))).toEqual([]);
  });

  it('combines filters', async () => {
    expect(names(await org.api('GET', '/products/?is_recurring=true&query=annual'))).toEqual(['Echo Annual']);
    expect(names(await org.api('GET', '/products/?metadata%5Btier%5D=pro&is_recurring=false'))).toEqual([]);
  });

  const orders: [string, string[]][] = [
    ['name', ['Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Delta Gift', 'Echo Annual']],
    ['-name', ['Echo Annual', 'Delta Gift', 'Charlie Tip', 'Bravo Pack', 'Alpha Plan']],
    ['created_at', ['Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Delta Gift', 'Echo Annual']],
    ['-created_at', ['Echo Annual', 'Delta Gift', 'Charlie Tip', 'Bravo Pack', 'Alpha Plan']],
    ['price_amount', ['Delta Gift', 'Charlie Tip', 'Bravo Pack', 'Alpha Plan', 'Echo Annual']],
    ['-price_amount', ['Echo Annual', 'Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Delta Gift']],
  ];
  it.each(orders)('sorts by %s', async (sorting, expected) => {
    const response = await org.api('GET', `/products/?sorting=${sorting}`);
    expect(response.status).toBe(200);
    expect(names(response)).toEqual(expected);
  });

  it('sorts newest first when no sorting is given', async () => {
    expect(names(await org.api('GET', '/products/'))).toEqual(['Echo Annual', 'Delta Gift', 'Charlie Tip', 'Bravo Pack', 'Alpha Plan']);
  });

  it('sorts by price_amount across pages without overlap', async () => {
    const first = await org.api('GET', '/products/?sorting=-price_amount&limit=2&page=1');
    const second = await org.api('GET', '/products/?sorting=-price_amount&limit=2&page=2');
    const third = await org.api('GET', '/products/?sorting=-price_amount&limit=2&page=3');
    expect([...names(first), ...names(second), ...names(third)]).toEqual(['Echo Annual', 'Alpha Plan', 'Bravo Pack', 'Charlie Tip', 'Delta Gift']);
    expect(third.body.pagination).toEqual({ total_count: 5, max_page: 3 });
  });
});

describe('updating products', () => {
  let org: Org;
  let other: Org;
  beforeAll(async () => {
    [org, other] = [await newOrganization(t.server, 'production', { checkRequestId: true }), await newOrganization(t.server, 'production', { checkRequestId: true })];
  });

  it('renames a product and keeps everything else', async () => {
    const product = await create(org, { name: 'Old Name', description: 'kept', prices: oneTimeFixed(), metadata: { a: 1 } });
    const response = await org.api('PATCH', `/products/${product.id}`, { name: 'New Name' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...product, name: 'New Name', modified_at: nullableDatetime });
    expect((await org.api('GET', `/products/${product.id}`)).body).toEqual(response.body);
  });

  it('sets a description, then clears it with null', async () => {
    const product = await create(org, { name: 'Described', prices: oneTimeFixed() });
    expect(product.description).toBeNull();
    const set = await org.api('PATCH', `/products/${product.id}`, { description: 'Now with words' });
    expect(set.status).toBe(200);
    expect(set.body.description).toBe('Now with words');
    const cleared = await org.api('PATCH', `/products/${product.id}`, { description: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.description).toBeNull();
    expect((await org.api('GET', `/products/${product.id}`)).body.description).toBeNull();
  });

  it('leaves a product as it is on an empty update', async () => {
    const product = await create(org, { name: 'Untouched', description: 'd', prices: oneTimeFixed(), metadata: { a: 1 } });
    const response = await org.api('PATCH', `/products/${product.id}`, {});
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...product, modified_at: nullableDatetime });
  });

  it('archives and unarchives a product', async () => {
    const product = await create(org, { name: 'Seasonal', prices: oneTimeFixed() });
    const archived = await org.api('PATCH', `/products/${product.id}`, { is_archived: true });
    expect(archived.status).toBe(200);
    expect(archived.body.is_archived).toBe(true);
    expect(names(await org.api('GET', `/products/?is_archived=true&id=${product.id}`))).toEqual(['Seasonal']);
    const restored = await org.api('PATCH', `/products/${product.id}`, { is_archived: false });
    expect(restored.status).toBe(200);
    expect(restored.body.is_archived).toBe(false);
    expect(names(await org.api('GET', `/products/?is_archived=true&id=${product.id}`))).toEqual([]);
  });

  it('replaces metadata as a whole', async () => {
    const product = await create(org, { name: 'Tagged', prices: oneTimeFixed(), metadata: { a: 1, b: 'x' } });
    const response = await org.api('PATCH', `/products/${product.id}`, { metadata: { c: true } });
    expect(response.status).toBe(200);
    expect(response.body.metadata).toEqual({ c: true });
    expect((await org.api('GET', `/products/${product.id}`)).body.metadata).toEqual({ c: true });
    const emptied = await org.api('PATCH', `/products/${product.id}`, { metadata: {} });
    expect(emptied.body.metadata).toEqual({});
  });

  it('replaces the price with a new one: the old price is archived and leaves prices', async () => {
    const product = await create(org, { name: 'Repriced', prices: oneTimeFixed(1000) });
    const oldPriceId = product.prices[0].id;
    const response = await org.api('PATCH', `/products/${product.id}`, { prices: [{ amount_type: 'fixed', price_amount: 2500, price_currency: 'usd' }] });
    expect(response.status).toBe(200);
    expect(response.body.prices).toEqual([
      { id: uuid, created_at: datetime, modified_at: nullableDatetime, amount_type: 'fixed', is_archived: false, product_id: product.id, type: 'one_time', recurring_interval: null, price_currency: 'usd', price_amount: 2500 },
    ]);
    expect(response.body.prices[0].id).not.toBe(oldPriceId);
    expect((await org.api('GET', `/products/${product.id}`)).body.prices).toEqual(response.body.prices);
    // The archived price can no longer be kept.
    expectValidationError(await org.api('PATCH', `/products/${product.id}`, { prices: [{ id: oldPriceId }] }), ['body', 'prices', 0, 'id']);
  });

  it('gives a replacement price of a monthly product the monthly interval', async () => {
    const product = await create(org, { name: 'Monthly Repriced', recurring_interval: 'month', prices: oneTimeFixed(1000) });
    const response = await org.api('PATCH', `/products/${product.id}`, { prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500 }] });
    expect(response.status).toBe(200);
    expect(response.body.prices).toEqual([
      {
        id: uuid,
        created_at: datetime,
        modified_at: nullableDatetime,
        amount_type: 'custom',
        is_archived: false,
        product_id: product.id,
        type: 'recurring',
        recurring_interval: 'month',
        price_currency: 'usd',
        minimum_amount: 500,
        maximum_amount: null,
        preset_amount: null,
      },
    ]);
  });

  it('keeps an existing price given by its id alone', async () => {
    const product = await create(org, { name: 'Kept Price', prices: oneTimeFixed(1800) });
    const response = await org.api('PATCH', `/products/${product.id}`, { name: 'Kept Price Renamed', prices: [{ id: product.prices[0].id }] });
    expect(response.status).toBe(200);
    expect(response.body.name).toBe('Kept Price Renamed');
    expect(response.body.prices).toEqual([{ ...product.prices[0], modified_at: nullableDatetime }]);
  });

  it('sorts by the amount of the replacement price', async () => {
    const cheap = await create(org, { name: 'Sort Cheap', prices: oneTimeFixed(1000) });
    const dear = await create(org, { name: 'Sort Dear', prices: oneTimeFixed(2000) });
    const path = `/products/?id=${cheap.id}&id=${dear.id}&sorting=price_amount`;
    expect(names(await org.api('GET', path))).toEqual(['Sort Cheap', 'Sort Dear']);
    expect((await org.api('PATCH', `/products/${cheap.id}`, { prices: oneTimeFixed(3000) })).status).toBe(200);
    expect(names(await org.api('GET', path))).toEqual(['Sort Dear', 'Sort Cheap']);
  });

  it('refuses to change the recurring interval with a 422 and changes nothing', async () => {
    const product = await create(org, { name: 'Fixed Interval', recurring_interval: 'month', prices: oneTimeFixed() });
    const response = await org.api('PATCH', `/products/${product.id}`, { recurring_interval: 'year', name: 'Should Not Stick' });
    expectValidationError(response, ['body', 'recurring_interval']);
    expect((await org.api('GET', `/products/${product.id}`)).body).toEqual(product);
  });

  it('refuses to keep an unknown price id with a 422 naming it and changes nothing', async () => {
    const product = await create(org, { name: 'Unknown Price', prices: oneTimeFixed() });
    const response = await org.api('PATCH', `/products/${product.id}`, { prices: [{ id: unknownId }] });
    expectValidationError(response, ['body', 'prices', 0, 'id']);
    expect((await org.api('GET', `/products/${product.id}`)).body).toEqual(product);
  });

  it('refuses to keep a price of another product', async () => {
    const product = await create(org, { name: 'Own Price', prices: oneTimeFixed() });
    const neighbour = await create(org, { name: 'Neighbour', prices: oneTimeFixed(777) });
    const response = await org.api('PATCH', `/products/${product.id}`, { prices: [{ id: neighbour.prices[0].id }] });
    expectValidationError(response, ['body', 'prices', 0, 'id']);
    expect((await org.api('GET', `/products/${product.id}`)).body).toEqual(product);
  });

  it("answers 404 for another organization's product and leaves it unchanged", async () => {
    const foreign = await create(other, { name: 'Not Yours', description: 'theirs', prices: oneTimeFixed() });
    const response = await org.api('PATCH', `/products/${foreign.id}`, { name: 'Hijacked', is_archived: true, prices: oneTimeFixed(60) });
    expectErrorBody(response, 404, 'ResourceNotFound');
    expect((await other.api('GET', `/products/${foreign.id}`)).body).toEqual(foreign);
  });

  it('answers 404 for an unknown product id', async () => {
    expectErrorBody(await org.api('PATCH', `/products/${unknownId}`, { name: 'Nobody' }), 404, 'ResourceNotFound');
  });
});

describe('refusing bad list parameters', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    await create(org, { name: 'Only One', prices: oneTimeFixed() });
  });

  const cases: [string, string, (string | number)[], string][] = [
    ['refuses limit=0 with a 422 naming limit', 'limit=0', ['query', 'limit'], 'greater_than'],
    ['refuses a limit above 100 with a 422 naming limit', 'limit=101', ['query', 'limit'], 'less_than_equal'],
    ['refuses page=0 with a 422 naming page', 'page=0', ['query', 'page'], 'greater_than_equal'],
    ['refuses a non-numeric page with a 422 naming page', 'page=abc', ['query', 'page'], 'int_parsing'],
    ['refuses a non-numeric limit with a 422 naming limit', 'limit=abc', ['query', 'limit'], 'int_parsing'],
    ['refuses is_archived=maybe with a 422 naming is_archived', 'is_archived=maybe', ['query', 'is_archived'], 'bool_parsing'],
    ['refuses an unknown sorting with a 422 naming sorting', 'sorting=bogus', ['query', 'sorting'], ''],
    ['refuses an id that is not a uuid with a 422 naming id', 'id=xyz', ['query', 'id'], ''],
  ];
  it.each(cases)('%s', async (_name, query, loc, type) => {
    const response = await org.api('GET', `/products/?${query}`);
    expectValidationError(response, loc, type || undefined);
  });

  it('names each bad parameter when several are out of range', async () => {
    const response = await org.api('GET', '/products/?limit=0&page=0');
    expectValidationError(response, ['query', 'limit']);
    expectValidationError(response, ['query', 'page']);
  });
});

describe('refusing bad product bodies', () => {
  let org: Org;
  let existing: any;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    existing = await create(org, { name: 'Existing', description: 'as created', prices: oneTimeFixed(1500), metadata: { a: 1 } });
  });

  const valid = { name: 'Valid Name', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' }] };
  const withPrice = (price: Record<string, unknown>) => ({ ...valid, prices: [price] });
  const fiftyOneKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`key${i}`, i]));

  const createCases: [string, Record<string, unknown>, (string | number)[], string?][] = [
    ['refuses a product without a name with a 422 naming name', { recurring_interval: null, prices: valid.prices }, ['body', 'name'], 'missing'],
    ['refuses a product without prices with a 422 naming prices', { name: 'No Prices', recurring_interval: null }, ['body', 'prices'], 'missing'],
    ['refuses a name shorter than 3 characters with a 422 naming name', { ...valid, name: 'ab' }, ['body', 'name'], 'string_too_short'],
    ['refuses a name of blanks around 2 characters', { ...valid, name: '  ab  ' }, ['body', 'name'], 'string_too_short'],
    ['refuses a name longer than 256 characters', { ...valid, name: 'n'.repeat(257) }, ['body', 'name'], 'string_too_long'],
    ['refuses a name that is not a string', { ...valid, name: 12345 }, ['body', 'name']],
    ['refuses an empty price list with a 422 naming prices', { ...valid, prices: [] }, ['body', 'prices'], 'too_short'],
    ['refuses two prices with a 422 naming prices', { ...valid, prices: [{ amount_type: 'free' }, { amount_type: 'fixed', price_amount: 500 }] }, ['body', 'prices']],
    ['refuses an unknown amount_type with a 422 naming it', withPrice({ amount_type: 'seat_based', price_currency: 'usd' }), ['body', 'prices', 0, 'amount_type']],
    ['refuses a fixed price without price_amount', withPrice({ amount_type: 'fixed', price_currency: 'usd' }), ['body', 'prices', 0, 'price_amount'], 'missing'],
    ['refuses a price_amount below 50', withPrice({ amount_type: 'fixed', price_amount: 10 }), ['body', 'prices', 0, 'price_amount'], 'greater_than_equal'],
    ['refuses a fractional price_amount', withPrice({ amount_type: 'fixed', price_amount: 1.5 }), ['body', 'prices', 0, 'price_amount']],
    ['refuses a price_amount given as a string', withPrice({ amount_type: 'fixed', price_amount: '1000' }), ['body', 'prices', 0, 'price_amount']],
    ['refuses a custom price whose minimum exceeds its maximum', withPrice({ amount_type: 'custom', minimum_amount: 5000, maximum_amount: 1000 }), ['body', 'prices', 0]],
    ['refuses a preset amount outside the bounds', withPrice({ amount_type: 'custom', minimum_amount: 100, maximum_amount: 500, preset_amount: 600 }), ['body', 'prices', 0, 'preset_amount']],
    ['refuses a preset amount below the minimum', withPrice({ amount_type: 'custom', minimum_amount: 1000, preset_amount: 600 }), ['body', 'prices', 0, 'preset_amount']],
    ['refuses a price_amount on a custom price', withPrice({ amount_type: 'custom', price_amount: 1000 }), ['body', 'prices', 0, 'price_amount'], 'extra_forbidden'],
    ['refuses an unknown currency', withPrice({ amount_type: 'fixed', price_amount: 1000, price_currency: 'xyz' }), ['body', 'prices', 0, 'price_currency']],
    ['refuses metadata with 51 keys', { ...valid, metadata: fiftyOneKeys }, ['body', 'metadata']],
    ['refuses a metadata key of 41 characters', { ...valid, metadata: { ['k'.repeat(41)]: 'v' } }, ['body', 'metadata']],
    ['refuses a metadata string value of 501 characters', { ...valid, metadata: { note: 'v'.repeat(501) } }, ['body', 'metadata']],
    ['refuses a nested metadata object', { ...valid, metadata: { nested: { deeper: 1 } } }, ['body', 'metadata']],
    ['refuses a null metadata value', { ...valid, metadata: { gone: null } }, ['body', 'metadata']],
    ['refuses an unknown body field as extra_forbidden', { ...valid, colour: 'red' }, ['body', 'colour'], 'extra_forbidden'],
    ['refuses an unknown field inside a price as extra_forbidden', withPrice({ amount_type: 'free', discount: 5 }), ['body', 'prices', 0, 'discount'], 'extra_forbidden'],
    ['refuses a daily recurring interval', { ...valid, recurring_interval: 'day' }, ['body', 'recurring_interval']],
    ['refuses a weekly recurring interval', { ...valid, recurring_interval: 'week' }, ['body', 'recurring_interval']],
    ['refuses an unknown recurring interval', { ...valid, recurring_interval: 'fortnight' }, ['body', 'recurring_interval']],
    ['refuses non-empty medias', { ...valid, medias: ['0b9d7c4e-2f5a-4f8e-9c1d-7a6b5c4d3e2f'] }, ['body', 'medias']],
    ['refuses a name containing a NUL character with a 422 naming name', { ...valid, name: 'Bad\u0000Name' }, ['body', 'name']],
    ['refuses a metadata value containing a NUL character with a 422 naming metadata', { ...valid, metadata: { note: 'a\u0000b' } }, ['body', 'metadata']],
  ];
  it.each(createCases)('%s, and creates nothing', async (_name, body, loc, type) => {
    const response = await org.api('POST', '/products/', body);
    expect(response.status).not.toBe(500);
    expectValidationError(response, loc, type);
    expect(await totalCount(org)).toBe(1);
  });

  const updateCases: [string, Record<string, unknown>, (string | number)[], string?][] = [
    ['refuses renaming to a 2-character name', { name: 'ab' }, ['body', 'name'], 'string_too_short'],
    ['refuses replacing prices with an empty list', { prices: [] }, ['body', 'prices'], 'too_short'],
    ['refuses a replacement price below 50', { prices: [{ amount_type: 'fixed', price_amount: 49 }] }, ['body', 'prices', 0, 'price_amount']],
    ['refuses an unknown update field as extra_forbidden', { nickname: 'x' }, ['body', 'nickname'], 'extra_forbidden'],
    ['refuses update metadata with 51 keys', { metadata: fiftyOneKeys }, ['body', 'metadata']],
    ['refuses a kept price that also changes its amount', { prices: [{ id: '00000000-0000-4000-8000-000000000000', amount_type: 'fixed', price_amount: 100 }] }, ['body', 'prices', 0]],
    ['refuses is_archived that is not a boolean', { is_archived: 'yes' }, ['body', 'is_archived']],
    ['refuses non-empty medias on update', { medias: ['0b9d7c4e-2f5a-4f8e-9c1d-7a6b5c4d3e2f'] }, ['body', 'medias']],
  ];
  it.each(updateCases)('%s, and changes nothing', async (_name, body, loc, type) => {
    const response = await org.api('PATCH', `/products/${existing.id}`, { name: 'Would Be Renamed', ...body });
    expectValidationError(response, loc, type);
    expect((await org.api('GET', `/products/${existing.id}`)).body).toEqual(existing);
  });
});

describe('refusing malformed requests without a 500', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
  });

  it('answers malformed JSON with a 422 of type json_invalid', async () => {
    const response = await org.api('POST', '/products/', '{"name": "Broken", "prices": [');
    expectValidationError(response, ['body'], 'json_invalid');
    expect(await totalCount(org)).toBe(0);
  });

  it('answers a text/plain body with a 415 JSON error', async () => {
    const response = await org.api('POST', '/products/', JSON.stringify({ name: 'Plain', recurring_interval: null, prices: [{ amount_type: 'free' }] }), { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({ error: expect.any(String), detail: expect.any(String) });
    expect(await totalCount(org)).toBe(0);
  });

  it('accepts application/json with a charset parameter', async () => {
    const response = await org.api('POST', '/products/', JSON.stringify({ name: 'Charset', recurring_interval: null, prices: [{ amount_type: 'free' }] }), {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(response.status).toBe(201);
    expect(response.body.name).toBe('Charset');
    const cleanup = await org.api('PATCH', `/products/${response.body.id}`, { is_archived: true });
    expect(cleanup.status).toBe(200);
  });

  it('answers an empty POST body with a 422', async () => {
    const before = await totalCount(org);
    const response = await org.api('POST', '/products/', '');
    expectValidationError(response, ['body']);
    const noContentType = await org.api('POST', '/products/');
    expectValidationError(noContentType, ['body']);
    expect(await totalCount(org)).toBe(before);
  });

  it('answers a JSON null or array body with a 422', async () => {
    const before = await totalCount(org);
    expectValidationError(await org.api('POST', '/products/', 'null'), ['body']);
    expectValidationError(await org.api('POST', '/products/', '[]'), ['body']);
    expect(await totalCount(org)).toBe(before);
  });

  it('answers a product id that is not a uuid with a 422 naming path id', async () => {
    expectValidationError(await org.api('GET', '/products/not-a-uuid'), ['path', 'id']);
    expectValidationError(await org.api('PATCH', '/products/not-a-uuid', { name: 'Whatever' }), ['path', 'id']);
  });

  it('answers an unknown path with a 404 JSON error', async () => {
    expectErrorBody(await org.api('GET', '/nope'), 404, 'ResourceNotFound');
  });

  it('answers DELETE on the product collection with a 405 JSON error', async () => {
    const response = await org.api('DELETE', '/products/');
    expect(response.status).toBe(405);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({ error: expect.any(String), detail: expect.any(String) });
  });

  it('answers a 2 MB body with a 413 JSON error and creates nothing', async () => {
    const before = await totalCount(org);
    const huge = JSON.stringify({ name: 'Huge', recurring_interval: null, prices: [{ amount_type: 'free' }], description: 'x'.repeat(2 * 1024 * 1024) });
    const response = await org.api('POST', '/products/', huge);
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({ error: expect.any(String), detail: expect.any(String) });
    expect(await totalCount(org)).toBe(before);
  });

  it('answers a search query containing a NUL character without a 500', async () => {
    const response = await org.api('GET', '/products/?query=a%00b');
    expect(response.status).not.toBe(500);
    if (response.status === 200) expect(response.body.items).toEqual([]);
    else expectValidationError(response, ['query', 'query']);
  });

  it('echoes a well-formed x-request-id and invents one otherwise, on success and error alike', async () => {
    const echoed = await org.api('GET', '/products/', undefined, { 'x-request-id': 'trace-123.abc' });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123.abc');
    const errorEchoed = await org.api('GET', '/products/not-a-uuid', undefined, { 'x-request-id': 'trace-456' });
    expect(errorEchoed.headers.get('x-request-id')).toBe('trace-456');
    const first = await org.api('GET', '/nope');
    const second = await org.api('GET', '/nope');
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
    const invented = await org.api('GET', '/products/', undefined, { 'x-request-id': 'bad id with spaces' });
    expect(invented.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });
});

describe('token scopes', () => {
  let org: Org;
  let readOnly: Api;
  let product: any;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    product = await create(org, { name: 'Scoped', prices: oneTimeFixed() });
    readOnly = restClientCheckingRequestId(t.server.base(), await tokenWithScopes(t.server, org, ['products:read'], 'read only'));
  });

  it('lets a products:read token list and get products', async () => {
    const list = await readOnly('GET', '/products/');
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([product]);
    const get = await readOnly('GET', `/products/${product.id}`);
    expect(get.status).toBe(200);
    expect(get.body).toEqual(product);
  });

  it('refuses a create with a products:read token: 403 NotPermitted naming products:write, nothing created', async () => {
    const response = await readOnly('POST', '/products/', { name: 'Not Allowed', recurring_interval: null, prices: [{ amount_type: 'free' }] });
    expectErrorBody(response, 403, 'NotPermitted');
    expect(response.body.detail).toContain('products:write');
    expect(await totalCount(org)).toBe(1);
  });

  it('refuses an update with a products:read token: 403 NotPermitted naming products:write, nothing changed', async () => {
    const response = await readOnly('PATCH', `/products/${product.id}`, { name: 'Not Allowed' });
    expectErrorBody(response, 403, 'NotPermitted');
    expect(response.body.detail).toContain('products:write');
    expect((await org.api('GET', `/products/${product.id}`)).body).toEqual(product);
  });

  it('refuses an unknown token with 401', async () => {
    expectErrorBody(await restClientCheckingRequestId(t.server.base(), 'service_oat_doesnotexist')('GET', '/products/'), 401, 'Unauthorized');
  });
});

// Edges between resources: a customer's orders as a connection, an order line's price. A nested
// page is read with its parents, so the SQL statements a query sends do not grow with its rows:
// the count is taken for a page of 2 customers and again for a page of 6, with the background
// workers stopped so that only the request speaks to the database. In sandbox, where the test
// cards pay.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes } from '../helpers/organizations.ts';
import { fixedProduct, paidOrderOf } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { shop: 'sandbox' } });
let productId: string;
const customers = new Map<string, string>();

/** A paid order of the customer with this email (made the first time), bought through a checkout naming them. */
async function buy(email: string, product = productId) {
  if (!customers.has(email)) customers.set(email, expectStatus(await t.shop.api('POST', '/customers/', { email }), 201).id);
  const checkout = expectStatus(await t.shop.api('POST', '/checkouts/', { products: [product], customer_id: customers.get(email) }), 201);
  await t.shop.buyer.checkouts.clientConfirm({ clientSecret: checkout.client_secret, checkoutConfirmStripe: { customerEmail: email, confirmationTokenId: 'tok_visa' } });
  return paidOrderOf(t.shop, checkout.id);
}

beforeAll(async () => {
  productId = (await fixedProduct(t.shop, 'Edge guide', 700)).id;
  // Six customers: ann with three orders, cy with two, the others with one.
  for (const email of ['ann@example.com', 'ann@example.com', 'ann@example.com', 'bob@example.com', 'cy@example.com', 'cy@example.com', 'di@example.com', 'ed@example.com', 'fay@example.com']) {
    await buy(email);
  }
});

const NESTED = `query ($limit: Int!) { core { customers(limit: $limit, sorting: [email_asc]) { items {
  email
  orders(first: 10) { totalCount pageInfo { hasNextPage } edges { cursor node { id totalAmount customer { email } items { label productPrice { id ... on ProductPriceFixed { priceAmount } } } } } }
} } } }`;

async function statementsOf(run: () => Promise<unknown>): Promise<number> {
  const { database } = t.server.kassa.environments.sandbox;
  const before = database.statements();
  await run();
  return database.statements() - before;
}

describe("a customer's orders", () => {
  it('are a connection, newest first, with each line’s price', async () => {
    const response = await t.shop.gql(NESTED, { limit: 2 });
    expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
    const [ann, bob] = response.body.data.core.customers.items;
    expect(ann.email).toBe('ann@example.com');
    expect(ann.orders.totalCount).toBe(3);
    expect(ann.orders.pageInfo).toEqual({ hasNextPage: false });
    expect(ann.orders.edges).toHaveLength(3);
    expect(ann.orders.edges[0].node).toMatchObject({ totalAmount: 700, customer: { email: 'ann@example.com' }, items: [{ label: 'Edge guide', productPrice: { id: expect.any(String), priceAmount: 700 } }] });
    expect(bob.orders.totalCount).toBe(1);
    // Newest first: the same order as the organization's own list of ann's orders.
    const listed = await t.shop.api('GET', `/orders/?customer_id=${customers.get('ann@example.com')}&sorting=-created_at`);
    expect(ann.orders.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual(listed.body.items.map((order: { id: string }) => order.id));
  });

  it('page forward by cursor', async () => {
    const page = async (after?: string) => {
      const response = await t.shop.gql(`query ($after: String) { core { customers(query: "ann") { items { orders(first: 2, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } } } } }`, { after });
      expect(response.body.errors).toBeUndefined();
      return response.body.data.core.customers.items[0].orders;
    };
    const first = await page();
    expect(first.edges).toHaveLength(2);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await page(first.pageInfo.endCursor);
    expect(second.edges).toHaveLength(1);
    expect(second.pageInfo.hasNextPage).toBe(false);
    expect(second.totalCount).toBe(3);
  });

  it('refuse arguments out of range at the edge, keeping the customers', async () => {
    const response = await t.shop.gql(`{ core { customers(limit: 2, sorting: [email_asc]) { items { email orders(first: 101) { totalCount } } } } }`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const items = response.body.data.core.customers.items;
    expect(items.map((c: { email: string }) => c.email)).toEqual(['ann@example.com', 'bob@example.com']);
    expect(items.every((c: { orders: unknown }) => c.orders === null)).toBe(true);
    expect(response.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('are null with NOT_PERMITTED for a token that may read customers but not orders, the customers intact', async () => {
    const customersOnly = graphqlClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.shop, ['customers:read']));
    const response = await customersOnly(`{ core { customers(limit: 2) { items { email orders { totalCount } } } } }`);
    expect(response.status).toBe(200);
    expect(response.body.data.core.customers.items).toHaveLength(2);
    expect(response.body.data.core.customers.items.every((c: { orders: unknown }) => c.orders === null)).toBe(true);
    expect(response.body.errors!.every((e) => e.extensions.code === 'NOT_PERMITTED')).toBe(true);
  });
});

describe("a customer's other edges", () => {
  it('answer subscriptions, benefit grants and license keys as connections, and an order line its price', async () => {
    const response = await t.shop.gql(`{ core { customers(limit: 1, sorting: [email_asc]) { items {
      subscriptions { totalCount edges { node { id } } }
      benefitGrants { totalCount edges { node { id } } }
      licenseKeys { totalCount edges { node { id } } }
    } } } }`);
    expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
    // The product is one-time and grants nothing: each connection is there, and empty.
    const empty = { totalCount: 0, edges: [] };
    expect(response.body.data.core.customers.items[0]).toEqual({ subscriptions: empty, benefitGrants: empty, licenseKeys: empty });
  });

  it("answer a subscription's orders as a connection, under the customer's subscriptions", async () => {
    const monthly = await fixedProduct(t.shop, 'Edge monthly', 300, 'month');
    const order = await buy('gus@example.com', monthly.id);
    const response = await t.shop.gql(`{ core { customers(query: "gus") { items {
      subscriptions { totalCount edges { node { product { name } orders { totalCount pageInfo { hasNextPage } edges { node { id totalAmount } } } } } }
    } } } }`);
    expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
    expect(response.body.data.core.customers.items[0].subscriptions).toEqual({
      totalCount: 1,
      edges: [{ node: { product: { name: 'Edge monthly' }, orders: { totalCount: 1, pageInfo: { hasNextPage: false }, edges: [{ node: { id: order.id, totalAmount: 300 } }] } } }],
    });
  });
});

describe('a nested page', () => {
  it('sends as many SQL statements for 6 customers and their 9 orders as for 2 customers and their 4', async () => {
    // The workers are stopped so that only the request speaks to the database; nothing runs after this test.
    const served = t.server.kassa.environments.sandbox;
    await Promise.all([served.jobs.stop(), served.webhooks.stop()]);
    const small = await statementsOf(async () => {
      const response = await t.shop.gql(NESTED, { limit: 2 });
      expect(response.body.data.core.customers.items.flatMap((c: { orders: { edges: unknown[] } }) => c.orders.edges)).toHaveLength(4);
    });
    const large = await statementsOf(async () => {
      const response = await t.shop.gql(NESTED, { limit: 6 });
      expect(response.body.data.core.customers.items.flatMap((c: { orders: { edges: unknown[] } }) => c.orders.edges)).toHaveLength(9);
    });
    expect(small).toBeGreaterThan(0);
    expect(large).toBe(small);
  });
});

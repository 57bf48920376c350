// Nested GraphQL selections become one Prisma query per relation, however many items a page
// holds: listing orders with their customer, items and product costs the same for 1 order as for 6.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/client.ts';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer({ env: { JOB_POLL_INTERVAL_MS: '50' } });
let operations: string[] = [];

beforeAll(async () => {
  // Every Prisma call the server makes from here on is written down (model and operation).
  const environment = t.server.kassa.environments.sandbox.environment;
  const prisma = environment.prisma;
  environment.prisma = new Proxy(prisma, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || property.startsWith('$') || typeof value !== 'object' || value === null) return value;
      return new Proxy(value, {
        get(delegate, operation, delegateReceiver) {
          const method = Reflect.get(delegate, operation, delegateReceiver);
          if (typeof method !== 'function') return method;
          return (...args: unknown[]) => {
            operations.push(`${property}.${String(operation)}`);
            return method.apply(delegate, args);
          };
        },
      });
    },
  }) as Db;
});

async function organizationWithOrders(count: number) {
  const { token } = await t.server.bootstrap('sandbox');
  const api = restClient(t.server.base('sandbox'), token);
  const product = await api('POST', '/products/', { name: `Batch ${count}`, recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 700 }] });
  for (let i = 0; i < count; i++) {
    const checkout = await api('POST', '/checkouts/', { products: [product.body.id] });
    const confirmed = await api('POST', `/checkouts/client/${checkout.body.client_secret}/confirm`, { customer_email: `buyer${i}@example.com`, confirmation_token_id: 'tok_visa' });
    expect(confirmed.status).toBe(200);
  }
  return graphqlClient(t.server.base('sandbox'), token);
}

const nestedOrders = `{ core { orders(limit: 50) { items {
  id customer { email } items { label amount productPriceId } product { name description }
} pagination { totalCount } } } }`;

describe('a nested selection of orders', () => {
  it('makes the same Prisma calls for one order as for six', async () => {
    const one = await organizationWithOrders(1);
    const six = await organizationWithOrders(6);

    operations = [];
    const small = await one(nestedOrders);
    const forOne = [...operations];
    operations = [];
    const large = await six(nestedOrders);
    const forSix = [...operations];

    expect(small.body.data.core.orders.items).toHaveLength(1);
    expect(large.body.data.core.orders.items).toHaveLength(6);
    expect(large.body.data.core.orders.items.every((o: { customer: { email: string }; items: unknown[] }) => o.customer.email && o.items.length === 1)).toBe(true);
    expect(forSix).toEqual(forOne);
    // Token lookup, the page and its count: the relations ride on the page's query.
    expect(forSix.filter((op) => op.startsWith('order.'))).toEqual(['order.findMany', 'order.count']);
  });
});

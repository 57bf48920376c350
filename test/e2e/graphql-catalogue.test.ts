// The storefront catalogue over GraphQL at the default limits: 100 products with their prices and
// benefits, asked for as often as the REST list of 100 may be (300 a minute), charged what the
// answers hold. The clock is frozen and moved by hand, at 5 operations a second.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectStatus } from '../helpers/responses.ts';

const t = useTestServer({ env: { RATE_LIMITS: 'on' }, organizations: { shop: 'production' } });
beforeAll(async () => {
  // The setup's 201 calls are spread over minutes before the test's own (2 a second, 120 a
  // minute), so the per-address and per-minute limits see none of them, however fast they run.
  const setupStart = Date.now() - 200_000;
  t.server.clock.now = new Date(setupStart);
  const perk = expectStatus(await t.shop.api('POST', '/benefits/', { type: 'custom', description: 'Priority support', properties: { note: 'Write to us' } }), 201);
  for (let i = 0; i < 100; i++) {
    t.server.clock.now = new Date(setupStart + (i + 1) * 1000);
    const product = expectStatus(await t.shop.api('POST', '/products/', { name: `Print ${i}`, prices: [{ amount_type: 'fixed', price_amount: 1000 + i, price_currency: 'usd' }] }), 201);
    expectStatus(await t.shop.api('POST', `/products/${product.id}/benefits`, { benefits: [perk.id] }), 200);
  }
  t.server.clock.now = null;
}, 300_000);

const catalogue = '{ core { products(limit: 100) { items { id name prices { id } benefits { id description } } pagination { totalCount } } } }';

function ask() {
  return fetch(`${t.server.base()}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.shop.token}` },
    body: JSON.stringify({ query: catalogue }),
  });
}

describe('the catalogue of 100 products with prices and benefits', () => {
  it('runs 300 times a minute at the default limits, as the REST list does, each charged what it holds', async () => {
    const start = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
    try {
      let lastCost: { requestedQueryCost: number; actualQueryCost: number; throttleStatus: { currentlyAvailable: number } } | undefined;
      // 60 seconds, five operations in each: the whole per-minute budget.
      for (let second = 0; second < 60; second++) {
        t.server.clock.now = new Date(start + 100 + second * 1000);
        const responses = await Promise.all(Array.from({ length: 5 }, () => ask()));
        for (const response of responses) {
          expect(response.status, `second ${second}`).toBe(200);
          const body = await response.json();
          expect(body.errors).toBeUndefined();
          expect(body.data.core.products.items).toHaveLength(100);
          lastCost = body.extensions.cost;
        }
      }
      // core, the page, its pagination, and 100 products of one price and one benefit each.
      expect(lastCost).toMatchObject({ requestedQueryCost: 2103, actualQueryCost: 303 });
      expect(lastCost!.throttleStatus.currentlyAvailable).toBeGreaterThan(15_000);
      // The 301st in the minute is refused by the request budget, as the 301st REST call would be, not by points.
      const refused = await ask();
      expect(refused.status).toBe(429);
      expect((await refused.json()).errors[0].extensions.code).toBe('RATE_LIMITED');
      expect((await t.shop.api('GET', '/products/?limit=100')).status).toBe(429);
    } finally {
      t.server.clock.now = null;
    }
  }, 300_000);
});

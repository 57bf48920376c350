// The queries a storefront and a customer portal make, as the README shows them, run at the
// default limits (rate limits on): each answers without errors and is charged the requested cost
// the README states, then only what its answer holds. In sandbox, where the test cards pay.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';

const t = useTestServer({ env: { RATE_LIMITS: 'on', TEST_CARD_DELAY_MS: '0' }, organizations: { shop: 'sandbox' } });
let customerId: string;
let customerToken: string;
let clientSecret: string;
beforeAll(async () => {
  const ebook = await fixedProduct(t.shop, 'Frontend ebook', 1200);
  const monthly = await fixedProduct(t.shop, 'Frontend monthly', 500, 'month');
  customerId = (await buy(t.shop, ebook.id, 'reader@example.com')).customerId;
  customerToken = expectStatus(await t.shop.api('POST', '/customer-sessions/', { customer_id: customerId }), 201).token;
  clientSecret = expectStatus(await t.shop.api('POST', '/checkouts/', { products: [monthly.id] }), 201).client_secret;
});

/** The GraphQL blocks of the "Frontend queries" section of the README, by their comment line. */
function documentedQueries(): Record<string, { query: string; cost: number }> {
  const doc = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = doc.indexOf('### Frontend queries');
  const section = doc.slice(start, doc.indexOf('\n## ', start));
  const found: Record<string, { query: string; cost: number }> = {};
  for (const [, name, cost, query] of section.matchAll(/```graphql\n# (.+?): requests (\d[\d,]*) points\n([\s\S]+?)```/g)) {
    found[name] = { query, cost: Number(cost.replaceAll(',', '')) };
  }
  return found;
}

async function ask(token: string | null, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${t.server.base('sandbox')}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body;
}

describe('the frontend queries of the README at the default limits', () => {
  const queries = documentedQueries();

  it('are all in the README, each with its requested cost', () => {
    expect(Object.keys(queries).sort()).toEqual(['a checkout', "a customer's orders", 'my subscriptions', 'the catalogue']);
  });

  it('run, each charged the requested cost the README states and given back what its answer did not hold', async () => {
    const runs: [string, string | null, Record<string, unknown>][] = [
      ['the catalogue', t.shop.token, {}],
      ["a customer's orders", t.shop.token, { id: customerId }],
      ['a checkout', null, { clientSecret }],
      ['my subscriptions', customerToken, {}],
    ];
    for (const [name, token, variables] of runs) {
      const body = await ask(token, queries[name].query, variables);
      expect(body.extensions.cost.requestedQueryCost, name).toBe(queries[name].cost);
      expect(body.extensions.cost.actualQueryCost, name).toBeLessThanOrEqual(queries[name].cost);
      expect(body.extensions.cost.throttleStatus.maximumAvailable).toBe(50_000);
    }
    const orders = await ask(t.shop.token, queries["a customer's orders"].query, { id: customerId });
    expect(orders.data.core.customer.orders.edges[0].node.items[0]).toMatchObject({ label: 'Frontend ebook', amount: 1200 });
    const checkout = await ask(null, queries['a checkout'].query, { clientSecret });
    expect(checkout.data.checkoutClient).toMatchObject({ status: 'open', totalAmount: 500, product: { name: 'Frontend monthly' } });
  });
});

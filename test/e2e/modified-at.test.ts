// Row timestamps follow the server's clock, the one every request reads, not the wall clock of the
// process or the database: the test moves it years ahead, creates and changes one of every
// resource that carries `modified_at` through the API (and lets the background jobs change some),
// and reads back `created_at` and `modified_at` at exactly the clock's time of each write. In
// sandbox, where test cards pay and a webhook endpoint may be on loopback.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { createAndConfirmCheckout } from '../helpers/purchases.ts';
import { eventually } from '../helpers/waiting.ts';

const created = new Date('2031-05-01T12:00:00.123Z');
// Within the hour an open checkout lives.
const changed = new Date('2031-05-01T12:30:00.456Z');
const refunded = new Date('2031-05-01T12:50:00.789Z');
const processed = new Date('2031-05-01T12:55:00.000Z');

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0', JOB_POLL_INTERVAL_MS: '50' }, clock: created, organizations: { org: 'sandbox' } });

const at = (value: unknown) => (typeof value === 'string' ? new Date(value).toISOString() : value);

async function read(path: string) {
  const response = await t.org.api('GET', path);
  expect(response.status, `GET ${path}`).toBe(200);
  return response.body;
}

describe('created_at and modified_at', () => {
  const paths: Record<string, string> = {};

  beforeAll(async () => {
    const benefit = await t.org.api('POST', '/benefits/', { type: 'custom', description: 'Support line', properties: { note: 'Call us' } });
    const product = await t.org.api('POST', '/products/', {
      name: 'Clocked plan',
      recurring_interval: 'month',
      prices: [{ amount_type: 'fixed', price_amount: 1200, price_currency: 'usd' }],
    });
    const customer = await t.org.api('POST', '/customers/', { email: 'clocked@example.com', name: 'Clocked' });
    const endpoint = await t.org.api('POST', '/webhooks/endpoints', { url: 'http://127.0.0.1:4100/hooks/clocked', format: 'raw', events: ['customer.deleted'] });
    const openCheckout = await t.org.api('POST', '/checkouts/', { products: [product.body.id] });
    for (const response of [benefit, product, customer, endpoint, openCheckout]) expect(response.status, JSON.stringify(response.body)).toBe(201);
    await createAndConfirmCheckout(t.org, product.body.id, 'subscriber@example.com', { customerName: 'Subscriber' });
    const subscription = await eventually(
      async () => (await t.org.api('GET', `/subscriptions/?product_id=${product.body.id}`)).body.items[0],
      (s) => s?.status === 'active',
      'the subscription to be active',
    );
    const order = (await t.org.api('GET', `/orders/?product_id=${product.body.id}`)).body.items[0];
    Object.assign(paths, {
      benefit: `/benefits/${benefit.body.id}`,
      product: `/products/${product.body.id}`,
      customer: `/customers/${customer.body.id}`,
      'webhook endpoint': `/webhooks/endpoints/${endpoint.body.id}`,
      checkout: `/checkouts/${openCheckout.body.id}`,
      subscription: `/subscriptions/${subscription.id}`,
      order: `/orders/${order.id}`,
    });
  });

  it('are the clock’s time of creation on every new resource, and on the paid order and active subscription the jobs moved on', async () => {
    for (const [resource, path] of Object.entries(paths)) {
      const body = await read(path);
      expect(at(body.created_at), `${resource} created_at`).toBe(created.toISOString());
      expect(at(body.modified_at), `${resource} modified_at`).toBe(created.toISOString());
    }
  });

  it('follow the clock on every change: each resource’s modified_at is the time it was changed at, its created_at unchanged', async () => {
    t.server.clock.now = changed;
    const changes: [string, Record<string, unknown>][] = [
      ['benefit', { type: 'custom', description: 'Support line, weekdays' }],
      ['product', { name: 'Clocked plan, renamed' }],
      ['customer', { name: 'Clocked, renamed' }],
      ['webhook endpoint', { url: 'http://127.0.0.1:4100/hooks/clocked-renamed' }],
      ['checkout', { metadata: { moved: 'yes' } }],
      ['subscription', { cancel_at_period_end: true }],
      ['order', { billing_name: 'Subscriber Ltd' }],
    ];
    for (const [resource, body] of changes) {
      const response = await t.org.api('PATCH', paths[resource], body);
      expect(response.status, `PATCH ${resource}: ${JSON.stringify(response.body)}`).toBe(200);
      expect(at(response.body.modified_at), `${resource} modified_at in the answer`).toBe(changed.toISOString());
    }
    for (const [resource, path] of Object.entries(paths)) {
      const body = await read(path);
      expect(at(body.created_at), `${resource} created_at`).toBe(created.toISOString());
      expect(at(body.modified_at), `${resource} modified_at`).toBe(changed.toISOString());
    }
  });

  it('follow the clock in background jobs too: the refund job stamps the time it processed the refund at', async () => {
    const jobs = t.server.kassa.environments.sandbox.jobs;
    await jobs.stop();
    t.server.clock.now = refunded;
    const order = await read(paths.order);
    const refund = await t.org.api('POST', '/refunds/', { order_id: order.id, reason: 'customer_request', amount: 500 });
    expect(refund.status).toBe(200);
    expect(refund.body).toMatchObject({ status: 'pending', created_at: expect.any(String) });
    t.server.clock.now = processed;
    while ((await jobs.runDue()) > 0);
    const after = await read(`/refunds/${refund.body.id}`);
    expect(after.status).toBe('succeeded');
    expect(at(after.created_at)).toBe(refunded.toISOString());
    expect(at(after.modified_at)).toBe(processed.toISOString());
    expect(at((await read(paths.order)).modified_at)).toBe(refunded.toISOString());
  });
});

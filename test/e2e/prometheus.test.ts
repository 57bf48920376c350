// The operators' Prometheus metrics (GET /metrics): scraped after a whole purchase in sandbox (a
// product, a checkout confirmed with the test card, the paid order's webhook delivered), every
// family is there with the values the purchase caused, routes are templates, and nothing in the
// scrape names a customer, an id or a token. Never public: a 401 without the token, and served on
// its own port (then not on the main one) when METRICS_PORT is set; without either it is a 404 (in
// request-paths.test.ts, beside the other paths that are not served).
import { afterAll, describe, expect, it } from 'vitest';
import { newOrganization } from '../helpers/organizations.ts';
import { buyWithCheckout, fixedProduct } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a scrape in the text format: `name{label="value",…} number`. */
function samplesOf(body: string): Sample[] {
  return body
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** The sum of a family's samples whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

function scrape(url: string, token?: string) {
  return fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
}

describe('with METRICS_TOKEN, after a purchase', () => {
  const t = useTestServer({
    env: { METRICS_TOKEN, TEST_CARD_DELAY_MS: '0', JOB_POLL_INTERVAL_MS: '50', RATE_LIMITS: 'on', RATE_LIMIT_LICENSE_PER_SECOND: '1', RATE_LIMIT_IP_PER_SECOND: '100000' },
  });
  let receiver: Receiver | undefined;
  afterAll(() => receiver?.close());

  it('serves every family, counting what the purchase did, with route templates and no id, email or token', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    receiver = await startReceiver();
    const endpoint = expectStatus(await org.api('POST', '/webhooks/endpoints', { url: receiver.url, format: 'raw', events: ['order.paid'] }), 201);
    receiver.secret = endpoint.secret;
    const product = await fixedProduct(org);
    const email = 'metrics.buyer@example.com';
    const { checkout, order } = await buyWithCheckout(org, product.id, email);
    await eventually(async () => receiver!.receipts.filter((r) => r.event?.type === 'order.paid' && r.event.data.id === order.id), (r) => r.length === 1, 'order.paid delivered');
    // GraphQL over HTTP: a named operation and an anonymous one.
    expect((await org.gql(`query ProductsForMetrics { core { products(first: 1) { totalCount } } }`)).body.errors).toBeUndefined();
    expect((await org.gql(`{ core { products(first: 1) { totalCount } } }`)).body.errors).toBeUndefined();
    // The license endpoints allow one call a second per address here: of five at once, some are refused.
    const statuses = await Promise.all([1, 2, 3, 4, 5].map(async () => (await org.publicApi('POST', '/customer-portal/license-keys/validate', { key: 'NOT-A-KEY', organization_id: org.organizationId })).status));
    expect(statuses).toContain(429);
    expect((await fetch(`${t.server.url}/no-such-place/${order.id}`)).status).toBe(404);

    const response = await scrape(t.server.url, METRICS_TOKEN);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await response.text();
    const samples = samplesOf(body);

    const sandbox = { environment: 'sandbox' };
    expect(total(samples, 'kassa_http_requests_total', { method: 'POST', route: '/v1/checkouts/', status: '201', ...sandbox })).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'kassa_http_requests_total', { method: 'POST', route: '/v1/checkouts/client/{client_secret}/confirm', ...sandbox })).toBe(1);
    expect(total(samples, 'kassa_http_requests_total', { method: 'GET', route: '/v1/orders/', status: '200', ...sandbox })).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'kassa_http_requests_total', { route: 'unmatched', status: '404', environment: 'none' })).toBe(1);
    expect(total(samples, 'kassa_http_request_duration_seconds_count', { method: 'POST', route: '/v1/checkouts/', status_class: '2xx', ...sandbox })).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'kassa_http_request_duration_seconds_bucket', { route: '/v1/checkouts/', le: '+Inf', ...sandbox })).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'kassa_http_request_duration_seconds_sum', { route: '/v1/checkouts/', ...sandbox })).toBeGreaterThan(0);
    // Every route label is a template: a leading slash, no id.
    const routes = new Set(samples.filter((s) => s.name.startsWith('kassa_http_request')).map((s) => s.labels.route));
    for (const route of routes) expect(route).toMatch(/^(unmatched|\/[\w./{}-]*)$/);

    expect(total(samples, 'kassa_graphql_operations_total', { operation: 'ProductsForMetrics', type: 'query', ...sandbox })).toBe(1);
    expect(total(samples, 'kassa_graphql_operations_total', { operation: 'anonymous', type: 'query', ...sandbox })).toBe(1);
    expect(total(samples, 'kassa_graphql_operation_cost_count', { type: 'query', ...sandbox })).toBe(2);
    expect(total(samples, 'kassa_graphql_operation_cost_sum', { type: 'query', ...sandbox })).toBeGreaterThan(0);

    expect(total(samples, 'kassa_rate_limit_refusals_total', { limit: 'license', ...sandbox })).toBe(statuses.filter((s) => s === 429).length);
    expect(total(samples, 'kassa_jobs_runs_total', { kind: 'payment.charge', outcome: 'succeeded', ...sandbox })).toBe(1);
    expect(total(samples, 'kassa_jobs_runs_total', { outcome: 'given_up' })).toBe(0);
    expect(total(samples, 'kassa_webhook_deliveries_total', { outcome: 'succeeded', ...sandbox })).toBe(1);
    expect(total(samples, 'kassa_payments_total', { outcome: 'succeeded', ...sandbox })).toBe(1);
    expect(total(samples, 'kassa_payments_total', { outcome: 'failed' })).toBe(0);

    for (const environment of ['production', 'sandbox']) {
      for (const name of ['kassa_jobs_queue_depth', 'kassa_jobs_oldest_due_age_seconds', 'kassa_webhook_endpoint_lag_seconds']) {
        const [gauge] = samples.filter((s) => s.name === name && s.labels.environment === environment);
        expect(gauge?.value, `${name} of ${environment}`).toBeGreaterThanOrEqual(0);
        // Nothing waits minutes in a run of seconds.
        if (name !== 'kassa_jobs_queue_depth') expect(gauge.value).toBeLessThan(60);
      }
      const pool = Object.fromEntries(samples.filter((s) => s.name === 'kassa_db_pool_connections' && s.labels.environment === environment).map((s) => [s.labels.state, s.value]));
      expect(Object.keys(pool).sort()).toEqual(['idle', 'total', 'waiting']);
      expect(pool.total).toBeGreaterThanOrEqual(1);
      expect(pool.idle + pool.waiting).toBeGreaterThanOrEqual(0);
      expect(pool.idle).toBeLessThanOrEqual(pool.total);
    }
    // prom-client's process metrics, under the same prefix.
    expect(total(samples, 'kassa_nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(samples.some((s) => s.name === 'kassa_nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(total(samples, 'kassa_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(total(samples, 'kassa_process_cpu_seconds_total')).toBeGreaterThan(0);

    // Nothing that identifies anyone or anything: no UUID, no email address, no token or secret.
    expect(body).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
    expect(body).not.toMatch(/[\w.+-]+@[\w-]+\.[\w.]+/);
    expect(body).not.toMatch(/[a-z][a-z0-9]{1,15}_(oat|us|pat|cst|whs|at|rt|ac|cs|rat)_[0-9A-Za-z]+|whsec_|metrics-token/);
    for (const secret of [org.token, checkout.clientSecret, endpoint.secret, METRICS_TOKEN, email, order.id, org.organizationId]) expect(body).not.toContain(secret);
  });

  it('refuses a request without the token, or with another, as 401 and serves nothing else there', async () => {
    for (const authorization of [undefined, 'Bearer metrics-token-0123456789abcdeX', `Bearer ${METRICS_TOKEN}x`, 'Bearer short', `Basic ${METRICS_TOKEN}`]) {
      const response = await fetch(`${t.server.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(response.status, authorization ?? 'no header').toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      const body = await response.json();
      expect(body).toEqual({ error: 'Unauthorized', detail: expect.stringContaining('METRICS_TOKEN') });
    }
    const posted = await fetch(`${t.server.url}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
    // The scrapes are counted too, under their own route.
    const samples = samplesOf(await (await scrape(t.server.url, METRICS_TOKEN)).text());
    expect(total(samples, 'kassa_http_requests_total', { method: 'GET', route: '/metrics', status: '401', environment: 'none' })).toBe(5);
  });
});

describe('with METRICS_PORT', () => {
  const t = useTestServer({ env: { METRICS_PORT: '0' } });

  it('serves /metrics on its own port without a token, only there, and nothing else on that port', async () => {
    const url = t.server.kassa.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe(t.server.url);
    const response = await scrape(url);
    expect(response.status).toBe(200);
    const samples = samplesOf(await response.text());
    expect(total(samples, 'kassa_db_pool_connections', { environment: 'production', state: 'total' })).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${url}/v1/products/`)).status).toBe(404);
    expect((await fetch(`${url}/healthz`)).status).toBe(404);
    // The main port does not serve it, with or without a token.
    expect((await scrape(t.server.url)).status).toBe(404);
    expect((await scrape(t.server.url, METRICS_TOKEN)).status).toBe(404);
    // The metrics port's own answers are not counted among the API's requests.
    const again = samplesOf(await (await scrape(url)).text());
    expect(total(again, 'kassa_http_requests_total', { route: '/metrics' })).toBe(2);
    expect(total(again, 'kassa_http_requests_total', { route: 'unmatched' })).toBe(0);
  });
});

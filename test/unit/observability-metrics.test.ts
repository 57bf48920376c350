// The metrics' own rules, read back from their exposition: GraphQL operation names cannot grow the
// series without bound, the backlog gauges are ages at scrape time and are left out when their
// query does not answer in time, and a request is counted under its route's template.
import { describe, expect, it } from 'vitest';
import { routeLabels } from '../../src/http/route-labels.ts';
import { Metrics, type Backlog, type EnvironmentSources } from '../../src/observability/metrics.ts';
import { restRoutes } from '../../src/rest/routes/index.ts';

const now = new Date('2026-03-01T12:00:00Z');

function sources(backlog: () => Promise<Backlog>): EnvironmentSources {
  return { backlog, connections: () => ({ total: 4, idle: 3, waiting: 0 }), now: () => now };
}

const idle = sources(async () => ({ jobsDue: 0, oldestDueAt: null, oldestUndeliveredAt: null }));

/** The sample lines of a family, as written. */
async function lines(metrics: Metrics, name: string): Promise<string[]> {
  const { body } = await metrics.scrape();
  return body.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('the metrics', () => {
  it('keep the first 200 GraphQL operation names of at most 64 characters; any other name is counted as other', async () => {
    const metrics = new Metrics();
    const production = metrics.environment('production', idle);
    for (let i = 0; i < 200; i++) production.graphqlOperation(`Operation${i}`, 'query', 1);
    production.graphqlOperation('OneTooMany', 'query', 1);
    production.graphqlOperation('L'.repeat(65), 'mutation', 1);
    production.graphqlOperation('Operation7', 'query', 1);
    production.graphqlOperation(undefined, 'query', 1);
    const counted = await lines(metrics, 'kassa_graphql_operations_total');
    expect(counted).toHaveLength(203);
    expect(counted).toContain('kassa_graphql_operations_total{operation="Operation7",type="query",environment="production"} 2');
    expect(counted).toContain('kassa_graphql_operations_total{operation="other",type="query",environment="production"} 1');
    expect(counted).toContain('kassa_graphql_operations_total{operation="other",type="mutation",environment="production"} 1');
    expect(counted).toContain('kassa_graphql_operations_total{operation="anonymous",type="query",environment="production"} 1');
    expect(counted.join('\n')).not.toContain('OneTooMany');
  });

  it('report backlogs as ages at scrape time, and leave them out when the query does not answer in time', async () => {
    let answer: () => Promise<Backlog> = async () => ({ jobsDue: 3, oldestDueAt: new Date(now.getTime() - 90_000), oldestUndeliveredAt: new Date(now.getTime() - 2_500) });
    const failures: string[] = [];
    const metrics = new Metrics({ backlogTimeoutMs: 50, onSourceFailure: (environment, error) => failures.push(`${environment}: ${(error as Error).message}`) });
    metrics.environment('sandbox', sources(() => answer()));
    expect(await lines(metrics, 'kassa_jobs_queue_depth')).toEqual(['kassa_jobs_queue_depth{environment="sandbox"} 3']);
    expect(await lines(metrics, 'kassa_jobs_oldest_due_age_seconds')).toEqual(['kassa_jobs_oldest_due_age_seconds{environment="sandbox"} 90']);
    expect(await lines(metrics, 'kassa_webhook_endpoint_lag_seconds')).toEqual(['kassa_webhook_endpoint_lag_seconds{environment="sandbox"} 2.5']);
    expect(await lines(metrics, 'kassa_db_pool_connections')).toEqual([
      'kassa_db_pool_connections{environment="sandbox",state="total"} 4',
      'kassa_db_pool_connections{environment="sandbox",state="idle"} 3',
      'kassa_db_pool_connections{environment="sandbox",state="waiting"} 0',
    ]);
    answer = () => new Promise(() => {});
    expect(await lines(metrics, 'kassa_jobs_queue_depth')).toEqual([]);
    expect(await lines(metrics, 'kassa_webhook_endpoint_lag_seconds')).toEqual([]);
    // Each scrape that went without says so.
    expect(failures).toEqual(['sandbox: the backlog query took longer than 50 ms', 'sandbox: the backlog query took longer than 50 ms']);
    // The pool is read from memory, not the database: it is still reported.
    expect(await lines(metrics, 'kassa_db_pool_connections')).toHaveLength(3);
  });

  it('count a request under its route template, or unmatched, any method outside HTTP\'s usual ones as other, and time all but event streams', async () => {
    const routeOf = routeLabels({
      provider: [{ method: 'GET', path: '/checkout/{client_secret}' }],
      api: restRoutes,
      graphiqlAssetPrefix: 'graphiql/',
    });
    const id = '0b6f6a0e-5b8e-4c1e-9d43-1f2a3b4c5d6e';
    expect(routeOf('GET', { kind: 'api', environment: 'production', path: `/v1/products/${id}` })).toBe('/v1/products/{id}');
    expect(routeOf('HEAD', { kind: 'api', environment: 'production', path: `/v1/products/${id}` })).toBe('/v1/products/{id}');
    expect(routeOf('GET', { kind: 'api', environment: 'sandbox', path: '/v1/checkouts/client/secret_abc' })).toBe('/v1/checkouts/client/{client_secret}');
    expect(routeOf('GET', { kind: 'api', environment: 'production', path: `/v1/no-such/${id}` })).toBe('unmatched');
    expect(routeOf('GET', { kind: 'provider', environment: 'production', path: '/checkout/cs_abc' })).toBe('/checkout/{client_secret}');
    expect(routeOf('GET', { kind: 'provider', environment: 'production', path: `/portal/${id}/nothing` })).toBe('unmatched');
    expect(routeOf('GET', { kind: 'invoice-pdf', environment: 'production', path: `/v1/invoices/${id}.pdf`, invoiceId: id })).toBe('/v1/invoices/{id}.pdf');
    expect(routeOf('GET', { kind: 'nowhere' })).toBe('unmatched');

    const metrics = new Metrics();
    metrics.httpRequest('PROPFIND', 'unmatched', 404, 'none', 0.01);
    metrics.httpRequest('GET', '/v1/products/{id}', 200, 'production', 0.02);
    // An event stream is counted, but how long it stayed open is no latency.
    metrics.httpRequest('POST', '/v1/graphql', 200, 'sandbox', null);
    expect(await lines(metrics, 'kassa_http_requests_total')).toEqual([
      'kassa_http_requests_total{method="other",route="unmatched",status="404",environment="none"} 1',
      'kassa_http_requests_total{method="GET",route="/v1/products/{id}",status="200",environment="production"} 1',
      'kassa_http_requests_total{method="POST",route="/v1/graphql",status="200",environment="sandbox"} 1',
    ]);
    expect(await lines(metrics, 'kassa_http_request_duration_seconds_count')).toEqual([
      'kassa_http_request_duration_seconds_count{method="other",route="unmatched",status_class="4xx",environment="none"} 1',
      'kassa_http_request_duration_seconds_count{method="GET",route="/v1/products/{id}",status_class="2xx",environment="production"} 1',
    ]);
  });
});

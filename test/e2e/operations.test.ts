// What an operator relies on: health and readiness, request ids, GraphiQL, and unexpected errors
// that are logged with their request id but never shown to the client.
import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { postgresAdminUrl, restClient, usePostgres } from '../helpers/server.ts';
import { eventually } from '../helpers/waiting.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer();
let token: string;
beforeAll(async () => {
  ({ token } = await t.server.bootstrap('production'));
});

describe('operating Kassa', () => {
  it('answers /healthz and /readyz while both databases are up', async () => {
    expect(await (await fetch(`${t.server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${t.server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', databases: { production: 'ok', sandbox: 'ok' } });
  });

  it('keeps a sane incoming x-request-id and replaces one that is not', async () => {
    const kept = await fetch(`${t.server.base()}/products/`, { headers: { 'x-request-id': 'trace-123.abc' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123.abc');
    const replaced = await fetch(`${t.server.base()}/products/`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.server.logs.some((line) => JSON.parse(line).requestId === 'trace-123.abc')).toBe(true);
  });

  it('answers paths outside the API with a JSON 404', async () => {
    const response = await restClient(t.server.url)('GET', '/nowhere');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
    expect(response.headers.get('content-type')).toContain('application/json');
  });

  it('serves GraphiQL to a browser at the GraphQL endpoint', async () => {
    const page = await fetch(`${t.server.base('sandbox')}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('Kassa GraphQL (sandbox)');
  });

  it('reports not ready while a database does not answer', async () => {
    const { prisma } = t.server.kassa.environments.production.environment;
    const original = prisma.$queryRaw;
    prisma.$queryRaw = (() => Promise.reject(new Error('connection refused'))) as unknown as typeof original;
    try {
      const ready = await fetch(`${t.server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'unavailable', databases: { production: 'unavailable', sandbox: 'ok' } });
    } finally {
      prisma.$queryRaw = original;
    }
    expect((await fetch(`${t.server.url}/readyz`)).status).toBe(200);
  });

  it('masks an unexpected failure and logs it with the request id, leaving the other environment working', async () => {
    // A table vanishing under the server is a failure no request could cause.
    await t.server.kassa.environments.production.environment.prisma.$executeRawUnsafe('DROP TABLE product_prices, products CASCADE');
    const response = await restClient(t.server.base(), token)('GET', '/products/');
    expect(response.status).toBe(500);
    const requestId = response.headers.get('x-request-id')!;
    expect(response.body).toEqual({ error: 'InternalServerError', detail: `An unexpected error occurred. Quote request id ${requestId} when reporting it.` });
    const logged = t.server.logs.map((line) => JSON.parse(line)).find((entry) => entry.requestId === requestId && entry.level === 50);
    expect(logged?.err).toBeDefined();

    expect(JSON.stringify(response.body)).not.toContain('products');

    const graphql = await fetch(`${t.server.base()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ core { products { items { id } } } }' }),
    });
    const body = await graphql.json();
    expect(body.errors[0].message).toBe('Unexpected error.');
    expect(body.errors[0].extensions).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', requestId: graphql.headers.get('x-request-id') });
    expect(JSON.stringify(body)).not.toContain('relation');

    // The sandbox keeps working: the environments share nothing.
    const sandbox = await t.server.bootstrap('sandbox');
    expect((await restClient(t.server.base('sandbox'), sandbox.token)('GET', '/products/')).status).toBe(200);
  });
});

describe.runIf(usePostgres)('when PostgreSQL ends the server’s connections', () => {
  it('logs a warning, keeps running, and answers the next requests on new connections', async () => {
    // Sandbox: the test above dropped production's products table.
    const sandbox = await t.server.bootstrap('sandbox');
    const api = restClient(t.server.base('sandbox'), sandbox.token);
    // Several requests at once leave several idle connections in the pool.
    const warm = await Promise.all(Array.from({ length: 4 }, () => api('GET', '/products/')));
    expect(warm.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const database = new URL((t.server.config.databases.sandbox as { url: string }).url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      const ended = await admin.query('SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      expect(ended.rows.length).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    const warned = () => t.server.logs.map((line) => JSON.parse(line)).filter((entry) => /PostgreSQL ended an idle database connection/.test(entry.msg));
    await eventually(async () => warned().length, (count) => count > 0, 'a warning about the ended connections');
    expect(warned()[0]).toMatchObject({ level: 40, err: { code: '57P01' } });
    // The server is still up, and its pool reconnects.
    expect((await api('GET', '/products/')).status).toBe(200);
    const ready = await fetch(`${t.server.url}/readyz`);
    expect(ready.status).toBe(200);
  });
});

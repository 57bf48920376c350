// The request target is read as a path: `//host/…` names no host, and dot segments, doubled or
// percent-encoded slashes match no route. Sent raw over node:http, since fetch would normalize
// them away. Anything that is not a route is 404 with the documented body, and creates nothing.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer({ organizations: { org: 'production' } });

/** Sends `method target` exactly as written, with the organization's token. */
function raw(method: string, target: string, body?: unknown): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(t.server.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        method,
        path: target,
        headers: { authorization: `Bearer ${t.org.token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function productTotal(): Promise<number> {
  const response = await t.org.api('GET', '/products/?limit=100');
  expect(response.status).toBe(200);
  return response.body.pagination.total_count;
}

const product = { name: 'Reached by a strange path', recurring_interval: null, prices: [{ amount_type: 'free' }] };

function expectNotFound(response: { status: number; body: any }, target = '') {
  expect(response.status, `${target} ${JSON.stringify(response.body)}`).toBe(404);
  expect(response.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
}

const strangeTargets = [
  '//evil.example/v1/products/',
  '//evil.example/sandbox/v1/products/',
  '/v1//products/',
  '/v1/./products/',
  '/sandbox/../v1/products/',
  '/sandbox/%2e%2e/v1/products/',
  '/v1%2Fproducts/',
  '/v1/products%2F',
  '/v1\\products/',
];

describe('a request target that is not a route', () => {
  it('is 404 with the documented body for GET and POST, creating nothing: //host, dot segments, doubled, encoded or back slashes', async () => {
    const before = await productTotal();
    for (const target of strangeTargets) {
      expectNotFound(await raw('GET', target), target);
      expectNotFound(await raw('POST', target, product), target);
    }
    expect(await productTotal()).toBe(before);
  });

  it('is 404 even when no URL parser would accept it, and the server keeps serving', async () => {
    for (const target of ['//[', '//a:b@c:99999/v1/products/', '//%zz/v1/products/']) expectNotFound(await raw('GET', target), target);
    expect((await raw('GET', '/v1/products/?limit=1')).status).toBe(200);
  });

  it('//evil.example/v1/graphql does not reach GraphQL', async () => {
    expectNotFound(await raw('POST', '//evil.example/v1/graphql', { query: '{ __typename }' }));
  });

  it('the health checks are only at their own paths', async () => {
    expectNotFound(await raw('GET', '//healthz'));
    expectNotFound(await raw('GET', '/./healthz'));
    expect((await raw('GET', '/healthz')).status).toBe(200);
  });

  it('/metrics is not served where neither METRICS_TOKEN nor METRICS_PORT is set, whatever token the request bears', async () => {
    expectNotFound(await raw('GET', '/metrics'), '/metrics');
    expectNotFound(await raw('GET', '/sandbox/metrics'), '/sandbox/metrics');
  });
});

describe('a request target in absolute form (RFC 9112 §3.2.2)', () => {
  it('is served by its path alone, its query split at the first ?, and read as a path too', async () => {
    const created = await raw('POST', 'http://elsewhere.example/v1/products/', product);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const listed = await raw('GET', `http://elsewhere.example/v1/products/?limit=1&query=${encodeURIComponent('strange path')}&x=a?b`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([created.body.id]);
    const before = await productTotal();
    expectNotFound(await raw('POST', 'http://elsewhere.example//evil.example/v1/products/', product));
    expectNotFound(await raw('GET', 'http://elsewhere.example/v1/./products/'));
    expect(await productTotal()).toBe(before);
  });
});

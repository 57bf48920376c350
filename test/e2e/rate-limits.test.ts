// The documented limits, fired at a live server concurrently: each admits exactly its budget in a
// window, then answers 429 with Retry-After and a body naming the limit, and admits again in the
// next window. The server's clock is frozen at the start of a window, so a burst cannot straddle two.
import { connect } from 'node:net';
import { request } from 'node:http';
import { Polar } from '@polar-sh/sdk';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newOrganization, sdkServerURL } from '../helpers/organizations.ts';

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function serverWith(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer({ RATE_LIMITS: 'on', ...env });
  servers.push(server);
  return server;
}

/** Freezes the server's clock `offsetMs` into a fresh minute (so into a fresh second too). */
function freezeAtWindowStart(server: TestServer, offsetMs = 100): number {
  const start = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
  server.clock.now = new Date(start + offsetMs);
  return start;
}

function burst(count: number, send: (i: number) => Promise<Response>) {
  return Promise.all(Array.from({ length: count }, (_, i) => send(i)));
}

const refusedCount = (responses: Response[]) => responses.filter((r) => r.status === 429).length;
const unknownOrganization = '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d';

describe('per client address', () => {
  test('admits exactly the limit in a window, refuses the rest with Retry-After and a body naming the limit, then admits again', async () => {
    const server = await serverWith({ RATE_LIMIT_IP_PER_SECOND: '10' });
    const start = freezeAtWindowStart(server);
    const responses = await burst(25, () => fetch(`${server.base()}/products/`));
    expect(refusedCount(responses)).toBe(15);
    const admitted = responses.filter((r) => r.status !== 429);
    expect(admitted.map((r) => r.status)).toEqual(Array(10).fill(401));
    expect(admitted.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of admitted) expect(r.headers.get('ratelimit-limit')).toBe('10');

    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(await refused.json()).toEqual({
      error: 'RateLimitExceeded',
      detail: 'Rate limit exceeded: 10 requests per second per client address. Retry after 1 second.',
      limit: { name: 'ip', limit: 10, window_seconds: 1, retry_after: 1 },
    });

    server.clock.now = new Date(start + 1100);
    expect((await fetch(`${server.base()}/products/`)).status).toBe(401);
    server.clock.now = null;
  });

  test('counts production and sandbox apart, and covers the OAuth endpoints and GraphQL too', async () => {
    const server = await serverWith({ RATE_LIMIT_IP_PER_SECOND: '3' });
    freezeAtWindowStart(server);
    const mixed = await Promise.all([
      fetch(`${server.url}/.well-known/openid-configuration`),
      fetch(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' }),
      fetch(`${server.base()}/no-such-path`),
      fetch(`${server.base()}/products/`),
    ]);
    expect(refusedCount(mixed)).toBe(1);
    for (const r of mixed) expect(r.headers.get('ratelimit-limit')).toBe('3');
    expect((await fetch(`${server.base('sandbox')}/products/`)).status).toBe(401);
    server.clock.now = null;
  });

  test('a client cannot escape it with X-Forwarded-For; behind a trusted proxy the nearest untrusted address is the client', async () => {
    const direct = await serverWith({ RATE_LIMIT_IP_PER_SECOND: '5' });
    freezeAtWindowStart(direct);
    const spoofed = await burst(12, (i) => fetch(`${direct.base()}/products/`, { headers: { 'x-forwarded-for': `198.51.100.${i}` } }));
    expect(refusedCount(spoofed)).toBe(7);
    direct.clock.now = null;

    const proxied = await serverWith({ RATE_LIMIT_IP_PER_SECOND: '5', TRUSTED_PROXIES: '127.0.0.1,10.0.0.0/8' });
    freezeAtWindowStart(proxied);
    // What the client wrote itself (left of the proxies' hops) is ignored.
    const forged = await burst(12, (i) => fetch(`${proxied.base()}/products/`, { headers: { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7, 10.1.2.3` } }));
    expect(refusedCount(forged)).toBe(7);
    // Another client behind the same proxy has its own budget.
    expect((await fetch(`${proxied.base()}/products/`, { headers: { 'x-forwarded-for': '203.0.113.8' } })).status).toBe(401);
    proxied.clock.now = null;
  });
});

describe('per principal', () => {
  test('an organization gets exactly its budget per minute; another organization keeps its own; an override raises or lowers it', async () => {
    const server = await serverWith({ RATE_LIMIT_PER_MINUTE: '20' });
    const [a, b, c] = [await newOrganization(server), await newOrganization(server), await newOrganization(server)];
    freezeAtWindowStart(server);
    const responses = await burst(30, () => fetch(`${server.base()}/products/`, { headers: { authorization: `Bearer ${a.token}` } }));
    expect(refusedCount(responses)).toBe(10);
    const refused = await responses.find((r) => r.status === 429)!.json();
    expect(refused).toMatchObject({ error: 'RateLimitExceeded', limit: { name: 'principal', limit: 20, window_seconds: 60, retry_after: 60 } });
    expect(refused.detail).toContain('20 requests per minute per organization');
    expect((await b.api('GET', '/products/')).status).toBe(200);

    (server.config.rateLimits.organizationOverrides as Map<string, number>).set(c.organizationId, 4);
    const lowered = await burst(6, () => fetch(`${server.base()}/products/`, { headers: { authorization: `Bearer ${c.token}` } }));
    expect(refusedCount(lowered)).toBe(2);
    expect(lowered.find((r) => r.status === 200)!.headers.get('ratelimit-limit')).toBe('4');
    server.clock.now = null;
  });

  test('GraphQL answers 429 with RATE_LIMITED and Retry-After, an operation counting one request as a REST call does', async () => {
    const server = await serverWith({ RATE_LIMIT_PER_MINUTE: '9' });
    const org = await newOrganization(server);
    freezeAtWindowStart(server);
    // Five GraphQL operations and four REST calls spend the budget of nine, whatever each costs.
    for (let i = 0; i < 5; i++) expect((await org.gql('{ core { products(limit: 100) { items { id prices { id } } pagination { totalCount } } } }')).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await org.api('GET', '/products/?limit=100')).status).toBe(200);
    const refused = await fetch(`${server.base()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.token}` },
      body: JSON.stringify({ query: '{ core { products { pagination { totalCount } } } }' }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    const body = await refused.json();
    expect(body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(body.errors[0].message).toContain('9 requests per minute per organization (a GraphQL operation counts as one)');
    expect(body.data ?? null).toBeNull();
    server.clock.now = null;
  });
});

describe('license key endpoints', () => {
  test('admit 3 per second per address over REST, and GraphQL counts each call an operation makes', async () => {
    const server = await serverWith({});
    const start = freezeAtWindowStart(server);
    const validate = () =>
      fetch(`${server.base()}/customer-portal/license-keys/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: 'NOPE', organization_id: unknownOrganization }) });
    const responses = await burst(7, validate);
    expect(refusedCount(responses)).toBe(4);
    const refused = await responses.find((r) => r.status === 429)!.json();
    expect(refused.detail).toContain('license key endpoints');
    expect(responses.filter((r) => r.status !== 429).every((r) => r.status === 404)).toBe(true);

    server.clock.now = new Date(start + 1100);
    const call = (n: number) => Array.from({ length: n }, (_, i) => `k${i}: licenseKeyValidate(input: { key: "NOPE", organizationId: "${unknownOrganization}" }) { id }`).join(' ');
    const four = await fetch(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `mutation { ${call(4)} }` }) });
    expect(four.status).toBe(429);
    const two = await fetch(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `mutation { ${call(2)} }` }) });
    expect(two.status).toBe(404);
    expect((await two.json()).errors[0].extensions.code).toBe('RESOURCE_NOT_FOUND');

    // Calls hidden in fragments, named or inline, count the same.
    server.clock.now = new Date(start + 2100);
    const hidden = `mutation { ...Calls ... on Mutation { ${call(1).replace('k0', 'inline')} } } fragment Calls on Mutation { ${call(3)} }`;
    const viaFragments = await fetch(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: hidden }) });
    expect(viaFragments.status).toBe(429);
    server.clock.now = null;
  });
});

describe('GraphQL cost', () => {
  const gql = (server: TestServer, token: string, query: string) =>
    fetch(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query }) });

  test('the points bucket is charged the requested cost, then given back all the answer did not hold', async () => {
    const server = await serverWith({ GRAPHQL_POINTS_MAXIMUM: '1000', GRAPHQL_POINTS_RESTORE_RATE: '1' });
    const org = await newOrganization(server);
    const start = freezeAtWindowStart(server);
    const product = await (await gql(server, org.token, `{ core { product(id: "${unknownOrganization}") { id name } } }`)).json();
    // Requested: core and the product. Actual: core only, the product being null.
    expect(product.extensions.cost).toEqual({ requestedQueryCost: 2, actualQueryCost: 1, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 999, restoreRate: 1 } });
    // Requested: core, the page, 100 orders and their customers. No order exists yet: the answer holds core and the page.
    const orders = await gql(server, org.token, '{ core { orders(limit: 100) { items { id customer { id } } } } }');
    const body = await orders.json();
    expect(body.extensions.cost).toEqual({ requestedQueryCost: 202, actualQueryCost: 2, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 997, restoreRate: 1 } });
    // The request budget counts requests, one for each operation, whatever its cost.
    expect(orders.headers.get('ratelimit-remaining')).toBe('298');

    // core 1 + a page of 90 products with 10 prices each (1 + 90 × 11) + a page of 7 (1 + 7): the whole bucket, 1000.
    const whole = '{ core { a: products(limit: 90) { items { prices { id } } } b: products(limit: 7) { items { id } } } }';
    const throttled = await gql(server, org.token, whole);
    expect(throttled.status).toBe(429);
    const refused = await throttled.json();
    expect(refused.errors[0].extensions.code).toBe('THROTTLED');
    expect(refused.errors[0].message).toBe('Throttled: the query costs 1000 points and 997 of 1000 are available, restored at 1 a second. Retry after 3 seconds.');
    expect(throttled.headers.get('retry-after')).toBe('3');
    expect(refused.extensions.cost).toEqual({ requestedQueryCost: 1000, actualQueryCost: 0, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 997, restoreRate: 1 } });
    expect(refused.data ?? null).toBeNull();

    // Three seconds on, the bucket is full again and the query runs; it gives back all but the three objects it held.
    server.clock.now = new Date(start + 100 + 3_000);
    const admitted = await (await gql(server, org.token, whole)).json();
    expect(admitted.data).toEqual({ core: { a: { items: [] }, b: { items: [] } } });
    expect(admitted.extensions.cost).toEqual({ requestedQueryCost: 1000, actualQueryCost: 3, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 997, restoreRate: 1 } });
    server.clock.now = null;
  });

  test('an operation over the maximum cost, depth, aliases or tokens is refused before any resolver runs, and costs nothing', async () => {
    const server = await serverWith({ GRAPHQL_MAX_COST: '150', GRAPHQL_MAX_DEPTH: '4', GRAPHQL_POINTS_MAXIMUM: '1000' });
    const org = await newOrganization(server);
    freezeAtWindowStart(server);
    const tooCostly = await gql(server, org.token, '{ core { orders(limit: 100) { items { id customer { id } items { id } } } } }');
    expect(tooCostly.status).toBe(400);
    const costly = await tooCostly.json();
    expect(costly.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(costly.errors[0].message).toBe('The query costs 1202, above the limit of 150: ask for fewer items with smaller `limit` arguments, or select fewer nested objects.');

    const aliases = Array.from({ length: 31 }, (_, i) => `p${i}: productCreate(input: { name: "Alias ${i}", prices: [{ amountType: free }] }) { id }`).join(' ');
    const manyAliases = await (await gql(server, org.token, `mutation { core { ${aliases} } }`)).json();
    expect(manyAliases.errors[0].message).toContain('31 aliases, above the limit of 30');
    // core, orders, items, product, organization, id: six deep, above the limit of four.
    const deep = await (await gql(server, org.token, '{ core { orders { items { product { organization { id } } } } } }')).json();
    expect(deep.errors[0].message).toBe('The query nests fields 6 deep, above the limit of 4: select fewer levels of nested objects.');
    const tokens = await gql(server, org.token, `{ core { ${'product(id: "x") { id } '.repeat(400)} } }`);
    // Refused by the parser itself, before the document is built.
    const tokensBody = await tokens.json();
    expect(tokensBody.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(tokensBody.errors[0].message).toContain('more that 2000 tokens');

    // Nothing ran and nothing was charged: no product was made, and the bucket is whole but for this query.
    const listed = await (await gql(server, org.token, '{ core { products { pagination { totalCount } } } }')).json();
    expect(listed.data.core.products.pagination.totalCount).toBe(0);
    expect(listed.extensions.cost).toEqual({ requestedQueryCost: 3, actualQueryCost: 3, throttleStatus: expect.objectContaining({ currentlyAvailable: 997 }) });
    server.clock.now = null;
  });

  test('an operation dearer than a full bucket is refused as too complex, not told to retry', async () => {
    const server = await serverWith({ GRAPHQL_POINTS_MAXIMUM: '100' });
    const org = await newOrganization(server);
    const response = await gql(server, org.token, '{ core { products(limit: 100) { items { id prices { __typename } } } } }');
    expect(response.status).toBe(400);
    expect(response.headers.get('retry-after')).toBeNull();
    const body = await response.json();
    expect(body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(body.errors[0].message).toContain('more than the 100 a bucket holds');
  });

  test('introspection is allowed and cheap', async () => {
    const server = await serverWith({});
    const org = await newOrganization(server);
    const response = await gql(server, org.token, getIntrospectionQuery());
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data.__schema.queryType.name).toBe('Query');
    expect(body.extensions.cost.requestedQueryCost).toBe(0);
  });
});

describe('GraphQL without a token', () => {
  const anonymous = (server: TestServer, query: string) =>
    fetch(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  // Requested: the organization and up to 10 products, 11.
  const shop = '{ customerPortalOrganization(slug: "no-such-shop") { products { id } } }';

  test('counts each operation against the client address’s own per-minute budget, apart from any token’s', async () => {
    const server = await serverWith({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '5', RATE_LIMIT_PER_MINUTE: '1000' });
    const org = await newOrganization(server);
    const start = freezeAtWindowStart(server);
    const first = await anonymous(server, shop);
    expect(first.status).not.toBe(429);
    expect((await first.json()).extensions.cost).toMatchObject({ requestedQueryCost: 11, throttleStatus: { maximumAvailable: 50_000, restoreRate: 5_000 } });
    expect(first.headers.get('ratelimit-limit')).toBe('5');
    expect(first.headers.get('ratelimit-remaining')).toBe('4');

    // 4 operations left: four of eight fit, whatever the order they arrive in; the rest are refused.
    const responses = await burst(8, () => anonymous(server, shop));
    expect(refusedCount(responses)).toBe(4);
    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.headers.get('retry-after')).toBe(String(Math.ceil((start + 60_000 - server.clock.now!.getTime()) / 1000)));
    const error = (await refused.json()).errors[0];
    expect(error.extensions.code).toBe('RATE_LIMITED');
    expect(error.message).toContain('5 requests per minute per client address for GraphQL without a token (a GraphQL operation counts as one)');

    // A token's budget is its own, from the same address.
    const withToken = await fetch(`${server.base()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.token}` },
      body: JSON.stringify({ query: '{ core { products { pagination { totalCount } } } }' }),
    });
    expect(withToken.status).toBe(200);
    // So is REST without a token: it counts against the per-address limit per request only.
    expect((await fetch(`${server.base()}/products/`)).status).toBe(401);

    server.clock.now = new Date(start + 60_100);
    expect((await anonymous(server, shop)).status).not.toBe(429);
    server.clock.now = null;
  });

  test('an operation dearer than a full bucket is refused as too complex, not told to retry', async () => {
    const server = await serverWith({ GRAPHQL_POINTS_MAXIMUM: '1' });
    const response = await anonymous(server, shop);
    expect(response.status).toBe(400);
    expect(response.headers.get('retry-after')).toBeNull();
    const error = (await response.json()).errors[0];
    expect(error.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(error.message).toContain('more than the 1 a bucket holds');
  });
});

describe('the official client library', () => {
  test('retries a 429 by itself and succeeds after the wait', async () => {
    const server = await serverWith({ RATE_LIMIT_IP_PER_SECOND: '2' });
    const org = await newOrganization(server);
    const polar = new Polar({
      accessToken: org.token,
      serverURL: sdkServerURL(server),
      retryConfig: { strategy: 'backoff', backoff: { initialInterval: 200, maxInterval: 2000, exponent: 1.5, maxElapsedTime: 15_000 }, retryConnectionErrors: false },
    });
    const started = Date.now();
    const pages = await Promise.all(Array.from({ length: 5 }, () => polar.products.list({})));
    for (const page of pages) expect(page.result.pagination.totalCount).toBe(0);
    // Five requests at two per second cannot all have been answered in the first second.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });
});

describe('bodies and slow clients', () => {
  test('a GraphQL body over 1 MB gets 413, and one without a declared length 411, before anything reads it', async () => {
    const server = await serverWith({});
    const big = JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(1024 * 1024) } });
    const tooLarge = await fetch(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ error: 'PayloadTooLarge' });

    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end('{"query":"{ __typename }"}');
    });
    expect(chunked.status).toBe(411);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: 'LengthRequired' });
  });

  test('a client that does not finish its request in time gets 408 and is disconnected', async () => {
    const server = await serverWith({ REQUEST_TIMEOUT_MS: '1500' });
    const { port } = new URL(server.url);
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        // Headers promise 100 bytes; one arrives, and then nothing.
        socket.write('POST /v1/products/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
      });
      let received = '';
      socket.on('data', (d) => (received += d));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

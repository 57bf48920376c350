// Trusted documents: the operator ships a manifest of documents by SHA-256
// (GRAPHQL_TRUSTED_DOCUMENTS). With GRAPHQL_TRUSTED_DOCUMENTS_ONLY=true, GraphQL over HTTP runs
// those and nothing else, by hash or as text, and nobody can register more; the REST routes and
// the hosted pages, which run their own operations in-process, keep working. Without it, the list
// answers its hashes beside the clients' automatic persisted queries.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { loadConfig, type EnvironmentName } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startKassa } from '../../src/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { fixedProduct } from '../helpers/purchases.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

const productCount = 'query ProductCount { core { products { pagination { totalCount } } } }';
const typename = 'query Typename { __typename }';
// Five aliased lists of a hundred orders: over the maximum cost of 1,000.
const tooCostly = `query TooCostly { core { ${Array.from({ length: 21 }, (_, i) => i + 1).map((i) => `o${i}: orders(limit: 100) { items { id customer { id } items { id } } }`).join(' ')} } }`;
const unlisted = 'query Unlisted { __typename }';

/** A manifest as GraphQL Code Generator's client preset writes it. */
function manifestFile(documents = [productCount, typename, tooCostly]): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kassa-trusted-')), 'persisted-documents.json');
  writeFileSync(file, JSON.stringify(Object.fromEntries(documents.map((d) => [sha256(d), d])), null, 2));
  return file;
}

interface Answer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions: Record<string, any> }[] };
}

function clientOf(server: TestServer) {
  return {
    async post(body: unknown, options: { token?: string; environment?: EnvironmentName } = {}): Promise<Answer> {
      const response = await fetch(`${server.base(options.environment)}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    },
    async get(params: Record<string, unknown>): Promise<Answer> {
      const search = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
      const response = await fetch(`${server.base()}/graphql?${search}`);
      return { status: response.status, body: await response.json() };
    },
  };
}

function expectRefused(answer: Answer, status: number, code: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.data).toBeUndefined();
  expect(answer.body.errors).toHaveLength(1);
  expect(answer.body.errors![0].extensions.code).toBe(code);
}

describe('with trusted documents only', () => {
  const t = useTestServer({
    env: { GRAPHQL_TRUSTED_DOCUMENTS: manifestFile(), GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' },
    organizations: { org: 'production' },
  });
  let client: ReturnType<typeof clientOf>;
  beforeAll(() => {
    client = clientOf(t.server);
  });

  test('a listed document runs by its hash, over POST and GET, in both environments', async () => {
    const byPost = await client.post({ extensions: persisted(sha256(productCount)) }, { token: t.org.token });
    expect(byPost.status).toBe(200);
    expect(byPost.body.data).toEqual({ core: { products: { pagination: { totalCount: 0 } } } });
    expect((await client.get({ extensions: persisted(sha256(typename)) })).body.data).toEqual({ __typename: 'Query' });
    expect((await client.post({ extensions: persisted(sha256(typename)) }, { environment: 'sandbox' })).body.data).toEqual({ __typename: 'Query' });
  });

  test('a listed document also runs as text, with or without its hash', async () => {
    expect((await client.post({ query: typename })).body.data).toEqual({ __typename: 'Query' });
    expect((await client.post({ query: typename, extensions: persisted(sha256(typename)) })).body.data).toEqual({ __typename: 'Query' });
  });

  test('any other document is refused with PERSISTED_QUERY_ONLY, as text or by hash, and cannot be registered', async () => {
    for (const answer of [await client.post({ query: unlisted }), await client.get({ query: unlisted }), await client.post({ query: unlisted }, { environment: 'sandbox' })]) {
      expectRefused(answer, 400, 'PERSISTED_QUERY_ONLY');
      expect(answer.body.errors![0].message).toMatch(/only its trusted documents, and this query is not one of them/);
    }
    const registering = await client.post({ query: unlisted, extensions: persisted(sha256(unlisted)) });
    expectRefused(registering, 400, 'PERSISTED_QUERY_ONLY');
    const byHash = await client.post({ extensions: persisted(sha256(unlisted)) });
    expectRefused(byHash, 400, 'PERSISTED_QUERY_ONLY');
    expect(byHash.body.errors![0].message).toMatch(/none has this sha256Hash/);
    expect(t.server.kassa.environments.production.persisted.registered.size).toBe(0);
    // A text differing from a listed one by a single space is another document.
    expectRefused(await client.post({ query: `${typename} ` }), 400, 'PERSISTED_QUERY_ONLY');
    // Introspection too, unless it is listed.
    expectRefused(await client.post({ query: '{ __schema { queryType { name } } }' }), 400, 'PERSISTED_QUERY_ONLY');
  });

  test('a hash that is not its text\'s is still a mismatch, and a malformed extension still invalid', async () => {
    expectRefused(await client.post({ query: unlisted, extensions: persisted(sha256(typename)) }), 400, 'PERSISTED_QUERY_MISMATCH');
    expectRefused(await client.post({ extensions: { persistedQuery: { version: 2, sha256Hash: sha256(typename) } } }), 400, 'PERSISTED_QUERY_INVALID');
  });

  test('a listed document meets every limit: one over the maximum cost is refused', async () => {
    const answer = await client.post({ extensions: persisted(sha256(tooCostly)) }, { token: t.org.token });
    expectRefused(answer, 400, 'QUERY_TOO_COMPLEX');
    expect(answer.body.errors![0].message).toMatch(/^The query costs 25222, above the limit of 25000/);
  });

  test('the REST routes and the hosted checkout page keep working: they run their operations in-process', async () => {
    const product = await fixedProduct(t.org, 'Trusted guide', 1500);
    const listed = await t.org.api('GET', '/products/');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((p: { name: string }) => p.name)).toEqual(['Trusted guide']);
    const checkout = await t.org.api('POST', '/checkouts/', { products: [product.id] });
    expect(checkout.status).toBe(201);
    const page = await fetch(checkout.body.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Trusted guide');
    // The official client library, over the same REST routes.
    const products = await t.org.polar.products.list({});
    expect(products.result.items).toHaveLength(1);
    // And the listed document sees what REST made.
    const counted = await client.post({ extensions: persisted(sha256(productCount)) }, { token: t.org.token });
    expect(counted.body.data).toEqual({ core: { products: { pagination: { totalCount: 1 } } } });
  });
});

describe('with trusted documents beside automatic persisted queries', () => {
  const t = useTestServer({ env: { GRAPHQL_TRUSTED_DOCUMENTS: manifestFile(), GRAPHQL_APQ_MAX_DOCUMENTS: '2' } });
  let client: ReturnType<typeof clientOf>;
  beforeAll(() => {
    client = clientOf(t.server);
  });

  test('a listed hash runs without being registered, and any text still runs', async () => {
    expect((await client.post({ extensions: persisted(sha256(typename)) })).body.data).toEqual({ __typename: 'Query' });
    expect((await client.post({ query: unlisted })).body.data).toEqual({ __typename: 'Query' });
  });

  test('the store holds at most GRAPHQL_APQ_MAX_DOCUMENTS, dropping the least recently used; listed documents take no place in it', async () => {
    const documents = [1, 2, 3].map((i) => `query Registered${i} { r${i}: __typename }`);
    for (const document of documents) expect((await client.post({ query: document, extensions: persisted(sha256(document)) })).status).toBe(200);
    expect(t.server.kassa.environments.production.persisted.registered.size).toBe(2);
    expectRefused(await client.post({ extensions: persisted(sha256(documents[0])) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    expect((await client.post({ extensions: persisted(sha256(documents[1])) })).body.data).toEqual({ r2: 'Query' });
    // Sending a listed document with its hash registers nothing.
    await client.post({ query: typename, extensions: persisted(sha256(typename)) });
    expect((await client.post({ extensions: persisted(sha256(documents[2])) })).body.data).toEqual({ r3: 'Query' });
    expect((await client.post({ extensions: persisted(sha256(documents[1])) })).body.data).toEqual({ r2: 'Query' });
  });
});

describe('with automatic persisted queries off and no trusted documents', () => {
  const t = useTestServer({ env: { GRAPHQL_APQ_MAX_DOCUMENTS: '0' } });

  test('a persisted query is answered PERSISTED_QUERY_NOT_SUPPORTED, and plain text runs', async () => {
    const client = clientOf(t.server);
    for (const answer of [await client.post({ extensions: persisted(sha256(typename)) }), await client.post({ query: typename, extensions: persisted(sha256(typename)) })]) {
      expectRefused(answer, 400, 'PERSISTED_QUERY_NOT_SUPPORTED');
      expect(answer.body.errors![0].message).toBe('PersistedQueryNotSupported');
    }
    expect((await client.post({ query: typename })).body.data).toEqual({ __typename: 'Query' });
  });
});

test('a trusted document this API refuses stops the start, naming the variable, before any database is opened', async () => {
  const stale = 'query Stale { core { noSuchField } }';
  const config = loadConfig({ PORT: '0', DATA_DIR: 'memory://', GRAPHQL_TRUSTED_DOCUMENTS: manifestFile([typename, stale]) });
  await expect(startKassa(config, createLogger('silent'))).rejects.toThrow(
    `Invalid configuration: GRAPHQL_TRUSTED_DOCUMENTS maps ${sha256(stale)} to a document this API refuses: Cannot query field "noSuchField" on type "CoreQuery".`,
  );
});

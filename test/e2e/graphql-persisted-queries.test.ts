// Automatic persisted queries (Apollo's APQ protocol) over GET and POST: an unknown hash is
// PERSISTED_QUERY_NOT_FOUND, the text with its hash registers it, the hash alone then runs it. A
// hash never names another text, malformed extensions are refused with a code, each environment
// keeps its own bounded store, and a persisted document meets every limit a text meets.
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization } from '../helpers/organizations.ts';

// Rate limits on, with room for this file's anonymous requests, and 300 cost units a minute per token.
const t = useTestServer({
  env: { RATE_LIMITS: 'on', RATE_LIMIT_IP_PER_SECOND: '100000', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000', RATE_LIMIT_PER_MINUTE: '300', GRAPHQL_POINTS_MAXIMUM: '3000', GRAPHQL_POINTS_RESTORE_RATE: '1' },
  organizations: { org: 'production' },
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

interface Answer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions: Record<string, any> }[]; extensions?: any };
}

async function post(body: unknown, options: { token?: string; environment?: EnvironmentName } = {}): Promise<Answer> {
  const response = await fetch(`${t.server.base(options.environment)}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function get(params: Record<string, unknown>, environment?: EnvironmentName): Promise<Answer> {
  const search = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const response = await fetch(`${t.server.base(environment)}/graphql?${search}`, { headers: { accept: 'application/graphql-response+json' } });
  return { status: response.status, body: await response.json() };
}

/** A document no test has sent before. */
let unique = 0;
const fresh = (selection = '__typename') => `query Fresh${++unique} { ${selection} }`;

function expectRefused(answer: Answer, status: number, code: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.data).toBeUndefined();
  expect(answer.body.errors).toHaveLength(1);
  expect(answer.body.errors![0].extensions.code).toBe(code);
}

describe('the automatic persisted queries protocol', () => {
  test('an unknown hash is not found; the text with its hash runs and registers it; the hash alone then runs it (POST)', async () => {
    const query = fresh('core: __typename');
    const hash = sha256(query);
    const unknown = await post({ extensions: persisted(hash) });
    expectRefused(unknown, 404, 'PERSISTED_QUERY_NOT_FOUND');
    expect(unknown.body.errors![0].message).toBe('PersistedQueryNotFound');
    const registering = await post({ query, extensions: persisted(hash) });
    expect(registering.status).toBe(200);
    expect(registering.body.data).toEqual({ core: 'Query' });
    const known = await post({ extensions: persisted(hash) });
    expect(known.status).toBe(200);
    expect(known.body.data).toEqual({ core: 'Query' });
    // With variables and an operation name, as a client sends them.
    const withVariables = `query Named($slug: String!) { customerPortalOrganization(slug: $slug) { organization { name } } }`;
    const named = await post({ query: withVariables, operationName: 'Named', variables: { slug: 'nobody' }, extensions: persisted(sha256(withVariables)) });
    expect(named.body.errors![0].extensions.code, JSON.stringify(named.body)).toBe('RESOURCE_NOT_FOUND');
    const again = await post({ operationName: 'Named', variables: { slug: 'nobody-else' }, extensions: persisted(sha256(withVariables)) });
    expect(again.body.errors![0].extensions.code).toBe('RESOURCE_NOT_FOUND');
  });

  test('the same over GET, where clients send hashed queries by default', async () => {
    const query = fresh('viaGet: __typename');
    const hash = sha256(query);
    expectRefused(await get({ extensions: persisted(hash) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    const registering = await get({ query, extensions: persisted(hash) });
    expect(registering.status).toBe(200);
    expect(registering.body.data).toEqual({ viaGet: 'Query' });
    const known = await get({ extensions: persisted(hash) });
    expect(known.status).toBe(200);
    expect(known.body.data).toEqual({ viaGet: 'Query' });
    // Registered over GET, run over POST, and the other way round.
    expect((await post({ extensions: persisted(hash) })).body.data).toEqual({ viaGet: 'Query' });
    const posted = fresh('viaPost: __typename');
    await post({ query: posted, extensions: persisted(sha256(posted)) });
    expect((await get({ extensions: persisted(sha256(posted)) })).body.data).toEqual({ viaPost: 'Query' });
  });

  test('a persisted mutation still runs only over POST', async () => {
    const mutation = 'mutation { signIn(email: "nobody@example.com", password: "wrong password") { token } }';
    const hash = sha256(mutation);
    await post({ query: mutation, extensions: persisted(hash) });
    const overGet = await get({ extensions: persisted(hash) });
    expect(overGet.status).toBe(405);
    expect(overGet.body.errors![0].extensions.code).toBe('BAD_REQUEST');
  });

  test('a hash that is not the SHA-256 of the query is refused, and registers nothing', async () => {
    const query = fresh();
    const other = fresh();
    const refused = await post({ query, extensions: persisted(sha256(other)) });
    expectRefused(refused, 400, 'PERSISTED_QUERY_MISMATCH');
    expect(refused.body.errors![0].message).toMatch(/sha256Hash is not the SHA-256 of the query/);
    expectRefused(await get({ query, extensions: persisted(sha256(other)) }), 400, 'PERSISTED_QUERY_MISMATCH');
    expectRefused(await post({ extensions: persisted(sha256(other)) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    expectRefused(await post({ extensions: persisted(sha256(query)) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
  });

  test('the hash may be sent in upper case', async () => {
    const query = fresh('upper: __typename');
    await post({ query, extensions: persisted(sha256(query).toUpperCase()) });
    expect((await post({ extensions: persisted(sha256(query)) })).body.data).toEqual({ upper: 'Query' });
  });
});

describe('malformed persisted query extensions are refused with PERSISTED_QUERY_INVALID', () => {
  const hash = sha256('{ __typename }');
  test.each([
    ['a hash of 100,000 digits', { version: 1, sha256Hash: 'a'.repeat(100_000) }, /64 hexadecimal digits/],
    ['a hash that is not hex', { version: 1, sha256Hash: 'z'.repeat(64) }, /64 hexadecimal digits/],
    ['a hash one digit short', { version: 1, sha256Hash: hash.slice(1) }, /64 hexadecimal digits/],
    ['a hash that is a number', { version: 1, sha256Hash: 12345 }, /64 hexadecimal digits/],
    ['no hash', { version: 1 }, /64 hexadecimal digits/],
    ['version 2', { version: 2, sha256Hash: hash }, /only version 1 is supported/],
    ['version "1"', { version: '1', sha256Hash: hash }, /only version 1 is supported/],
    ['no version', { sha256Hash: hash }, /only version 1 is supported/],
    ['persistedQuery a string', hash, /must be an object/],
    ['persistedQuery an array', [1, hash], /must be an object/],
    ['persistedQuery a number', 1, /must be an object/],
  ])('%s', async (name, persistedQuery, message) => {
    const answers = [await post({ extensions: { persistedQuery } }), await post({ query: '{ __typename }', extensions: { persistedQuery } })];
    // A URL of 100 kB is over Node's header limit: that GET is refused before it is read (431).
    if (!name.includes('100,000')) answers.push(await get({ extensions: { persistedQuery } }));
    for (const answer of answers) {
      expectRefused(answer, 400, 'PERSISTED_QUERY_INVALID');
      expect(answer.body.errors![0].message).toMatch(message);
      // The refusal never echoes what was sent.
      expect(answer.body.errors![0].message.length).toBeLessThan(300);
    }
  });

  test('extensions that are not an object are refused by the GraphQL-over-HTTP checks, with a code', async () => {
    expectRefused(await post({ extensions: 'persistedQuery' }), 400, 'BAD_REQUEST');
  });

  test('extensions or variables that are not JSON, in a GET or a form body, are the client\'s mistake: 400 BAD_REQUEST', async () => {
    const notJson = encodeURIComponent('{"persistedQuery":{"version":1,');
    const sent = [
      fetch(`${t.server.base()}/graphql?extensions=${notJson}`, { headers: { accept: 'application/graphql-response+json' } }),
      fetch(`${t.server.base()}/graphql?query=${encodeURIComponent('{ __typename }')}&variables=${notJson}`),
      fetch(`${t.server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `query=${encodeURIComponent('{ __typename }')}&extensions=${notJson}` }),
    ];
    for (const response of await Promise.all(sent)) {
      const body = await response.json();
      expectRefused({ status: response.status, body }, 400, 'BAD_REQUEST');
      expect(body.errors[0].message).toMatch(/is not valid JSON/);
    }
    expect(t.server.logs.filter((line) => line.includes('unexpected error'))).toEqual([]);
  });
});

describe('registration under load and at the edges', () => {
  test('twenty concurrent registrations of one hash all run, and register it once', async () => {
    const query = fresh('concurrent: __typename');
    const hash = sha256(query);
    const before = t.server.kassa.environments.production.persisted.registered.size;
    const answers = await Promise.all(Array.from({ length: 20 }, () => post({ query, extensions: persisted(hash) })));
    for (const answer of answers) expect(answer.body).toMatchObject({ data: { concurrent: 'Query' } });
    expect(t.server.kassa.environments.production.persisted.registered.size).toBe(before + 1);
    const hashOnly = await Promise.all(Array.from({ length: 20 }, () => post({ extensions: persisted(hash) })));
    for (const answer of hashOnly) expect(answer.body).toMatchObject({ data: { concurrent: 'Query' } });
  });

  test('a registration in sandbox is unknown in production, and the other way round', async () => {
    const query = fresh('sandboxOnly: __typename');
    const hash = sha256(query);
    expect((await post({ query, extensions: persisted(hash) }, { environment: 'sandbox' })).status).toBe(200);
    expect((await post({ extensions: persisted(hash) }, { environment: 'sandbox' })).body.data).toEqual({ sandboxOnly: 'Query' });
    expectRefused(await post({ extensions: persisted(hash) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    expectRefused(await get({ extensions: persisted(hash) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    const productionOnly = fresh('productionOnly: __typename');
    await post({ query: productionOnly, extensions: persisted(sha256(productionOnly)) });
    expectRefused(await post({ extensions: persisted(sha256(productionOnly)) }, { environment: 'sandbox' }), 404, 'PERSISTED_QUERY_NOT_FOUND');
  });

  test('a query of a megabyte with its hash is refused as too large; the store keeps at most 16 MB, dropping the oldest', async () => {
    const overMegabyte = `{ __typename }\n# ${'x'.repeat(1024 * 1024)}`;
    const response = await fetch(`${t.server.base()}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: overMegabyte, extensions: persisted(sha256(overMegabyte)) }) });
    expect(response.status).toBe(413);
    expectRefused(await post({ extensions: persisted(sha256(overMegabyte)) }), 404, 'PERSISTED_QUERY_NOT_FOUND');

    // Just under the body limit, twenty times: more than the store's 16 MB.
    const big = Array.from({ length: 20 }, (_, i) => `query Big${i} { big${i}: __typename }\n# ${'x'.repeat(1000 * 1000 - 60)}`);
    for (const [i, query] of big.entries()) {
      const answer = await post({ query, extensions: persisted(sha256(query)) });
      expect(answer.body.data, JSON.stringify(answer.body)).toEqual({ [`big${i}`]: 'Query' });
    }
    const store = t.server.kassa.environments.production.persisted.registered;
    expect(store.heldSize).toBeLessThanOrEqual(16 * 1024 * 1024);
    expectRefused(await post({ extensions: persisted(sha256(big[0])) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    expect((await post({ extensions: persisted(sha256(big[19])) })).body.data).toEqual({ big19: 'Query' });
  });
});

describe('a persisted document meets every limit its text meets', () => {
  // Twenty-one aliased lists of a hundred orders, 1,201 each: a requested cost over 25,000, GRAPHQL_MAX_COST.
  const tooCostly = `{ core { ${Array.from({ length: 21 }, (_, i) => i + 1).map((i) => `o${i}: orders(limit: 100) { items { id customer { id } items { id } } }`).join(' ')} } }`;
  // Three of them: 3,604, under the maximum but more than the 3,000 points a bucket holds here.
  const overBudget = `{ core { ${[1, 2, 3].map((i) => `o${i}: orders(limit: 100) { items { id customer { id } items { id } } }`).join(' ')} } }`;
  const oneList = '{ core { orders(limit: 100) { items { id customer { id } items { id } } } } }';

  test('over the maximum cost: refused in full, when registering, and by hash alike', async () => {
    const inFull = await post({ query: tooCostly }, { token: t.org.token });
    expectRefused(inFull, 400, 'QUERY_TOO_COMPLEX');
    expect(inFull.body.errors![0].message).toMatch(/^The query costs 25222, above the limit of 25000/);
    const registering = await post({ query: tooCostly, extensions: persisted(sha256(tooCostly)) }, { token: t.org.token });
    expect(registering).toEqual(inFull);
    const byHash = await post({ extensions: persisted(sha256(tooCostly)) }, { token: t.org.token });
    expect(byHash).toEqual(inFull);
  });

  test('over the maximum aliases: refused by hash as in full', async () => {
    const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    const inFull = await post({ query: aliases });
    expectRefused(inFull, 400, 'QUERY_TOO_COMPLEX');
    expect(inFull.body.errors![0].message).toContain('31 aliases, above the limit of 30');
    expect(await post({ query: aliases, extensions: persisted(sha256(aliases)) })).toEqual(inFull);
    expect(await get({ extensions: persisted(sha256(aliases)) })).toEqual(inFull);
  });

  test('dearer than a full points bucket: refused the same way by hash', async () => {
    const inFull = await post({ query: overBudget }, { token: t.org.token });
    expectRefused(inFull, 400, 'QUERY_TOO_COMPLEX');
    expect(inFull.body.errors![0].message).toContain('costs 3604 points, more than the 3000 a bucket holds');
    await post({ query: overBudget, extensions: persisted(sha256(overBudget)) }, { token: t.org.token });
    expect(await post({ extensions: persisted(sha256(overBudget)) }, { token: t.org.token })).toEqual(inFull);
  });

  test('counted against the rate limit as its text is: once the budget is spent, the hash is refused with 429 as the text is', async () => {
    const spender = await newOrganization(t.server);
    // This organization may make two requests a minute; a fresh minute, frozen.
    (t.server.config.rateLimits.organizationOverrides as Map<string, number>).set(spender.organizationId, 2);
    t.server.clock.now = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 60_000 + 100);
    try {
      const first = await post({ query: oneList, extensions: persisted(sha256(oneList)) }, { token: spender.token });
      expect(first.status).toBe(200);
      // Requested 1,202 points; the answer holds core and the empty page, so 2 are kept.
      expect(first.body.extensions.cost).toEqual({ requestedQueryCost: 1202, actualQueryCost: 2, throttleStatus: { maximumAvailable: 3000, currentlyAvailable: 2998, restoreRate: 1 } });
      const second = await post({ extensions: persisted(sha256(oneList)) }, { token: spender.token });
      expect(second.body.extensions.cost).toEqual({ requestedQueryCost: 1202, actualQueryCost: 2, throttleStatus: { maximumAvailable: 3000, currentlyAvailable: 2996, restoreRate: 1 } });
      const byHash = await post({ extensions: persisted(sha256(oneList)) }, { token: spender.token });
      expectRefused(byHash, 429, 'RATE_LIMITED');
      const inFull = await post({ query: oneList }, { token: spender.token });
      expect(inFull).toEqual(byHash);
    } finally {
      t.server.clock.now = null;
    }
  });

  test('over the token limit: refused while parsing and never registered', async () => {
    const tooLong = `{ ${'__typename '.repeat(2100)}}`;
    const inFull = await post({ query: tooLong });
    expectRefused(inFull, 400, 'GRAPHQL_PARSE_FAILED');
    expect(await post({ query: tooLong, extensions: persisted(sha256(tooLong)) })).toEqual(inFull);
    expectRefused(await post({ extensions: persisted(sha256(tooLong)) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
  });

  test('nested too deep, or expanding to too many fields: refused and never registered', async () => {
    const deep = `{ ${'a { '.repeat(120)}b${' }'.repeat(120)} }`;
    const deepInFull = await post({ query: deep });
    expectRefused(deepInFull, 400, 'GRAPHQL_PARSE_FAILED');
    expect(deepInFull.body.errors![0].message).toMatch(/nests more than \d+ levels deep/);
    expect(await post({ query: deep, extensions: persisted(sha256(deep)) })).toEqual(deepInFull);
    expectRefused(await post({ extensions: persisted(sha256(deep)) }), 404, 'PERSISTED_QUERY_NOT_FOUND');

    let bomb = 'query Bomb { customerPortalOrganization(slug: "nobody") { products { ...F20 } } }\nfragment F0 on CustomerProduct { id name }\n';
    for (let i = 1; i <= 20; i++) bomb += `fragment F${i} on CustomerProduct { ...F${i - 1} ...F${i - 1} }\n`;
    const bombInFull = await post({ query: bomb });
    expectRefused(bombInFull, 400, 'QUERY_TOO_COMPLEX');
    expect(await post({ query: bomb, extensions: persisted(sha256(bomb)) })).toEqual(bombInFull);
    expectRefused(await post({ extensions: persisted(sha256(bomb)) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
  });

  test('a document that does not validate is answered with its errors and never registered', async () => {
    const invalid = `query Invalid${++unique} { noSuchField }`;
    const answer = await post({ query: invalid, extensions: persisted(sha256(invalid)) });
    expect(answer.status).toBe(400);
    expect(answer.body.errors![0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expectRefused(await post({ extensions: persisted(sha256(invalid)) }), 404, 'PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('every GraphQL error carries extensions.code', () => {
  const productQuery = 'query ($id: UUID!, $limit: Int) { core { product(id: $id) { id } products(limit: $limit) { items { id } } } }';

  test.each([
    ['a required variable missing', {}],
    ['a variable of the wrong type', { id: 5 }],
    ['a variable that is no UUID', { id: 'not-a-uuid' }],
    ['an Int variable given a string', { id: '00000000-0000-4000-8000-000000000000', limit: 'ten' }],
    ['an Int variable given a fraction', { id: '00000000-0000-4000-8000-000000000000', limit: 1.5 }],
    ['a null for a required variable', { id: null }],
  ])('%s: BAD_USER_INPUT', async (_name, variables) => {
    const answer = await post({ query: productQuery, variables }, { token: t.org.token });
    // Refused before any field runs: no data at all.
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors!.length).toBeGreaterThan(0);
    for (const error of answer.body.errors!) expect(error.extensions.code, error.message).toBe('BAD_USER_INPUT');
  });

  test('the same variables over a persisted query, once registered', async () => {
    await post({ query: productQuery, extensions: persisted(sha256(productQuery)), variables: { id: '00000000-0000-4000-8000-000000000000' } }, { token: t.org.token });
    const answer = await post({ extensions: persisted(sha256(productQuery)), variables: { id: 5 } }, { token: t.org.token });
    expect(answer.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(answer.body.errors![0].message).toMatch(/\$id/);
  });
});

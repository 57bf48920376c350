// JSON nested far deeper than any field takes, sent by a client to overflow the server's stack:
// every surface refuses it with its documented 4xx, naming where, and writes nothing. Bodies that
// are not JSON at all get a 4xx too.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectValidationError, expectNoData } from '../helpers/responses.ts';
import { userSessionToken } from '../helpers/oauth.ts';

const t = useTestServer({ organizations: { org: 'production' } });

const maxNesting = 32;

/** `depth` arrays, one inside the other, as JSON text. */
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** `depth` objects `{"a": …}`, one inside the other, around `leaf`, as JSON text. */
const nestedObjects = (depth: number, leaf = '1') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;

const freeProductJson = (name: string, extra = '') => `{"name":${JSON.stringify(name)},"recurring_interval":null,"prices":[{"amount_type":"free"}]${extra}}`;

async function productNames(): Promise<string[]> {
  const response = await t.org.api('GET', '/products/?limit=100');
  expect(response.status).toBe(200);
  return response.body.items.map((item: { name: string }) => item.name);
}

async function graphql(body: string) {
  const response = await fetch(`${t.server.base()}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.org.token}` },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

const CREATE = 'mutation ($input: ProductCreateInput!) { core { productCreate(input: $input) { id name } } }';

/** A GraphQL refusal of nesting: one BAD_USER_INPUT error whose single issue's loc starts with `loc`. */
function expectNestingRefused(response: { status: number; body: any }, loc: (string | number)[]) {
  expect(response.status, JSON.stringify(response.body).slice(0, 500)).toBe(422);
  expectNoData(response.body.data);
  expect(response.body.errors).toHaveLength(1);
  const [error] = response.body.errors;
  expect(error.extensions.code).toBe('BAD_USER_INPUT');
  expect(error.extensions.issues).toHaveLength(1);
  const [issue] = error.extensions.issues;
  expect(issue.type).toBe('json_too_deep');
  expect(issue.msg).toContain(`${maxNesting} levels`);
  expect(issue.loc.slice(0, loc.length)).toEqual(loc);
  return issue;
}

describe('REST bodies nested deeper than any field takes', () => {
  it('2000 nested arrays as POST /v1/products/ get 422 at body, and no product is created', async () => {
    const before = await productNames();
    const response = await t.org.api('POST', '/products/', nestedArrays(2000));
    const issue = expectValidationError(response, ['body', ...Array(maxNesting).fill(0)], 'json_too_deep');
    expect(issue.msg).toMatch(/nested more than 32 levels deep/);
    expect(response.body.detail).toHaveLength(1);
    expect(await productNames()).toEqual(before);
  });

  it('a product whose metadata is 5000 objects deep gets 422 naming body.metadata, and no product is created', async () => {
    const before = await productNames();
    const response = await t.org.api('POST', '/products/', freeProductJson('Deep metadata', `,"metadata":${nestedObjects(5000)}`));
    expectValidationError(response, ['body', 'metadata', ...Array(maxNesting - 1).fill('a')], 'json_too_deep');
    expect(await productNames()).toEqual(before);
  });

  it('nesting just past the limit is refused for its depth; nesting within it is judged by the field', async () => {
    // The body is level 1 and metadata level 2, so these reach 33 and 32 levels.
    const tooDeep = await t.org.api('POST', '/products/', freeProductJson('Just too deep', `,"metadata":${nestedObjects(maxNesting - 1, '{}')}`));
    expectValidationError(tooDeep, ['body', 'metadata', ...Array(maxNesting - 1).fill('a')], 'json_too_deep');
    const deepButAllowed = await t.org.api('POST', '/products/', freeProductJson('Deep but allowed', `,"metadata":${nestedObjects(maxNesting - 2, '{}')}`));
    expect(deepButAllowed.status).toBe(422);
    expect(deepButAllowed.body.detail.map((i: { type: string }) => i.type)).not.toContain('json_too_deep');
    expect(deepButAllowed.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'metadata']);
    expect(await productNames()).not.toContain('Deep but allowed');
  });

  it('a deep PATCH leaves the product as it was', async () => {
    const created = await t.org.api('POST', '/products/', JSON.parse(freeProductJson('Patched deep')));
    expect(created.status).toBe(201);
    const response = await t.org.api('PATCH', `/products/${created.body.id}`, `{"name":"Renamed","description":${nestedArrays(3000)}}`);
    expectValidationError(response, ['body', 'description', ...Array(maxNesting - 1).fill(0)], 'json_too_deep');
    const after = await t.org.api('GET', `/products/${created.body.id}`);
    expect(after.body.name).toBe('Patched deep');
  });

  it('a customer whose metadata holds 100000 nested arrays gets 422, and no customer is created', async () => {
    const before = await t.org.api('GET', '/customers/?limit=100');
    const response = await t.org.api('POST', '/customers/', `{"email":"deep@example.com","metadata":{"k":${nestedArrays(100_000)}}}`);
    expectValidationError(response, ['body', 'metadata', 'k', ...Array(maxNesting - 2).fill(0)], 'json_too_deep');
    const after = await t.org.api('GET', '/customers/?limit=100');
    expect(after.body.pagination.total_count).toBe(before.body.pagination.total_count);
  });

  it('bodies that are not JSON get 422 json_invalid, or 415 for another media type', async () => {
    const before = await productNames();
    expectValidationError(await t.org.api('POST', '/products/', '{"name": "unterminated'), ['body'], 'json_invalid');
    expectValidationError(await t.org.api('POST', '/products/', '[[[[[['), ['body'], 'json_invalid');
    expectValidationError(await t.org.api('POST', '/products/', `${nestedArrays(5000)}]`), ['body'], 'json_invalid');
    const notJson = await t.org.api('POST', '/products/', 'name=x', { 'content-type': 'text/plain' });
    expect(notJson.status).toBe(415);
    expect(notJson.body).toEqual({ error: 'UnsupportedMediaType', detail: expect.any(String) });
    expect(await productNames()).toEqual(before);
  });
});

describe('GraphQL variables nested deeper than any field takes', () => {
  it('a 3000-deep Metadata in a variable gets a BAD_USER_INPUT error naming input.metadata, and no product is created', async () => {
    const before = await productNames();
    const input = `{"name":"Deep GraphQL","prices":[{"amountType":"free"}],"metadata":${nestedObjects(3000)}}`;
    const response = await graphql(`{"query":${JSON.stringify(CREATE)},"variables":{"input":${input}}}`);
    expectNestingRefused(response, ['input', 'metadata', 'a']);
    expect(response.body.errors[0].message).toMatch(/^input\.metadata\.a/);
    expect(await productNames()).toEqual(before);
  });

  it('a deep variable the operation does not declare is refused too', async () => {
    const response = await graphql(`{"query":"{ __typename }","variables":{"unused":${nestedArrays(10_000)}}}`);
    expectNestingRefused(response, ['unused', 0]);
  });

  it('a JSONObject filter variable 2000 arrays deep is refused', async () => {
    const query = 'query ($m: JSONObject) { core { products(metadata: $m) { items { id } } } }';
    const response = await graphql(`{"query":${JSON.stringify(query)},"variables":{"m":{"k":${nestedArrays(2000)}}}}`);
    expectNestingRefused(response, ['m', 'k']);
  });

  it('an inline value nested past the limit in the document is refused', async () => {
    const query = `query { core { products(metadata: {k: ${nestedArrays(maxNesting + 5)}}) { items { id } } } }`;
    const response = await graphql(JSON.stringify({ query }));
    expectNestingRefused(response, ['query']);
  });

  it('a subscription whose variables nest too deep is refused instead of opening a stream', async () => {
    const subscription = 'subscription ($types: [EventType!]) { coreEvents(types: $types) { id type } }';
    const response = await fetch(`${t.server.base()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.org.token}` },
      body: `{"query":${JSON.stringify(subscription)},"variables":{"types":${nestedArrays(5000)}}}`,
    });
    const text = await response.text();
    expect(response.status).toBe(422);
    expect(text).toContain('json_too_deep');
    expect(text).toContain('BAD_USER_INPUT');
  });

  it('a request that is not JSON gets a 4xx', async () => {
    const response = await fetch(`${t.server.base()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.org.token}` },
      body: '{"query": "{ __typename }"',
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect((await response.json()).errors).toHaveLength(1);
  });
});

describe('OAuth client registration bodies nested deeper than any field takes', () => {
  it('get 400 invalid_request naming the field, and no client is registered', async () => {
    const prisma = t.server.kassa.environments.production.environment.prisma;
    const session = await userSessionToken(t.server, 'production', t.org.userEmail, t.org.userPassword);
    const before = await prisma.oAuthClient.count();
    const response = await fetch(`${t.server.base()}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session}` },
      body: `{"client_name":"Deep","redirect_uris":["https://app.example.com/cb"],"software_statement_extra":${nestedObjects(5000)}}`,
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('software_statement_extra') });
    expect(await prisma.oAuthClient.count()).toBe(before);
  });
});

describe('text PostgreSQL cannot store', () => {
  // JSON escapes let a client send half of a UTF-16 surrogate pair, which no Unicode text holds and jsonb refuses.
  it('a lone surrogate in a checkout confirm is a 422 naming the field, and the checkout stays open', async () => {
    const product = await t.org.api('POST', '/products/', JSON.parse(freeProductJson('Surrogates')));
    const checkout = await t.org.api('POST', '/checkouts/', { products: [product.body.id] });
    const body = `{"customer_email":"buyer@example.com","customer_name":"Ann","customer_billing_address":{"country":"US","line1":"1 Main St","line2":"\\udfff","postal_code":"10001","city":"New York","state":"US-NY"}}`;
    const confirmed = await t.org.publicApi('POST', `/checkouts/client/${checkout.body.client_secret}/confirm`, body);
    expectValidationError(confirmed, ['body', 'customer_billing_address', 'line2'], 'string_unicode');
    const after = await t.org.publicApi('GET', `/checkouts/client/${checkout.body.client_secret}`);
    expect(after.body.status).toBe('open');
  });

  it('a lone surrogate in a name, a metadata key or a GraphQL variable is refused; a whole pair is text like any other', async () => {
    const names = await productNames();
    expectValidationError(await t.org.api('POST', '/products/', freeProductJson('\ud800 high half')), ['body', 'name'], 'string_unicode');
    expectValidationError(await t.org.api('POST', '/products/', freeProductJson('Keyed', ',"metadata":{"\\udc00":"x"}')), ['body', 'metadata', '\udc00'], 'string_unicode');
    const viaGraphql = await graphql(JSON.stringify({ query: 'mutation($name: String!) { core { productUpdate(id: "3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d", input: { name: $name }) { id } } }', variables: { name: 'x\udbff' } }));
    expect(viaGraphql.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(await productNames()).toEqual(names);
    const paired = await t.org.api('POST', '/products/', freeProductJson('Gift \ud83c\udf81'));
    expect(paired.status).toBe(201);
    expect(paired.body.name).toBe('Gift 🎁');
  });
});

// The REST layer's OpenAPI document (/v1/openapi.json) and reference page (/v1/reference): the
// document is valid OpenAPI 3.1, names every route of the route table with its parameters, and
// describes what the server really answers: real responses validate against it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { validate as validateOpenApi } from '@readme/openapi-parser';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/context.ts';
import type { Db } from '../../src/db/client.ts';
import { schema } from '../../src/graphql/schema.ts';
import { applyDispute } from '../../src/modules/disputes/service.ts';
import { compileRoutes } from '../../src/rest/adapter.ts';
import type { CompiledRoute } from '../../src/rest/route.ts';
import { restRoutes } from '../../src/rest/routes/index.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { kassaBin } from '../helpers/processes.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { checkoutWhen, paidOrderOf } from '../helpers/purchases.ts';
import { expectErrorBody, expectStatus } from '../helpers/responses.ts';
import { restClient, type RestResponse } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' } });
let document: OpenApi;
beforeAll(async () => {
  const response = await fetch(`${t.server.base()}/openapi.json`);
  expect(response.status).toBe(200);
  document = (await response.json()) as OpenApi;
});

const routes = compileRoutes(schema, restRoutes);
const unknownId = '6f1c2b9e-4a57-4c1f-9a0e-3d2b7c8e5f10';

interface OpenApi {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, Response> };
}
interface Operation {
  operationId: string;
  tags: string[];
  parameters: { name: string; in: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, Response | { $ref: string }>;
}
interface Response {
  content?: Record<string, { schema: unknown }>;
}

const documentPath = (route: CompiledRoute) => route.path.slice('/v1'.length);
const operationOf = (route: CompiledRoute) => document.paths[documentPath(route)]?.[route.method.toLowerCase()];

/** A JSON pointer token (RFC 6901). */
const pointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * JSON Schema 2020-12, as OpenAPI 3.1 uses it: the whole document is one schema resource, so the
 * `#/components/...` references inside a response schema resolve where the document puts them.
 */
function documentValidator(doc: OpenApi) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // A CommonJS module whose default export is the plugin itself.
  (formats as unknown as typeof formats.default)(ajv);
  ajv.addSchema({ ...doc, $id: 'kassa:openapi' });
  return {
    /** Checks `body` against the document's schema for the response of `status` to `method path`; returns the errors. */
    response(method: string, path: string, status: number, body: unknown): string[] {
      const operation = doc.paths[path]?.[method.toLowerCase()];
      expect(operation, `${method} ${path} is not in the document`).toBeDefined();
      let response = operation.responses[status];
      expect(response, `${method} ${path} documents no ${status} response`).toBeDefined();
      let at = `#/paths/${pointer(path)}/${method.toLowerCase()}/responses/${status}`;
      if ('$ref' in response) {
        at = response.$ref;
        response = doc.components.responses[response.$ref.split('/').pop()!];
      }
      if (status === 204) return body === null ? [] : ['a 204 has no body'];
      const check = ajv.compile({ $ref: `kassa:openapi${at}/content/${pointer('application/json')}/schema` });
      return check(body) ? [] : describeErrors(check.errors);
    },
    request(method: string, path: string, body: unknown): string[] {
      const at = `kassa:openapi#/paths/${pointer(path)}/${method.toLowerCase()}/requestBody/content/${pointer('application/json')}/schema`;
      const check = ajv.compile({ $ref: at });
      return check(body) ? [] : describeErrors(check.errors);
    },
  };
}

const describeErrors = (errors: ErrorObject[] | null | undefined) => (errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);

/** Asserts that the answer to `method path` (a documented path) is what the document says for its status. */
function expectDocumented(validator: ReturnType<typeof documentValidator>, method: string, path: string, response: RestResponse) {
  expect(validator.response(method, path, response.status, response.body), `${method} ${path} answered ${response.status}: ${JSON.stringify(response.body).slice(0, 2000)}`).toEqual([]);
}

describe('the document', () => {
  it('is valid OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validateOpenApi(structuredClone(document) as never);
    expect(result.valid ? [] : result.errors, JSON.stringify(result)).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('has every route of the route table, with its method, parameters, body and success status', () => {
    expect(routes.length).toBeGreaterThanOrEqual(80);
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      const operation = operationOf(route);
      expect(operation, where).toBeDefined();
      expect(operation.tags.length, where).toBe(1);
      const documented = new Map(operation.parameters.map((p) => [`${p.in} ${p.name}`, p]));
      for (const binding of route.variables.filter((v) => v.source !== 'body')) {
        const parameter = documented.get(`${binding.source} ${binding.wireName}`);
        expect(parameter, `${where}: ${binding.source} parameter ${binding.wireName}`).toBeDefined();
        if (binding.source === 'path') expect(parameter!.required, where).toBe(true);
      }
      const bindings = route.variables.filter((v) => v.source !== 'body').length + (route.method === 'POST' ? 1 : 0);
      expect(operation.parameters.length, `${where}: parameters the route does not read`).toBe(bindings);
      if (route.method === 'POST') expect(documented.get('header Idempotency-Key'), where).toBeDefined();
      expect(Boolean(operation.requestBody), `${where}: request body`).toBe(Boolean(route.body));
      if (route.body) expect(Object.keys(operation.requestBody!.content), where).toEqual(['application/json']);
      const success = operation.responses[route.status] as Response;
      expect(success, `${where}: ${route.status}`).toBeDefined();
      expect(Boolean(success.content), `${where}: a ${route.status} body`).toBe(route.status !== 204);
    }
  });

  it('has nothing the route table does not serve, and one operationId per operation', () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} /v1${path}`, operation })));
    expect(operations.map((o) => o.key).sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    const ids = operations.map((o) => o.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists the named errors each field declares under their status', () => {
    const declaring = routes.filter((r) => Array.isArray(r.resultField.extensions?.errors));
    expect(declaring.length).toBeGreaterThanOrEqual(15);
    for (const route of declaring) {
      for (const { status, restError } of route.resultField.extensions!.errors as { status: number; restError: string }[]) {
        const response = operationOf(route).responses[status];
        expect(JSON.stringify(response), `${route.method} ${route.path} ${status}`).toContain(`"${restError}"`);
      }
    }
    expect(JSON.stringify(document.paths['/refunds/'].post.responses[403])).toContain('"enum":["NotPermitted","RefundedAlready"]');
  });

  it('gives each list its page parameters with their defaults, and enumerates sort properties', () => {
    const products = document.paths['/products/'].get;
    const parameter = (name: string) => products.parameters.find((p) => p.name === name && p.in === 'query')!;
    expect(parameter('page').schema).toMatchObject({ type: 'integer', default: 1 });
    expect(parameter('limit').schema).toMatchObject({ type: 'integer', default: 10 });
    expect(parameter('organization_id').schema).toEqual({ type: 'array', items: { type: 'string', format: 'uuid' } });
    expect(parameter('sorting').schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/ProductSortProperty' } });
    const sorting = (document.components as unknown as { schemas: Record<string, { enum: string[] }> }).schemas.ProductSortProperty;
    expect(sorting.enum).toContain('-created_at');
  });

  it('names each environment’s own base URL as its server', async () => {
    expect(document.servers).toEqual([{ url: `${t.server.url}/v1`, description: 'production' }]);
    const sandbox = (await (await fetch(`${t.server.base('sandbox')}/openapi.json`)).json()) as OpenApi;
    expect(sandbox.servers).toEqual([{ url: `${t.server.url}/sandbox/v1`, description: 'sandbox' }]);
    expect(sandbox.paths).toEqual(document.paths);
  });
});

describe('kassa openapi', () => {
  it('prints the document an environment serves, with PUBLIC_URL as its server, whole through a pipe', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [kassaBin, 'openapi', '--environment', 'sandbox'], {
      env: { ...process.env, DATA_DIR: 'memory://', PUBLIC_URL: 'https://pay.example.com/' },
      maxBuffer: 16 * 1024 * 1024,
    });
    const printed = JSON.parse(stdout) as OpenApi;
    expect(printed.servers).toEqual([{ url: 'https://pay.example.com/sandbox/v1', description: 'sandbox' }]);
    expect({ ...printed, servers: document.servers }).toEqual(document);
  }, 60_000);
});

describe('real responses validate against the document', () => {
  let validator: ReturnType<typeof documentValidator>;
  let org: Org;
  beforeAll(async () => {
    validator = documentValidator(document);
    org = await newOrganization(t.server, 'production');
  });

  it('rejects what the server would not send, so passing means something', () => {
    expect(validator.response('GET', '/products/', 200, { items: [], pagination: { total_count: 0 } })).not.toEqual([]);
    expect(validator.response('GET', '/products/', 200, { items: [], pagination: { total_count: 0, max_page: 0 }, extra: 1 })).not.toEqual([]);
    expect(validator.response('GET', '/orders/{id}', 404, { error: 'NotFound', detail: 'x' })).not.toEqual([]);
  });

  it('GET /v1/products/ with a product of every price type and a benefit', async () => {
    const body = {
      name: 'Toolkit',
      recurring_interval: null,
      prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }],
      metadata: { tier: 'gold', seats: 3 },
    };
    expect(validator.request('POST', '/products/', body)).toEqual([]);
    const created = await org.api('POST', '/products/', body);
    expectDocumented(validator, 'POST', '/products/', created);
    const custom = await org.api('POST', '/products/', { name: 'Tip jar', recurring_interval: null, prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 100 }] });
    expectDocumented(validator, 'POST', '/products/', custom);
    const free = await org.api('POST', '/products/', { name: 'Sampler', recurring_interval: null, prices: [{ amount_type: 'free' }] });
    expectDocumented(validator, 'POST', '/products/', free);
    const benefit = await org.api('POST', '/benefits/', { type: 'custom', description: 'A thank-you note', properties: { note: 'Thanks!' } });
    expectDocumented(validator, 'POST', '/benefits/', benefit);
    expectDocumented(validator, 'POST', '/products/{id}/benefits', await org.api('POST', `/products/${created.body.id}/benefits`, { benefits: [benefit.body.id] }));

    const list = await org.api('GET', '/products/?limit=100');
    expect(list.body.items).toHaveLength(3);
    expectDocumented(validator, 'GET', '/products/', list);
  });

  it('customers and files, written and read back', async () => {
    const created = await org.api('POST', '/customers/', { email: 'ada@example.com', name: 'Ada', external_id: 'ext-ada', metadata: { plan: 'pro' } });
    expectDocumented(validator, 'POST', '/customers/', created);
    expectDocumented(validator, 'PATCH', '/customers/{id}', await org.api('PATCH', `/customers/${created.body.id}`, { billing_address: { country: 'DE', city: 'Berlin' } }));
    expectDocumented(validator, 'GET', '/customers/external/{external_id}', await org.api('GET', '/customers/external/ext-ada'));
    expectDocumented(validator, 'GET', '/customers/external/{external_id}/state', await org.api('GET', '/customers/external/ext-ada/state'));
    expectDocumented(validator, 'GET', '/customers/', await org.api('GET', '/customers/?metadata[plan]=pro&sorting=-created_at'));
    const deleted = await org.api('DELETE', `/customers/${created.body.id}`);
    expect(deleted.status).toBe(204);
    expectDocumented(validator, 'DELETE', '/customers/{id}', deleted);

    const file = await org.api('POST', '/files/', {
      organization_id: org.organizationId,
      name: 'small.bin',
      mime_type: 'application/octet-stream',
      size: 10,
      service: 'downloadable',
      upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 10 }] },
    });
    expect(file.status).toBe(201);
    expectDocumented(validator, 'POST', '/files/', file);
  });

  it('custom fields of every kind, attached to a product and answered on a checkout', async () => {
    const kinds = [
      { type: 'text', slug: 'company', name: 'Company', properties: { form_label: 'Company', textarea: true, max_length: 50 } },
      { type: 'number', slug: 'seats', name: 'Seats', properties: { ge: 1 } },
      { type: 'date', slug: 'start', name: 'Start', properties: {} },
      { type: 'checkbox', slug: 'terms', name: 'Terms', properties: { form_help_text: 'Read them' } },
      { type: 'select', slug: 'size', name: 'Size', properties: { options: [{ value: 's', label: 'Small' }] } },
    ];
    const ids: string[] = [];
    for (const body of kinds) {
      expect(validator.request('POST', '/custom-fields/', body)).toEqual([]);
      const created = await org.api('POST', '/custom-fields/', body);
      expectDocumented(validator, 'POST', '/custom-fields/', created);
      ids.push(created.body.id);
    }
    expectDocumented(validator, 'GET', '/custom-fields/', await org.api('GET', '/custom-fields/?type=select&type=text&sorting=-name'));
    expectDocumented(validator, 'GET', '/custom-fields/{id}', await org.api('GET', `/custom-fields/${ids[0]}`));
    expectDocumented(validator, 'PATCH', '/custom-fields/{id}', await org.api('PATCH', `/custom-fields/${ids[1]}`, { type: 'number', properties: { le: 10 } }));
    const product = await org.api('POST', '/products/', {
      name: 'Asks', recurring_interval: null, prices: [{ amount_type: 'free' }], attached_custom_fields: ids.map((id) => ({ custom_field_id: id, required: false })),
    });
    expectDocumented(validator, 'POST', '/products/', product);
    const checkout = await org.api('POST', '/checkouts/', { products: [product.body.id], custom_field_data: { company: 'Acme', seats: 3, start: '2031-01-02', terms: true, size: 's' } });
    expectDocumented(validator, 'POST', '/checkouts/', checkout);
    expectDocumented(validator, 'GET', '/checkouts/client/{client_secret}', await org.publicApi('GET', `/checkouts/client/${checkout.body.client_secret}`));
    const deleted = await org.api('DELETE', `/custom-fields/${ids[4]}`);
    expect(deleted.status).toBe(204);
    expectDocumented(validator, 'DELETE', '/custom-fields/{id}', deleted);
  });

  it('POST /v1/checkouts/ 422', async () => {
    const response = await org.api('POST', '/checkouts/', { products: ['not-a-uuid'], unknown_field: true });
    expect(response.status).toBe(422);
    expectDocumented(validator, 'POST', '/checkouts/', response);
    expectDocumented(validator, 'POST', '/checkouts/', await org.api('POST', '/checkouts/', '{"products": [', {}));
  });

  it('GET /v1/orders/{id} 404, 401 without a token, 403 without the scope', async () => {
    expectDocumented(validator, 'GET', '/orders/{id}', await org.api('GET', `/orders/${unknownId}`));
    expectDocumented(validator, 'GET', '/orders/{id}', await org.publicApi('GET', `/orders/${unknownId}`));
    const productsOnly = restClient(t.server.base(), await tokenWithScopes(t.server, org, ['products:read']));
    const refused = await productsOnly('GET', `/orders/${unknownId}`);
    expect(refused.status).toBe(403);
    expectDocumented(validator, 'GET', '/orders/{id}', refused);
    expectDocumented(validator, 'GET', '/orders/{id}', await org.api('GET', '/orders/not-a-uuid'));
  });

  it('every read of a purchase in sandbox, organization and customer alike', async () => {
    const buyer = await newOrganization(t.server, 'sandbox');
    const api = buyer.api;
    const benefit = expectStatus(
      await api('POST', '/benefits/', { type: 'license_keys', description: 'Pro license', properties: { prefix: 'PRO', expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 2, enable_customer_admin: true } } }),
      201,
    );
    const product = expectStatus(await api('POST', '/products/', { name: 'Pro', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 4900, price_currency: 'usd' }] }), 201);
    expectStatus(await api('POST', `/products/${product.id}/benefits`, { benefits: [benefit.id] }), 200);
    const created = await api('POST', '/checkouts/', { products: [product.id] });
    expectDocumented(validator, 'POST', '/checkouts/', created);
    const checkout = { id: created.body.id as string, clientSecret: created.body.client_secret as string };
    const confirmed = await buyer.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, {
      customer_email: 'reader@example.com',
      customer_name: 'Ada Reader',
      confirmation_token_id: 'tok_visa',
    });
    expectDocumented(validator, 'POST', '/checkouts/client/{client_secret}/confirm', confirmed);
    const order = await paidOrderOf(buyer, checkout.id);
    await checkoutWhen(buyer, checkout.id, 'succeeded');
    const refund = await api('POST', '/refunds/', { order_id: order.id, reason: 'customer_request', amount: 4900 });
    expectDocumented(validator, 'POST', '/refunds/', refund);
    const again = await api('POST', '/refunds/', { order_id: order.id, reason: 'customer_request', amount: 4900 });
    expect([400, 403]).toContain(again.status);
    expectDocumented(validator, 'POST', '/refunds/', again);
    // A chargeback, as the payment processor's webhook records one.
    const environment = t.server.kassa.environments.sandbox.environment;
    const dispute = await environment.prisma.$transaction((tx) =>
      applyDispute(systemContext(environment, tx as Db, buyer.organizationId, () => new Date(), 'openapi-test'), tx as Db, {
        orderId: order.id,
        processorId: `dp_${checkout.id}`,
        status: 'lost',
        reason: 'fraudulent',
        amount: 4900,
        currency: 'usd',
        closedAt: new Date(),
      }),
    );
    const licenseKey = await waitForLicenseKey(api);
    const sessionResponse = await api('POST', '/customer-sessions/', { customer_id: order.customerId });
    expectDocumented(validator, 'POST', '/customer-sessions/', sessionResponse);
    const session = expectStatus(sessionResponse, 201);
    const customerApi = restClient(t.server.base('sandbox'), session.token);

    // Every GET route the organization or the customer can call with what the purchase made.
    const ids: Record<string, string> = {
      products: product.id,
      orders: order.id,
      checkouts: checkout.id,
      customers: order.customerId,
      benefits: benefit.id,
      'license-keys': licenseKey.id,
      refunds: refund.body.id,
      disputes: dispute.id,
    };
    // The query a read cannot do without.
    const requiredQuery: Record<string, string> = { '/v1/metrics/': '?start_date=2026-01-01&end_date=2026-01-03&interval=day' };
    let found = 0;
    for (const route of routes.filter((r) => r.method === 'GET' && r.admits)) {
      const segments = route.path.split('/').slice(2);
      const portal = segments[0] === 'customer-portal';
      const resource = portal ? segments[1] : segments[0];
      if (route.pathParams.some((p) => p !== 'id') || (route.pathParams.length && !ids[resource])) continue;
      const path = documentPath(route).replace('{id}', ids[resource]) + (requiredQuery[route.path] ?? '');
      const response = await (portal ? customerApi : api)('GET', path);
      if (route.csv) {
        expect(response.status, route.path).toBe(200);
        expect(response.headers.get('content-type'), route.path).toBe('text/csv; charset=utf-8');
        expect(Object.keys((operationOf(route).responses[200] as Response).content!), route.path).toEqual(['text/csv']);
        found++;
        continue;
      }
      // Some reads answer 404 for this purchase (the order has no invoice yet): documented too.
      expect([200, 404], `${route.path}: ${JSON.stringify(response.body)}`).toContain(response.status);
      expectDocumented(validator, 'GET', documentPath(route), response);
      if (response.status === 200) found++;
    }
    expect(found).toBeGreaterThanOrEqual(25);

    // Errors a field declares, as the server sends them.
    const closed = await api('PATCH', `/checkouts/${checkout.id}`, { metadata: { late: true } });
    expectErrorBody(closed, 403, 'NotOpenCheckout');
    expectDocumented(validator, 'PATCH', '/checkouts/{id}', closed);
    const invoice = await api('POST', `/orders/${order.id}/invoice`);
    expectErrorBody(invoice, 422, 'MissingInvoiceBillingDetails');
    expectDocumented(validator, 'POST', '/orders/{id}/invoice', invoice);

    const client = expectStatus(await buyer.publicApi('GET', `/checkouts/client/${checkout.clientSecret}`), 200);
    expectDocumented(validator, 'GET', '/checkouts/client/{client_secret}', { status: 200, body: client, headers: new Headers() });
    const validated = await buyer.api('POST', '/license-keys/validate', { key: licenseKey.key, organization_id: buyer.organizationId });
    expectDocumented(validator, 'POST', '/license-keys/validate', validated);
  });
});

async function waitForLicenseKey(api: ReturnType<typeof restClient>) {
  for (let i = 0; i < 100; i++) {
    const { body } = await api('GET', '/license-keys/');
    if (body.items.length) return body.items[0] as { id: string; key: string };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no license key was granted');
}

describe('serving the document', () => {
  const url = () => `${t.server.base()}/openapi.json`;

  it('needs no token, ignores a bad one and any query string, and is JSON', async () => {
    for (const headers of [{}, { authorization: 'Bearer nonsense' }] as Record<string, string>[]) {
      const response = await fetch(`${url()}?format=yaml&x[]=1`, { headers });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toEqual(document);
    }
  });

  it('answers HEAD with the headers of GET, and a matching If-None-Match with 304', async () => {
    const get = await fetch(url());
    const head = await fetch(url(), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
    const etag = get.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const notModified = await fetch(url(), { headers: { 'if-none-match': `"other", ${etag}` } });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
  });

  it('refuses other methods as every REST path does, whatever the body', async () => {
    const products = await fetch(`${t.server.base()}/products/`, { method: 'DELETE' });
    expect(products.status).toBe(405);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const response = await fetch(url(), { method, headers: { 'content-type': 'application/json' }, body: method === 'OPTIONS' ? undefined : 'x'.repeat(2 * 1024 * 1024) });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expectErrorBody({ status: response.status, body: await response.json(), headers: response.headers }, 405, 'MethodNotAllowed');
    }
  });

  it('serves no other file under the reference path', async () => {
    for (const path of ['/openapi.json/', '/reference/', '/reference/package.json', '/reference/..%2Fopenapi.json', '/reference/swagger-ui-bundle.js.map', '/reference/index.html']) {
      const response = await fetch(`${t.server.base()}${path}`);
      expect(response.status, path).toBe(404);
      expectErrorBody({ status: response.status, body: await response.json(), headers: response.headers }, 404, 'ResourceNotFound');
    }
  });
});

describe('the reference page', () => {
  it('is served with its assets from the server itself, under a policy allowing nothing else', async () => {
    for (const environment of ['production', 'sandbox'] as const) {
      const page = await fetch(`${t.server.base(environment)}/reference`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const policy = page.headers.get('content-security-policy')!;
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("script-src 'self';");
      expect(policy).toContain("style-src 'self';");
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      const html = await page.text();
      const links = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(links.length).toBeGreaterThanOrEqual(4);
      const types: Record<string, RegExp> = { css: /^text\/css/, js: /^text\/javascript/, png: /^image\/png$/, json: /^application\/json$/ };
      for (const link of links) {
        expect(link, 'a link to the server itself').not.toMatch(/^(\w+:|\/\/)/);
        const asset = await fetch(new URL(link, page.url));
        expect(asset.status, link).toBe(200);
        expect(asset.headers.get('content-type'), link).toMatch(types[link.split('.').pop()!]);
        expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
      }
    }
  });

  it('renders every operation in a browser enforcing the policy, loading nothing from elsewhere', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      const origins = new Set<string>();
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('request', (request) => origins.add(new URL(request.url()).origin));
      // A page that took its document from the query string would fetch this one.
      await page.goto(`${t.server.base('sandbox')}/reference?url=https://elsewhere.example/openapi.json&configUrl=https://elsewhere.example/c.json`);
      await page.waitForSelector('.opblock');
      // Every operation reaches the page, under its resource's heading.
      const tagged = await page.evaluate(() => {
        const operations = (window as unknown as { ui: { specSelectors: { taggedOperations(): { toJS(): Record<string, { operations: unknown[] }> } } } }).ui.specSelectors.taggedOperations().toJS();
        return Object.values(operations).reduce((n, tag) => n + tag.operations.length, 0);
      });
      expect(tagged).toBe(routes.length);
      // Swagger UI draws a long document as it scrolls into view (the rest is not in the DOM yet):
      // scrolled to the end, every operation has been drawn once.
      const drawn = new Set<string>();
      for (let more = true; more; ) {
        for (const id of await page.evaluate(() => [...window.document.querySelectorAll('.opblock')].map((block) => block.id))) drawn.add(id);
        more = await page.evaluate(() => {
          const before = window.scrollY;
          window.scrollBy(0, window.innerHeight / 2);
          return window.scrollY > before;
        });
        await page.waitForTimeout(30);
      }
      for (const id of await page.evaluate(() => [...window.document.querySelectorAll('.opblock')].map((block) => block.id))) drawn.add(id);
      expect(drawn.size).toBe(routes.length);
      expect(await page.locator('.servers select').inputValue()).toBe(`${t.server.url}/sandbox/v1`);
      expect(problems).toEqual([]);
      expect([...origins]).toEqual([t.server.url]);
    } finally {
      await browser.close();
    }
  });
});

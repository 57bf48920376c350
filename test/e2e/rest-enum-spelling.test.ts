// REST keeps its own spelling and its own errors where the GraphQL schema's enums differ from the
// wire: sort orders are `-created_at` on REST and `created_at_desc` in GraphQL, and the `day` and
// `week` intervals GraphQL no longer offers are still refused by REST with the messages it always
// gave, in the order it gave them among a request's other faults. The bodies below are exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const t = useTestServer({ organizations: { org: 'production' } });
beforeAll(async () => {
  for (const [name, amount] of [['Cheap', 500], ['Dear', 5000], ['Middle', 1500]] as const) {
    const created = await t.org.api('POST', '/products/', { name, recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
});
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

const names = (body: { items: { name: string }[] }) => body.items.map((item) => item.name);
const productSortingValues = "'created_at', '-created_at', 'name', '-name', 'price_amount_type', '-price_amount_type', 'price_amount', '-price_amount'";

describe('sorting over REST', () => {
  it('sorts by property names, `-` for descending, first entry first', async () => {
    expect(names((await t.org.api('GET', '/products/?sorting=name')).body)).toEqual(['Cheap', 'Dear', 'Middle']);
    expect(names((await t.org.api('GET', '/products/?sorting=-price_amount')).body)).toEqual(['Dear', 'Middle', 'Cheap']);
    expect(names((await t.org.api('GET', '/products/?sorting=price_amount_type&sorting=-name')).body)).toEqual(['Middle', 'Dear', 'Cheap']);
  });

  it('answers an unknown property, and the GraphQL spelling, with the 422 listing the REST values', async () => {
    for (const value of ['bogus', 'name_desc']) {
      const response = await t.org.api('GET', `/products/?sorting=name&sorting=${value}`);
      expect(response.status).toBe(422);
      expect(response.body).toEqual({ detail: [{ loc: ['query', 'sorting', 1], msg: `Input should be one of ${productSortingValues}`, type: 'value_error' }] });
    }
  });
});

describe('recurring intervals over REST', () => {
  const product = (recurringInterval: string) => ({ name: 'Interval', recurring_interval: recurringInterval, prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
  const issue = (msg: string) => ({ detail: [{ loc: ['body', 'recurring_interval'], msg, type: 'value_error' }] });

  it.each(['day', 'week'])('refuses creating a product billed every %s with the message it always had', async (interval) => {
    const response = await t.org.api('POST', '/products/', product(interval));
    expect(response.status).toBe(422);
    expect(response.body).toEqual(issue('Recurring products bill monthly or yearly: use month or year.'));
  });

  it.each(['day', 'week'])('refuses changing a product to %s as any change of interval', async (interval) => {
    const id = (await t.org.api('GET', '/products/?sorting=name')).body.items[0].id;
    const response = await t.org.api('PATCH', `/products/${id}`, { recurring_interval: interval });
    expect(response.status).toBe(422);
    expect(response.body).toEqual(issue("A product's recurring interval cannot be changed once set; create a new product instead."));
  });

  it('answers an unknown interval as before, suggesting the value REST spells', async () => {
    expect((await t.org.api('POST', '/products/', product('fortnight'))).body).toEqual(issue('Value "fortnight" does not exist in "RecurringInterval" enum.'));
    expect((await t.org.api('POST', '/products/', product('weekly'))).body).toEqual(issue('Value "weekly" does not exist in "RecurringInterval" enum. Did you mean the enum value "week"?'));
  });
});

describe('refused wire values among other faults', () => {
  it('reports only the faults reading the body finds, as before, when a refused interval comes with them', async () => {
    const response = await t.org.api('POST', '/products/', { name: 'Interval', recurring_interval: 'day', colour: 'red', prices: [{ amount_type: 'free' }] });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ detail: [{ loc: ['body', 'colour'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }] });
  });
});

describe('wire-only values among the rules the service checks', () => {
  const unknownId = '00000000-0000-4000-8000-000000000000';

  it('answers an unknown product 404 before looking at the interval', async () => {
    const response = await t.org.api('PATCH', `/products/${unknownId}`, { recurring_interval: 'day' });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: 'ResourceNotFound', detail: 'Product not found.' });
  });

  it('answers a token without the scope 403 before looking at the value', async () => {
    const reader = restClient(`${t.server.url}/v1`, await tokenWithScopes(t.server, t.org, ['products:read', 'benefits:read', 'files:read']));
    const id = (await t.org.api('GET', '/products/?sorting=name')).body.items[0].id;
    for (const [method, path, body] of [
      ['POST', '/products/', { name: 'Daily', recurring_interval: 'day', prices: [{ amount_type: 'free' }] }],
      ['PATCH', `/products/${id}`, { recurring_interval: 'week' }],
      ['POST', '/benefits/', { type: 'discord', description: 'Chat access', properties: {} }],
    ] as const) {
      const response = await reader(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.error).toBe('NotPermitted');
    }
    expect((await t.org.api('GET', '/products/?sorting=name')).body.items.map((item: { name: string }) => item.name)).toEqual(['Cheap', 'Dear', 'Middle']);
  });

  it('lists the refused value with every other fault of the body, in the order it always had', async () => {
    const created = await t.org.api('POST', '/products/', { name: 'ab', recurring_interval: 'day', prices: [{ amount_type: 'fixed', price_amount: -1, price_currency: 'usd' }] });
    expect(created.status).toBe(422);
    expect(created.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([['body', 'name'], ['body', 'recurring_interval'], ['body', 'prices', 0, 'price_amount']]);
    expect(created.body.detail[1].msg).toBe('Recurring products bill monthly or yearly: use month or year.');

    const id = (await t.org.api('GET', '/products/?sorting=name')).body.items[0].id;
    const updated = await t.org.api('PATCH', `/products/${id}`, { name: 'ab', recurring_interval: 'week' });
    expect(updated.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([['body', 'name'], ['body', 'recurring_interval']]);

    const benefit = await t.org.api('POST', '/benefits/', { type: 'discord', description: 'ab', properties: {} });
    expect(benefit.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([['body', 'description'], ['body', 'type']]);

    const file = await t.org.api('POST', '/files/', {
      organization_id: t.org.organizationId,
      name: 'logo.png',
      mime_type: 'not a type',
      size: 1,
      service: 'product_media',
      upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 1 }] },
    });
    expect(file.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([['body', 'service'], ['body', 'mime_type']]);
  });

  it('changes nothing: no product, benefit or file is created with the stand-in', async () => {
    const before = await t.org.api('GET', '/products/?limit=100');
    await t.org.api('POST', '/products/', { name: 'Weekly', recurring_interval: 'week', prices: [{ amount_type: 'free' }] });
    await t.org.api('POST', '/benefits/', { type: 'discord', description: 'Chat access', properties: {} });
    expect((await t.org.api('GET', '/products/?limit=100')).body.pagination.total_count).toBe(before.body.pagination.total_count);
    expect((await t.org.api('GET', '/benefits/')).body.items).toEqual([]);
  });
});

describe('benefit types over REST', () => {
  it.each(['discord', 'github_repository'])('refuses creating a %s benefit, naming the types Kassa grants', async (type) => {
    const response = await t.org.api('POST', '/benefits/', { type, description: 'Not grantable', properties: {} });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ loc: ['body', 'type'], msg: `Benefits of type ${type} need an integration this server does not have; use custom, license_keys, downloadables or meter_credit.`, type: 'value_error' }],
    });
  });

  it('answers an unknown type as before, and still filters by any type REST names', async () => {
    expect((await t.org.api('POST', '/benefits/', { type: 'discords', description: 'Not a type', properties: {} })).body).toEqual({
      detail: [{ loc: ['body', 'type'], msg: 'Value "discords" does not exist in "BenefitType" enum. Did you mean the enum value "discord"?', type: 'value_error' }],
    });
    const filtered = await t.org.api('GET', '/benefits/?type=discord');
    expect(filtered.status).toBe(200);
    expect(filtered.body.items).toEqual([]);
  });
});

describe('file services over REST', () => {
  const file = (service: string) => ({
    organization_id: t.org.organizationId,
    name: 'logo.png',
    mime_type: 'image/png',
    size: 1,
    service,
    upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 1 }] },
  });

  it.each(['product_media', 'organization_avatar'])('refuses a %s file with the message it always had', async (service) => {
    const response = await t.org.api('POST', '/files/', file(service));
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ detail: [{ loc: ['body', 'service'], msg: `Only downloadable files are supported; ${service} files are not.`, type: 'value_error' }] });
  });

  it('answers an unknown service as before', async () => {
    expect((await t.org.api('POST', '/files/', file('avatar'))).body).toEqual({
      detail: [{ loc: ['body', 'service'], msg: 'Value "avatar" does not exist in "FileService" enum.', type: 'value_error' }],
    });
  });
});

// Event types are plain strings on REST and in webhooks (`checkout.created`), whatever GraphQL
// calls them: REST takes and answers the same strings, refuses others with the same 422 bodies,
// in the same order among a request's other faults, and a delivery carries the same type.
describe('webhook event types over REST', () => {
  const wireTypes = [
    'checkout.created', 'checkout.updated', 'customer.created', 'customer.updated', 'customer.deleted', 'order.created', 'order.updated', 'order.paid',
    'order.refunded', 'refund.created', 'subscription.created', 'subscription.updated', 'subscription.active', 'subscription.canceled', 'subscription.uncanceled',
    'subscription.revoked', 'benefit.created', 'benefit.updated', 'benefit_grant.created', 'benefit_grant.updated', 'benefit_grant.revoked',
    'customer.state_changed', 'organization.updated', 'token.leaked', 'dispute.created', 'dispute.closed', 'refund.updated', 'product.created', 'product.updated', 'benefit_grant.cycled',
  ];
  const unknownType = (index: number, type: string) => ({
    loc: ['body', 'events', index],
    msg: `Unknown event type "${type}". Known types: ${wireTypes.join(', ')}.`,
    type: 'enum',
  });
  const valueError = (loc: (string | number)[], msg: string) => ({ loc: ['body', ...loc], msg, type: 'value_error' });
  const receiver = 'http://127.0.0.1:4100/hooks/kassa';
  let sandboxOrg: Org;
  const endpoint = (events: unknown, extra: Record<string, unknown> = {}) => sandboxOrg.api('POST', '/webhooks/endpoints', { url: receiver, format: 'raw', events, ...extra });
  beforeAll(async () => {
    sandboxOrg = await newOrganization(t.server, 'sandbox');
  });

  it('takes every type as the string it always was, and answers the same strings, each once, in the order given', async () => {
    const created = await endpoint([...wireTypes, 'order.paid']);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.events).toEqual(wireTypes);
    expect((await sandboxOrg.api('GET', `/webhooks/endpoints/${created.body.id}`)).body.events).toEqual(wireTypes);
    const listed = (await sandboxOrg.api('GET', '/webhooks/endpoints?limit=100')).body.items.find((item: { id: string }) => item.id === created.body.id);
    expect(listed.events).toEqual(wireTypes);
    const changed = await sandboxOrg.api('PATCH', `/webhooks/endpoints/${created.body.id}`, { events: ['customer.state_changed', 'benefit_grant.cycled', 'token.leaked'] });
    expect(changed.body.events).toEqual(['customer.state_changed', 'benefit_grant.cycled', 'token.leaked']);
    expect((await sandboxOrg.api('PATCH', `/webhooks/endpoints/${created.body.id}/secret`)).body.events).toEqual(['customer.state_changed', 'benefit_grant.cycled', 'token.leaked']);
    // One type given as a string, not a list, is taken as a list of it, as it always was.
    expect((await endpoint('order.paid')).body.events).toEqual(['order.paid']);
  });

  it.each<[string, unknown, unknown[]]>([
    ['an unknown type, at its index', ['order.paid', 'order.shipped'], [unknownType(1, 'order.shipped')]],
    ['the GraphQL name of a type', ['order_paid'], [unknownType(0, 'order_paid')]],
    ['a type in capitals', ['ORDER_PAID'], [unknownType(0, 'ORDER_PAID')]],
    ['an empty type', [''], [unknownType(0, '')]],
    ['one unknown type given as a string', 'order_paid', [unknownType(0, 'order_paid')]],
    ['several unknown types', ['nope', 'order.paid', 'x'], [unknownType(0, 'nope'), unknownType(2, 'x')]],
    ['a number', [5], [valueError(['events', 0], 'String cannot represent a non string value: 5')]],
    ['a number with an unknown type', [5, 'nope'], [valueError(['events', 0], 'String cannot represent a non string value: 5')]],
    ['a null type', [null], [valueError(['events', 0], 'Expected non-nullable type "String!" not to be null.')]],
    ['an object', [{}], [valueError(['events', 0], 'String cannot represent a non string value: {}')]],
    ['a nested list', [['order.paid']], [valueError(['events', 0], 'String cannot represent a non string value: ["order.paid"]')]],
    ['null', null, [valueError(['events'], 'Expected non-nullable type "[String!]!" not to be null.')]],
    ['nothing', undefined, [{ loc: ['body', 'events'], msg: 'Field required', type: 'missing' }]],
  ])('answers %s with the 422 it always had', async (_what, events, detail) => {
    const response = await endpoint(events);
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ detail });
  });

  it('lists unknown types with the other faults of the body, in the order it always had', async () => {
    const created = await endpoint(['nope', 'order.paid', 'x'], { url: 'ftp://example.com/' });
    expect(created.body).toEqual({ detail: [{ loc: ['body', 'url'], msg: 'The webhook URL must use http or https.', type: 'url_refused' }, unknownType(0, 'nope'), unknownType(2, 'x')] });
    const extra = await endpoint(['nope'], { colour: 'red' });
    expect(extra.body).toEqual({ detail: [{ loc: ['body', 'colour'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }] });

    const id = (await endpoint(['order.paid'])).body.id;
    const updated = await sandboxOrg.api('PATCH', `/webhooks/endpoints/${id}`, { url: 'ftp://example.com/', events: ['order.paid', 'nope'], secret: 'short' });
    expect(updated.body).toEqual({
      detail: [
        { loc: ['body', 'url'], msg: 'The webhook URL must use http or https.', type: 'url_refused' },
        unknownType(1, 'nope'),
        { loc: ['body', 'secret'], msg: 'String should have at least 32 characters', type: 'string_too_short' },
      ],
    });
    expect((await sandboxOrg.api('GET', `/webhooks/endpoints/${id}`)).body.events).toEqual(['order.paid']);
  });

  it('answers an unknown endpoint 404, and a token without the scope 403, before looking at the types', async () => {
    const missing = await sandboxOrg.api('PATCH', '/webhooks/endpoints/00000000-0000-4000-8000-000000000000', { events: ['nope'] });
    expect([missing.status, missing.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Webhook endpoint not found.' }]);
    const reader = restClient(`${t.server.url}/sandbox/v1`, await tokenWithScopes(t.server, sandboxOrg, ['webhooks:read']));
    const id = (await endpoint(['order.paid'])).body.id;
    for (const [method, path] of [['POST', '/webhooks/endpoints'], ['PATCH', `/webhooks/endpoints/${id}`]]) {
      const response = await reader(method, path, { url: receiver, format: 'raw', events: ['nope'] });
      expect([response.status, response.body]).toEqual([403, { error: 'NotPermitted', detail: 'The access token lacks the required scope: webhooks:write.' }]);
    }
  });
});

describe('event types in deliveries and webhook payloads', () => {
  const sandbox = () => t.server.kassa.environments.sandbox;
  let sandboxOrg: Org;
  let to: Receiver;
  let endpointId: string;
  let customerId: string;
  beforeAll(async () => {
    await sandbox().webhooks.stop();
    sandboxOrg = await newOrganization(t.server, 'sandbox');
    to = await startReceiver();
    receivers.push(to);
    const created = await sandboxOrg.api('POST', '/webhooks/endpoints', { url: to.url, format: 'raw', events: ['customer.created'] });
    [endpointId, to.secret] = [created.body.id, created.body.secret];
    customerId = (await sandboxOrg.api('POST', '/customers/', { email: 'typed@example.com' })).body.id;
    while ((await sandbox().webhooks.runDue()) > 0);
  });

  it('sends the type as the string it always was, beside the resource as GET renders it', async () => {
    expect(to.receipts.map((r) => r.refused)).toEqual([null]);
    const body = JSON.parse(to.receipts[0].body);
    expect([Object.keys(body), body.type]).toEqual([['type', 'timestamp', 'data'], 'customer.created']);
    expect(body.data).toEqual((await sandboxOrg.api('GET', `/customers/${customerId}`)).body);
  });

  it('answers the type as that string in the delivery log and on redelivery', async () => {
    const deliveries = await sandboxOrg.api('GET', `/webhooks/deliveries?endpoint_id=${endpointId}`);
    expect(deliveries.body.items.map((d: { webhook_event: { type: string } }) => d.webhook_event.type)).toEqual(['customer.created']);
    const redelivered = await sandboxOrg.api('POST', `/webhooks/events/${to.receipts[0].id}/redeliver`);
    expect([redelivered.status, redelivered.body.type]).toEqual([202, 'customer.created']);
  });
});

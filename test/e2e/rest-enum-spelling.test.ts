// REST keeps its own spelling and its own errors where the GraphQL schema's enums differ from the
// wire: sort orders are `-created_at` on REST and `created_at_desc` in GraphQL, and the `day` and
// `week` intervals GraphQL no longer offers are still refused by REST with the messages it always
// gave, in the order it gave them among a request's other faults. The bodies below are exact.
import { beforeAll, describe, expect, it } from 'vitest';
import { restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes } from '../helpers/organizations.ts';

const t = useTestServer({ organizations: { org: 'production' } });
beforeAll(async () => {
  for (const [name, amount] of [['Cheap', 500], ['Dear', 5000], ['Middle', 1500]] as const) {
    const created = await t.org.api('POST', '/products/', { name, recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
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

    const benefit = await t.org.api('POST', '/benefits/', { type: 'meter_credit', description: 'ab', properties: {} });
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
  it.each(['discord', 'github_repository', 'meter_credit'])('refuses creating a %s benefit with the message it always had', async (type) => {
    const response = await t.org.api('POST', '/benefits/', { type, description: 'Not grantable', properties: {} });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ loc: ['body', 'type'], msg: `Benefits of type ${type} need an integration this server does not have; use custom, license_keys or downloadables.`, type: 'value_error' }],
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

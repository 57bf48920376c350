// Customers over REST (/v1/customers/), over GraphQL (under `core`) and through the official
// client library, @polar-sh/sdk. One server for the file; each group of tests works in an
// organization of its own (bootstrapped through the services), so counts and orders are exact.
import { createHash, randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { ResponseValidationError } from '@polar-sh/sdk/models/errors/responsevalidationerror.js';
import type { Customer } from '@polar-sh/sdk/models/components/customer.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, type Api, type Gql, type RestResponse } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, restClientCheckingRequestId, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectGraphQLError, expectValidationError } from '../helpers/responses.ts';
import { datetime, nullableDatetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ resetClockAfterEach: true });

const prisma = () => t.server.kassa.environments.production.environment.prisma;

const unknownId = '0b7e4c1a-2f3d-4e5a-9b6c-7d8e9f0a1b2c';

const wireKeys = [
  'avatar_url',
  'billing_address',
  'created_at',
  'deleted_at',
  'email',
  'email_verified',
  'external_id',
  'id',
  'metadata',
  'modified_at',
  'name',
  'organization_id',
  'tax_id',
];

const avatarOf = (email: string) => `https://www.gravatar.com/avatar/${createHash('sha256').update(email.trim().toLowerCase()).digest('hex')}?d=404`;

async function create(org: Org, body: Record<string, unknown>) {
  const response = await org.api('POST', '/customers/', body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

/** Every customer row of the organization in the database, deleted ones included. */
async function rowCount(organizationId: string, where: Record<string, unknown> = {}): Promise<number> {
  return prisma().customer.count({ where: { organizationId, ...where } });
}

async function totalCount(org: Org): Promise<number> {
  const response = await org.api('GET', '/customers/?limit=100');
  expect(response.status).toBe(200);
  return response.body.pagination.total_count;
}


function expectNotFound(response: RestResponse) {
  expectErrorBody(response, 404, 'ResourceNotFound');
}

const emails = (response: RestResponse) => response.body.items.map((item: { email: string }) => item.email);

describe('creating customers over REST', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
  });

  it('creates a customer with every field and answers 201 with exactly the wire keys of the client library', async () => {
    const response = await org.api('POST', '/customers/', {
      email: 'jane.doe@example.com',
      name: 'Jane Doe',
      external_id: 'crm-jane',
      billing_address: { line1: '1 Rue de Rivoli', line2: 'Bâtiment B', postal_code: '75001', city: 'Paris', state: 'Île-de-France', country: 'FR' },
      tax_id: ['FR61954506077', 'eu_vat'],
      metadata: { plan: 'pro', seats: 3, ratio: 0.5, vip: true },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(response.body).sort()).toEqual(wireKeys);
    expect(Object.keys(response.body.billing_address).sort()).toEqual(['city', 'country', 'line1', 'line2', 'postal_code', 'state']);
    expect(response.body).toEqual({
      id: uuid,
      created_at: datetime,
      modified_at: nullableDatetime,
      metadata: { plan: 'pro', seats: 3, ratio: 0.5, vip: true },
      external_id: 'crm-jane',
      email: 'jane.doe@example.com',
      email_verified: false,
      name: 'Jane Doe',
      billing_address: { line1: '1 Rue de Rivoli', line2: 'Bâtiment B', postal_code: '75001', city: 'Paris', state: 'Île-de-France', country: 'FR' },
      tax_id: ['FR61954506077', 'eu_vat'],
      organization_id: org.organizationId,
      deleted_at: null,
      avatar_url: avatarOf('jane.doe@example.com'),
    });
  });

  it('creates a customer from an email alone, sending null for every field not given', async () => {
    const body = await create(org, { email: 'minimal@example.com' });
    expect(Object.keys(body).sort()).toEqual(wireKeys);
    expect(body).toEqual({
      id: uuid,
      created_at: datetime,
      modified_at: nullableDatetime,
      metadata: {},
      external_id: null,
      email: 'minimal@example.com',
      email_verified: false,
      name: null,
      billing_address: null,
      tax_id: null,
      organization_id: org.organizationId,
      deleted_at: null,
      avatar_url: avatarOf('minimal@example.com'),
    });
  });

  it('fills the address fields not given with null', async () => {
    const body = await create(org, { email: 'country-only@example.com', billing_address: { country: 'US' } });
    expect(body.billing_address).toEqual({ line1: null, line2: null, postal_code: null, city: null, state: null, country: 'US' });
  });

  it('refuses an email already used by a customer, whatever its case, with 422 at body.email and creates nothing', async () => {
    await create(org, { email: 'taken@example.com' });
    const before = await rowCount(org.organizationId);
    const response = await org.api('POST', '/customers/', { email: 'TAKEN@Example.COM', name: 'Impostor' });
    expectValidationError(response, ['body', 'email']);
    expect(response.body.detail).toHaveLength(1);
    expect(await rowCount(org.organizationId)).toBe(before);
    expect(await rowCount(org.organizationId, { name: 'Impostor' })).toBe(0);
  });

  it('refuses an external id already used by a customer with 422 at body.external_id and creates nothing', async () => {
    await create(org, { email: 'first-holder@example.com', external_id: 'shared-ext' });
    const before = await rowCount(org.organizationId);
    const response = await org.api('POST', '/customers/', { email: 'second-holder@example.com', external_id: 'shared-ext' });
    expectValidationError(response, ['body', 'external_id']);
    expect(response.body.detail).toHaveLength(1);
    expect(await rowCount(org.organizationId)).toBe(before);
    expect(await rowCount(org.organizationId, { email: 'second-holder@example.com' })).toBe(0);
  });

  it('creates exactly one customer when five identical creates race, answering the others 422 at body.email and body.external_id', async () => {
    const body = { email: 'racer@example.com', name: 'Racer', external_id: 'racer-1' };
    const responses = await Promise.all([1, 2, 3, 4, 5].map(() => org.api('POST', '/customers/', body)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(responses.map((r) => r.body))).toEqual([201, 422, 422, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      // The losers are told both things they collide on.
      expect(response.body.detail.map((issue: { loc: unknown }) => issue.loc)).toEqual([
        ['body', 'email'],
        ['body', 'external_id'],
      ]);
    }
    expect(await rowCount(org.organizationId, { email: 'racer@example.com' })).toBe(1);
    const winner = responses.find((r) => r.status === 201)!;
    expect((await org.api('GET', `/customers/${winner.body.id}`)).body).toEqual(winner.body);
  });

  it('refuses to create a customer in another organization than the token’s own', async () => {
    const other = await newOrganization(t.server, 'production', { checkRequestId: true });
    const response = await org.api('POST', '/customers/', { email: 'elsewhere@example.com', organization_id: other.organizationId });
    expectValidationError(response, ['body', 'organization_id']);
    expect(await rowCount(other.organizationId)).toBe(0);
    expect(await rowCount(org.organizationId, { email: 'elsewhere@example.com' })).toBe(0);
  });
});

describe('refusing bad customer input over REST', () => {
  let org: Org;
  let existing: { id: string };
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    existing = await create(org, { email: 'valid@example.com', name: 'Valid' });
  });

  const badCreates: [string, Record<string, unknown>, (string | number)[]][] = [
    ['an email without an @', { email: 'not-an-email' }, ['body', 'email']],
    ['an email with a space inside', { email: 'jane doe@example.com' }, ['body', 'email']],
    ['a missing email', { name: 'No email' }, ['body', 'email']],
    ['the unknown country XX', { email: 'xx@example.com', billing_address: { country: 'XX' } }, ['body', 'billing_address', 'country']],
    ['the lowercase country fr', { email: 'fr@example.com', billing_address: { country: 'fr' } }, ['body', 'billing_address', 'country']],
    ['an address without a country', { email: 'nocountry@example.com', billing_address: { city: 'Paris' } }, ['body', 'billing_address', 'country']],
    ['a tax id of one element', { email: 'tax@example.com', tax_id: ['FR61954506077'] }, ['body', 'tax_id']],
    ['metadata of 51 keys', { email: 'meta@example.com', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, ['body', 'metadata']],
    ['a metadata value of 501 characters', { email: 'meta2@example.com', metadata: { note: 'x'.repeat(501) } }, ['body', 'metadata']],
    ['a nested metadata value', { email: 'meta3@example.com', metadata: { nested: { a: 1 } } }, ['body', 'metadata']],
    ['an empty external id', { email: 'emptyext@example.com', external_id: '' }, ['body', 'external_id']],
    ['a name of 257 characters', { email: 'longname@example.com', name: 'n'.repeat(257) }, ['body', 'name']],
  ];

  it.each(badCreates)('refuses a create with %s with 422 naming the field, creating nothing', async (_label, body, loc) => {
    const before = await rowCount(org.organizationId);
    expectValidationError(await org.api('POST', '/customers/', body), loc);
    expect(await rowCount(org.organizationId)).toBe(before);
  });

  it('refuses an unknown field with 422 extra_forbidden naming it, creating nothing', async () => {
    const before = await rowCount(org.organizationId);
    expectValidationError(await org.api('POST', '/customers/', { email: 'extra@example.com', nickname: 'Jay' }), ['body', 'nickname'], 'extra_forbidden');
    expect(await rowCount(org.organizationId)).toBe(before);
  });

  it('refuses an update with a bad email, a bad country, a one-element tax id or an unknown field, changing nothing', async () => {
    const before = (await org.api('GET', `/customers/${existing.id}`)).body;
    expectValidationError(await org.api('PATCH', `/customers/${existing.id}`, { email: 'nope' }), ['body', 'email']);
    expectValidationError(await org.api('PATCH', `/customers/${existing.id}`, { billing_address: { country: 'XX' } }), ['body', 'billing_address', 'country']);
    expectValidationError(await org.api('PATCH', `/customers/${existing.id}`, { billing_address: { country: 'fr' } }), ['body', 'billing_address', 'country']);
    expectValidationError(await org.api('PATCH', `/customers/${existing.id}`, { tax_id: ['FR61954506077'] }), ['body', 'tax_id']);
    expectValidationError(await org.api('PATCH', `/customers/${existing.id}`, { name: 'Renamed', nickname: 'x' }), ['body', 'nickname'], 'extra_forbidden');
    expectValidationError(await org.api('PATCH', `/customers/${existing.id}`, { email: null }), ['body', 'email']);
    expect((await org.api('GET', `/customers/${existing.id}`)).body).toEqual(before);
  });

  it('refuses a customer id that is not a UUID with 422 at path.id', async () => {
    expectValidationError(await org.api('GET', '/customers/not-a-uuid'), ['path', 'id']);
    expectValidationError(await org.api('PATCH', '/customers/not-a-uuid', { name: 'x' }), ['path', 'id']);
    expectValidationError(await org.api('DELETE', '/customers/not-a-uuid'), ['path', 'id']);
  });

  it('refuses an unknown sort property and a limit above 100 naming the query parameter', async () => {
    expectValidationError(await org.api('GET', '/customers/?sorting=age'), ['query', 'sorting', 0]);
    expectValidationError(await org.api('GET', '/customers/?limit=101'), ['query', 'limit']);
    expectValidationError(await org.api('GET', '/customers/?page=0'), ['query', 'page']);
  });
});

describe('listing customers over REST', () => {
  let org: Org;
  // Four live customers, created in this order one second apart, and one deleted customer.
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    const start = Date.now() - 3_600_000;
    const specs = [
      { email: 'anna@shop.test', name: 'Anna 100% Real', external_id: 'crm_1', metadata: { tier: 'gold', seats: 3 } },
      { email: 'ben@shop.test', name: 'Ben', external_id: 'crmX1', metadata: { tier: 'silver', seats: 3 } },
      { email: 'carla@other.test', metadata: { tier: 'gold', seats: 10 } },
      { email: 'dave@shop.test', name: 'Dave 1000', external_id: 'DAVE-2', metadata: { trial: true } },
    ];
    try {
      for (const [i, body] of specs.entries()) {
        t.server.clock.now = new Date(start + i * 1000);
        await create(org, body);
      }
    } finally {
      t.server.clock.now = null;
    }
    // A deleted customer is never listed.
    const gone = await create(org, { email: 'gone@shop.test', name: 'Gone', metadata: { tier: 'gold' } });
    expect((await org.api('DELETE', `/customers/${gone.id}`)).status).toBe(204);
  });

  it('lists the live customers newest first by default, with the pagination envelope', async () => {
    const response = await org.api('GET', '/customers/');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['items', 'pagination']);
    expect(response.body.pagination).toEqual({ total_count: 4, max_page: 1 });
    expect(emails(response)).toEqual(['dave@shop.test', 'carla@other.test', 'ben@shop.test', 'anna@shop.test']);
    for (const item of response.body.items) expect(Object.keys(item).sort()).toEqual(wireKeys);
  });

  it('filters by exact email, case-insensitively, never by part of one', async () => {
    expect(emails(await org.api('GET', '/customers/?email=ANNA@shop.test'))).toEqual(['anna@shop.test']);
    expect(emails(await org.api('GET', '/customers/?email=Carla@OTHER.test'))).toEqual(['carla@other.test']);
    const partial = await org.api('GET', '/customers/?email=anna');
    expect(partial.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });

  it('filters by a query matching the email, the name or the external id, case-insensitively', async () => {
    const q = async (query: string) => emails(await org.api('GET', `/customers/?sorting=email&query=${encodeURIComponent(query)}`));
    expect(await q('OTHER.TEST')).toEqual(['carla@other.test']);
    expect(await q('real')).toEqual(['anna@shop.test']);
    expect(await q('crmx')).toEqual(['ben@shop.test']);
    expect(await q('dave-2')).toEqual(['dave@shop.test']);
    expect(await q('shop.test')).toEqual(['anna@shop.test', 'ben@shop.test', 'dave@shop.test']);
    expect(await q('nobody')).toEqual([]);
  });

  it('treats % and _ in the query as literal characters, not wildcards', async () => {
    const q = async (query: string) => emails(await org.api('GET', `/customers/?sorting=email&query=${encodeURIComponent(query)}`));
    expect(await q('%')).toEqual(['anna@shop.test']);
    expect(await q('100%')).toEqual(['anna@shop.test']);
    expect(await q('crm_')).toEqual(['anna@shop.test']);
    expect(await q('_')).toEqual(['anna@shop.test']);
    expect(await q('b_n')).toEqual([]);
  });

  it('filters by metadata, every key matching one of its values', async () => {
    const m = async (query: string) => emails(await org.api('GET', `/customers/?sorting=email&${query}`));
    expect(await m('metadata[tier]=gold')).toEqual(['anna@shop.test', 'carla@other.test']);
    expect(await m('metadata[tier]=gold&metadata[seats]=3')).toEqual(['anna@shop.test']);
    expect(await m('metadata[tier]=gold&metadata[tier]=silver')).toEqual(['anna@shop.test', 'ben@shop.test', 'carla@other.test']);
    expect(await m('metadata[trial]=true')).toEqual(['dave@shop.test']);
    expect(await m('metadata[tier]=bronze')).toEqual([]);
  });

  it('sorts by email, -email, name (customers without a name last) and created_at', async () => {
    const s = async (sorting: string) => emails(await org.api('GET', `/customers/?sorting=${sorting}`));
    expect(await s('email')).toEqual(['anna@shop.test', 'ben@shop.test', 'carla@other.test', 'dave@shop.test']);
    expect(await s('-email')).toEqual(['dave@shop.test', 'carla@other.test', 'ben@shop.test', 'anna@shop.test']);
    expect(await s('name')).toEqual(['anna@shop.test', 'ben@shop.test', 'dave@shop.test', 'carla@other.test']);
    expect(await s('created_at')).toEqual(['anna@shop.test', 'ben@shop.test', 'carla@other.test', 'dave@shop.test']);
    expect(await s('-created_at')).toEqual(['dave@shop.test', 'carla@other.test', 'ben@shop.test', 'anna@shop.test']);
  });

  it('pages with page and limit, every customer on exactly one page', async () => {
    const first = await org.api('GET', '/customers/?sorting=created_at&limit=3&page=1');
    const second = await org.api('GET', '/customers/?sorting=created_at&limit=3&page=2');
    const third = await org.api('GET', '/customers/?sorting=created_at&limit=3&page=3');
    expect(first.body.pagination).toEqual({ total_count: 4, max_page: 2 });
    expect(second.body.pagination).toEqual({ total_count: 4, max_page: 2 });
    expect(emails(first)).toEqual(['anna@shop.test', 'ben@shop.test', 'carla@other.test']);
    expect(emails(second)).toEqual(['dave@shop.test']);
    expect(third.body).toEqual({ items: [], pagination: { total_count: 4, max_page: 2 } });
  });

  it('combines a filter with paging, counting only the matches', async () => {
    const response = await org.api('GET', '/customers/?query=shop.test&sorting=-email&limit=2&page=2');
    expect(response.body.pagination).toEqual({ total_count: 3, max_page: 2 });
    expect(emails(response)).toEqual(['anna@shop.test']);
  });
});

describe('reading, updating and deleting a customer over REST', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
  });

  it('gets a customer by id and by external id with the very body the create answered', async () => {
    const created = await create(org, { email: 'reader@example.com', name: 'Reader', external_id: 'reader-1', metadata: { a: 1 } });
    const byId = await org.api('GET', `/customers/${created.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(created);
    const byExternalId = await org.api('GET', '/customers/external/reader-1');
    expect(byExternalId.status).toBe(200);
    expect(byExternalId.body).toEqual(created);
  });

  it('reads an external id holding characters that must be escaped in a path', async () => {
    const created = await create(org, { email: 'escaped@example.com', external_id: 'acct 42/eu?x=1' });
    const response = await org.api('GET', `/customers/external/${encodeURIComponent('acct 42/eu?x=1')}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual(created);
  });

  it('answers 404 ResourceNotFound for an unknown id or external id', async () => {
    expectNotFound(await org.api('GET', `/customers/${unknownId}`));
    expectNotFound(await org.api('GET', '/customers/external/no-such-customer'));
    expectNotFound(await org.api('PATCH', `/customers/${unknownId}`, { name: 'Ghost' }));
    expectNotFound(await org.api('PATCH', '/customers/external/no-such-customer', { name: 'Ghost' }));
    expectNotFound(await org.api('DELETE', `/customers/${unknownId}`));
    expectNotFound(await org.api('DELETE', '/customers/external/no-such-customer'));
    expectNotFound(await org.api('GET', `/customers/${unknownId}/state`));
    expectNotFound(await org.api('GET', '/customers/external/no-such-customer/state'));
  });

  it('updates only the fields given, by id, and a GET then reads the change', async () => {
    const created = await create(org, {
      email: 'updatable@example.com',
      name: 'Before',
      billing_address: { country: 'US', city: 'Austin' },
      tax_id: ['123456789', 'us_ein'],
      metadata: { plan: 'basic' },
    });
    const response = await org.api('PATCH', `/customers/${created.id}`, {
      name: 'After',
      billing_address: { line1: '10 Downing Street', postal_code: 'SW1A 2AA', city: 'London', country: 'GB' },
      metadata: { plan: 'pro', seats: 2 },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({
      ...created,
      modified_at: datetime,
      name: 'After',
      billing_address: { line1: '10 Downing Street', line2: null, postal_code: 'SW1A 2AA', city: 'London', state: null, country: 'GB' },
      metadata: { plan: 'pro', seats: 2 },
    });
    expect((await org.api('GET', `/customers/${created.id}`)).body).toEqual(response.body);
  });

  it('clears the name, billing address and tax id when sent null, and changes nothing on an empty update', async () => {
    const created = await create(org, { email: 'clearable@example.com', name: 'Named', billing_address: { country: 'DE' }, tax_id: ['DE123456789', 'eu_vat'] });
    const cleared = await org.api('PATCH', `/customers/${created.id}`, { name: null, billing_address: null, tax_id: null });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body).toMatchObject({ name: null, billing_address: null, tax_id: null, email: 'clearable@example.com' });
    const untouched = await org.api('PATCH', `/customers/${created.id}`, {});
    expect(untouched.status).toBe(200);
    expect({ ...untouched.body, modified_at: null }).toEqual({ ...cleared.body, modified_at: null });
  });

  it('changes the email, and the avatar follows it', async () => {
    const created = await create(org, { email: 'old-address@example.com' });
    const response = await org.api('PATCH', `/customers/${created.id}`, { email: 'New-Address@example.com' });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe('New-Address@example.com');
    expect(response.body.avatar_url).toBe(avatarOf('new-address@example.com'));
    expect(emails(await org.api('GET', '/customers/?email=new-address@example.com'))).toEqual(['New-Address@example.com']);
    expect(emails(await org.api('GET', '/customers/?email=old-address@example.com'))).toEqual([]);
  });

  it("refuses to change an email to another customer's, whatever its case, with 422 at body.email", async () => {
    await create(org, { email: 'holder@example.com' });
    const mover = await create(org, { email: 'mover@example.com' });
    expectValidationError(await org.api('PATCH', `/customers/${mover.id}`, { email: 'HOLDER@example.com' }), ['body', 'email']);
    expect((await org.api('GET', `/customers/${mover.id}`)).body.email).toBe('mover@example.com');
  });

  it('updates a customer given by external id', async () => {
    const created = await create(org, { email: 'by-external@example.com', external_id: 'ext-upd' });
    const response = await org.api('PATCH', '/customers/external/ext-upd', { name: 'Via external id' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ ...created, modified_at: datetime, name: 'Via external id' });
    expect((await org.api('GET', `/customers/${created.id}`)).body.name).toBe('Via external id');
  });

  it('refuses to change an external id once set with 422 at body.external_id, by id and by external id', async () => {
    const created = await create(org, { email: 'fixed-ext@example.com', external_id: 'fixed-1' });
    expectValidationError(await org.api('PATCH', `/customers/${created.id}`, { external_id: 'fixed-2' }), ['body', 'external_id']);
    expectValidationError(await org.api('PATCH', '/customers/external/fixed-1', { external_id: 'fixed-2', name: 'x' }), ['body', 'external_id']);
    expect((await org.api('GET', `/customers/${created.id}`)).body).toEqual(created);
    expectNotFound(await org.api('GET', '/customers/external/fixed-2'));
  });

  it('accepts the same external id sent back unchanged', async () => {
    const created = await create(org, { email: 'same-ext@example.com', external_id: 'same-1' });
    const response = await org.api('PATCH', `/customers/${created.id}`, { external_id: 'same-1', name: 'Same' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ external_id: 'same-1', name: 'Same' });
  });

  it('sets an external id on a customer that has none, which then finds the customer', async () => {
    const created = await create(org, { email: 'late-ext@example.com' });
    const response = await org.api('PATCH', `/customers/${created.id}`, { external_id: 'late-1' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.external_id).toBe('late-1');
    expect((await org.api('GET', '/customers/external/late-1')).body.id).toBe(created.id);
  });

  it("refuses to set an external id another customer holds with 422 at body.external_id", async () => {
    await create(org, { email: 'ext-owner@example.com', external_id: 'owned-1' });
    const other = await create(org, { email: 'ext-wanter@example.com' });
    expectValidationError(await org.api('PATCH', `/customers/${other.id}`, { external_id: 'owned-1' }), ['body', 'external_id']);
    expect((await org.api('GET', `/customers/${other.id}`)).body.external_id).toBeNull();
  });

  it('deletes a customer by id with 204 and no body; it is then not found, not listed and cannot be deleted again', async () => {
    const created = await create(org, { email: 'leaving@example.com', external_id: 'leaving-1' });
    const response = await org.api('DELETE', `/customers/${created.id}`);
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expectNotFound(await org.api('GET', `/customers/${created.id}`));
    expectNotFound(await org.api('GET', '/customers/external/leaving-1'));
    expectNotFound(await org.api('PATCH', `/customers/${created.id}`, { name: 'Zombie' }));
    expectNotFound(await org.api('GET', `/customers/${created.id}/state`));
    expectNotFound(await org.api('DELETE', `/customers/${created.id}`));
    expect(emails(await org.api('GET', '/customers/?email=leaving@example.com'))).toEqual([]);
    // The row stays (orders refer to it), marked deleted.
    const row = await prisma().customer.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.deletedAt).toBeInstanceOf(Date);
  });

  it('frees the email and external id of a deleted customer for a new customer', async () => {
    const first = await create(org, { email: 'reused@example.com', external_id: 'reused-1' });
    expect((await org.api('DELETE', `/customers/${first.id}`)).status).toBe(204);
    const second = await org.api('POST', '/customers/', { email: 'Reused@example.com', external_id: 'reused-1' });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(second.body.id).not.toBe(first.id);
    expect((await org.api('GET', '/customers/external/reused-1')).body.id).toBe(second.body.id);
    expect(emails(await org.api('GET', '/customers/?email=reused@example.com'))).toEqual(['Reused@example.com']);
  });

  it('deletes a customer exactly once when five deletes of it race: one 204, the others 404', async () => {
    // Several rounds, so that a race the server does not guard against shows up.
    for (let round = 1; round <= 5; round++) {
      const created = await create(org, { email: `delete-race-${round}@example.com` });
      const responses = await Promise.all([1, 2, 3, 4, 5].map(() => org.api('DELETE', `/customers/${created.id}`)));
      expect(responses.map((r) => r.status).sort(), `round ${round}`).toEqual([204, 404, 404, 404, 404]);
      expectNotFound(await org.api('GET', `/customers/${created.id}`));
    }
  });

  it('lets exactly one of five racing updates set the external id of a customer that has none; the others get 422', async () => {
    for (let round = 1; round <= 5; round++) {
      const created = await create(org, { email: `ext-race-${round}@example.com` });
      const responses = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((x) => org.api('PATCH', `/customers/${created.id}`, { external_id: `race-${round}-${x}` })));
      expect(responses.map((r) => r.status).sort(), `round ${round}: ${JSON.stringify(responses.map((r) => [r.status, r.body.external_id]))}`).toEqual([200, 422, 422, 422, 422]);
      for (const refused of responses.filter((r) => r.status === 422)) expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'external_id'] })]);
      const winner = responses.find((r) => r.status === 200)!;
      expect((await org.api('GET', `/customers/${created.id}`)).body.external_id).toBe(winner.body.external_id);
    }
  });

  it('deletes a customer by external id with 204, freeing the external id', async () => {
    const created = await create(org, { email: 'ext-delete@example.com', external_id: 'ext-del' });
    const response = await org.api('DELETE', '/customers/external/ext-del');
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expectNotFound(await org.api('GET', '/customers/external/ext-del'));
    expectNotFound(await org.api('GET', `/customers/${created.id}`));
    expect((await org.api('POST', '/customers/', { email: 'ext-delete-2@example.com', external_id: 'ext-del' })).status).toBe(201);
  });
});

describe('customer state over REST', () => {
  let org: Org;
  let customer: Record<string, unknown> & { id: string };
  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    customer = await create(org, { email: 'stateful@example.com', name: 'Stateful', external_id: 'state-1', billing_address: { country: 'NL' } });
  });

  it('answers the customer with empty subscriptions, benefits and meters by id', async () => {
    const response = await org.api('GET', `/customers/${customer.id}/state`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual([...wireKeys, 'active_meters', 'active_subscriptions', 'granted_benefits'].sort());
    expect(response.body).toEqual({ ...customer, active_subscriptions: [], granted_benefits: [], active_meters: [] });
  });

  it('answers the same state by external id', async () => {
    const response = await org.api('GET', '/customers/external/state-1/state');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ ...customer, active_subscriptions: [], granted_benefits: [], active_meters: [] });
  });
});

describe("another organization's customers", () => {
  let a: Org;
  let b: Org;
  let aCustomer: { id: string } & Record<string, unknown>;
  let aTwin: { id: string } & Record<string, unknown>;
  let bTwin: { id: string } & Record<string, unknown>;
  beforeAll(async () => {
    a = await newOrganization(t.server, 'production', { checkRequestId: true });
    b = await newOrganization(t.server, 'production', { checkRequestId: true });
    aCustomer = await create(a, { email: 'private@example.com', name: 'Private', external_id: 'a-only' });
    // The same external id and email exist in both organizations: each is its own customer.
    aTwin = await create(a, { email: 'twin@example.com', name: 'Twin of A', external_id: 'twin' });
    bTwin = await create(b, { email: 'twin@example.com', name: 'Twin of B', external_id: 'twin' });
  });

  it('answer 404 to a get, update, delete or state by id, as an unknown id would', async () => {
    expectNotFound(await b.api('GET', `/customers/${aCustomer.id}`));
    expectNotFound(await b.api('GET', `/customers/${aCustomer.id}/state`));
    expectNotFound(await b.api('PATCH', `/customers/${aCustomer.id}`, { name: 'Hijacked' }));
    expectNotFound(await b.api('DELETE', `/customers/${aCustomer.id}`));
    expect((await a.api('GET', `/customers/${aCustomer.id}`)).body).toEqual(aCustomer);
  });

  it('answer 404 to a get, update, delete or state by external id', async () => {
    expectNotFound(await b.api('GET', '/customers/external/a-only'));
    expectNotFound(await b.api('GET', '/customers/external/a-only/state'));
    expectNotFound(await b.api('PATCH', '/customers/external/a-only', { name: 'Hijacked' }));
    expectNotFound(await b.api('DELETE', '/customers/external/a-only'));
    expect((await a.api('GET', '/customers/external/a-only')).body).toEqual(aCustomer);
  });

  it('are never listed, even when filtering by their organization, email or external id', async () => {
    const listed = await b.api('GET', `/customers/?organization_id=${a.organizationId}`);
    expect(listed.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    expect(emails(await b.api('GET', '/customers/?email=private@example.com'))).toEqual([]);
    expect(emails(await b.api('GET', '/customers/?query=a-only'))).toEqual([]);
    expect((await b.api('GET', '/customers/?query=twin')).body.items.map((i: { id: string }) => i.id)).toEqual([bTwin.id]);
  });

  it('with the same external id are each seen only by their own organization', async () => {
    expect((await a.api('GET', '/customers/external/twin')).body).toEqual(aTwin);
    expect((await b.api('GET', '/customers/external/twin')).body).toEqual(bTwin);
    expect((await a.api('GET', '/customers/external/twin/state')).body.id).toBe(aTwin.id);
    expect((await b.api('GET', '/customers/external/twin/state')).body.id).toBe(bTwin.id);
  });

  it('with the same external id are updated and deleted only within their own organization', async () => {
    const updated = await b.api('PATCH', '/customers/external/twin', { name: 'B renamed' });
    expect(updated.status).toBe(200);
    expect(updated.body.id).toBe(bTwin.id);
    expect((await a.api('GET', '/customers/external/twin')).body.name).toBe('Twin of A');
    expect((await b.api('DELETE', '/customers/external/twin')).status).toBe(204);
    expectNotFound(await b.api('GET', '/customers/external/twin'));
    expect((await a.api('GET', '/customers/external/twin')).body).toEqual(aTwin);
  });
});

describe('a token without the customers scopes', () => {
  let org: Org;
  let customer: { id: string };
  let productsOnly: Api;
  let productsOnlyGql: Gql;
  let readOnly: Api;

  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
    customer = await create(org, { email: 'guarded@example.com', external_id: 'guarded-1' });
    const token = await tokenWithScopes(t.server, org, ['products:read'], 'scopes products:read');
    productsOnly = restClientCheckingRequestId(t.server.base(), token);
    productsOnlyGql = graphqlClient(t.server.base(), token);
    readOnly = restClientCheckingRequestId(t.server.base(), await tokenWithScopes(t.server, org, ['customers:read'], 'scopes customers:read'));
  });

  function expectNotPermitted(response: RestResponse, scope: string) {
    expectErrorBody(response, 403, 'NotPermitted');
    expect(response.body.detail).toContain(scope);
  }

  it('still reads products', async () => {
    expect((await productsOnly('GET', '/products/')).status).toBe(200);
  });

  it('gets 403 naming customers:read when listing, getting or reading the state of customers', async () => {
    expectNotPermitted(await productsOnly('GET', '/customers/'), 'customers:read');
    expectNotPermitted(await productsOnly('GET', `/customers/${customer.id}`), 'customers:read');
    expectNotPermitted(await productsOnly('GET', '/customers/external/guarded-1'), 'customers:read');
    expectNotPermitted(await productsOnly('GET', `/customers/${customer.id}/state`), 'customers:read');
    expectNotPermitted(await productsOnly('GET', '/customers/external/guarded-1/state'), 'customers:read');
  });

  it('gets 403 naming customers:write when creating, updating or deleting customers, changing nothing', async () => {
    const before = await rowCount(org.organizationId);
    expectNotPermitted(await productsOnly('POST', '/customers/', { email: 'sneaky@example.com' }), 'customers:write');
    expectNotPermitted(await productsOnly('PATCH', `/customers/${customer.id}`, { name: 'Sneaky' }), 'customers:write');
    expectNotPermitted(await productsOnly('PATCH', '/customers/external/guarded-1', { name: 'Sneaky' }), 'customers:write');
    expectNotPermitted(await productsOnly('DELETE', `/customers/${customer.id}`), 'customers:write');
    expectNotPermitted(await productsOnly('DELETE', '/customers/external/guarded-1'), 'customers:write');
    expect(await rowCount(org.organizationId)).toBe(before);
    expect((await org.api('GET', `/customers/${customer.id}`)).body).toEqual(customer);
  });

  it('gets NOT_PERMITTED naming customers:read or customers:write over GraphQL', async () => {
    const listed = expectGraphQLError(await productsOnlyGql('query { core { customers { items { id } } } }'), 'NOT_PERMITTED');
    expect(listed.message).toContain('customers:read');
    const created = expectGraphQLError(await productsOnlyGql('mutation { core { customerCreate(input: { email: "gql-sneaky@example.com" }) { id } } }'), 'NOT_PERMITTED');
    expect(created.message).toContain('customers:write');
    expect(await rowCount(org.organizationId, { email: 'gql-sneaky@example.com' })).toBe(0);
  });

  it('with customers:read may read customers but gets 403 naming customers:write when creating one', async () => {
    expect((await readOnly('GET', `/customers/${customer.id}`)).body).toEqual(customer);
    expect((await readOnly('GET', '/customers/')).status).toBe(200);
    expectNotPermitted(await readOnly('POST', '/customers/', { email: 'reader-made@example.com' }), 'customers:write');
    expect(await rowCount(org.organizationId, { email: 'reader-made@example.com' })).toBe(0);
  });
});

describe('customers over GraphQL', () => {
  let org: Org;
  const CUSTOMER = /* GraphQL */ `
    fragment C on Customer {
      id createdAt modifiedAt metadata externalId email emailVerified name
      billingAddress { line1 line2 postalCode city state country }
      taxId organizationId deletedAt avatarUrl
    }`;
  const CREATE = `mutation ($input: CustomerCreateInput!) { core { customerCreate(input: $input) { ...C } } } ${CUSTOMER}`;
  const GET = `query ($id: UUID!) { core { customer(id: $id) { ...C } } } ${CUSTOMER}`;
  const GET_EXTERNAL = `query ($externalId: String!) { core { customerByExternalId(externalId: $externalId) { ...C } } } ${CUSTOMER}`;
  const STATE = `query ($id: UUID, $externalId: String) { core { customerState(id: $id, externalId: $externalId) { id email externalId } } }`;
  const UPDATE = `mutation ($id: UUID, $externalId: String, $input: CustomerUpdateInput!) { core { customerUpdate(id: $id, externalId: $externalId, input: $input) { ...C } } } ${CUSTOMER}`;
  const DELETE = `mutation ($id: UUID, $externalId: String) { core { customerDelete(id: $id, externalId: $externalId) } }`;
  const LIST = `query ($page: Int, $limit: Int, $email: String, $query: String, $metadata: JSONObject, $sorting: [CustomerSortOrder!]) {
    core { customers(page: $page, limit: $limit, email: $email, query: $query, metadata: $metadata, sorting: $sorting) { items { ...C } pagination { totalCount maxPage } } }
  } ${CUSTOMER}`;

  async function gqlCreate(input: Record<string, unknown>) {
    const response = await org.gql(CREATE, { input });
    expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
    return response.body.data.core.customerCreate;
  }

  beforeAll(async () => {
    org = await newOrganization(t.server, 'production', { checkRequestId: true });
  });

  it('creates a customer with camelCase fields and reads it back by id and by external id', async () => {
    const created = await gqlCreate({
      email: 'graph@example.com',
      name: 'Graph',
      externalId: 'gql-1',
      billingAddress: { line1: 'Main St 1', postalCode: '1011', city: 'Amsterdam', country: 'NL' },
      taxId: ['NL123456789B01', 'eu_vat'],
      metadata: { source: 'gql' },
    });
    expect(created).toEqual({
      id: uuid,
      createdAt: datetime,
      modifiedAt: nullableDatetime,
      metadata: { source: 'gql' },
      externalId: 'gql-1',
      email: 'graph@example.com',
      emailVerified: false,
      name: 'Graph',
      billingAddress: { line1: 'Main St 1', line2: null, postalCode: '1011', city: 'Amsterdam', state: null, country: 'NL' },
      taxId: ['NL123456789B01', 'eu_vat'],
      organizationId: org.organizationId,
      deletedAt: null,
      avatarUrl: avatarOf('graph@example.com'),
    });
    expect((await org.gql(GET, { id: created.id })).body.data.core.customer).toEqual(created);
    expect((await org.gql(GET_EXTERNAL, { externalId: 'gql-1' })).body.data.core.customerByExternalId).toEqual(created);
  });

  it('reads a GraphQL-created customer over REST with the same values, in snake_case', async () => {
    const created = await gqlCreate({ email: 'crossover@example.com', name: 'Cross', externalId: 'cross-1', billingAddress: { country: 'BE' } });
    const rest = (await org.api('GET', `/customers/${created.id}`)).body;
    expect(rest).toEqual({
      id: created.id,
      created_at: created.createdAt,
      modified_at: created.modifiedAt,
      metadata: {},
      external_id: 'cross-1',
      email: 'crossover@example.com',
      email_verified: false,
      name: 'Cross',
      billing_address: { line1: null, line2: null, postal_code: null, city: null, state: null, country: 'BE' },
      tax_id: null,
      organization_id: org.organizationId,
      deleted_at: null,
      avatar_url: created.avatarUrl,
    });
  });

  it('lists customers with email, query, metadata and sorting filters', async () => {
    const other = await newOrganization(t.server, 'production', { checkRequestId: true });
    const gql = other.gql;
    for (const input of [
      { email: 'zed@list.test', name: 'Zed', metadata: { tier: 'gold' } },
      { email: 'amy@list.test', name: 'Amy', externalId: 'amy_1', metadata: { tier: 'silver' } },
      { email: 'max@list.test', metadata: { tier: 'gold' } },
    ]) {
      expect((await gql(CREATE, { input })).body.errors).toBeUndefined();
    }
    const list = async (variables: Record<string, unknown>) => {
      const response = await gql(LIST, variables);
      expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
      return response.body.data.core.customers;
    };
    const listEmails = (page: { items: { email: string }[] }) => page.items.map((i) => i.email);
    expect(listEmails(await list({ sorting: ['email_asc'] }))).toEqual(['amy@list.test', 'max@list.test', 'zed@list.test']);
    expect(listEmails(await list({ sorting: ['name_asc'] }))).toEqual(['amy@list.test', 'zed@list.test', 'max@list.test']);
    expect(listEmails(await list({ email: 'ZED@list.test' }))).toEqual(['zed@list.test']);
    expect(listEmails(await list({ query: 'amy_' }))).toEqual(['amy@list.test']);
    expect(listEmails(await list({ metadata: { tier: 'gold' }, sorting: ['email_desc'] }))).toEqual(['zed@list.test', 'max@list.test']);
    const page = await list({ sorting: ['email_asc'], limit: 2, page: 2 });
    expect(page.pagination).toEqual({ totalCount: 3, maxPage: 2 });
    expect(listEmails(page)).toEqual(['zed@list.test']);
  });

  it('reads the customer state by id or by external id, and refuses both or neither', async () => {
    const created = await gqlCreate({ email: 'gql-state@example.com', externalId: 'gql-state' });
    const byId = await org.gql(STATE, { id: created.id });
    expect(byId.body.errors).toBeUndefined();
    expect(byId.body.data.core.customerState).toEqual({ id: created.id, email: 'gql-state@example.com', externalId: 'gql-state' });
    const byExternal = await org.gql(STATE, { externalId: 'gql-state' });
    expect(byExternal.body.data.core.customerState.id).toBe(created.id);
    expectGraphQLError(await org.gql(STATE, { id: created.id, externalId: 'gql-state' }), 'BAD_USER_INPUT');
    expectGraphQLError(await org.gql(STATE, {}), 'BAD_USER_INPUT');
  });

  it('updates by id and by external id, refusing a change of external id', async () => {
    const created = await gqlCreate({ email: 'gql-update@example.com', externalId: 'gql-upd' });
    const byId = await org.gql(UPDATE, { id: created.id, input: { name: 'By id' } });
    expect(byId.body.errors).toBeUndefined();
    expect(byId.body.data.core.customerUpdate.name).toBe('By id');
    const byExternal = await org.gql(UPDATE, { externalId: 'gql-upd', input: { metadata: { k: 'v' } } });
    expect(byExternal.body.errors).toBeUndefined();
    expect(byExternal.body.data.core.customerUpdate).toMatchObject({ id: created.id, name: 'By id', metadata: { k: 'v' } });
    const refused = expectGraphQLError(await org.gql(UPDATE, { id: created.id, input: { externalId: 'gql-other' } }), 'BAD_USER_INPUT');
    expect(refused.extensions.issues).toEqual([{ loc: ['input', 'externalId'], msg: expect.any(String), type: expect.any(String) }]);
  });

  it('refuses a duplicate email with BAD_USER_INPUT at input.email and a duplicate external id at input.externalId', async () => {
    await gqlCreate({ email: 'gql-dup@example.com', externalId: 'gql-dup' });
    const email = expectGraphQLError(await org.gql(CREATE, { input: { email: 'GQL-DUP@example.com' } }), 'BAD_USER_INPUT');
    expect(email.extensions.issues).toEqual([{ loc: ['input', 'email'], msg: expect.any(String), type: expect.any(String) }]);
    const external = expectGraphQLError(await org.gql(CREATE, { input: { email: 'gql-dup-2@example.com', externalId: 'gql-dup' } }), 'BAD_USER_INPUT');
    expect(external.extensions.issues).toEqual([{ loc: ['input', 'externalId'], msg: expect.any(String), type: expect.any(String) }]);
    expect(await rowCount(org.organizationId, { email: 'gql-dup-2@example.com' })).toBe(0);
  });

  it('deletes by id and by external id, after which the customer is RESOURCE_NOT_FOUND', async () => {
    const one = await gqlCreate({ email: 'gql-del-1@example.com' });
    const two = await gqlCreate({ email: 'gql-del-2@example.com', externalId: 'gql-del-2' });
    const deletedById = await org.gql(DELETE, { id: one.id });
    expect(deletedById.body).toEqual({ data: { core: { customerDelete: true } } });
    const deletedByExternal = await org.gql(DELETE, { externalId: 'gql-del-2' });
    expect(deletedByExternal.body).toEqual({ data: { core: { customerDelete: true } } });
    expectGraphQLError(await org.gql(GET, { id: one.id }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await org.gql(GET, { id: two.id }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await org.gql(GET_EXTERNAL, { externalId: 'gql-del-2' }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await org.gql(DELETE, { id: one.id }), 'RESOURCE_NOT_FOUND');
  });

  it("answers another organization's customer with RESOURCE_NOT_FOUND, by id and by external id", async () => {
    const created = await gqlCreate({ email: 'gql-private@example.com', externalId: 'gql-private' });
    const stranger = await newOrganization(t.server, 'production', { checkRequestId: true });
    expectGraphQLError(await stranger.gql(GET, { id: created.id }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await stranger.gql(GET_EXTERNAL, { externalId: 'gql-private' }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await stranger.gql(UPDATE, { id: created.id, input: { name: 'Hijacked' } }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await stranger.gql(DELETE, { externalId: 'gql-private' }), 'RESOURCE_NOT_FOUND');
    expect((await org.gql(GET, { id: created.id })).body.data.core.customer).toEqual(created);
  });
});

describe('customers through the official SDK', () => {
  let polar: Polar;
  let organizationId: string;
  beforeAll(async () => {
    ({ polar, organizationId } = await newOrganization(t.server));
  });

  function expectWellFormed(customer: Customer) {
    expect(customer.organizationId).toBe(organizationId);
    expect(customer.createdAt).toBeInstanceOf(Date);
    expect(Number.isNaN(customer.createdAt.getTime())).toBe(false);
    expect(customer.deletedAt).toBeNull();
    expect(customer.emailVerified).toBe(false);
    expect(customer.avatarUrl).toBe(avatarOf(customer.email));
  }

  it('creates a customer with every field and gets it back equal, by id and by external id', async () => {
    const created = await polar.customers.create({
      email: 'sdk@example.com',
      name: 'Sdk User',
      externalId: 'sdk-1',
      billingAddress: { line1: 'Karl-Marx-Allee 1', postalCode: '10178', city: 'Berlin', country: 'DE' },
      taxId: ['DE123456789', 'eu_vat'],
      metadata: { plan: 'pro', seats: 4, beta: true },
    });
    expectWellFormed(created);
    expect(created).toMatchObject({
      email: 'sdk@example.com',
      name: 'Sdk User',
      externalId: 'sdk-1',
      billingAddress: { line1: 'Karl-Marx-Allee 1', line2: null, postalCode: '10178', city: 'Berlin', state: null, country: 'DE' },
      taxId: ['DE123456789', 'eu_vat'],
      metadata: { plan: 'pro', seats: 4, beta: true },
    });
    expect(await polar.customers.get({ id: created.id })).toEqual(created);
    expect(await polar.customers.getExternal({ externalId: 'sdk-1' })).toEqual(created);
  });

  it('lists customers with filters and pages through them with the async iterator', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      ids.push((await polar.customers.create({ email: `paged-${i}@sdk.test`, name: `Paged ${i}`, metadata: { batch: 'paged', n: i } })).id);
    }
    const seen: string[] = [];
    const sizes: number[] = [];
    for await (const page of await polar.customers.list({ query: 'sdk.test', sorting: ['email'], limit: 2 })) {
      sizes.push(page.result.items.length);
      expect(page.result.pagination).toEqual({ totalCount: 3, maxPage: 2 });
      for (const item of page.result.items) {
        expectWellFormed(item);
        seen.push(item.id);
      }
    }
    expect(sizes).toEqual([2, 1]);
    expect(seen).toEqual(ids);
    expect((await polar.customers.list({ email: 'PAGED-2@sdk.test' })).result.items.map((c) => c.id)).toEqual([ids[1]]);
    expect((await polar.customers.list({ metadata: { batch: 'paged', n: [1, 3] }, sorting: ['-email'] })).result.items.map((c) => c.id)).toEqual([ids[2], ids[0]]);
  });

  it('updates by id and by external id', async () => {
    const created = await polar.customers.create({ email: 'sdk-update@example.com', externalId: 'sdk-upd' });
    const byId = await polar.customers.update({ id: created.id, customerUpdate: { name: 'Renamed', billingAddress: { country: 'SE' } } });
    expect(byId).toMatchObject({ id: created.id, name: 'Renamed', billingAddress: { country: 'SE', line1: null } });
    expect(byId.modifiedAt).toBeInstanceOf(Date);
    const byExternal = await polar.customers.updateExternal({ externalId: 'sdk-upd', customerUpdateExternalID: { metadata: { updated: true } } });
    expect(byExternal).toMatchObject({ id: created.id, name: 'Renamed', metadata: { updated: true } });
    expect(await polar.customers.get({ id: created.id })).toEqual(byExternal);
  });

  it('reads the customer state by id and by external id', async () => {
    const created = await polar.customers.create({ email: 'sdk-state@example.com', externalId: 'sdk-state' });
    const byId = await polar.customers.getState({ id: created.id });
    expect(byId).toEqual({ ...created, activeSubscriptions: [], grantedBenefits: [], activeMeters: [] });
    const byExternal = await polar.customers.getStateExternal({ externalId: 'sdk-state' });
    expect(byExternal).toEqual(byId);
  });

  it('deletes by id and by external id, after which get throws ResourceNotFound', async () => {
    const one = await polar.customers.create({ email: 'sdk-del-1@example.com' });
    const two = await polar.customers.create({ email: 'sdk-del-2@example.com', externalId: 'sdk-del-2' });
    await expect(polar.customers.delete({ id: one.id })).resolves.toBeUndefined();
    await expect(polar.customers.deleteExternal({ externalId: 'sdk-del-2' })).resolves.toBeUndefined();
    for (const call of [() => polar.customers.get({ id: one.id }), () => polar.customers.get({ id: two.id }), () => polar.customers.getExternal({ externalId: 'sdk-del-2' })]) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(ResourceNotFound);
      expect(error).not.toBeInstanceOf(ResponseValidationError);
      expect((error as ResourceNotFound).statusCode).toBe(404);
    }
  });

  it('throws ResourceNotFound for unknown customers on every by-id and by-external-id call', async () => {
    const calls = [
      () => polar.customers.get({ id: randomUUID() }),
      () => polar.customers.update({ id: randomUUID(), customerUpdate: { name: 'Ghost' } }),
      () => polar.customers.delete({ id: randomUUID() }),
      () => polar.customers.getState({ id: randomUUID() }),
      () => polar.customers.getExternal({ externalId: 'sdk-nobody' }),
      () => polar.customers.updateExternal({ externalId: 'sdk-nobody', customerUpdateExternalID: { name: 'Ghost' } }),
      () => polar.customers.deleteExternal({ externalId: 'sdk-nobody' }),
      () => polar.customers.getStateExternal({ externalId: 'sdk-nobody' }),
    ];
    for (const call of calls) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(ResourceNotFound);
      expect((error as ResourceNotFound).error).toBe('ResourceNotFound');
    }
  });

  it('throws HTTPValidationError naming the email for a duplicate and the country for a bad one', async () => {
    await polar.customers.create({ email: 'sdk-dup@example.com' });
    const duplicate = await rejectionOf(polar.customers.create({ email: 'SDK-DUP@example.com' }));
    expect(duplicate).toBeInstanceOf(HTTPValidationError);
    expect((duplicate as HTTPValidationError).statusCode).toBe(422);
    expect((duplicate as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'email'] })]);
    const country = await rejectionOf(polar.customers.create({ email: 'sdk-country@example.com', billingAddress: { country: 'XX' } }));
    expect(country).toBeInstanceOf(HTTPValidationError);
    expect((country as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'billing_address', 'country'] })]);
  });

  it('throws HTTPValidationError naming the external id when changing it once set', async () => {
    const created = await polar.customers.create({ email: 'sdk-fixed@example.com', externalId: 'sdk-fixed' });
    const error = await rejectionOf(polar.customers.update({ id: created.id, customerUpdate: { externalId: 'sdk-moved' } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'external_id'] })]);
    expect((await polar.customers.get({ id: created.id })).externalId).toBe('sdk-fixed');
  });
});

// Usage events end to end, in sandbox: ingested in batches through the official client
// (@polar-sh/sdk) and REST, all or nothing, idempotent by external_id; listed with every filter the
// client library offers, read one by one, and summarised by name; Kassa's own events
// (benefit.granted, benefit.revoked) recorded beside them; and the same through GraphQL. From the
// attacker's side: no token, another organization's token, a token without the scope, a sandbox
// token on production.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { createAndConfirmCheckout, fixedProduct } from '../helpers/purchases.ts';
import { expectErrorBody, expectStatus, expectValidationError, graphqlData } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';
import { restClient } from '../helpers/server.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox', production: 'production' } });

async function newCustomer(org: Org, externalId: string | null = null) {
  return org.polar.customers.create({ email: `${randomUUID()}@example.com`, name: 'Usage', externalId });
}

/** How many events the organization has, read through the API. */
async function eventCount(org: Org): Promise<number> {
  return expectStatus(await org.api('GET', '/events/?limit=1'), 200).pagination.total_count;
}

describe('ingesting events', () => {
  it('records a batch by customer id and by external customer id and reads it back through the client library', async () => {
    const alice = await newCustomer(t.org, `ext-${randomUUID()}`);
    const before = await eventCount(t.org);
    const at = new Date(Date.now() - 60_000);
    const result = await t.org.polar.events.ingest({
      events: [
        { name: 'api.call', customerId: alice.id, timestamp: at, metadata: { tokens: 12, model: 'small', cached: false } },
        { name: 'api.call', externalCustomerId: alice.externalId!, metadata: { tokens: 30.5 } },
        { name: 'storage', externalCustomerId: 'not-yet-a-customer' },
      ],
    });
    expect(result).toEqual({ inserted: 3 });
    expect(await eventCount(t.org)).toBe(before + 3);

    const listed = await t.org.polar.events.list({ customerId: alice.id, sorting: ['timestamp'] });
    expect(listed.result.items).toHaveLength(2);
    const [first, second] = listed.result.items;
    expect(first).toEqual({
      id: uuid,
      timestamp: at,
      organizationId: t.org.organizationId,
      customerId: alice.id,
      customer: expect.objectContaining({ id: alice.id, email: alice.email, externalId: alice.externalId }),
      externalCustomerId: alice.externalId,
      name: 'api.call',
      source: 'user',
      metadata: { tokens: 12, model: 'small', cached: false },
    });
    // An external id a customer holds is resolved to the customer at ingestion.
    expect(second).toMatchObject({ customerId: alice.id, externalCustomerId: alice.externalId, metadata: { tokens: 30.5 } });
    expect(await t.org.polar.events.get({ id: first.id })).toEqual(first);

    const raw = expectStatus(await t.org.api('GET', `/events/${first.id}`), 200);
    expect(raw).toMatchObject({ id: first.id, timestamp: datetime, source: 'user', customer_id: alice.id, external_id: null });

    const orphan = (await t.org.polar.events.list({ externalCustomerId: 'not-yet-a-customer' })).result.items;
    expect(orphan).toEqual([expect.objectContaining({ name: 'storage', customerId: null, customer: null, externalCustomerId: 'not-yet-a-customer' })]);
  });

  it('skips an external_id already recorded, in the same batch, in a later one, and in batches sent at once', async () => {
    const customer = await newCustomer(t.org);
    const id = () => `evt-${randomUUID()}`;
    const [a, b] = [id(), id()];
    const first = expectStatus(
      await t.org.api('POST', '/events/ingest', {
        events: [
          { name: 'job', customer_id: customer.id, external_id: a },
          { name: 'job', customer_id: customer.id, external_id: a },
          { name: 'job', customer_id: customer.id, external_id: b },
        ],
      }),
      200,
    );
    expect(first).toEqual({ inserted: 2, duplicates: 1 });
    const again = expectStatus(await t.org.api('POST', '/events/ingest', { events: [{ name: 'job', customer_id: customer.id, external_id: a }] }), 200);
    expect(again).toEqual({ inserted: 0, duplicates: 1 });

    const shared = Array.from({ length: 50 }, () => id());
    const batches = await Promise.all(
      Array.from({ length: 4 }, () => t.org.api('POST', '/events/ingest', { events: shared.map((external_id) => ({ name: 'race', customer_id: customer.id, external_id })) })),
    );
    const inserted = batches.map((response) => expectStatus(response, 200).inserted as number);
    expect(inserted.reduce((sum, n) => sum + n, 0)).toBe(50);
    expect((await t.org.polar.events.list({ customerId: customer.id, name: 'race', limit: 100 })).result.pagination.totalCount).toBe(50);
  });

  it('refuses a batch with an unknown customer at its index, through the client library, writing none of it', async () => {
    const customer = await newCustomer(t.org);
    const before = await eventCount(t.org);
    const events = [0, 1, 2].map(() => ({ name: 'ok', customerId: customer.id }));
    const error = await rejectionOf(t.org.polar.events.ingest({ events: [...events, { name: 'bad', customerId: randomUUID() }] }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'events', 3, 'customer_id'] })]);
    expect(await eventCount(t.org)).toBe(before);
  });

  it('refuses, writing nothing: another organization’s customer, a batch over 1000, a timestamp in the future, metadata too large or nested, no customer, both customers', async () => {
    const customer = await newCustomer(t.org);
    const theirs = await newCustomer(t.other);
    const ok = { name: 'ok', customer_id: customer.id };
    const before = await eventCount(t.org);
    const cases: [unknown, (string | number)[]][] = [
      [{ events: [ok, { name: 'x', customer_id: theirs.id }] }, ['body', 'events', 1, 'customer_id']],
      [{ events: Array.from({ length: 1001 }, () => ok) }, ['body', 'events']],
      [{ events: [ok, { ...ok, timestamp: new Date(Date.now() + 10 * 60_000).toISOString() }] }, ['body', 'events', 1, 'timestamp']],
      [{ events: [{ ...ok, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }] }, ['body', 'events', 0, 'metadata']],
      [{ events: [{ ...ok, metadata: { nested: { deeper: 1 } } }] }, ['body', 'events', 0, 'metadata']],
      [{ events: [{ ...ok, metadata: { text: 'x'.repeat(501) } }] }, ['body', 'events', 0, 'metadata']],
      [{ events: [ok, { name: 'nobody' }] }, ['body', 'events', 1, 'customer_id']],
      [{ events: [{ ...ok, external_customer_id: 'also' }] }, ['body', 'events', 0, 'external_customer_id']],
      [{ events: [{ ...ok, name: '' }] }, ['body', 'events', 0, 'name']],
      [{ events: [{ ...ok, customer_id: 'not-a-uuid' }] }, ['body', 'events', 0, 'customer_id']],
    ];
    for (const [body, loc] of cases) expectValidationError(await t.org.api('POST', '/events/ingest', body), loc);
    expect(await eventCount(t.org)).toBe(before);
    // A timestamp a little ahead (clock skew) is accepted.
    expectStatus(await t.org.api('POST', '/events/ingest', { events: [{ ...ok, timestamp: new Date(Date.now() + 60_000).toISOString() }] }), 200);
  });

  it('takes a batch of 1000 in one request', async () => {
    const customer = await newCustomer(t.other);
    const events = Array.from({ length: 1000 }, (_, i) => ({ name: 'bulk', customerId: customer.id, metadata: { i } }));
    expect(await t.other.polar.events.ingest({ events })).toEqual({ inserted: 1000 });
    expect((await t.other.polar.events.list({ customerId: customer.id, limit: 1 })).result.pagination.totalCount).toBe(1000);
  });
});

describe('listing events', () => {
  it('filters by customer, external customer, name, source, time range, metadata, a filter and a meter', async () => {
    const org = t.other;
    const bob = await newCustomer(org, `bob-${randomUUID()}`);
    const carol = await newCustomer(org);
    const base = Date.now() - 3_600_000;
    const time = (minutes: number) => new Date(base + minutes * 60_000);
    const name = `call-${randomUUID().slice(0, 6)}`;
    await org.polar.events.ingest({
      events: [
        { name, customerId: bob.id, timestamp: time(0), metadata: { model: 'large', tokens: 100 } },
        { name, customerId: bob.id, timestamp: time(10), metadata: { model: 'small', tokens: 5 } },
        { name, customerId: carol.id, timestamp: time(20), metadata: { model: 'large', tokens: 7 } },
        { name: `${name}.other`, externalCustomerId: bob.externalId!, timestamp: time(30) },
      ],
    });
    const names = async (request: Parameters<Org['polar']['events']['list']>[0]) =>
      (await org.polar.events.list({ ...request, limit: 100 })).result.items.map((e) => [e.name.replace(name, ''), (e.metadata as Record<string, unknown>).tokens ?? null]);

    expect(await names({ customerId: bob.id, sorting: ['timestamp'] })).toEqual([['', 100], ['', 5], ['.other', null]]);
    expect(await names({ externalCustomerId: bob.externalId!, sorting: ['timestamp'] })).toEqual([['', 100], ['', 5], ['.other', null]]);
    expect(await names({ customerId: [bob.id, carol.id], name, sorting: ['-timestamp'] })).toEqual([['', 7], ['', 5], ['', 100]]);
    expect(await names({ name: [name], startTimestamp: time(5), endTimestamp: time(20) })).toEqual([['', 7], ['', 5]]);
    expect(await names({ name, metadata: { model: 'large' }, sorting: ['timestamp'] })).toEqual([['', 100], ['', 7]]);
    expect(await names({ name, source: 'system' })).toEqual([]);
    expect(await names({ name, source: ['user'], customerId: carol.id })).toEqual([['', 7]]);
    const filter = JSON.stringify({ conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: name }, { property: 'tokens', operator: 'gte', value: 7 }] });
    expect(await names({ filter, sorting: ['timestamp'] })).toEqual([['', 100], ['', 7]]);

    const meter = await org.polar.meters.create({
      name: 'Small calls',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: name }, { property: 'model', operator: 'eq', value: 'small' }] },
      aggregation: { func: 'count' },
    });
    expect(await names({ meterId: meter.id })).toEqual([['', 5]]);

    expectValidationError(await org.api('GET', `/events/?filter=${encodeURIComponent('{"conjunction":"and","clauses":[{"property":"a","operator":"regex","value":1}]}')}`), [
      'query',
      'filter',
      'clauses',
      0,
      'operator',
    ]);
    expectValidationError(await org.api('GET', '/events/?filter=not-json'), ['query', 'filter']);
    expectValidationError(await org.api('GET', '/events/?sorting=name'), ['query', 'sorting', 0]);
  });

  it('summarises names by source with occurrences, first and last seen', async () => {
    const org = t.org;
    const customer = await newCustomer(org);
    const prefix = `n${randomUUID().slice(0, 6)}`;
    const base = Date.now() - 3_600_000;
    const time = (minutes: number) => new Date(base + minutes * 60_000);
    await org.polar.events.ingest({
      events: [
        { name: `${prefix}.a`, customerId: customer.id, timestamp: time(0) },
        { name: `${prefix}.a`, customerId: customer.id, timestamp: time(5) },
        { name: `${prefix}.b`, customerId: customer.id, timestamp: time(1) },
      ],
    });
    const page = await org.polar.events.listNames({ query: prefix, sorting: ['name'] });
    expect(page.result.items).toEqual([
      { name: `${prefix}.a`, source: 'user', occurrences: 2, firstSeen: time(0), lastSeen: time(5) },
      { name: `${prefix}.b`, source: 'user', occurrences: 1, firstSeen: time(1), lastSeen: time(1) },
    ]);
    expect((await org.polar.events.listNames({ query: prefix, sorting: ['-occurrences'], limit: 1 })).result).toEqual({
      items: [expect.objectContaining({ name: `${prefix}.a` })],
      pagination: { totalCount: 2, maxPage: 2 },
    });
    expect((await org.polar.events.listNames({ query: prefix, customerId: randomUUID() })).result.items).toEqual([]);
  });
});

describe('system events', () => {
  it('records benefit.granted and benefit.revoked for the customer, as the client library types them', async () => {
    const org = t.org;
    const benefit = expectStatus(await org.api('POST', '/benefits/', { type: 'custom', description: 'Community access', properties: { note: null } }), 201);
    const license = expectStatus(await org.api('POST', '/benefits/', { type: 'license_keys', description: 'Licence', properties: {} }), 201);
    const product = await fixedProduct(org, 'Membership', 1500);
    expectStatus(await org.api('POST', `/products/${product.id}/benefits`, { benefits: [benefit.id, license.id] }), 200);
    const email = `${randomUUID()}@example.com`;
    await createAndConfirmCheckout(org, product.id, email);
    const ofThese = <T extends { metadata: unknown }>(items: T[]) => items.filter((e) => [benefit.id, license.id].includes((e.metadata as { benefitId?: string }).benefitId));
    const granted = ofThese(
      await eventually(
        async () => (await org.polar.events.list({ source: 'system', name: 'benefit.granted', limit: 100 })).result.items,
        (items) => ofThese(items).length === 2,
        'benefit.granted to be recorded for both benefits',
      ),
    );
    const event = granted.find((e) => (e.metadata as { benefitId?: string }).benefitId === benefit.id)!;
    expect(event).toMatchObject({ source: 'system', name: 'benefit.granted', metadata: { benefitId: benefit.id, benefitGrantId: expect.any(String), benefitType: 'custom' } });
    expect(event.customer?.email).toBe(email);
    // Each event names its own benefit's type, though one sync granted both.
    const licensed = granted.find((e) => (e.metadata as { benefitId?: string }).benefitId === license.id)!;
    expect(licensed).toMatchObject({ customerId: event.customerId, metadata: { benefitId: license.id, benefitType: 'license_keys' } });

    expectStatus(await org.api('POST', `/products/${product.id}/benefits`, { benefits: [] }), 200);
    const revoked = await eventually(
      async () => (await org.polar.events.list({ source: 'system', name: 'benefit.revoked', customerId: event.customerId!, limit: 100 })).result.items,
      (items) => items.length === 2,
      'benefit.revoked to be recorded for both benefits',
    );
    expect(revoked.find((e) => (e.metadata as { benefitId?: string }).benefitId === benefit.id)).toMatchObject({
      customerId: event.customerId,
      metadata: { benefitId: benefit.id, benefitGrantId: (event.metadata as { benefitGrantId: string }).benefitGrantId, benefitType: 'custom' },
    });
    expect(revoked.find((e) => (e.metadata as { benefitId?: string }).benefitId === license.id)).toMatchObject({ metadata: { benefitId: license.id, benefitType: 'license_keys' } });
    const names = (await org.polar.events.listNames({ source: 'system', query: 'benefit.' })).result.items.map((n) => n.name).sort();
    expect(names).toEqual(['benefit.granted', 'benefit.revoked']);
  });
});

describe('events through GraphQL', () => {
  it('ingests with eventsIngest and pages the events connection', async () => {
    const customer = await newCustomer(t.other);
    const name = `gql-${randomUUID().slice(0, 6)}`;
    const ingested = await graphqlData(
      t.other.gql('mutation ($input: EventsIngestInput!) { core { eventsIngest(input: $input) { inserted duplicates } } }', {
        input: { events: [1, 2, 3].map((n) => ({ name, customerId: customer.id, externalId: `${name}-${n}`, metadata: { n }, timestamp: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString() })) },
      }),
    );
    expect(ingested.core.eventsIngest).toEqual({ inserted: 3, duplicates: 0 });
    const query = `query ($name: [String!], $after: String) { core { events(name: $name, first: 2, after: $after, sorting: [timestamp_asc]) {
      totalCount edges { cursor node { id name externalId source metadata customer { id } } } pageInfo { hasNextPage endCursor } } } }`;
    const first = (await graphqlData(t.other.gql(query, { name: [name] }))).core.events;
    expect(first.totalCount).toBe(3);
    expect(first.edges.map((e: { node: { externalId: string } }) => e.node.externalId)).toEqual([`${name}-1`, `${name}-2`]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await graphqlData(t.other.gql(query, { name: [name], after: first.pageInfo.endCursor }))).core.events;
    expect(rest.edges.map((e: { node: { externalId: string; customer: { id: string } } }) => [e.node.externalId, e.node.customer.id])).toEqual([[`${name}-3`, customer.id]]);
    const node = await graphqlData(t.other.gql('query ($id: ID!) { node(id: $id) { ... on Event { name source } } }', { id: rest.edges[0].node.id }));
    expect(node.node).toEqual({ name, source: 'user' });
  });
});

describe('from the attacker’s side', () => {
  it('no token, another organization’s token, a token without the scope, a sandbox token on production', async () => {
    const customer = await newCustomer(t.org);
    await t.org.polar.events.ingest({ events: [{ name: 'secret', customerId: customer.id, metadata: { plan: 'gold' } }] });
    const event = (await t.org.polar.events.list({ customerId: customer.id })).result.items[0];

    expectErrorBody(await t.org.publicApi('GET', '/events/'), 401, 'Unauthorized');
    expectErrorBody(await t.org.publicApi('POST', '/events/ingest', { events: [] }), 401, 'Unauthorized');

    expect(await rejectionOf(t.other.polar.events.get({ id: event.id }))).toBeInstanceOf(ResourceNotFound);
    expect((await t.other.polar.events.list({ customerId: customer.id })).result.items).toEqual([]);
    expect((await t.other.polar.events.list({ organizationId: t.org.organizationId })).result.items).toEqual([]);
    expect((await t.other.polar.events.listNames({ query: 'secret' })).result.items).toEqual([]);
    expectValidationError(await t.other.api('POST', '/events/ingest', { events: [{ name: 'x', customer_id: customer.id }] }), ['body', 'events', 0, 'customer_id']);
    expectValidationError(await t.other.api('POST', '/events/ingest', { events: [{ name: 'x', customer_id: customer.id, organization_id: t.org.organizationId }] }), [
      'body',
      'events',
      0,
      'organization_id',
    ]);

    const readOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['events:read']));
    expectStatus(await readOnly('GET', `/events/${event.id}`), 200);
    expectErrorBody(await readOnly('POST', '/events/ingest', { events: [{ name: 'x', customer_id: customer.id }] }), 403, 'NotPermitted');
    const metersOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['meters:read']));
    expectErrorBody(await metersOnly('GET', '/events/'), 403, 'NotPermitted');
    expectErrorBody(await metersOnly('GET', '/events/names'), 403, 'NotPermitted');

    const sandboxTokenOnProduction = restClient(t.server.base('production'), t.org.token);
    expectErrorBody(await sandboxTokenOnProduction('GET', `/events/${event.id}`), 401, 'Unauthorized');
    expectErrorBody(await sandboxTokenOnProduction('POST', '/events/ingest', { events: [{ name: 'x', customer_id: customer.id }] }), 401, 'Unauthorized');
    expect(await rejectionOf(t.production.polar.events.get({ id: event.id }))).toBeInstanceOf(ResourceNotFound);
  });
});

// Meters end to end, in sandbox: created, read, listed, changed and archived through the official
// client (@polar-sh/sdk); their quantities checked against values the test computes from the
// events it ingested: each aggregation, each filter operator, nested and/or, buckets in a time zone
// across a daylight-saving change, per customer. Bad input is refused with the client library's
// typed errors and writes nothing; another organization's meters and customers stay out of reach.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import type { Filter } from '@polar-sh/sdk/models/components/filter.js';
import type { MeterCreate } from '@polar-sh/sdk/models/components/metercreate.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectStatus, expectValidationError, graphqlData } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';
import { restClient } from '../helpers/server.ts';

const t = useTestServer({ organizations: { org: 'sandbox', other: 'sandbox', production: 'production' } });

type Metadata = Record<string, string | number | boolean>;
interface Sample {
  customer: 'alice' | 'bob';
  at: string;
  metadata: Metadata;
}

// Usage of one month, 2026-01, in UTC.
const samples: Sample[] = [
  { customer: 'alice', at: '2026-01-01T00:00:00Z', metadata: { tokens: 10, model: 'gpt-small', region: 'eu', cached: false } },
  { customer: 'alice', at: '2026-01-01T13:00:00Z', metadata: { tokens: 25.5, model: 'gpt-large', region: 'eu', cached: true } },
  { customer: 'alice', at: '2026-01-03T08:00:00Z', metadata: { tokens: 4, model: 'gpt-small', region: 'us' } },
  { customer: 'bob', at: '2026-01-03T09:30:00Z', metadata: { tokens: 100, model: 'claude-large', region: 'us', cached: true } },
  { customer: 'bob', at: '2026-01-05T23:59:59Z', metadata: { tokens: 1, model: 'gpt-small', region: 'eu' } },
  { customer: 'bob', at: '2026-01-05T12:00:00Z', metadata: { model: 'claude-small', region: 'ap' } },
  { customer: 'alice', at: '2026-01-07T00:00:00Z', metadata: { tokens: 7, model: 'claude-small', region: 'eu' } },
];
const range = { startTimestamp: new Date('2026-01-01T00:00:00Z'), endTimestamp: new Date('2026-01-07T23:59:59Z') };

let name: string;
const customers: Record<string, { id: string; externalId: string }> = {};

beforeAll(async () => {
  name = `llm-${randomUUID().slice(0, 8)}`;
  for (const who of ['alice', 'bob'] as const) {
    const created = await t.org.polar.customers.create({ email: `${who}-${randomUUID()}@example.com`, externalId: `${who}-${randomUUID()}` });
    customers[who] = { id: created.id, externalId: created.externalId! };
  }
  await t.org.polar.events.ingest({
    events: [
      ...samples.map((s, i) =>
        // Bob's events go by his external id, Alice's by her id: quantities count both ways.
        s.customer === 'alice'
          ? { name, customerId: customers.alice.id, timestamp: new Date(s.at), metadata: { ...s.metadata, seq: i } }
          : { name, externalCustomerId: customers.bob.externalId, timestamp: new Date(s.at), metadata: { ...s.metadata, seq: i } },
      ),
      // Another name, never matched by the meters below.
      { name: `${name}.other`, customerId: customers.alice.id, timestamp: new Date('2026-01-02T00:00:00Z'), metadata: { tokens: 1000 } },
    ],
  });
});

const byName = (): Filter => ({ conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: name }] });

async function meter(org: Org, create: Omit<MeterCreate, 'name'>) {
  return org.polar.meters.create({ name: `Meter ${randomUUID().slice(0, 8)}`, ...create });
}

async function totalOf(create: Omit<MeterCreate, 'name'>, extra: { customerId?: string | string[]; externalCustomerId?: string } = {}) {
  const created = await meter(t.org, create);
  return (await t.org.polar.meters.quantities({ id: created.id, ...range, interval: 'day', ...extra })).total;
}

const tokensOf = (ss: Sample[]) => ss.flatMap((s) => (typeof s.metadata.tokens === 'number' ? [s.metadata.tokens] : []));

describe('the meters resource through the client library', () => {
  it('creates, reads, lists, changes and archives a meter', async () => {
    const created = await t.other.polar.meters.create({
      name: 'Tokens used',
      filter: { conjunction: 'or', clauses: [{ property: 'name', operator: 'eq', value: 'a' }, { conjunction: 'and', clauses: [{ property: 'tier', operator: 'ne', value: 'free' }] }] },
      aggregation: { func: 'sum', property: 'tokens' },
      metadata: { team: 'ml' },
    });
    expect(created).toEqual({
      id: uuid,
      createdAt: expect.any(Date),
      modifiedAt: expect.any(Date),
      metadata: { team: 'ml' },
      name: 'Tokens used',
      filter: { conjunction: 'or', clauses: [{ property: 'name', operator: 'eq', value: 'a' }, { conjunction: 'and', clauses: [{ property: 'tier', operator: 'ne', value: 'free' }] }] },
      aggregation: { func: 'sum', property: 'tokens' },
      organizationId: t.other.organizationId,
      archivedAt: null,
    });
    expect(await t.other.polar.meters.get({ id: created.id })).toEqual(created);
    const raw = expectStatus(await t.other.api('GET', `/meters/${created.id}`), 200);
    expect(raw).toMatchObject({ created_at: datetime, archived_at: null, aggregation: { func: 'sum', property: 'tokens' } });

    const counting = await t.other.polar.meters.create({ name: 'API calls', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    expect(counting.aggregation).toEqual({ func: 'count' });
    expect((await t.other.polar.meters.list({})).result.items.map((m) => m.name)).toEqual(['API calls', 'Tokens used']);
    expect((await t.other.polar.meters.list({ sorting: ['-created_at'] })).result.items.map((m) => m.name)).toEqual(['API calls', 'Tokens used']);
    expect((await t.other.polar.meters.list({ query: 'token' })).result.items.map((m) => m.id)).toEqual([created.id]);
    expect((await t.other.polar.meters.list({ metadata: { team: 'ml' } })).result.items.map((m) => m.id)).toEqual([created.id]);

    const updated = await t.other.polar.meters.update({ id: created.id, meterUpdate: { name: 'Tokens', aggregation: { func: 'max', property: 'tokens' } } });
    expect(updated).toMatchObject({ name: 'Tokens', aggregation: { func: 'max', property: 'tokens' }, filter: created.filter });
    expect(updated.modifiedAt!.getTime()).toBeGreaterThanOrEqual(created.modifiedAt!.getTime());
    const archived = await t.other.polar.meters.update({ id: created.id, meterUpdate: { isArchived: true } });
    expect(archived.archivedAt).toBeInstanceOf(Date);
    expect((await t.other.polar.meters.list({ isArchived: false })).result.items.map((m) => m.id)).toEqual([counting.id]);
    expect((await t.other.polar.meters.list({ isArchived: true })).result.items.map((m) => m.id)).toEqual([created.id]);
    expect((await t.other.polar.meters.update({ id: created.id, meterUpdate: { isArchived: false } })).archivedAt).toBeNull();
  });

  it('refuses an unknown operator, an aggregation without its property, a filter too deep, a short name, writing nothing', async () => {
    const before = (await t.other.polar.meters.list({ limit: 100 })).result.pagination.totalCount;
    const error = await rejectionOf(
      t.other.polar.meters.create({
        name: 'Bad',
        filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'regex' as 'eq', value: 'x' }] },
        aggregation: { func: 'count' },
      }),
    );
    // The client library checks the operator itself before sending; the server's own answer is checked over REST.
    expect(error).toBeInstanceOf(Error);
    const base = { name: 'Good name', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } };
    const cases: [object, (string | number)[]][] = [
      [{ ...base, filter: { conjunction: 'and', clauses: [{ property: 'tokens', operator: 'regex', value: 1 }] } }, ['body', 'filter', 'clauses', 0, 'operator']],
      [{ ...base, filter: { conjunction: 'and', clauses: [{ conjunction: 'or', clauses: [{ property: 'a', operator: 'like', value: 3 }] }] } }, ['body', 'filter', 'clauses', 0, 'clauses', 0, 'value']],
      [{ ...base, filter: { conjunction: 'xor', clauses: [] } }, ['body', 'filter', 'conjunction']],
      [{ ...base, filter: { conjunction: 'and', clauses: [{ property: 'a', operator: 'eq', value: { nested: 1 } }] } }, ['body', 'filter', 'clauses', 0, 'value']],
      [{ ...base, aggregation: { func: 'sum' } }, ['body', 'aggregation', 'property']],
      [{ ...base, aggregation: { func: 'unique' } }, ['body', 'aggregation', 'property']],
      [{ ...base, aggregation: { func: 'median', property: 'x' } }, ['body', 'aggregation', 'func']],
      [{ ...base, name: 'ab' }, ['body', 'name']],
    ];
    let deep: object = { conjunction: 'and', clauses: [] };
    for (let i = 0; i < 6; i++) deep = { conjunction: 'and', clauses: [deep] };
    cases.push([{ ...base, filter: deep }, ['body', 'filter', 'clauses', 0, 'clauses', 0, 'clauses', 0, 'clauses', 0, 'clauses', 0]]);
    for (const [body, loc] of cases) expectValidationError(await t.other.api('POST', '/meters/', body), loc);
    const typed = await rejectionOf(t.other.polar.meters.create({ name: 'Sum of nothing', filter: byName(), aggregation: { func: 'sum', property: '' } }));
    expect(typed).toBeInstanceOf(HTTPValidationError);
    expect((await t.other.polar.meters.list({ limit: 100 })).result.pagination.totalCount).toBe(before);
  });
});

describe('quantities', () => {
  it('computes each aggregation as the test does', async () => {
    const tokens = tokensOf(samples);
    expect(await totalOf({ filter: byName(), aggregation: { func: 'count' } })).toBe(samples.length);
    expect(await totalOf({ filter: byName(), aggregation: { func: 'sum', property: 'tokens' } })).toBeCloseTo(tokens.reduce((a, b) => a + b, 0), 9);
    expect(await totalOf({ filter: byName(), aggregation: { func: 'max', property: 'tokens' } })).toBe(Math.max(...tokens));
    expect(await totalOf({ filter: byName(), aggregation: { func: 'min', property: 'tokens' } })).toBe(Math.min(...tokens));
    expect(await totalOf({ filter: byName(), aggregation: { func: 'avg', property: 'tokens' } })).toBeCloseTo(tokens.reduce((a, b) => a + b, 0) / tokens.length, 9);
    expect(await totalOf({ filter: byName(), aggregation: { func: 'unique', property: 'model' } })).toBe(new Set(samples.map((s) => s.metadata.model)).size);
    expect(await totalOf({ filter: byName(), aggregation: { func: 'sum', property: 'metadata.tokens' } })).toBeCloseTo(tokens.reduce((a, b) => a + b, 0), 9);
    // A property no event has: nothing to aggregate.
    expect(await totalOf({ filter: byName(), aggregation: { func: 'sum', property: 'absent' } })).toBe(0);
  });

  it('filters with each operator as the test does', async () => {
    type Op = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'not_like';
    const matches: Record<Op, (v: unknown, operand: string | number | boolean) => boolean> = {
      eq: (v, o) => v === o,
      ne: (v, o) => v !== o,
      gt: (v, o) => typeof v === typeof o && (v as number) > (o as number),
      gte: (v, o) => typeof v === typeof o && (v as number) >= (o as number),
      lt: (v, o) => typeof v === typeof o && (v as number) < (o as number),
      lte: (v, o) => typeof v === typeof o && (v as number) <= (o as number),
      like: (v, o) => v !== undefined && String(v).includes(String(o)),
      not_like: (v, o) => v === undefined || !String(v).includes(String(o)),
    };
    const cases: [string, Op, string | number | boolean][] = [
      ['model', 'eq', 'gpt-small'],
      ['model', 'ne', 'gpt-small'],
      ['cached', 'eq', true],
      ['cached', 'ne', true],
      ['tokens', 'gt', 10],
      ['tokens', 'gte', 10],
      ['tokens', 'lt', 10],
      ['tokens', 'lte', 10],
      ['tokens', 'eq', 4],
      ['region', 'gt', 'eu'],
      ['model', 'like', 'large'],
      ['model', 'not_like', 'gpt'],
      ['region', 'like', '_'],
    ];
    for (const [property, operator, value] of cases) {
      const expected = samples.filter((s) => matches[operator](s.metadata[property], value)).length;
      const filter: Filter = { conjunction: 'and', clauses: [...byName().clauses, { property, operator, value }] };
      expect(await totalOf({ filter, aggregation: { func: 'count' } }), `${property} ${operator} ${value}`).toBe(expected);
    }
    // On the name itself.
    expect(await totalOf({ filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'like', value: name }] }, aggregation: { func: 'count' } })).toBe(samples.length + 1);
    expect(
      await totalOf({
        filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'like', value: name }, { property: 'name', operator: 'not_like', value: '.other' }] },
        aggregation: { func: 'count' },
      }),
    ).toBe(samples.length);
  });

  it('nests and/or as the test does', async () => {
    // name = N and ((region = eu and tokens >= 10) or (model like claude and not region = us))
    const filter: Filter = {
      conjunction: 'and',
      clauses: [
        ...byName().clauses,
        {
          conjunction: 'or',
          clauses: [
            { conjunction: 'and', clauses: [{ property: 'region', operator: 'eq', value: 'eu' }, { property: 'tokens', operator: 'gte', value: 10 }] },
            { conjunction: 'and', clauses: [{ property: 'model', operator: 'like', value: 'claude' }, { property: 'region', operator: 'ne', value: 'us' }] },
          ],
        },
      ],
    };
    const expected = samples.filter((s) => {
      const m = s.metadata;
      return (m.region === 'eu' && typeof m.tokens === 'number' && m.tokens >= 10) || (String(m.model).includes('claude') && m.region !== 'us');
    });
    expect(await totalOf({ filter, aggregation: { func: 'count' } })).toBe(expected.length);
    expect(await totalOf({ filter, aggregation: { func: 'sum', property: 'tokens' } })).toBeCloseTo(tokensOf(expected).reduce((a, b) => a + b, 0), 9);
    // An empty or matches nothing; an empty and everything.
    expect(await totalOf({ filter: { conjunction: 'and', clauses: [...byName().clauses, { conjunction: 'or', clauses: [] }] }, aggregation: { func: 'count' } })).toBe(0);
  });

  it('returns every day of the range, zero-filled, and a total over the range', async () => {
    const created = await meter(t.org, { filter: byName(), aggregation: { func: 'sum', property: 'tokens' } });
    const answer = await t.org.polar.meters.quantities({ id: created.id, ...range, interval: 'day' });
    const days = ['01', '02', '03', '04', '05', '06', '07'].map((d) => `2026-01-${d}`);
    expect(answer.quantities.map((q) => q.timestamp.toISOString())).toEqual(days.map((d) => `${d}T00:00:00.000Z`));
    expect(answer.quantities.map((q) => q.quantity)).toEqual(days.map((d) => tokensOf(samples.filter((s) => s.at.startsWith(d))).reduce((a, b) => a + b, 0)));
    expect(answer.total).toBeCloseTo(tokensOf(samples).reduce((a, b) => a + b, 0), 9);

    const max = await meter(t.org, { filter: byName(), aggregation: { func: 'max', property: 'tokens' } });
    const weekly = await t.org.polar.meters.quantities({ id: max.id, ...range, interval: 'week' });
    // ISO weeks start on Monday: 2025-12-29 and 2026-01-05.
    expect(weekly.quantities).toEqual([
      { timestamp: new Date('2025-12-29T00:00:00Z'), quantity: 100 },
      { timestamp: new Date('2026-01-05T00:00:00Z'), quantity: 7 },
    ]);
    expect(weekly.total).toBe(100);
    const monthly = await t.org.polar.meters.quantities({ id: max.id, startTimestamp: new Date('2025-11-15T00:00:00Z'), endTimestamp: new Date('2026-02-01T00:00:00Z'), interval: 'month' });
    expect(monthly.quantities.map((q) => [q.timestamp.toISOString().slice(0, 7), q.quantity])).toEqual([['2025-11', 0], ['2025-12', 0], ['2026-01', 100], ['2026-02', 0]]);
    const yearly = await t.org.polar.meters.quantities({ id: max.id, ...range, interval: 'year' });
    expect(yearly.quantities).toEqual([{ timestamp: new Date('2026-01-01T00:00:00Z'), quantity: 100 }]);
    const hourly = await t.org.polar.meters.quantities({ id: created.id, startTimestamp: new Date('2026-01-01T00:00:00Z'), endTimestamp: new Date('2026-01-01T23:00:00Z'), interval: 'hour' });
    expect(hourly.quantities).toHaveLength(24);
    expect(hourly.quantities.filter((q) => q.quantity > 0)).toEqual([
      { timestamp: new Date('2026-01-01T00:00:00Z'), quantity: 10 },
      { timestamp: new Date('2026-01-01T13:00:00Z'), quantity: 25.5 },
    ]);
  });

  it('counts per customer, by id or external id, whichever way the events named them', async () => {
    const filter = byName();
    const aggregation = { func: 'sum' as const, property: 'tokens' };
    const sumOf = (who: string) => tokensOf(samples.filter((s) => s.customer === who)).reduce((a, b) => a + b, 0);
    expect(await totalOf({ filter, aggregation }, { customerId: customers.alice.id })).toBeCloseTo(sumOf('alice'), 9);
    expect(await totalOf({ filter, aggregation }, { customerId: customers.bob.id })).toBeCloseTo(sumOf('bob'), 9);
    expect(await totalOf({ filter, aggregation }, { externalCustomerId: customers.alice.externalId })).toBeCloseTo(sumOf('alice'), 9);
    expect(await totalOf({ filter, aggregation }, { customerId: [customers.alice.id, customers.bob.id] })).toBeCloseTo(sumOf('alice') + sumOf('bob'), 9);
    expect(await totalOf({ filter, aggregation }, { customerId: randomUUID() })).toBe(0);
  });

  it('buckets days in the given time zone, across a daylight-saving change', async () => {
    const dst = `dst-${randomUUID().slice(0, 8)}`;
    const customer = await t.org.polar.customers.create({ email: `${randomUUID()}@example.com` });
    // Paris moves from UTC+1 to UTC+2 at 2026-03-29T01:00:00Z.
    const times = ['2026-03-28T22:30:00Z', '2026-03-28T23:30:00Z', '2026-03-29T21:30:00Z', '2026-03-29T22:30:00Z'];
    await t.org.polar.events.ingest({ events: times.map((at) => ({ name: dst, customerId: customer.id, timestamp: new Date(at) })) });
    const created = await meter(t.org, { filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: dst }] }, aggregation: { func: 'count' } });
    const query = `start_timestamp=2026-03-28T00:00:00Z&end_timestamp=2026-03-30T12:00:00Z&interval=day`;

    const paris = expectStatus(await t.org.api('GET', `/meters/${created.id}/quantities?${query}&timezone=Europe/Paris`), 200);
    expect(paris).toEqual({
      quantities: [
        { timestamp: '2026-03-27T23:00:00.000Z', quantity: 1 }, // 28 March, from 00:00 UTC+1: 23:30 local
        { timestamp: '2026-03-28T23:00:00.000Z', quantity: 2 }, // 29 March, 23 hours long: 00:30 and 23:30 local
        { timestamp: '2026-03-29T22:00:00.000Z', quantity: 1 }, // 30 March, from 00:00 UTC+2: 00:30 local
      ],
      total: 4,
    });
    const utc = expectStatus(await t.org.api('GET', `/meters/${created.id}/quantities?${query}`), 200);
    expect(utc.quantities).toEqual([
      { timestamp: '2026-03-28T00:00:00.000Z', quantity: 2 },
      { timestamp: '2026-03-29T00:00:00.000Z', quantity: 2 },
      { timestamp: '2026-03-30T00:00:00.000Z', quantity: 0 },
    ]);
    const hours = expectStatus(
      await t.org.api('GET', `/meters/${created.id}/quantities?start_timestamp=2026-03-29T00:00:00Z&end_timestamp=2026-03-29T02:59:00Z&interval=hour&timezone=Europe/Paris`),
      200,
    );
    // 02:00 local does not exist that night: the hours are 01:00 (UTC+1), then 03:00 and 04:00 (UTC+2).
    expect(hours.quantities.map((q: { timestamp: string }) => q.timestamp)).toEqual(['2026-03-29T00:00:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T02:00:00.000Z']);
  });

  it('refuses an unknown interval or time zone, an end before the start, too many buckets', async () => {
    const created = await meter(t.org, { filter: byName(), aggregation: { func: 'count' } });
    const at = (q: string) => t.org.api('GET', `/meters/${created.id}/quantities?${q}`);
    const ok = 'start_timestamp=2026-01-01T00:00:00Z&end_timestamp=2026-01-02T00:00:00Z';
    expectValidationError(await at(`${ok}&interval=minute`), ['query', 'interval']);
    expectValidationError(await at(`${ok}&interval=day&timezone=Mars/Olympus`), ['query', 'timezone']);
    expectValidationError(await at(`${ok}&interval=day&timezone=${encodeURIComponent('+01:00')}`), ['query', 'timezone']);
    expectValidationError(await at(`start_timestamp=2026-01-02T00:00:00Z&end_timestamp=2026-01-01T00:00:00Z&interval=day`), ['query', 'end_timestamp']);
    expectValidationError(await at(`start_timestamp=2000-01-01T00:00:00Z&end_timestamp=2026-01-01T00:00:00Z&interval=hour`), ['query', 'interval']);
    expectValidationError(await at(`${ok}`), ['query', 'interval']);
    const typed = await rejectionOf(t.org.polar.meters.quantities({ id: created.id, ...range, interval: 'fortnight' as 'day' }));
    expect(typed).toBeInstanceOf(Error);
  });

  it('answers through GraphQL as through REST', async () => {
    const created = await meter(t.org, { filter: byName(), aggregation: { func: 'count' } });
    const data = await graphqlData(
      t.org.gql(
        `query ($id: UUID!) { core { meter(id: $id) { name aggregation { func property } }
          meterQuantities(id: $id, startTimestamp: "2026-01-01T00:00:00Z", endTimestamp: "2026-01-02T00:00:00Z", interval: day, timezone: "UTC") { quantities { timestamp quantity } total } } }`,
        { id: created.id },
      ),
    );
    expect(data.core.meter.aggregation).toEqual({ func: 'count', property: null });
    expect(data.core.meterQuantities.quantities.map((q: { quantity: number }) => q.quantity)).toEqual([2, 0]);
    expect(data.core.meterQuantities.total).toBe(2);
  });
});

describe('from the attacker’s side', () => {
  it('no token, another organization’s token, a token without the scope, a sandbox token on production', async () => {
    const created = await meter(t.org, { filter: byName(), aggregation: { func: 'sum', property: 'tokens' } });
    const q = `start_timestamp=2026-01-01T00:00:00Z&end_timestamp=2026-01-08T00:00:00Z&interval=day`;

    expectErrorBody(await t.org.publicApi('GET', '/meters/'), 401, 'Unauthorized');
    expectErrorBody(await t.org.publicApi('GET', `/meters/${created.id}/quantities?${q}`), 401, 'Unauthorized');

    expect(await rejectionOf(t.other.polar.meters.get({ id: created.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.other.polar.meters.update({ id: created.id, meterUpdate: { name: 'Mine now' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.other.polar.meters.quantities({ id: created.id, ...range, interval: 'day' }))).toBeInstanceOf(ResourceNotFound);
    expect((await t.other.polar.meters.list({ organizationId: t.org.organizationId })).result.items).toEqual([]);
    // The client library types no 404 for the events list: it throws its generic error with the status.
    expect(await rejectionOf(t.other.polar.events.list({ meterId: created.id }))).toMatchObject({ statusCode: 404 });
    expect((await t.org.polar.meters.get({ id: created.id })).name).toBe(created.name);
    // Their own meter with the same filter, asked for our customer: nothing of ours.
    const theirs = await meter(t.other, { filter: byName(), aggregation: { func: 'sum', property: 'tokens' } });
    expect((await t.other.polar.meters.quantities({ id: theirs.id, ...range, interval: 'day', customerId: customers.alice.id })).total).toBe(0);
    expect((await t.other.polar.meters.quantities({ id: theirs.id, ...range, interval: 'day' })).total).toBe(0);
    expectValidationError(
      await t.other.api('POST', '/meters/', { name: 'Theirs', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' }, organization_id: t.org.organizationId }),
      ['body', 'organization_id'],
    );

    const readOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['meters:read']));
    expectStatus(await readOnly('GET', `/meters/${created.id}/quantities?${q}`), 200);
    expectErrorBody(await readOnly('PATCH', `/meters/${created.id}`, { name: 'Renamed' }), 403, 'NotPermitted');
    expectErrorBody(await readOnly('POST', '/meters/', { name: 'New one', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } }), 403, 'NotPermitted');
    const eventsOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['events:read', 'events:write']));
    expectErrorBody(await eventsOnly('GET', `/meters/${created.id}`), 403, 'NotPermitted');
    expectErrorBody(await eventsOnly('GET', `/meters/${created.id}/quantities?${q}`), 403, 'NotPermitted');
    expect((await t.org.polar.meters.get({ id: created.id })).name).toBe(created.name);

    const sandboxTokenOnProduction = restClient(t.server.base('production'), t.org.token);
    expectErrorBody(await sandboxTokenOnProduction('GET', `/meters/${created.id}`), 401, 'Unauthorized');
    expectErrorBody(await sandboxTokenOnProduction('GET', `/meters/${created.id}/quantities?${q}`), 401, 'Unauthorized');
    expect(await rejectionOf(t.production.polar.meters.get({ id: created.id }))).toBeInstanceOf(ResourceNotFound);
  });
});

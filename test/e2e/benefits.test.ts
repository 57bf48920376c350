// Benefits end to end, in sandbox: what a product entitles its buyer to. Benefits are created,
// listed, changed and deleted at /v1/benefits/ and attached to products in order; a paid one-time
// order or a live subscription then holds a grant of each (a license key, files to download), which
// the customer state lists and which is revoked when the benefit leaves the product, is deleted,
// or the purchase is refunded or revoked. Through the official client (@polar-sh/sdk), whose schemas parse every response, through
// REST for status codes and error bodies, and through GraphQL. Grants are made by background jobs;
// the tests run the due jobs at once rather than waiting for the runner's next poll.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import type { Benefit } from '@polar-sh/sdk/models/components/benefit.js';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { madeOutOfIdOrder, restClient, type RestResponse } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { createAndConfirmCheckout, declinedOrder, fixedProduct, ordersOfCheckout } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';
import { uploadFile } from '../helpers/files.ts';
import { datetime, nullableDatetime, uuid } from '../helpers/matchers.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' } });

const sandbox = () => t.server.kassa.environments.sandbox;
const prisma = () => sandbox().environment.prisma;

async function eventsOfType(organizationId: string, type: string) {
  return (await eventsOf(t.server, organizationId, 'sandbox')).filter((e) => e.type === type);
}

const reportedJobFailures = new Set<string>();
/**
 * Runs the due jobs until none is left, then fails with the error of any job that failed since the
 * last call: a grant sync that throws would otherwise just be retried later, silently.
 */
async function jobsSettled(): Promise<void> {
  await eventually(
    async () => {
      await sandbox().jobs.runDue();
      return prisma().job.count({ where: { completedAt: null, runAt: { lte: new Date() } } });
    },
    (due) => due === 0,
    'the due jobs to run',
  );
  const failed = (await prisma().job.findMany({ where: { lastError: { not: null } } })).filter((job) => !reportedJobFailures.has(job.id));
  for (const job of failed) reportedJobFailures.add(job.id);
  if (failed.length) throw new Error(`jobs failed: ${failed.map((job) => `${job.kind} ${JSON.stringify(job.payload)}: ${job.lastError}`).join('; ')}`);
}

/** A 422 in the documented shape whose issues are exactly at `locs`. */
function expectValidationError(response: RestResponse, ...locs: (string | number)[][]) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.detail.map((issue: { loc: unknown }) => issue.loc)).toEqual(locs);
  for (const issue of response.body.detail) expect(issue).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
}

function expectNotFound(response: RestResponse) {
  expect(response.status, JSON.stringify(response.body)).toBe(404);
  expect(response.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
}

function expectNotPermitted(response: RestResponse, scope: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(403);
  expect(response.body).toEqual({ error: 'NotPermitted', detail: expect.stringContaining(scope) });
}

async function benefitCount(org: Org): Promise<number> {
  return expectStatus(await org.api('GET', '/benefits/?limit=100'), 200).pagination.total_count;
}

async function createCustom(org: Org, description: string, note: string | null = null, metadata: Record<string, string | number | boolean> = {}) {
  return expectStatus(await org.api('POST', '/benefits/', { type: 'custom', description, properties: { note }, metadata }), 201);
}

async function createLicenseKeys(org: Org, description: string, prefix: string) {
  return expectStatus(
    await org.api('POST', '/benefits/', {
      type: 'license_keys',
      description,
      properties: { prefix, expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 3, enable_customer_admin: true }, limit_usage: 100 },
    }),
    201,
  );
}

async function setBenefits(org: Org, productId: string, benefits: string[]) {
  return expectStatus(await org.api('POST', `/products/${productId}/benefits`, { benefits }), 200);
}

/** A whole purchase by a buyer with a test card (tok_visa unless named): returns the paid order once its grant sync has run. */
async function buy(org: Org, productId: string, customerEmail: string, card = 'tok_visa'): Promise<Order> {
  const checkout = await createAndConfirmCheckout(org, productId, customerEmail, { card });
  const orders = await eventually(
    async () => {
      await sandbox().jobs.runDue();
      return ordersOfCheckout(org, checkout.id);
    },
    (items) => items.length === 1 && items[0].status === 'paid',
    'the order to be paid',
  );
  await jobsSettled();
  return orders[0];
}

/** Runs the due jobs until the refund is `status` (succeeded unless named), then until none is left. */
async function refundSettled(org: Org, refundId: string, status = 'succeeded') {
  await eventually(
    async () => {
      await sandbox().jobs.runDue();
      return expectStatus(await org.api('GET', `/refunds/${refundId}`), 200);
    },
    (refund) => refund.status === status,
    `the refund to be ${status}`,
  );
  await jobsSettled();
}

async function grantsOf(org: Org, benefitId: string, query = '') {
  return expectStatus(await org.api('GET', `/benefits/${benefitId}/grants?limit=100${query}`), 200);
}

async function stateOf(org: Org, customerId: string) {
  return expectStatus(await org.api('GET', `/customers/${customerId}/state`), 200);
}

/** Which benefits the customer state lists as granted, sorted. */
async function grantedBenefitIds(org: Org, customerId: string): Promise<string[]> {
  return (await stateOf(org, customerId)).granted_benefits.map((g: { benefit_id: string }) => g.benefit_id).sort();
}

// ---------------------------------------------------------------------------------------------
// Benefits
// ---------------------------------------------------------------------------------------------

describe('benefits at /v1/benefits/', () => {
  let org: Org;
  let stranger: Org;
  let custom: any;
  let licenseKeys: Benefit;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    stranger = await newOrganization(t.server, 'sandbox', { organizationName: 'Stranger Inc' });
  });

  it('creates a custom benefit: 201 with its note and metadata, selectable and deletable', async () => {
    const response = await org.api('POST', '/benefits/', {
      type: 'custom',
      description: '  Priority support  ',
      properties: { note: 'Write to vip@example.com' },
      metadata: { tier: 'gold' },
    });
    custom = expectStatus(response, 201);
    expect(custom).toEqual({
      id: uuid,
      created_at: datetime,
      modified_at: nullableDatetime,
      type: 'custom',
      description: 'Priority support',
      selectable: true,
      deletable: true,
      organization_id: org.organizationId,
      metadata: { tier: 'gold' },
      properties: { note: 'Write to vip@example.com' },
    });
    expect(expectStatus(await org.api('GET', `/benefits/${custom.id}`), 200)).toEqual(custom);
  });

  it('creates a license_keys benefit through the SDK with its prefix, expiry, activations and usage limit', async () => {
    licenseKeys = await org.polar.benefits.create({
      type: 'license_keys',
      description: 'Desktop app license',
      properties: { prefix: 'DESK', expires: { ttl: 6, timeframe: 'month' }, activations: { limit: 3, enableCustomerAdmin: true }, limitUsage: 100 },
    });
    expect(licenseKeys).toMatchObject({
      id: uuid,
      type: 'license_keys',
      description: 'Desktop app license',
      organizationId: org.organizationId,
      metadata: {},
      properties: { prefix: 'DESK', expires: { ttl: 6, timeframe: 'month' }, activations: { limit: 3, enableCustomerAdmin: true }, limitUsage: 100 },
    });
    expect(licenseKeys.createdAt).toBeInstanceOf(Date);
    const wire = expectStatus(await org.api('GET', `/benefits/${licenseKeys.id}`), 200);
    expect(wire.properties).toEqual({ prefix: 'DESK', expires: { ttl: 6, timeframe: 'month' }, activations: { limit: 3, enable_customer_admin: true }, limit_usage: 100 });
  });

  it('creates a license_keys benefit without settings: every property null', async () => {
    const other = await newOrganization(t.server, 'sandbox');
    const plain = expectStatus(await other.api('POST', '/benefits/', { type: 'license_keys', description: 'Plain keys', properties: {} }), 201);
    expect(plain.properties).toEqual({ prefix: null, expires: null, activations: null, limit_usage: null });
  });

  it('lists the benefits of the organization, filtered by type', async () => {
    const all = await org.polar.benefits.list({});
    expect(all.result.items.map((b) => b.id).sort()).toEqual([custom.id, licenseKeys.id].sort());
    expect(all.result.pagination.totalCount).toBe(2);
    const keysOnly = await org.polar.benefits.list({ typeFilter: 'license_keys' });
    expect(keysOnly.result.items.map((b) => b.id)).toEqual([licenseKeys.id]);
    const customOnly = expectStatus(await org.api('GET', '/benefits/?type=custom'), 200);
    expect(customOnly).toEqual({ items: [custom], pagination: { total_count: 1, max_page: 1 } });
    const both = expectStatus(await org.api('GET', '/benefits/?type=custom&type=license_keys'), 200);
    expect(both.pagination.total_count).toBe(2);
    const none = expectStatus(await org.api('GET', '/benefits/?type=downloadables'), 200);
    expect(none).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    const searched = await org.polar.benefits.list({ query: 'PRIORITY' });
    expect(searched.result.items.map((b) => b.id)).toEqual([custom.id]);
  });

  it('sorts the list and filters it by metadata; an unknown sort property is a 422', async () => {
    const byDescription = await org.polar.benefits.list({ sorting: ['description'] });
    expect(byDescription.result.items.map((b) => b.description)).toEqual([custom.description, licenseKeys.description].sort());
    const byTypeDescending = expectStatus(await org.api('GET', '/benefits/?sorting=-type'), 200);
    expect(byTypeDescending.items.map((b: { type: string }) => b.type)).toEqual(['license_keys', 'custom']);
    // Both directions: a list that ignored the type (ordered by id alone) would give one of them wrong.
    const byType = expectStatus(await org.api('GET', '/benefits/?sorting=type'), 200);
    expect(byType.items.map((b: { type: string }) => b.type)).toEqual(['custom', 'license_keys']);
    const gold = expectStatus(await org.api('GET', '/benefits/?metadata[tier]=gold'), 200);
    expect(gold.items.map((b: { id: string }) => b.id)).toEqual([custom.id]);
    const refused = await org.api('GET', '/benefits/?sorting=price');
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(['query', 'sorting', 0]);
  });

  it('lists the newest first unless asked otherwise, by creation either way, and by id', async () => {
    const own = await newOrganization(t.server, 'sandbox');
    // Their descriptions ("Perk 1", "Perk 2", …) run in the order they were made.
    const made = await madeOutOfIdOrder(t.server, async (i) => (await createCustom(own, `Perk ${i + 1}`)).id);
    const ids = async (query: string) => expectStatus(await own.api('GET', `/benefits/?limit=100${query}`), 200).items.map((b: { id: string }) => b.id);
    const newestFirst = [...made].reverse();
    expect(await ids('')).toEqual(newestFirst);
    expect(await ids('&sorting=-created_at')).toEqual(newestFirst);
    expect(await ids('&sorting=created_at')).toEqual(made);
    expect(await ids('&sorting=description')).toEqual(made);
    expect(await ids('&sorting=-description')).toEqual(newestFirst);
    const [first, , third] = made;
    // By id, over GraphQL (the REST list takes no ids).
    const picked = await own.gql('query ($id: [UUID!]) { core { benefits(id: $id) { items { id } pagination { totalCount } } } }', { id: [first, third] });
    expect(picked.body.errors).toBeUndefined();
    expect(picked.body.data.core.benefits).toEqual({ items: [{ id: third }, { id: first }], pagination: { totalCount: 2 } });
  });

  it("says which organization a benefit cannot be made in, and that another's benefit is not found", async () => {
    const foreign = await org.api('POST', '/benefits/', { type: 'custom', description: 'Elsewhere', properties: {}, organization_id: stranger.organizationId });
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail).toEqual([{ loc: ['body', 'organization_id'], msg: 'Organization not found: an organization token only acts on its own organization.', type: 'value_error' }]);
    const theirs = await createCustom(await newOrganization(t.server, 'sandbox'), 'Their perk');
    expect(await org.api('GET', `/benefits/${theirs.id}`)).toMatchObject({ status: 404, body: { error: 'ResourceNotFound', detail: 'Benefit not found.' } });
  });

  it('gets a benefit by id through the SDK', async () => {
    const got = await org.polar.benefits.get({ id: custom.id });
    expect(got).toMatchObject({ id: custom.id, type: 'custom', description: 'Priority support', properties: { note: 'Write to vip@example.com' }, metadata: { tier: 'gold' } });
  });

  it('updates the description, the properties and metadata of string, integer, boolean and float values', async () => {
    const updated = await org.polar.benefits.update({
      id: custom.id,
      requestBody: { type: 'custom', description: 'VIP support', properties: { note: 'Call +46 8 123 456' }, metadata: { plan: 'pro', seats: 5, beta: true, ratio: 1.5 } },
    });
    expect(updated).toMatchObject({ id: custom.id, type: 'custom', description: 'VIP support', properties: { note: 'Call +46 8 123 456' } });
    expect(updated.metadata).toEqual({ plan: 'pro', seats: 5, beta: true, ratio: 1.5 });
    const wire = expectStatus(await org.api('GET', `/benefits/${custom.id}`), 200);
    expect(wire).toMatchObject({ description: 'VIP support', properties: { note: 'Call +46 8 123 456' }, metadata: { plan: 'pro', seats: 5, beta: true, ratio: 1.5 }, modified_at: datetime });
    custom = wire;
  });

  it('changes only what a PATCH gives: a new description keeps the properties and metadata', async () => {
    const patched = expectStatus(await org.api('PATCH', `/benefits/${custom.id}`, { type: 'custom', description: 'VIP support line' }), 200);
    expect(patched).toEqual({ ...custom, description: 'VIP support line', modified_at: datetime });
    custom = patched;
    const keys = expectStatus(await org.api('PATCH', `/benefits/${licenseKeys.id}`, { type: 'license_keys', properties: { prefix: 'DESK2', limit_usage: 5 } }), 200);
    expect(keys.properties).toEqual({ prefix: 'DESK2', expires: null, activations: null, limit_usage: 5 });
  });

  it.each([
    ['shorter than 3 characters', 'ab'],
    ['of 2 characters padded with spaces', '  ab   '],
    ['longer than 42 characters', 'x'.repeat(43)],
  ])('refuses a description %s with 422 at body.description, on create and update, changing nothing', async (_case, description) => {
    const before = await benefitCount(org);
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    expectValidationError(await org.api('POST', '/benefits/', { type: 'custom', description, properties: { note: null } }), ['body', 'description']);
    expectValidationError(await org.api('PATCH', `/benefits/${custom.id}`, { type: 'custom', description }), ['body', 'description']);
    const sdkError = await rejectionOf(org.polar.benefits.create({ type: 'custom', description, properties: {} }));
    expect(sdkError).toBeInstanceOf(HTTPValidationError);
    expect(await benefitCount(org)).toBe(before);
    expect(expectStatus(await org.api('GET', `/benefits/${custom.id}`), 200)).toEqual(custom);
    expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(events);
  });

  it('trims a new description, and keeps the metadata when a PATCH sends it as null', async () => {
    const perk = await createCustom(org, 'Trim me', null, { kept: 'yes' });
    const patched = expectStatus(await org.api('PATCH', `/benefits/${perk.id}`, { type: 'custom', description: '  Trimmed perk  ', metadata: null }), 200);
    expect(patched).toMatchObject({ description: 'Trimmed perk', metadata: { kept: 'yes' } });
    expect(expectStatus(await org.api('GET', `/benefits/${perk.id}`), 200)).toMatchObject({ description: 'Trimmed perk', metadata: { kept: 'yes' } });
  });

  it('deletes a benefit over GraphQL, which answers true', async () => {
    const perk = await createCustom(org, 'Deleted over GraphQL');
    const deleted = await org.gql('mutation ($id: UUID!) { core { benefitDelete(id: $id) } }', { id: perk.id });
    expect(deleted.body).toEqual({ data: { core: { benefitDelete: true } } });
    expectNotFound(await org.api('GET', `/benefits/${perk.id}`));
  });

  it('accepts descriptions of exactly 3 and 42 characters', async () => {
    const other = await newOrganization(t.server, 'sandbox');
    for (const description of ['abc', 'y'.repeat(42)]) expect((await createCustom(other, description)).description).toBe(description);
  });

  it('refuses each property it cannot keep in its words, every issue at once, creating nothing', async () => {
    const before = await benefitCount(org);
    const refused = async (body: Record<string, unknown>) => {
      const response = await org.api('POST', '/benefits/', body);
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      return response.body.detail as { loc: unknown[]; msg: string; type: string }[];
    };
    const keys = (properties: Record<string, unknown>, description = 'Keys') => refused({ type: 'license_keys', description, properties });
    const words = (detail: { loc: unknown[]; msg: string }[]) => detail.map(({ loc, msg }) => [loc.join('.'), msg]);
    for (const description of ['ab', '  ab  ', 'z'.repeat(43)]) {
      expect(await refused({ type: 'custom', description, properties: {} })).toEqual([{ loc: ['body', 'description'], msg: 'The description must be 3 to 42 characters long.', type: 'string_too_short' }]);
    }
    expect(
      words(await keys({ prefix: 'has space', expires: { ttl: 0, timeframe: 'day' }, activations: { limit: 0, enable_customer_admin: true }, limit_usage: 0 }, 'x')),
    ).toEqual([
      ['body.description', 'The description must be 3 to 42 characters long.'],
      ['body.properties.prefix', 'The prefix must be 1 to 24 letters, digits, "_" or "-".'],
      ['body.properties.expires.ttl', 'The ttl must be a whole number from 1 to 1000.'],
      ['body.properties.activations.limit', 'The activation limit must be from 1 to 50.'],
      ['body.properties.limit_usage', 'The usage limit must be at least 1.'],
    ]);
    expect(words(await keys({ prefix: 'P'.repeat(25), expires: { ttl: 1001, timeframe: 'day' }, activations: { limit: 51, enable_customer_admin: false } }))).toEqual([
      ['body.properties.prefix', 'The prefix must be 1 to 24 letters, digits, "_" or "-".'],
      ['body.properties.expires.ttl', 'The ttl must be a whole number from 1 to 1000.'],
      ['body.properties.activations.limit', 'The activation limit must be from 1 to 50.'],
    ]);
    expect(words(await keys({ prefix: '' }))).toEqual([['body.properties.prefix', 'The prefix must be 1 to 24 letters, digits, "_" or "-".']]);
    // At the bounds, accepted.
    const edge = expectStatus(
      await org.api('POST', '/benefits/', { type: 'license_keys', description: 'Edge keys', properties: { prefix: `A_-${'9'.repeat(21)}`, expires: { ttl: 1000, timeframe: 'year' }, activations: { limit: 50, enable_customer_admin: true }, limit_usage: 1 } }),
      201,
    );
    expect(edge.properties).toEqual({ prefix: `A_-${'9'.repeat(21)}`, expires: { ttl: 1000, timeframe: 'year' }, activations: { limit: 50, enable_customer_admin: true }, limit_usage: 1 });
    const low = expectStatus(await org.api('POST', '/benefits/', { type: 'license_keys', description: 'Low keys', properties: { expires: { ttl: 1, timeframe: 'day' }, activations: { limit: 1, enable_customer_admin: false } } }), 201);
    expect(low.properties).toEqual({ prefix: null, expires: { ttl: 1, timeframe: 'day' }, activations: { limit: 1, enable_customer_admin: false }, limit_usage: null });

    const meter = await org.polar.meters.create({ name: 'Credits', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    const archived = await org.polar.meters.create({ name: 'Old credits', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    await org.polar.meters.update({ id: archived.id, meterUpdate: { isArchived: true } });
    const foreign = await stranger.polar.meters.create({ name: 'Theirs', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    const credit = (properties: Record<string, unknown>) => refused({ type: 'meter_credit', description: 'Credits', properties });
    expect(await credit({})).toEqual([
      { loc: ['body', 'properties', 'meter_id'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'properties', 'units'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'properties', 'rollover'], msg: 'Field required', type: 'missing' },
    ]);
    expect(await credit({ meter_id: foreign.id, units: 0, rollover: false })).toEqual([
      { loc: ['body', 'properties', 'meter_id'], msg: 'Meter not found.', type: 'value_error' },
      { loc: ['body', 'properties', 'units'], msg: 'Input should be greater than 0', type: 'greater_than' },
    ]);
    expect(words(await credit({ meter_id: archived.id, units: 10, rollover: true }))).toEqual([['body.properties.meter_id', 'This meter is archived: unarchive it to credit it.']]);
    const credited = expectStatus(await org.api('POST', '/benefits/', { type: 'meter_credit', description: 'Credits', properties: { meter_id: meter.id, units: 1, rollover: false } }), 201);
    expect(credited.properties).toEqual({ meter_id: meter.id, units: 1, rollover: false });

    const file = (await uploadFile(org, Buffer.from('%PDF twice'), 'twice.pdf')).id;
    expect(await refused({ type: 'downloadables', description: 'Twice', properties: { files: [file, file] } })).toEqual([
      { loc: ['body', 'properties', 'files'], msg: 'Each file may be listed once.', type: 'value_error' },
    ]);
    expect(await benefitCount(org)).toBe(before + 3);
  });

  it('refuses a type it cannot grant (discord) with 422, creating nothing', async () => {
    const before = await benefitCount(org);
    const discord = await org.api('POST', '/benefits/', { type: 'discord', description: 'Discord role', properties: {} });
    expect([discord.status, discord.body.detail]).toEqual([
      422,
      [{ loc: ['body', 'type'], msg: 'Benefits of type discord need an integration this server does not have; use custom, license_keys, downloadables or meter_credit.', type: 'value_error' }],
    ]);
    const sdkError = await rejectionOf(
      org.polar.benefits.create({ type: 'discord', description: 'Discord role', properties: { guildToken: 'token', roleId: '123', kickMember: false } }),
    );
    expect(sdkError).toBeInstanceOf(HTTPValidationError);
    expect(await benefitCount(org)).toBe(before);
  });

  it('refuses downloadables without files with 422 at body.properties.files', async () => {
    const before = await benefitCount(org);
    const none = [{ loc: ['body', 'properties', 'files'], msg: 'List should have at least 1 item after validation, not 0', type: 'too_short' }];
    for (const properties of [{ files: [] }, {}]) {
      const refused = await org.api('POST', '/benefits/', { type: 'downloadables', description: 'The PDF', properties });
      expect([refused.status, refused.body.detail]).toEqual([422, none]);
    }
    expect(await benefitCount(org)).toBe(before);
  });

  it("keeps only the archived marks of the benefit's own files that are true", async () => {
    const [kept, shown] = [(await uploadFile(org, Buffer.from('%PDF old'), 'old.pdf')).id, (await uploadFile(org, Buffer.from('%PDF new'), 'new.pdf')).id];
    const stray = crypto.randomUUID();
    const created = expectStatus(
      await org.api('POST', '/benefits/', { type: 'downloadables', description: 'Both files', properties: { files: [kept, shown], archived: { [kept]: true, [shown]: false, [stray]: true } } }),
      201,
    );
    expect(created.properties).toEqual({ files: [kept, shown], archived: { [kept]: true } });
  });

  it('refuses a PATCH that changes the type with 422 at body.type, changing nothing', async () => {
    const changed = await org.api('PATCH', `/benefits/${custom.id}`, { type: 'license_keys', description: 'Now a license', properties: { prefix: 'NOPE' } });
    expect([changed.status, changed.body.detail]).toEqual([422, [{ loc: ['body', 'type'], msg: 'This benefit is of type custom; its type cannot change.', type: 'value_error' }]]);
    expect(expectStatus(await org.api('GET', `/benefits/${custom.id}`), 200)).toEqual(custom);
  });

  it("is not found with another organization's token: get, update, delete and grants all 404, and nothing changes", async () => {
    expectNotFound(await stranger.api('GET', `/benefits/${custom.id}`));
    expectNotFound(await stranger.api('PATCH', `/benefits/${custom.id}`, { type: 'custom', description: 'Hijacked' }));
    expectNotFound(await stranger.api('DELETE', `/benefits/${custom.id}`));
    expectNotFound(await stranger.api('GET', `/benefits/${custom.id}/grants`));
    expect(await rejectionOf(stranger.polar.benefits.get({ id: custom.id }))).toBeInstanceOf(ResourceNotFound);
    expect((await stranger.polar.benefits.list({})).result.items).toEqual([]);
    expect(expectStatus(await org.api('GET', `/benefits/${custom.id}`), 200)).toEqual(custom);
  });

  it('needs benefits:read to read and benefits:write to change: 403 naming the scope, nothing changed', async () => {
    const productsOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, org, ['products:read']));
    expectNotPermitted(await productsOnly('GET', '/benefits/'), 'benefits:read');
    expectNotPermitted(await productsOnly('GET', `/benefits/${custom.id}`), 'benefits:read');
    expectNotPermitted(await productsOnly('GET', `/benefits/${custom.id}/grants`), 'benefits:read');
    const readOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, org, ['benefits:read']));
    expectStatus(await readOnly('GET', `/benefits/${custom.id}`), 200);
    const before = await benefitCount(org);
    expectNotPermitted(await readOnly('POST', '/benefits/', { type: 'custom', description: 'Sneaky', properties: {} }), 'benefits:write');
    expectNotPermitted(await readOnly('PATCH', `/benefits/${custom.id}`, { type: 'custom', description: 'Sneaky' }), 'benefits:write');
    expectNotPermitted(await readOnly('DELETE', `/benefits/${custom.id}`), 'benefits:write');
    expect(await benefitCount(org)).toBe(before);
    expect(expectStatus(await org.api('GET', `/benefits/${custom.id}`), 200)).toEqual(custom);
  });

  it('deletes a benefit: 204 without a body, then 404 on get, update, delete and grants, and gone from the list', async () => {
    const doomed = await createCustom(org, 'Short-lived perk');
    const response = await org.api('DELETE', `/benefits/${doomed.id}`);
    expectStatus(response, 204);
    expect(response.body).toBeNull();
    expectNotFound(await org.api('GET', `/benefits/${doomed.id}`));
    expectNotFound(await org.api('PATCH', `/benefits/${doomed.id}`, { type: 'custom', description: 'Back again' }));
    expectNotFound(await org.api('DELETE', `/benefits/${doomed.id}`));
    expectNotFound(await org.api('GET', `/benefits/${doomed.id}/grants`));
    const listed = expectStatus(await org.api('GET', '/benefits/?limit=100'), 200);
    expect(listed.items.map((b: { id: string }) => b.id)).not.toContain(doomed.id);
  });

  it('deletes a benefit through the SDK', async () => {
    const doomed = await org.polar.benefits.create({ type: 'custom', description: 'SDK perk', properties: { note: null } });
    await expect(org.polar.benefits.delete({ id: doomed.id })).resolves.toBeUndefined();
    expect(await rejectionOf(org.polar.benefits.get({ id: doomed.id }))).toBeInstanceOf(ResourceNotFound);
  });
});

describe('the events of a benefit', () => {
  it('are benefit.created, then benefit.updated for an update, with the benefit as GET returns it', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const created = await createCustom(org, 'Evented perk', 'A note', { source: 'e2e' });
    const updated = expectStatus(await org.api('PATCH', `/benefits/${created.id}`, { type: 'custom', description: 'Evented perk, v2', metadata: { source: 'e2e', version: 2 } }), 200);
    const events = await eventsOf(t.server, org.organizationId, 'sandbox');
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([
      ['benefit.created', created.id],
      ['benefit.updated', created.id],
    ]);
    expect(events[0].data).toEqual(created);
    expect(events[1].data).toEqual(updated);
  });

  it('records a benefit.updated when a benefit is deleted', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const created = await createCustom(org, 'Deleted perk');
    expectStatus(await org.api('DELETE', `/benefits/${created.id}`), 204);
    const events = await eventsOf(t.server, org.organizationId, 'sandbox');
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([
      ['benefit.created', created.id],
      ['benefit.updated', created.id],
    ]);
    expect(events[1].data).toMatchObject({ id: created.id, type: 'custom', description: 'Deleted perk' });
  });
});

// ---------------------------------------------------------------------------------------------
// A product's benefits
// ---------------------------------------------------------------------------------------------

describe('POST /v1/products/{id}/benefits', () => {
  let org: Org;
  let stranger: Org;
  let productId: string;
  let perk: any;
  let keys: any;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    stranger = await newOrganization(t.server, 'sandbox', { organizationName: 'Other shop' });
    productId = (await fixedProduct(org, 'Bundle')).id;
    perk = await createCustom(org, 'Bundle perk', 'Thanks!');
    keys = await createLicenseKeys(org, 'Bundle license', 'BUNDLE');
  });

  it('sets the benefits in the order given and returns the product with them as full objects (SDK updateBenefits)', async () => {
    const product = await org.polar.products.updateBenefits({ id: productId, productBenefitsUpdate: { benefits: [keys.id, perk.id] } });
    expect(product.id).toBe(productId);
    expect(product.benefits.map((b) => b.id)).toEqual([keys.id, perk.id]);
    expect(product.benefits[0]).toMatchObject({ type: 'license_keys', description: 'Bundle license', properties: { prefix: 'BUNDLE', limitUsage: 100 } });
    expect(product.benefits[1]).toMatchObject({ type: 'custom', description: 'Bundle perk', properties: { note: 'Thanks!' } });
  });

  it('shows the benefits, as GET /v1/benefits/{id} renders them, on GET of the product and in the product list', async () => {
    const product = expectStatus(await org.api('GET', `/products/${productId}`), 200);
    expect(product.benefits).toEqual([keys, perk]);
    const listed = expectStatus(await org.api('GET', '/products/'), 200);
    expect(listed.items.find((p: { id: string }) => p.id === productId).benefits).toEqual([keys, perk]);
    expect((await org.polar.products.get({ id: productId })).benefits.map((b) => b.id)).toEqual([keys.id, perk.id]);
  });

  it('reorders and empties the list: it replaces the whole list each time', async () => {
    expect((await setBenefits(org, productId, [perk.id, keys.id])).benefits.map((b: { id: string }) => b.id)).toEqual([perk.id, keys.id]);
    expect((await setBenefits(org, productId, [keys.id])).benefits.map((b: { id: string }) => b.id)).toEqual([keys.id]);
    expect((await setBenefits(org, productId, [])).benefits).toEqual([]);
    expect(expectStatus(await org.api('GET', `/products/${productId}`), 200).benefits).toEqual([]);
    await setBenefits(org, productId, [keys.id, perk.id]);
  });

  it("refuses a benefit of another organization with 422 at its position, leaving the product's benefits as they were", async () => {
    const foreign = await createCustom(stranger, 'Foreign perk');
    const refused = await org.api('POST', `/products/${productId}/benefits`, { benefits: [perk.id, foreign.id] });
    expect([refused.status, refused.body.detail]).toEqual([422, [{ loc: ['body', 'benefits', 1], msg: 'Benefit not found.', type: 'value_error' }]]);
    expect(await rejectionOf(org.polar.products.updateBenefits({ id: productId, productBenefitsUpdate: { benefits: [foreign.id] } }))).toBeInstanceOf(HTTPValidationError);
    expect(expectStatus(await org.api('GET', `/products/${productId}`), 200).benefits.map((b: { id: string }) => b.id)).toEqual([keys.id, perk.id]);
  });

  it('refuses a benefit listed twice with 422 at body.benefits', async () => {
    const twice = await org.api('POST', `/products/${productId}/benefits`, { benefits: [perk.id, perk.id] });
    expect([twice.status, twice.body.detail]).toEqual([422, [{ loc: ['body', 'benefits'], msg: 'Each benefit may be listed once.', type: 'value_error' }]]);
    expect(expectStatus(await org.api('GET', `/products/${productId}`), 200).benefits.map((b: { id: string }) => b.id)).toEqual([keys.id, perk.id]);
  });

  it('refuses a deleted benefit with 422 at its position', async () => {
    const deleted = await createCustom(org, 'Deleted before use');
    expectStatus(await org.api('DELETE', `/benefits/${deleted.id}`), 204);
    expectValidationError(await org.api('POST', `/products/${productId}/benefits`, { benefits: [deleted.id] }), ['body', 'benefits', 0]);
    expect(expectStatus(await org.api('GET', `/products/${productId}`), 200).benefits.map((b: { id: string }) => b.id)).toEqual([keys.id, perk.id]);
  });

  it("changes only its own product's benefits, and marks that product modified at the time", async () => {
    const other = (await fixedProduct(org, 'Other bundle')).id;
    await setBenefits(org, other, [perk.id]);
    const at = new Date(Date.now() + 3 * 3600_000);
    at.setMilliseconds(0);
    t.server.clock.now = at;
    try {
      const changed = await setBenefits(org, productId, [perk.id, keys.id]);
      expect(changed.modified_at).toBe(at.toISOString());
    } finally {
      t.server.clock.now = null;
    }
    const untouched = expectStatus(await org.api('GET', `/products/${other}`), 200);
    expect(untouched.benefits.map((b: { id: string }) => b.id)).toEqual([perk.id]);
    expect(untouched.modified_at).not.toBe(at.toISOString());
    await setBenefits(org, productId, [keys.id, perk.id]);
  });

  it("is not found for another organization's product, and needs products:write", async () => {
    const foreign = await stranger.api('POST', `/products/${productId}/benefits`, { benefits: [] });
    expectNotFound(foreign);
    expect(foreign.body.detail).toBe('Product not found.');
    const benefitsOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, org, ['benefits:read', 'benefits:write', 'products:read']));
    expectNotPermitted(await benefitsOnly('POST', `/products/${productId}/benefits`, { benefits: [] }), 'products:write');
    expect(expectStatus(await org.api('GET', `/products/${productId}`), 200).benefits.map((b: { id: string }) => b.id)).toEqual([keys.id, perk.id]);
  });

  it('drops a deleted benefit from the products that had it', async () => {
    const temporary = await createCustom(org, 'Temporary perk');
    await setBenefits(org, productId, [keys.id, temporary.id, perk.id]);
    expectStatus(await org.api('DELETE', `/benefits/${temporary.id}`), 204);
    expect(expectStatus(await org.api('GET', `/products/${productId}`), 200).benefits.map((b: { id: string }) => b.id)).toEqual([keys.id, perk.id]);
  });
});

// ---------------------------------------------------------------------------------------------
// Grants of one-time purchases
// ---------------------------------------------------------------------------------------------

describe('the grants of a one-time purchase', () => {
  let org: Org;
  let productId: string;
  let community: any;
  let license: any;
  let alice: Order;
  let bob: Order;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    productId = (await fixedProduct(org, 'Video course', 1999)).id;
    community = await createCustom(org, 'Community access', 'Join at chat.example.com', { tier: 'gold', seats: 3 });
    license = await createLicenseKeys(org, 'Course license', 'COURSE');
    await setBenefits(org, productId, [community.id, license.id]);
    await jobsSettled();
    alice = await buy(org, productId, 'alice-benefits@example.com');
    bob = await buy(org, productId, 'bob-benefits@example.com');
  });

  it('grants each benefit of the product to each buyer once the order is paid', async () => {
    const grants = await grantsOf(org, community.id);
    expect(grants.pagination).toEqual({ total_count: 2, max_page: 1 });
    const alices = grants.items.find((g: { customer_id: string }) => g.customer_id === alice.customerId);
    expect(alices).toEqual({
      id: uuid,
      created_at: datetime,
      modified_at: nullableDatetime,
      granted_at: datetime,
      is_granted: true,
      revoked_at: null,
      is_revoked: false,
      subscription_id: null,
      order_id: alice.id,
      customer_id: alice.customerId,
      benefit_id: community.id,
      properties: {},
      customer: expect.objectContaining({ id: alice.customerId, email: 'alice-benefits@example.com', organization_id: org.organizationId }),
    });
    expect(grants.items.map((g: { order_id: string }) => g.order_id).sort()).toEqual([alice.id, bob.id].sort());
  });

  it('gives a license_keys grant the id and display form of a license key issued under the prefix', async () => {
    const grants = await grantsOf(org, license.id, `&customer_id=${alice.customerId}`);
    expect(grants.items).toHaveLength(1);
    const [grant] = grants.items;
    expect(grant).toMatchObject({ is_granted: true, order_id: alice.id, benefit_id: license.id });
    expect(grant.properties).toEqual({ license_key_id: uuid, display_key: expect.stringMatching(/^\*\*\*\*-[0-9A-F]{8}$/) });
    const key = expectStatus(await org.api('GET', `/license-keys/${grant.properties.license_key_id}`), 200);
    expect(key).toMatchObject({ benefit_id: license.id, customer_id: alice.customerId, status: 'granted', display_key: grant.properties.display_key, limit_activations: 3, limit_usage: 100 });
    expect(key.key).toMatch(/^COURSE-/);
    expect(key.expires_at).toEqual(datetime);
  });

  it('lists grants through the SDK, and filters them by is_granted and customer_id', async () => {
    const page = await org.polar.benefits.grants({ id: community.id, customerId: bob.customerId });
    expect(page.result.items).toHaveLength(1);
    expect(page.result.items[0]).toMatchObject({ orderId: bob.id, customerId: bob.customerId, benefitId: community.id, isGranted: true, isRevoked: false, subscriptionId: null });
    expect(page.result.items[0].customer.email).toBe('bob-benefits@example.com');
    expect((await grantsOf(org, community.id, '&is_granted=true')).pagination.total_count).toBe(2);
    expect((await grantsOf(org, community.id, '&is_granted=false')).items).toEqual([]);
  });

  it('lists the granted benefits in the customer state, with their type and metadata (SDK getState)', async () => {
    const state = await org.polar.customers.getState({ id: alice.customerId });
    expect(state).toMatchObject({ id: alice.customerId, email: 'alice-benefits@example.com', activeSubscriptions: [], activeMeters: [] });
    expect(state.grantedBenefits.map((g) => [g.benefitId, g.benefitType, g.benefitMetadata]).sort()).toEqual(
      [
        [community.id, 'custom', { tier: 'gold', seats: 3 }],
        [license.id, 'license_keys', {}],
      ].sort(),
    );
    for (const grant of state.grantedBenefits) expect(grant.grantedAt).toBeInstanceOf(Date);
    const wire = await stateOf(org, alice.customerId);
    const licenseGrant = wire.granted_benefits.find((g: { benefit_id: string }) => g.benefit_id === license.id);
    expect(licenseGrant).toEqual({
      id: uuid,
      created_at: datetime,
      modified_at: nullableDatetime,
      granted_at: datetime,
      benefit_id: license.id,
      benefit_type: 'license_keys',
      benefit_metadata: {},
      properties: { license_key_id: uuid, display_key: expect.any(String) },
    });
  });

  it('records benefit_grant.created with the benefit embedded, and customer.state_changed with the state', async () => {
    const created = await eventsOfType(org.organizationId, 'benefit_grant.created');
    expect(created).toHaveLength(4);
    const grants = [...(await grantsOf(org, community.id)).items, ...(await grantsOf(org, license.id)).items];
    for (const event of created) {
      const { benefit, ...grant } = event.data as Record<string, any>;
      expect(grant).toEqual(grants.find((g: { id: string }) => g.id === event.resourceId));
      expect(benefit).toEqual(benefit.id === community.id ? community : license);
    }
    const changed = (await eventsOfType(org.organizationId, 'customer.state_changed')).filter((e) => e.resourceId === alice.customerId);
    expect(changed).toHaveLength(1);
    expect(changed[0].data).toEqual(await stateOf(org, alice.customerId));
  });

  it('makes no grant twice when the sync runs again', async () => {
    const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    const grantIds = async () => [...(await grantsOf(org, community.id)).items, ...(await grantsOf(org, license.id)).items].map((g: { id: string }) => g.id).sort();
    const idsBefore = await grantIds();
    await setBenefits(org, productId, [community.id, license.id]);
    await jobsSettled();
    await sandbox().jobs.runDue();
    expect(await grantIds()).toEqual(idsBefore);
    expect(await prisma().licenseKey.count({ where: { benefitId: license.id } })).toBe(2);
    expect((await eventsOf(t.server, org.organizationId, 'sandbox')).slice(before).map((e) => e.type)).toEqual([]);
  });

  it('issues license keys for the license key benefit only', async () => {
    const keys = expectStatus(await org.api('GET', '/license-keys/?limit=100'), 200).items;
    expect(keys.map((k: { benefit_id: string; customer_id: string }) => [k.benefit_id, k.customer_id]).sort()).toEqual(
      [
        [license.id, alice.customerId],
        [license.id, bob.customerId],
      ].sort(),
    );
  });

  describe('when the benefits change', () => {
    let extra: any;

    it('grants a benefit newly attached to the product to everyone who bought it', async () => {
      extra = await createCustom(org, 'Bonus chapter', null, { bonus: true });
      await setBenefits(org, productId, [community.id, license.id, extra.id]);
      await jobsSettled();
      const grants = await grantsOf(org, extra.id);
      expect(grants.items.map((g: { order_id: string; is_granted: boolean }) => [g.order_id, g.is_granted]).sort()).toEqual([
        [alice.id, true],
        [bob.id, true],
      ].sort());
      expect(await grantedBenefitIds(org, alice.customerId)).toEqual([community.id, license.id, extra.id].sort());
      const created = (await eventsOfType(org.organizationId, 'benefit_grant.created')).filter((e) => (e.data as any).benefit_id === extra.id);
      expect(created).toHaveLength(2);
    });

    it('revokes the grants of a benefit detached from the product, which then leaves the customer state', async () => {
      const changedBefore = (await eventsOfType(org.organizationId, 'customer.state_changed')).length;
      await setBenefits(org, productId, [license.id, extra.id]);
      await jobsSettled();
      const grants = await grantsOf(org, community.id);
      expect(grants.items).toHaveLength(2);
      for (const grant of grants.items) expect(grant).toMatchObject({ is_granted: false, is_revoked: true, revoked_at: datetime, granted_at: datetime });
      expect((await grantsOf(org, community.id, '&is_granted=false')).pagination.total_count).toBe(2);
      expect((await grantsOf(org, community.id, '&is_granted=true')).items).toEqual([]);
      expect(await grantedBenefitIds(org, alice.customerId)).toEqual([license.id, extra.id].sort());
      expect(await grantedBenefitIds(org, bob.customerId)).toEqual([license.id, extra.id].sort());
      const revoked = await eventsOfType(org.organizationId, 'benefit_grant.revoked');
      expect(revoked.map((e) => e.resourceId).sort()).toEqual(grants.items.map((g: { id: string }) => g.id).sort());
      for (const event of revoked) expect(event.data).toMatchObject({ is_revoked: true, is_granted: false, revoked_at: datetime, benefit: { id: community.id, type: 'custom' } });
      const changed = (await eventsOfType(org.organizationId, 'customer.state_changed')).slice(changedBefore);
      expect(changed.map((e) => e.resourceId).sort()).toEqual([alice.customerId, bob.customerId].sort());
      const alicesChange = changed.find((e) => e.resourceId === alice.customerId)!;
      expect(alicesChange.data).toEqual(await stateOf(org, alice.customerId));
    });

    it('revokes every grant of a deleted benefit, and none that is revoked already again', async () => {
      const extraGrants = (await grantsOf(org, extra.id)).items.map((g: { id: string }) => g.id);
      const revokedAt = async () => (await grantsOf(org, community.id)).items.map((g: { id: string; revoked_at: string }) => [g.id, g.revoked_at]).sort();
      const communityRevokedBefore = await revokedAt();
      expectStatus(await org.api('DELETE', `/benefits/${extra.id}`), 204);
      await jobsSettled();
      expect(await grantedBenefitIds(org, alice.customerId)).toEqual([license.id]);
      expect(await grantedBenefitIds(org, bob.customerId)).toEqual([license.id]);
      const revoked = (await eventsOfType(org.organizationId, 'benefit_grant.revoked')).filter((e) => (e.data as any).benefit_id === extra.id);
      expect(revoked.map((e) => e.resourceId).sort()).toEqual(extraGrants.sort());
      const stored = await prisma().benefitGrant.findMany({ where: { benefitId: extra.id } });
      expect(stored.map((g) => g.revokedAt)).toEqual([expect.any(Date), expect.any(Date)]);
      // The syncs that revoked these found the detached benefit's grants revoked, and left them so.
      expect(await revokedAt()).toEqual(communityRevokedBefore);
      const communityRevoked = (await eventsOfType(org.organizationId, 'benefit_grant.revoked')).filter((e) => (e.data as any).benefit_id === community.id);
      expect(communityRevoked).toHaveLength(2);
    });
  });

  describe('when an order is refunded', () => {
    it('keeps the grants after a partial refund without revoke_benefits', async () => {
      const held = await grantedBenefitIds(org, bob.customerId);
      expect(held).toContain(license.id);
      const refund = expectStatus(await org.api('POST', '/refunds/', { order_id: bob.id, reason: 'customer_request', amount: 500 }), 200);
      expect(refund.revoke_benefits).toBe(false);
      await refundSettled(org, refund.id);
      expect(await grantedBenefitIds(org, bob.customerId)).toEqual(held);
      const [grant] = (await grantsOf(org, license.id, `&customer_id=${bob.customerId}`)).items;
      expect(grant).toMatchObject({ is_granted: true, is_revoked: false });
      expect(expectStatus(await org.api('GET', `/license-keys/${grant.properties.license_key_id}`), 200).status).toBe('granted');
      // A later sync of the order (the product's benefits set again) still finds no refund that revokes.
      const benefits = expectStatus(await org.api('GET', `/products/${productId}`), 200).benefits.map((b: { id: string }) => b.id);
      await setBenefits(org, productId, benefits);
      await jobsSettled();
      expect(await grantedBenefitIds(org, bob.customerId)).toEqual(held);
    });

    it("revokes the order's grants, and its license key, after a full refund with revoke_benefits", async () => {
      const bobHeld = await grantedBenefitIds(org, bob.customerId);
      const refund = await org.polar.refunds.create({ orderId: alice.id, reason: 'customer_request', amount: 1999, revokeBenefits: true });
      expect(refund!.revokeBenefits).toBe(true);
      await refundSettled(org, refund!.id);
      expect(await grantedBenefitIds(org, alice.customerId)).toEqual([]);
      const [grant] = (await grantsOf(org, license.id, `&customer_id=${alice.customerId}`)).items;
      expect(grant).toMatchObject({ is_granted: false, is_revoked: true, revoked_at: datetime });
      expect(expectStatus(await org.api('GET', `/license-keys/${grant.properties.license_key_id}`), 200).status).toBe('revoked');
      // Bob's purchase is untouched.
      expect(await grantedBenefitIds(org, bob.customerId)).toEqual(bobHeld);
    });
  });
});

describe('what ends the grants of a one-time purchase', () => {
  let org: Org;
  let productId: string;
  let perk: any;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    productId = (await fixedProduct(org, 'Workshop seat', 4900)).id;
    perk = await createCustom(org, 'Workshop recording', 'Watch it at video.example.com');
    await setBenefits(org, productId, [perk.id]);
    await jobsSettled();
  });

  const grantOf = async (order: Order) => (await grantsOf(org, perk.id, `&customer_id=${order.customerId}`)).items[0];

  it('gives the grants back when a refund that revoked them fails', async () => {
    const order = await buy(org, productId, 'refused-refund@example.com', 'tok_refundFail');
    const refund = expectStatus(await org.api('POST', '/refunds/', { order_id: order.id, reason: 'customer_request', amount: 4900, revoke_benefits: true }), 200);
    await refundSettled(org, refund.id, 'failed');
    expect(await grantOf(order)).toMatchObject({ is_granted: true, is_revoked: false, revoked_at: null });
  });

  it("revokes a deleted customer's grants, announcing no state for the customer", async () => {
    const order = await buy(org, productId, 'leaving@example.com');
    const grant = await grantOf(order);
    expect(grant).toMatchObject({ is_granted: true });
    const stateChanges = async () => (await eventsOfType(org.organizationId, 'customer.state_changed')).filter((e) => e.resourceId === order.customerId).length;
    const changedBefore = await stateChanges();
    expectStatus(await org.api('DELETE', `/customers/${order.customerId}`), 204);
    await jobsSettled();
    expect((await prisma().benefitGrant.findFirstOrThrow({ where: { benefitId: perk.id, customerId: order.customerId } })).revokedAt).toEqual(expect.any(Date));
    const revoked = (await eventsOfType(org.organizationId, 'benefit_grant.revoked')).filter((e) => e.resourceId === grant.id);
    expect(revoked).toHaveLength(1);
    // Its customer.deleted said it has no state any more.
    expect(await stateChanges()).toBe(changedBefore);
  });
});

describe('the grants of a downloadables benefit', () => {
  let org: Org;
  let manual: string;
  let appendix: string;
  let downloads: any;
  let order: Order;
  let productId: string;

  /** A downloadable file uploaded in one part through the signed link POST /v1/files/ hands out. */
  async function uploadedFile(name: string, content: string): Promise<string> {
    const bytes = Buffer.from(content);
    const created = expectStatus(
      await org.api('POST', '/files/', { service: 'downloadable', name, mime_type: 'text/plain', size: bytes.length, upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: bytes.length }] } }),
      201,
    );
    const [part] = created.upload.parts;
    const put = await fetch(part.url, { method: 'PUT', body: bytes, headers: part.headers });
    expect(put.status).toBe(200);
    const completed = await org.api('POST', `/files/${created.id}/uploaded`, {
      id: created.upload.id,
      path: created.upload.path,
      parts: [{ number: 1, checksum_etag: put.headers.get('etag'), checksum_sha256_base64: null }],
    });
    expect(expectStatus(completed, 200).is_uploaded).toBe(true);
    return created.id;
  }

  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    manual = await uploadedFile('manual.txt', 'The manual.');
    appendix = await uploadedFile('appendix.txt', 'The appendix.');
    downloads = expectStatus(await org.api('POST', '/benefits/', { type: 'downloadables', description: 'Downloads', properties: { files: [manual] } }), 201);
    const product = await fixedProduct(org, 'Manual', 500);
    productId = product.id;
    await setBenefits(org, product.id, [downloads.id]);
    order = await buy(org, product.id, 'erin-benefits@example.com');
  });

  it('grants the files of the benefit', async () => {
    expect(downloads.properties).toEqual({ files: [manual], archived: {} });
    const [grant] = (await grantsOf(org, downloads.id)).items;
    expect(grant).toMatchObject({ is_granted: true, order_id: order.id, properties: { files: [manual] } });
  });

  it('gives the files added to the benefit to those who hold it already', async () => {
    expectStatus(await org.api('PATCH', `/benefits/${downloads.id}`, { type: 'downloadables', properties: { files: [manual, appendix] } }), 200);
    await jobsSettled();
    const [grant] = (await grantsOf(org, downloads.id)).items;
    expect(grant).toMatchObject({ is_granted: true, properties: { files: [manual, appendix] } });
    const [held] = (await stateOf(org, order.customerId)).granted_benefits;
    expect(held.properties).toEqual({ files: [manual, appendix] });
    const updated = await eventsOfType(org.organizationId, 'benefit_grant.updated');
    expect(updated.map((e) => [e.resourceId, (e.data as any).properties])).toEqual([[grant.id, { files: [manual, appendix] }]]);
  });

  it('keeps an archived file for those who hold it, and gives it to no new holder', async () => {
    expectStatus(await org.api('PATCH', `/benefits/${downloads.id}`, { type: 'downloadables', properties: { files: [manual, appendix], archived: { [appendix]: true } } }), 200);
    await jobsSettled();
    const newcomer = await buy(org, productId, 'fred-benefits@example.com');
    const filesOf = async (of: Order) => (await grantsOf(org, downloads.id, `&customer_id=${of.customerId}`)).items[0].properties.files;
    expect(await filesOf(order)).toEqual([manual, appendix]);
    expect(await filesOf(newcomer)).toEqual([manual]);
  });
});

describe('a partial refund with revoke_benefits', () => {
  // Polar enqueues the revocation when a refund with revoke_benefits is created, whatever its
  // amount (polar/refund/service.py, RefundService._on_created).
  it("revokes the order's grants, though the order is only partially refunded", async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const product = await fixedProduct(org, 'Plugin', 4000);
    const license = await createLicenseKeys(org, 'Plugin license', 'PLUGIN');
    await setBenefits(org, product.id, [license.id]);
    const order = await buy(org, product.id, 'dave-benefits@example.com');
    expect(await grantedBenefitIds(org, order.customerId)).toEqual([license.id]);
    const refund = expectStatus(await org.api('POST', '/refunds/', { order_id: order.id, reason: 'customer_request', amount: 1000, revoke_benefits: true }), 200);
    expect(refund).toMatchObject({ amount: 1000, revoke_benefits: true });
    await eventually(
      async () => {
        await sandbox().jobs.runDue();
        return expectStatus(await org.api('GET', `/refunds/${refund.id}`), 200);
      },
      (r) => r.status === 'succeeded',
      'the refund to succeed',
    );
    await jobsSettled();
    expect((await org.polar.orders.get({ id: order.id })).status).toBe('partially_refunded');
    const [grant] = (await grantsOf(org, license.id)).items;
    expect(grant).toMatchObject({ is_granted: false, is_revoked: true, revoked_at: datetime });
    expect(await grantedBenefitIds(org, order.customerId)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Grants of subscriptions, and the entitlements through GraphQL
// ---------------------------------------------------------------------------------------------

/** The payloads of the jobs of a kind made since `before` (the ids of that kind's jobs then). */
async function jobsSince(kind: string, before: Set<string>) {
  const jobs = await prisma().job.findMany({ where: { kind }, orderBy: { createdAt: 'asc' } });
  return jobs.filter((job) => !before.has(job.id)).map((job) => job.payload);
}
const jobIds = async (kind: string) => new Set((await prisma().job.findMany({ where: { kind }, select: { id: true } })).map((job) => job.id));

describe('what a change re-syncs', () => {
  let org: Org;
  let perk: any;
  let other: any;
  let bundle: string;
  let single: string;
  let bundleOrder: Order;
  let singleOrder: Order;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    perk = await createCustom(org, 'Printed poster', 'Ships in a week');
    other = await createCustom(org, 'Sticker', 'Ships with the poster');
    bundle = (await fixedProduct(org, 'Poster bundle', 2500)).id;
    single = (await fixedProduct(org, 'Sticker only', 300)).id;
    await setBenefits(org, bundle, [perk.id]);
    await setBenefits(org, single, [other.id]);
    await jobsSettled();
    bundleOrder = await buy(org, bundle, 'poster-buyer@example.com');
    singleOrder = await buy(org, single, 'sticker-buyer@example.com');
  });

  it('syncs the purchases holding a benefit whose properties change, and only those; a new description syncs none', async () => {
    const before = await jobIds('benefits.sync');
    expectStatus(await org.api('PATCH', `/benefits/${perk.id}`, { type: 'custom', description: 'Printed poster, signed' }), 200);
    expect(await jobsSince('benefits.sync', before)).toEqual([]);
    expectStatus(await org.api('PATCH', `/benefits/${perk.id}`, { type: 'custom', properties: { note: 'Ships in two weeks' } }), 200);
    expect(await jobsSince('benefits.sync', before)).toEqual([{ orderId: bundleOrder.id }]);
    await jobsSettled();
  });

  it("syncs the paid purchases of the product whose benefits are set, and no other product's", async () => {
    // An order whose card was declined holds nothing and is not synced.
    await declinedOrder(org, bundle, 'declined-poster@example.com');
    await jobsSettled();
    const syncs = await jobIds('benefits.sync');
    const productSyncs = await jobIds('benefits.sync-product');
    await setBenefits(org, bundle, [perk.id, other.id]);
    expect(await jobsSince('benefits.sync-product', productSyncs)).toEqual([{ productId: bundle }]);
    await jobsSettled();
    expect(await jobsSince('benefits.sync', syncs)).toEqual([{ orderId: bundleOrder.id }]);
    expect((await grantsOf(org, other.id)).items.map((g: { order_id: string }) => g.order_id).sort()).toEqual([bundleOrder.id, singleOrder.id].sort());
  });

  it("lists a benefit's grants newest first, and those made at one instant by id", async () => {
    const own = await newOrganization(t.server, 'sandbox');
    const product = (await fixedProduct(own, 'Zine', 400)).id;
    const zine = await createCustom(own, 'Zine club');
    await setBenefits(own, product, [zine.id]);
    await jobsSettled();
    const grantOf = async (order: Order) => (await grantsOf(own, zine.id)).items.find((g: { order_id: string }) => g.order_id === order.id).id as string;
    const made = await madeOutOfIdOrder(t.server, async (i) => grantOf(await buy(own, product, `zine-${i}@example.com`)));
    const listed = async () => (await grantsOf(own, zine.id)).items.map((g: { id: string }) => g.id);
    expect(await listed()).toEqual([...made].reverse());
    // Grants made at one instant, until the order they were made in is not their ids' order.
    const instant: string[] = [];
    t.server.clock.now = new Date(Date.now() + 24 * 3600_000);
    try {
      while (instant.length < 2 || instant.every((id, i) => i === 0 || id > instant[i - 1])) instant.push(await grantOf(await buy(own, product, `zine-at-once-${instant.length}@example.com`)));
    } finally {
      t.server.clock.now = null;
    }
    expect(await listed()).toEqual([...[...instant].sort(), ...[...made].reverse()]);
  });
});

describe('the grants of a subscription', () => {
  let org: Org;
  let members: any;
  let license: any;
  let subscriptionOrder: Order;
  let oneTimeOrder: Order;
  let customerId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    const plan = await fixedProduct(org, 'Membership', 900, 'month');
    const ebook = await fixedProduct(org, 'Handbook', 1500);
    members = await createCustom(org, 'Members area', 'Log in at members.example.com', { level: 'member' });
    license = await createLicenseKeys(org, 'Handbook license', 'BOOK');
    await setBenefits(org, plan.id, [members.id]);
    await setBenefits(org, ebook.id, [license.id]);
    await jobsSettled();
    // The organization set Carol's address, so both purchases reach her.
    await org.polar.customers.create({ email: 'carol-benefits@example.com' });
    subscriptionOrder = await buy(org, plan.id, 'carol-benefits@example.com');
    oneTimeOrder = await buy(org, ebook.id, 'carol-benefits@example.com');
    customerId = subscriptionOrder.customerId;
  });

  it('grants the benefits through the subscription, not its order', async () => {
    expect(subscriptionOrder.subscriptionId).toEqual(uuid);
    expect(oneTimeOrder.customerId).toBe(customerId);
    const [grant] = (await grantsOf(org, members.id)).items;
    expect(grant).toMatchObject({ is_granted: true, subscription_id: subscriptionOrder.subscriptionId, order_id: null, customer_id: customerId });
  });

  it('lists the active subscription and both granted benefits in the customer state', async () => {
    const state = await org.polar.customers.getState({ id: customerId });
    expect(state.activeSubscriptions.map((s) => [s.id, s.status, s.productId])).toEqual([[subscriptionOrder.subscriptionId, 'active', subscriptionOrder.productId]]);
    expect(state.grantedBenefits.map((g) => g.benefitId).sort()).toEqual([members.id, license.id].sort());
  });

  it('returns the entitlements in one GraphQL query', async () => {
    const { body } = await org.gql(
      `query ($id: UUID!) { core {
        customer(id: $id) { id email }
        customerState(id: $id) {
          id email
          activeSubscriptions { id status productId }
          grantedBenefits { benefitId benefitType benefitMetadata isGranted orderId subscriptionId grantedAt benefit { description } }
        } } }`,
      { id: customerId },
    );
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(body.data.core.customer).toEqual({ id: customerId, email: 'carol-benefits@example.com' });
    const state = body.data.core.customerState;
    expect(state.activeSubscriptions).toEqual([{ id: subscriptionOrder.subscriptionId, status: 'active', productId: subscriptionOrder.productId }]);
    const byBenefit = Object.fromEntries(state.grantedBenefits.map((g: { benefitId: string }) => [g.benefitId, g]));
    expect(byBenefit).toEqual({
      [members.id]: {
        benefitId: members.id,
        benefitType: 'custom',
        benefitMetadata: { level: 'member' },
        isGranted: true,
        orderId: null,
        subscriptionId: subscriptionOrder.subscriptionId,
        grantedAt: datetime,
        benefit: { description: 'Members area' },
      },
      [license.id]: {
        benefitId: license.id,
        benefitType: 'license_keys',
        benefitMetadata: {},
        isGranted: true,
        orderId: oneTimeOrder.id,
        subscriptionId: null,
        grantedAt: datetime,
        benefit: { description: 'Handbook license' },
      },
    });
  });

  it("syncs a plan's subscriptions when its benefits are set, not their orders nor another plan's", async () => {
    const otherPlan = await fixedProduct(org, 'Yearly membership', 9000, 'year');
    await buy(org, otherPlan.id, 'dana-benefits@example.com');
    const syncs = await jobIds('benefits.sync');
    await setBenefits(org, subscriptionOrder.productId, [members.id]);
    await jobsSettled();
    expect(await jobsSince('benefits.sync', syncs)).toEqual([{ subscriptionId: subscriptionOrder.subscriptionId }]);
  });

  it('syncs the subscription holding a benefit whose properties change', async () => {
    const before = await jobIds('benefits.sync');
    expectStatus(await org.api('PATCH', `/benefits/${members.id}`, { type: 'custom', properties: { note: 'Log in at members.example.org' } }), 200);
    expect(await jobsSince('benefits.sync', before)).toEqual([{ subscriptionId: subscriptionOrder.subscriptionId }]);
    await jobsSettled();
  });

  it("lists the customer's grants in the portal newest first, by the checkout that made them, and by organization", async () => {
    const token = (await org.polar.customerSessions.create({ customerId })).token;
    const portal = restClient(t.server.base('sandbox'), token);
    const [membersGrant] = (await grantsOf(org, members.id)).items;
    const [licenseGrant] = (await grantsOf(org, license.id)).items;
    const listed = async (query: string) => expectStatus(await portal('GET', `/customer-portal/benefit-grants/${query}`), 200).items.map((g: { id: string }) => g.id);
    expect(await listed('')).toEqual([licenseGrant.id, membersGrant.id]);
    expect(await listed(`?checkout_id=${subscriptionOrder.checkoutId}`)).toEqual([membersGrant.id]);
    expect(await listed(`?checkout_id=${oneTimeOrder.checkoutId}`)).toEqual([licenseGrant.id]);
    expect(await listed(`?checkout_id=${subscriptionOrder.checkoutId}&checkout_id=${oneTimeOrder.checkoutId}`)).toEqual([licenseGrant.id, membersGrant.id]);
    // One organization: its grants tie, and the next key orders them.
    expect(await listed('?sorting=organization&sorting=granted_at')).toEqual([membersGrant.id, licenseGrant.id]);
    expect(await listed('?sorting=organization&sorting=-granted_at')).toEqual([licenseGrant.id, membersGrant.id]);
    expect(await listed('?sorting=-organization&sorting=granted_at')).toEqual([membersGrant.id, licenseGrant.id]);
    const unknown = await portal('GET', `/customer-portal/benefit-grants/${randomUUID()}`);
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Benefit grant not found.' }]);
  });

  it('keeps the benefits of a subscription canceled at the end of its period until then', async () => {
    const canceled = expectStatus(await org.api('PATCH', `/subscriptions/${subscriptionOrder.subscriptionId}`, { cancel_at_period_end: true }), 200);
    expect(canceled).toMatchObject({ status: 'active', cancel_at_period_end: true });
    await jobsSettled();
    expect(await grantedBenefitIds(org, customerId)).toEqual([members.id, license.id].sort());
  });

  it('revokes the benefits of a revoked subscription, which leaves the customer state with the subscription', async () => {
    const revokedBefore = (await eventsOfType(org.organizationId, 'benefit_grant.revoked')).length;
    const revoked = expectStatus(await org.api('DELETE', `/subscriptions/${subscriptionOrder.subscriptionId}`), 200);
    expect(revoked.status).toBe('canceled');
    await jobsSettled();
    const [grant] = (await grantsOf(org, members.id)).items;
    expect(grant).toMatchObject({ is_granted: false, is_revoked: true, revoked_at: datetime, subscription_id: subscriptionOrder.subscriptionId });
    const state = await stateOf(org, customerId);
    expect(state.active_subscriptions).toEqual([]);
    expect(state.granted_benefits.map((g: { benefit_id: string }) => g.benefit_id)).toEqual([license.id]);
    const events = (await eventsOfType(org.organizationId, 'benefit_grant.revoked')).slice(revokedBefore);
    expect(events.map((e) => e.resourceId)).toEqual([grant.id]);
    expect((await eventsOfType(org.organizationId, 'customer.state_changed')).at(-1)!.data).toEqual(state);
  });
});

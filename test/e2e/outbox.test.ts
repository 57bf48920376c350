// The outbox: every change to a customer records its event in the same transaction, with the
// resource as `GET /v1/customers/{id}` renders it at that moment. Events are read straight from
// the environment's database, in the order of their sequence.
import { beforeAll, describe, expect, it } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import type { RestResponse } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, type Org } from '../helpers/organizations.ts';
import { expectStatus } from '../helpers/responses.ts';
import { ISO_DATETIME } from '../helpers/matchers.ts';

const t = useTestServer();

const prisma = (environment: EnvironmentName = 'production') => t.server.kassa.environments[environment].environment.prisma;

async function summary(organizationId: string, environment: EnvironmentName = 'production') {
  return (await eventsOf(t.server, organizationId, environment)).map((e) => ({ type: e.type, resourceId: e.resourceId }));
}

async function get(org: Org, id: string) {
  return expectStatus(await org.api('GET', `/customers/${id}`), 200);
}

describe('the events of a customer created, updated and deleted over REST', () => {
  let org: Org;
  let id: string;
  const snapshots: Record<string, unknown>[] = [];
  beforeAll(async () => {
    org = await newOrganization(t.server);
    const created = expectStatus(
      await org.api('POST', '/customers/', {
        email: 'outboxed@example.com',
        name: 'Outboxed',
        external_id: 'outbox-1',
        billing_address: { line1: 'Storgatan 1', postal_code: '111 22', city: 'Stockholm', country: 'SE' },
        tax_id: ['SE123456789701', 'eu_vat'],
        metadata: { plan: 'pro', seats: 2, beta: true },
      }),
      201,
    );
    id = created.id;
    snapshots.push(await get(org, id));
    expectStatus(await org.api('PATCH', `/customers/${id}`, { name: 'Outboxed Again', metadata: { plan: 'team' } }), 200);
    snapshots.push(await get(org, id));
    expectStatus(await org.api('DELETE', `/customers/${id}`), 204);
  });

  it('are exactly customer.created, customer.updated and customer.deleted, in that order, about the customer', async () => {
    const events = await eventsOf(t.server, org.organizationId);
    expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
    for (const event of events) {
      expect(event.resourceId).toBe(id);
      expect(event.organizationId).toBe(org.organizationId);
      expect(event.createdAt).toBeInstanceOf(Date);
    }
    expect(events[0].sequence < events[1].sequence && events[1].sequence < events[2].sequence).toBe(true);
  });

  it('carry in customer.created exactly what a GET answered right after the create', async () => {
    const [created] = await eventsOf(t.server, org.organizationId);
    expect(created.data).toEqual(snapshots[0]);
  });

  it('carry in customer.updated exactly what a GET answered right after the update', async () => {
    const [, updated] = await eventsOf(t.server, org.organizationId);
    expect(updated.data).toEqual(snapshots[1]);
    expect(updated.data).toMatchObject({ name: 'Outboxed Again', metadata: { plan: 'team' } });
  });

  it('carry in customer.deleted the last GET answer with deleted_at set to the time of deletion', async () => {
    const [, , deleted] = await eventsOf(t.server, org.organizationId);
    expect(deleted.data).toEqual({ ...snapshots[1], deleted_at: expect.stringMatching(ISO_DATETIME) });
    const row = await prisma().customer.findUniqueOrThrow({ where: { id } });
    expect(new Date((deleted.data as { deleted_at: string }).deleted_at).getTime()).toBe(row.deletedAt!.getTime());
  });
});

describe('the events of changes by external id', () => {
  it('are recorded for an update and a delete given by external id, with what a GET answered', async () => {
    const org = await newOrganization(t.server);
    const created = expectStatus(await org.api('POST', '/customers/', { email: 'by-ext@example.com', external_id: 'by-ext' }), 201);
    const afterCreate = await get(org, created.id);
    expectStatus(await org.api('PATCH', '/customers/external/by-ext', { name: 'Named by external id' }), 200);
    const afterUpdate = await get(org, created.id);
    expectStatus(await org.api('DELETE', '/customers/external/by-ext'), 204);
    const events = await eventsOf(t.server, org.organizationId);
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([
      ['customer.created', created.id],
      ['customer.updated', created.id],
      ['customer.deleted', created.id],
    ]);
    expect(events[0].data).toEqual(afterCreate);
    expect(events[1].data).toEqual(afterUpdate);
    expect(events[2].data).toEqual({ ...afterUpdate, deleted_at: expect.stringMatching(ISO_DATETIME) });
  });

  it('are recorded one per change for several customers, each event about its own customer', async () => {
    const org = await newOrganization(t.server);
    const one = expectStatus(await org.api('POST', '/customers/', { email: 'one@example.com' }), 201);
    const two = expectStatus(await org.api('POST', '/customers/', { email: 'two@example.com' }), 201);
    expectStatus(await org.api('PATCH', `/customers/${one.id}`, { name: 'One' }), 200);
    expectStatus(await org.api('DELETE', `/customers/${two.id}`), 204);
    expect(await summary(org.organizationId)).toEqual([
      { type: 'customer.created', resourceId: one.id },
      { type: 'customer.created', resourceId: two.id },
      { type: 'customer.updated', resourceId: one.id },
      { type: 'customer.deleted', resourceId: two.id },
    ]);
  });
});

describe('a change that does not happen', () => {
  let org: Org;
  let existing: { id: string };
  beforeAll(async () => {
    org = await newOrganization(t.server);
    existing = expectStatus(await org.api('POST', '/customers/', { email: 'existing@example.com', external_id: 'existing-1' }), 201);
    expectStatus(await org.api('POST', '/customers/', { email: 'other@example.com', external_id: 'other-1' }), 201);
  });

  /** Runs `attempt`, which must be refused with `status`, and checks no event was recorded. */
  async function expectNoEvent(attempt: () => Promise<RestResponse>, status: number) {
    const before = await summary(org.organizationId);
    expectStatus(await attempt(), status);
    expect(await summary(org.organizationId)).toEqual(before);
  }

  it('records no event when a create fails validation', async () => {
    await expectNoEvent(() => org.api('POST', '/customers/', { email: 'not-an-email' }), 422);
    await expectNoEvent(() => org.api('POST', '/customers/', { email: 'bad-country@example.com', billing_address: { country: 'XX' } }), 422);
    await expectNoEvent(() => org.api('POST', '/customers/', { email: 'extra@example.com', nickname: 'x' }), 422);
  });

  it('records no event when a create hits the unique email or external id', async () => {
    await expectNoEvent(() => org.api('POST', '/customers/', { email: 'EXISTING@example.com' }), 422);
    await expectNoEvent(() => org.api('POST', '/customers/', { email: 'fresh@example.com', external_id: 'existing-1' }), 422);
  });

  it('records no event when an update fails validation or hits a uniqueness conflict', async () => {
    await expectNoEvent(() => org.api('PATCH', `/customers/${existing.id}`, { email: 'nope' }), 422);
    await expectNoEvent(() => org.api('PATCH', `/customers/${existing.id}`, { billing_address: { country: 'fr' } }), 422);
    await expectNoEvent(() => org.api('PATCH', `/customers/${existing.id}`, { external_id: 'changed' }), 422);
    await expectNoEvent(() => org.api('PATCH', `/customers/${existing.id}`, { email: 'Other@example.com' }), 422);
    await expectNoEvent(() => org.api('PATCH', '/customers/external/existing-1', { name: 'Would be renamed', email: 'other@example.com' }), 422);
    expect((await get(org, existing.id)).name).toBeNull();
  });

  it('records no event for an update or delete of a customer that does not exist', async () => {
    await expectNoEvent(() => org.api('PATCH', '/customers/6f1c2b9e-4a57-4c1f-9a0e-3d2b7c8e5f10', { name: 'Ghost' }), 404);
    await expectNoEvent(() => org.api('DELETE', '/customers/6f1c2b9e-4a57-4c1f-9a0e-3d2b7c8e5f10'), 404);
    await expectNoEvent(() => org.api('DELETE', '/customers/external/nobody'), 404);
  });

  it('records no event for a change refused by a GraphQL mutation', async () => {
    const before = await summary(org.organizationId);
    const response = await org.gql('mutation { core { customerCreate(input: { email: "existing@example.com" }) { id } } }');
    expect(response.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await summary(org.organizationId)).toEqual(before);
  });

  it('records exactly one customer.created when five identical creates race', async () => {
    const before = (await eventsOf(t.server, org.organizationId)).length;
    const responses = await Promise.all([1, 2, 3, 4, 5].map(() => org.api('POST', '/customers/', { email: 'raced@example.com' })));
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const events = (await eventsOf(t.server, org.organizationId)).slice(before);
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([['customer.created', created[0].body.id]]);
    expect(events[0].data).toEqual(created[0].body);
  });
});

describe('the events of racing changes', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server);
  });

  it('record exactly one customer.deleted when five deletes of one customer race', async () => {
    // Several rounds, so that a race the server does not guard against shows up.
    for (let round = 1; round <= 5; round++) {
      const created = expectStatus(await org.api('POST', '/customers/', { email: `delete-race-${round}@example.com` }), 201);
      const last = await get(org, created.id);
      await Promise.all([1, 2, 3, 4, 5].map(() => org.api('DELETE', `/customers/${created.id}`)));
      const events = await prisma().event.findMany({ where: { resourceId: created.id }, orderBy: { sequence: 'asc' } });
      expect(events.map((e) => e.type), `round ${round}`).toEqual(['customer.created', 'customer.deleted']);
      expect(events[1].data).toEqual({ ...last, deleted_at: expect.stringMatching(ISO_DATETIME) });
    }
  });

  it('record customer.deleted with the customer as the updates before it left it, and no update after it, when a delete races updates', async () => {
    for (let round = 1; round <= 5; round++) {
      const created = expectStatus(await org.api('POST', '/customers/', { email: `update-race-${round}@example.com` }), 201);
      const [deleted, ...updates] = await Promise.all([
        org.api('DELETE', `/customers/${created.id}`),
        ...[1, 2, 3, 4].map((i) => org.api('PATCH', `/customers/${created.id}`, { name: `Name ${round}.${i}` })),
      ]);
      expect(deleted.status).toBe(204);
      for (const update of updates) expect([200, 404]).toContain(update.status);
      const events = await prisma().event.findMany({ where: { resourceId: created.id }, orderBy: { sequence: 'asc' } });
      const types = events.map((e) => e.type);
      const succeeded = updates.filter((u) => u.status === 200).length;
      expect(types, `round ${round}`).toEqual(['customer.created', ...Array(succeeded).fill('customer.updated'), 'customer.deleted']);
      const before = events[events.length - 2].data as Record<string, unknown>;
      expect(events[events.length - 1].data, `round ${round}: the deleted event must carry the last state`).toEqual({ ...before, deleted_at: expect.stringMatching(ISO_DATETIME) });
    }
  });
});

describe('the events of GraphQL mutations', () => {
  it('are the same as over REST: created, updated and deleted, each with what a REST GET answered', async () => {
    const org = await newOrganization(t.server);
    const create = await org.gql('mutation ($input: CustomerCreateInput!) { core { customerCreate(input: $input) { id } } }', {
      input: { email: 'graph-outbox@example.com', externalId: 'graph-outbox', billingAddress: { country: 'CH', city: 'Zürich' }, metadata: { via: 'gql' } },
    });
    expect(create.body.errors).toBeUndefined();
    const id = create.body.data.core.customerCreate.id as string;
    const afterCreate = await get(org, id);
    const update = await org.gql('mutation ($id: UUID, $input: CustomerUpdateInput!) { core { customerUpdate(id: $id, input: $input) { id } } }', {
      id,
      input: { name: 'Graph Outbox', taxId: ['CHE123456789', 'ch_vat'] },
    });
    expect(update.body.errors).toBeUndefined();
    const afterUpdate = await get(org, id);
    const remove = await org.gql('mutation ($externalId: String) { core { customerDelete(externalId: $externalId) } }', { externalId: 'graph-outbox' });
    expect(remove.body).toEqual({ data: { core: { customerDelete: true } } });

    const events = await eventsOf(t.server, org.organizationId);
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([
      ['customer.created', id],
      ['customer.updated', id],
      ['customer.deleted', id],
    ]);
    expect(events[0].data).toEqual(afterCreate);
    expect(events[1].data).toEqual(afterUpdate);
    expect(events[2].data).toEqual({ ...afterUpdate, deleted_at: expect.stringMatching(ISO_DATETIME) });
  });
});

describe('events across organizations and environments', () => {
  let a: Org;
  let b: Org;
  let aCustomer: { id: string };
  let bCustomer: { id: string };
  beforeAll(async () => {
    a = await newOrganization(t.server);
    b = await newOrganization(t.server);
    aCustomer = expectStatus(await a.api('POST', '/customers/', { email: 'same@example.com', external_id: 'same' }), 201);
    bCustomer = expectStatus(await b.api('POST', '/customers/', { email: 'same@example.com', external_id: 'same' }), 201);
    expectStatus(await a.api('PATCH', '/customers/external/same', { name: 'A' }), 200);
    expectStatus(await b.api('DELETE', '/customers/external/same'), 204);
    // Refused attempts of one organization on the other's customer.
    expectStatus(await b.api('PATCH', `/customers/${aCustomer.id}`, { name: 'Hijacked' }), 404);
    expectStatus(await b.api('DELETE', `/customers/${aCustomer.id}`), 404);
  });

  it("never show one organization's events under another", async () => {
    expect(await summary(a.organizationId)).toEqual([
      { type: 'customer.created', resourceId: aCustomer.id },
      { type: 'customer.updated', resourceId: aCustomer.id },
    ]);
    expect(await summary(b.organizationId)).toEqual([
      { type: 'customer.created', resourceId: bCustomer.id },
      { type: 'customer.deleted', resourceId: bCustomer.id },
    ]);
  });

  it("record every event about a customer under the customer's own organization", async () => {
    const aboutA = await prisma().event.findMany({ where: { resourceId: aCustomer.id } });
    expect(aboutA.map((e) => e.organizationId)).toEqual([a.organizationId, a.organizationId]);
    const aboutB = await prisma().event.findMany({ where: { resourceId: bCustomer.id } });
    expect(aboutB.map((e) => e.organizationId)).toEqual([b.organizationId, b.organizationId]);
    for (const event of [...aboutA, ...aboutB]) expect((event.data as { organization_id: string }).organization_id).toBe(event.organizationId);
  });

  it('keep sandbox events in the sandbox database only', async () => {
    const sandbox = await newOrganization(t.server, 'sandbox');
    const created = expectStatus(await sandbox.api('POST', '/customers/', { email: 'sandboxed@example.com' }), 201);
    const afterCreate = expectStatus(await sandbox.api('GET', `/customers/${created.id}`), 200);
    expectStatus(await sandbox.api('PATCH', `/customers/${created.id}`, { name: 'Sandboxed' }), 200);
    const sandboxEvents = await eventsOf(t.server, sandbox.organizationId, 'sandbox');
    expect(sandboxEvents.map((e) => [e.type, e.resourceId])).toEqual([
      ['customer.created', created.id],
      ['customer.updated', created.id],
    ]);
    expect(sandboxEvents[0].data).toEqual(afterCreate);
    expect(await eventsOf(t.server, sandbox.organizationId, 'production')).toEqual([]);
    expect(await prisma('production').event.count({ where: { resourceId: created.id } })).toBe(0);
  });

  it('keep production events out of the sandbox database', async () => {
    expect(await prisma('sandbox').event.count({ where: { organizationId: { in: [a.organizationId, b.organizationId] } } })).toBe(0);
    expect(await prisma('sandbox').event.count({ where: { resourceId: { in: [aCustomer.id, bCustomer.id] } } })).toBe(0);
  });
});

// Webhook endpoints end to end: created, read, changed, re-keyed and deleted through the official
// client (@polar-sh/sdk, whose schemas parse every response), raw REST and GraphQL. The signing
// secret is shown in full once (create, reset) and stored only encrypted; URLs the environment's
// destination policy refuses, unknown event types and chat formats aimed elsewhere are 422 with
// nothing saved; another organization's endpoint is not found; the wrong token is refused.
// They run in sandbox, whose "local" policy lets a receiver on 127.0.0.1 be saved; production is
// "strict" only on a PostgreSQL server (KASSA_TEST_DATABASE=postgres), checked at the end, and the
// policy itself is pinned by test/unit/destinations.test.ts.
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import type { WebhookEndpoint } from '@polar-sh/sdk/models/components/webhookendpoint.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient, usePostgres } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, sdkServerURL, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectStatus, expectValidationError, graphqlData, graphqlFailure } from '../helpers/responses.ts';
import { datetime, nullableDatetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';
import { decryptSecret } from '../../src/webhooks/secrets.ts';

const t = useTestServer({ organizations: { org: 'sandbox', other: 'sandbox' } });

const environment = () => t.server.kassa.environments.sandbox.environment;
const prisma = () => environment().prisma;

const receiver = 'http://127.0.0.1:4100/hooks/kassa';
const hint = (secret: string) => `…${secret.slice(-4)}`;
const secretPattern = /^service_whs_[0-9A-Za-z]{20,}$/;

/** An endpoint made through the official client. */
function createEndpoint(owner: Org, events: string[] = ['order.paid'], url = receiver) {
  return owner.polar.webhooks.createWebhookEndpoint({ url, format: 'raw', events: events as WebhookEndpoint['events'] });
}

/** The organization's endpoint rows, deleted ones included. */
function storedEndpoints(organizationId: string) {
  return prisma().webhookEndpoint.findMany({ where: { organizationId }, orderBy: { createdAt: 'asc' } });
}

/** The endpoint row exactly as the database holds it, every column as text. */
async function rawRow(id: string): Promise<string> {
  const rows = await prisma().$queryRaw<Record<string, unknown>[]>`SELECT * FROM webhook_endpoints WHERE id = ${id}::uuid`;
  return JSON.stringify(rows[0], (_key, value) =>
    value instanceof Uint8Array ? [Buffer.from(value).toString('utf8'), Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')] : value,
  );
}

// ---------------------------------------------------------------------------------------------
// The official client
// ---------------------------------------------------------------------------------------------

describe('webhook endpoints through the official SDK', () => {
  it('creates an endpoint (201) and shows its generated secret in full, once', async () => {
    const created = await createEndpoint(t.org, ['order.created', 'order.paid']);
    expect(created).toEqual({
      id: uuid,
      createdAt: expect.any(Date),
      modifiedAt: expect.any(Date),
      url: receiver,
      format: 'raw',
      secret: expect.stringMatching(secretPattern),
      organizationId: t.org.organizationId,
      events: ['order.created', 'order.paid'],
    });
    const raw = expectStatus(await t.org.api('GET', `/webhooks/endpoints/${created.id}`), 200);
    expect(raw).toEqual({
      id: created.id,
      created_at: datetime,
      modified_at: nullableDatetime,
      url: receiver,
      format: 'raw',
      secret: hint(created.secret),
      organization_id: t.org.organizationId,
      events: ['order.created', 'order.paid'],
      enabled: true,
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
    });
  });

  it('shows only the hint of the secret on get, list and update', async () => {
    const created = await createEndpoint(t.org);
    const got = await t.org.polar.webhooks.getWebhookEndpoint({ id: created.id });
    expect(got.secret).toBe(hint(created.secret));
    const listed = await t.org.polar.webhooks.listWebhookEndpoints({ limit: 100 });
    const item = listed.result.items.find((e) => e.id === created.id);
    expect(item?.secret).toBe(hint(created.secret));
    expect(listed.result.items.every((e) => !secretPattern.test(e.secret))).toBe(true);
    const updated = await t.org.polar.webhooks.updateWebhookEndpoint({ id: created.id, webhookEndpointUpdate: { events: ['order.refunded'] } });
    expect(updated.secret).toBe(hint(created.secret));
  });

  it('stores the secret only encrypted: no column of the row holds it, yet Kassa can read it back to sign', async () => {
    const created = await createEndpoint(t.org);
    const row = await rawRow(created.id);
    expect(row).not.toContain(created.secret);
    expect(row).not.toContain(Buffer.from(created.secret).toString('base64'));
    expect(row).not.toContain(Buffer.from(created.secret).toString('hex'));
    const stored = await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.secretHint).toBe(hint(created.secret));
    expect(await decryptSecret(environment(), stored.secretCiphertext)).toBe(created.secret);
  });

  it('takes a secret of the caller of at least 32 characters, and refuses a shorter one with nothing created', async () => {
    const secret = 'a-secret-of-my-own-choosing-0123456789';
    const created = await t.org.polar.webhooks.createWebhookEndpoint({ url: receiver, format: 'raw', events: ['order.paid'], secret });
    expect(created.secret).toBe(secret);
    expect((await t.org.polar.webhooks.getWebhookEndpoint({ id: created.id })).secret).toBe(hint(secret));

    const before = (await storedEndpoints(t.org.organizationId)).length;
    const short = await t.org.api('POST', '/webhooks/endpoints', { url: receiver, format: 'raw', events: ['order.paid'], secret: 'x'.repeat(31) });
    expectValidationError(short, ['body', 'secret'], 'string_too_short');
    expect(await storedEndpoints(t.org.organizationId)).toHaveLength(before);
  });

  it('resets the secret: the new one is shown once, differs, and only its hint shows after', async () => {
    const created = await createEndpoint(t.org);
    const reset = await t.org.polar.webhooks.resetWebhookEndpointSecret({ id: created.id });
    expect(reset.secret).toMatch(secretPattern);
    expect(reset.secret).not.toBe(created.secret);
    expect(reset).toMatchObject({ id: created.id, url: receiver, events: ['order.paid'] });
    expect((await t.org.polar.webhooks.getWebhookEndpoint({ id: created.id })).secret).toBe(hint(reset.secret));
    const stored = await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(await decryptSecret(environment(), stored.secretCiphertext)).toBe(reset.secret);
    expect(await rawRow(created.id)).not.toContain(reset.secret);
  });

  it('updates url, format and events, and only those given', async () => {
    const created = await createEndpoint(t.org, ['order.paid']);
    const moved = await t.org.polar.webhooks.updateWebhookEndpoint({ id: created.id, webhookEndpointUpdate: { url: 'http://localhost:4200/elsewhere' } });
    expect(moved).toMatchObject({ url: 'http://localhost:4200/elsewhere', format: 'raw', events: ['order.paid'] });
    expect(moved.modifiedAt).toBeInstanceOf(Date);
    const chat = await t.org.polar.webhooks.updateWebhookEndpoint({
      id: created.id,
      webhookEndpointUpdate: { url: 'https://discord.com/api/webhooks/123/token', format: 'discord', events: ['order.paid', 'subscription.canceled'] },
    });
    expect(chat).toMatchObject({ url: 'https://discord.com/api/webhooks/123/token', format: 'discord', events: ['order.paid', 'subscription.canceled'] });
    expect(await t.org.polar.webhooks.getWebhookEndpoint({ id: created.id })).toEqual(chat);
    const unchanged = expectStatus(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { url: null, events: null }), 200);
    expect(unchanged).toMatchObject({ url: chat.url, format: 'discord', events: chat.events, secret: hint(created.secret) });
  });

  it('lists the organization’s live endpoints, newest first, by page, and filters by organization_id', async () => {
    const fresh = await newOrganization(t.server, 'sandbox');
    const a = await createEndpoint(fresh, ['order.paid']);
    const b = await createEndpoint(fresh, ['order.created']);
    const c = await createEndpoint(fresh, ['refund.created']);
    await fresh.polar.webhooks.deleteWebhookEndpoint({ id: b.id });
    const all = await fresh.polar.webhooks.listWebhookEndpoints({ organizationId: fresh.organizationId });
    expect(all.result.items.map((e) => e.id)).toEqual([c.id, a.id]);
    expect(all.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const page2 = expectStatus(await fresh.api('GET', '/webhooks/endpoints?limit=1&page=2'), 200);
    expect(page2.items.map((e: { id: string }) => e.id)).toEqual([a.id]);
    expect(page2.pagination).toEqual({ total_count: 2, max_page: 2 });
    const foreign = expectStatus(await fresh.api('GET', `/webhooks/endpoints?organization_id=${t.org.organizationId}`), 200);
    expect(foreign).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });

  it('deletes an endpoint (204): it is gone from get and list, and deleting again is 404', async () => {
    const created = await createEndpoint(t.org);
    await t.org.polar.webhooks.deleteWebhookEndpoint({ id: created.id });
    const error = await rejectionOf(t.org.polar.webhooks.getWebhookEndpoint({ id: created.id }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    const listed = await t.org.polar.webhooks.listWebhookEndpoints({ limit: 100 });
    expect(listed.result.items.map((e) => e.id)).not.toContain(created.id);
    expect(await rejectionOf(t.org.polar.webhooks.deleteWebhookEndpoint({ id: created.id }))).toBeInstanceOf(ResourceNotFound);
    expectErrorBody(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { url: receiver }), 404, 'ResourceNotFound');
    expectErrorBody(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}/secret`), 404, 'ResourceNotFound');
    const stored = await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.deletedAt).toBeInstanceOf(Date);
  });

  it('gives up the events still waiting for a deleted endpoint, and keeps those already delivered', async () => {
    const created = await createEndpoint(t.org, ['customer.created']);
    // Rows the delivery worker writes when it fans an event out (its own tests drive it end to end).
    const event = await prisma().event.create({ data: { organizationId: t.org.organizationId, type: 'customer.created', data: {}, createdAt: new Date() } });
    const waiting = { organizationId: t.org.organizationId, endpointId: created.id, type: 'customer.created', sequence: event.sequence, payload: '{}' };
    const pending = await prisma().webhookEvent.create({ data: { ...waiting, eventId: event.id, nextAttemptAt: new Date() } });
    const done = await prisma().webhookEvent.create({ data: { ...waiting, eventId: randomUUID(), succeeded: true } });
    expectStatus(await t.org.api('DELETE', `/webhooks/endpoints/${created.id}`), 204);
    expect(await prisma().webhookEvent.findUniqueOrThrow({ where: { id: pending.id } })).toMatchObject({ succeeded: false, nextAttemptAt: null });
    expect(await prisma().webhookEvent.findUniqueOrThrow({ where: { id: done.id } })).toMatchObject({ succeeded: true });
  });

  it('accepts an empty event list, subscribes to each type once, and takes the types the client offers that Kassa does not send yet', async () => {
    const none = await createEndpoint(t.org, []);
    expect(none.events).toEqual([]);
    const twice = await createEndpoint(t.org, ['order.paid', 'order.paid', 'customer.created']);
    expect(twice.events).toEqual(['order.paid', 'customer.created']);
    const future = await createEndpoint(t.org, ['product.created', 'benefit_grant.cycled', 'refund.updated', 'product.updated']);
    expect(future.events).toHaveLength(4);
  });

  it('takes discord and slack endpoints at those services’ webhook URLs', async () => {
    const discord = await t.org.polar.webhooks.createWebhookEndpoint({ url: 'https://discord.com/api/webhooks/1/abc', format: 'discord', events: ['order.paid'] });
    expect(discord.format).toBe('discord');
    const legacy = await t.org.polar.webhooks.createWebhookEndpoint({ url: 'https://discordapp.com/api/webhooks/1/abc', format: 'discord', events: ['order.paid'] });
    expect(legacy.format).toBe('discord');
    const slack = await t.org.polar.webhooks.createWebhookEndpoint({ url: 'https://hooks.slack.com/services/T0/B0/x', format: 'slack', events: ['order.paid'] });
    expect(slack.format).toBe('slack');
  });
});

// ---------------------------------------------------------------------------------------------
// Bad input: 422 naming the field, nothing saved or changed
// ---------------------------------------------------------------------------------------------

describe('bad input to webhook endpoints', () => {
  const body = (overrides: Record<string, unknown>) => ({ url: receiver, format: 'raw', events: ['order.paid'], ...overrides });

  const refusedUrls: [string, RegExp][] = [
    ['http://169.254.169.254/latest/meta-data/', /metadata/],
    ['http://[fd00:ec2::254]/', /metadata/],
    ['http://[::ffff:169.254.169.254]/', /metadata/],
    ['http://10.0.0.7/hook', /private or reserved/],
    ['http://192.168.1.1/hook', /private or reserved/],
    ['ftp://example.com/hook', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['https://user:password@example.com/hook', /credentials/],
    ['https://token@example.com/hook', /credentials/],
    ['example.com/hook', /absolute URL/],
  ];
  for (const [url, reason] of refusedUrls) {
    it(`refuses ${url} at url with the reason, creating nothing`, async () => {
      const before = await storedEndpoints(t.org.organizationId);
      const issue = expectValidationError(await t.org.api('POST', '/webhooks/endpoints', body({ url })), ['body', 'url']);
      expect(issue.msg).toMatch(reason);
      expect(await storedEndpoints(t.org.organizationId)).toHaveLength(before.length);
    });
  }

  it('refuses an unknown event type at its index, through the SDK too', async () => {
    const before = await storedEndpoints(t.org.organizationId);
    const response = await t.org.api('POST', '/webhooks/endpoints', body({ events: ['order.paid', 'order.shipped'] }));
    const issue = expectValidationError(response, ['body', 'events', 1], 'enum');
    expect(issue.msg).toContain('order.shipped');
    // The client library checks its own enum before sending; through GraphQL the schema's enum does.
    const failure = await graphqlFailure(
      t.org.gql('mutation ($input: WebhookEndpointCreateInput!) { core { webhookEndpointCreate(input: $input) { id } } }', {
        input: { url: receiver, format: 'raw', events: ['ORDER_PAID'] },
      }),
      'BAD_USER_INPUT',
    );
    expect(failure.extensions.issues).toEqual([expect.objectContaining({ loc: ['input'] })]);
    expect(failure.message).toContain('at "input.events[0]"; Value "ORDER_PAID" does not exist in "WebhookEventType" enum.');
    expect(await storedEndpoints(t.org.organizationId)).toHaveLength(before.length);
  });

  it('refuses an unknown format and extra fields', async () => {
    expectValidationError(await t.org.api('POST', '/webhooks/endpoints', body({ format: 'xml' })), ['body', 'format']);
    expectValidationError(await t.org.api('POST', '/webhooks/endpoints', body({ headers: { 'x-a': 'b' } })), ['body', 'headers'], 'extra_forbidden');
    expectValidationError(await t.org.api('POST', '/webhooks/endpoints', { format: 'raw', events: [] }), ['body', 'url'], 'missing');
  });

  const mismatched: [string, string][] = [
    ['discord', 'https://example.com/api/webhooks/1/abc'],
    ['discord', 'https://discord.com/channels/1'],
    ['discord', 'http://discord.com/api/webhooks/1/abc'],
    ['discord', 'https://discord.com.example.net/api/webhooks/1/abc'],
    ['slack', 'https://hooks.slack.com.example.net/services/x'],
    ['slack', 'https://example.com/hooks.slack.com/services/x'],
    ['slack', receiver],
  ];
  for (const [format, url] of mismatched) {
    it(`refuses a ${format} endpoint at ${url}`, async () => {
      const before = await storedEndpoints(t.org.organizationId);
      const issue = expectValidationError(await t.org.api('POST', '/webhooks/endpoints', body({ format, url })), ['body', 'url'], 'url_format_mismatch');
      expect(issue.msg).toContain(format);
      expect(await storedEndpoints(t.org.organizationId)).toHaveLength(before.length);
    });
  }

  it('refuses an update to a refused URL, a chat format the URL does not fit, an unknown event or a short secret, changing nothing', async () => {
    const created = await createEndpoint(t.org);
    const rowBefore = await rawRow(created.id);
    expectValidationError(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { url: 'http://169.254.169.254/' }), ['body', 'url']);
    expectValidationError(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { format: 'slack' }), ['body', 'format'], 'url_format_mismatch');
    expectValidationError(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { events: ['nope'] }), ['body', 'events', 0], 'enum');
    expectValidationError(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { secret: 'short' }), ['body', 'secret'], 'string_too_short');
    const several = await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { url: 'ftp://example.com/', events: ['order.paid', 'bad'] });
    expectValidationError(several, ['body', 'url']);
    expectValidationError(several, ['body', 'events', 1]);
    expect(await rawRow(created.id)).toBe(rowBefore);
  });

  it('refuses to create an endpoint for another organization with an organization token', async () => {
    const before = await storedEndpoints(t.other.organizationId);
    expectValidationError(await t.org.api('POST', '/webhooks/endpoints', body({ organization_id: t.other.organizationId })), ['body', 'organization_id']);
    expect(await storedEndpoints(t.other.organizationId)).toHaveLength(before.length);
  });

  it('validates page and limit of the list', async () => {
    expectValidationError(await t.org.api('GET', '/webhooks/endpoints?limit=101'), ['query', 'limit']);
    expectValidationError(await t.org.api('GET', '/webhooks/endpoints?page=0'), ['query', 'page']);
  });
});

// ---------------------------------------------------------------------------------------------
// Enabling and disabling
// ---------------------------------------------------------------------------------------------

describe('enabling and disabling an endpoint', () => {
  it('disables by hand without a reason, and re-enabling clears why and since when Kassa had disabled it', async () => {
    const created = await createEndpoint(t.org);
    const off = expectStatus(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { enabled: false }), 200);
    expect(off).toMatchObject({ enabled: false, disabled_at: null, disabled_reason: null });

    // What the delivery worker writes when the endpoint has failed for too long (its own tests drive that).
    const failedAt = new Date('2026-11-20T10:00:00Z');
    await prisma().webhookEndpoint.update({
      where: { id: created.id },
      data: { enabled: false, disabledAt: new Date('2026-11-23T10:00:00Z'), disabledReason: 'Failing since 2026-11-20', failingSince: failedAt },
    });
    const seen = await graphqlData(t.org.gql('query ($id: UUID!) { core { webhookEndpoint(id: $id) { enabled disabledAt disabledReason failingSince } } }', { id: created.id }));
    expect(seen.core.webhookEndpoint).toEqual({ enabled: false, disabledAt: '2026-11-23T10:00:00.000Z', disabledReason: 'Failing since 2026-11-20', failingSince: failedAt.toISOString() });

    const on = expectStatus(await t.org.api('PATCH', `/webhooks/endpoints/${created.id}`, { enabled: true }), 200);
    expect(on).toMatchObject({ enabled: true, disabled_at: null, disabled_reason: null, failing_since: null });
  });
});

// ---------------------------------------------------------------------------------------------
// GraphQL
// ---------------------------------------------------------------------------------------------

describe('webhook endpoints through GraphQL', () => {
  const fields = 'id url format secret organizationId events enabled';

  it('creates with the secret in full once, then shows the hint on the endpoint and in the list', async () => {
    const data = await graphqlData(
      t.org.gql(`mutation ($input: WebhookEndpointCreateInput!) { core { webhookEndpointCreate(input: $input) { __typename ${fields} } } }`, {
        input: { url: receiver, format: 'raw', events: ['subscription_active'] },
      }),
    );
    const created = data.core.webhookEndpointCreate;
    expect(created).toMatchObject({ __typename: 'WebhookEndpointWithSecret', organizationId: t.org.organizationId, events: ['subscription_active'], enabled: true });
    expect(created.secret).toMatch(secretPattern);
    const read = await graphqlData(
      t.org.gql(`query ($id: UUID!) { core { webhookEndpoint(id: $id) { __typename secret } webhookEndpoints(limit: 100) { items { id secret } } } }`, { id: created.id }),
    );
    expect(read.core.webhookEndpoint).toEqual({ __typename: 'WebhookEndpoint', secret: hint(created.secret) });
    expect(read.core.webhookEndpoints.items).toContainEqual({ id: created.id, secret: hint(created.secret) });

    const rotated = await graphqlData(t.org.gql(`mutation ($id: UUID!) { core { webhookEndpointRotateSecret(id: $id) { secret } } }`, { id: created.id }));
    expect(rotated.core.webhookEndpointRotateSecret.secret).toMatch(secretPattern);
    // The deprecated first name of the same mutation still rotates the secret.
    const reset = await graphqlData(t.org.gql(`mutation ($id: UUID!) { core { webhookEndpointResetSecret(id: $id) { secret } } }`, { id: created.id }));
    expect(reset.core.webhookEndpointResetSecret.secret).toMatch(secretPattern);
    expect(reset.core.webhookEndpointResetSecret.secret).not.toBe(rotated.core.webhookEndpointRotateSecret.secret);
    const deleted = await graphqlData(t.org.gql(`mutation ($id: UUID!) { core { webhookEndpointDelete(id: $id) } }`, { id: created.id }));
    expect(deleted.core.webhookEndpointDelete).toBe(true);
    await graphqlFailure(t.org.gql(`mutation ($id: UUID!) { core { webhookEndpointDelete(id: $id) } }`, { id: created.id }), 'RESOURCE_NOT_FOUND');
  });

  it('lets a signed-in member create for their organization, naming it', async () => {
    const signIn = await graphqlData(
      t.org.publicGql('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', { email: t.org.userEmail, password: t.org.userPassword }),
    );
    const user = graphqlClient(t.server.base('sandbox'), signIn.signIn.token);
    const mutation = `mutation ($input: WebhookEndpointCreateInput!) { core { webhookEndpointCreate(input: $input) { organizationId } } }`;
    const unnamed = await graphqlFailure(user(mutation, { input: { url: receiver, format: 'raw', events: [] } }), 'BAD_USER_INPUT');
    expect(unnamed.extensions.issues[0].loc).toEqual(['input', 'organizationId']);
    await graphqlFailure(user(mutation, { input: { url: receiver, format: 'raw', events: [], organizationId: t.other.organizationId } }), 'BAD_USER_INPUT');
    const named = await graphqlData(user(mutation, { input: { url: receiver, format: 'raw', events: [], organizationId: t.org.organizationId } }));
    expect(named.core.webhookEndpointCreate.organizationId).toBe(t.org.organizationId);
  });
});

// ---------------------------------------------------------------------------------------------
// The attacker's side
// ---------------------------------------------------------------------------------------------

describe('who may reach an endpoint', () => {
  let victim: WebhookEndpoint;
  beforeAll(async () => {
    victim = await createEndpoint(t.org, ['order.paid']);
  });

  it('answers another organization’s endpoint as not found, exactly like an unknown id, on get, update, delete and reset', async () => {
    const rowBefore = await rawRow(victim.id);
    const unknown = randomUUID();
    for (const [method, path, payload] of [
      ['GET', '', undefined],
      ['PATCH', '', { url: 'http://127.0.0.1:6666/stolen' }],
      ['DELETE', '', undefined],
      ['PATCH', '/secret', undefined],
    ] as const) {
      const foreign = await t.other.api(method, `/webhooks/endpoints/${victim.id}${path}`, payload);
      const missing = await t.other.api(method, `/webhooks/endpoints/${unknown}${path}`, payload);
      expectErrorBody(foreign, 404, 'ResourceNotFound');
      expect(foreign.body).toEqual(missing.body);
    }
    expect(await rejectionOf(t.other.polar.webhooks.getWebhookEndpoint({ id: victim.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.other.polar.webhooks.resetWebhookEndpointSecret({ id: victim.id }))).toBeInstanceOf(ResourceNotFound);
    await graphqlFailure(t.other.gql('query ($id: UUID!) { core { webhookEndpoint(id: $id) { id } } }', { id: victim.id }), 'RESOURCE_NOT_FOUND');
    expect(await rawRow(victim.id)).toBe(rowBefore);
  });

  it('never lists another organization’s endpoints', async () => {
    const listed = await t.other.polar.webhooks.listWebhookEndpoints({ limit: 100 });
    expect(listed.result.items.every((e) => e.organizationId === t.other.organizationId)).toBe(true);
    const filtered = await t.other.polar.webhooks.listWebhookEndpoints({ organizationId: [t.org.organizationId, t.other.organizationId], limit: 100 });
    expect(filtered.result.items.map((e) => e.id)).not.toContain(victim.id);
  });

  it('refuses a token without a webhooks scope (403), and a read-only token any change', async () => {
    const rowBefore = await rawRow(victim.id);
    const ordersOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['orders:read']));
    for (const [method, path, payload] of [
      ['GET', '/webhooks/endpoints', undefined],
      ['GET', `/webhooks/endpoints/${victim.id}`, undefined],
      ['POST', '/webhooks/endpoints', { url: receiver, format: 'raw', events: [] }],
      ['PATCH', `/webhooks/endpoints/${victim.id}`, { url: 'http://127.0.0.1:6666/stolen' }],
      ['PATCH', `/webhooks/endpoints/${victim.id}/secret`, undefined],
      ['DELETE', `/webhooks/endpoints/${victim.id}`, undefined],
    ] as const) {
      expectErrorBody(await ordersOnly(method, path, payload), 403, 'NotPermitted');
    }
    const readOnlyToken = await tokenWithScopes(t.server, t.org, ['webhooks:read']);
    const readOnly = restClient(t.server.base('sandbox'), readOnlyToken);
    expectStatus(await readOnly('GET', `/webhooks/endpoints/${victim.id}`), 200);
    expectErrorBody(await readOnly('PATCH', `/webhooks/endpoints/${victim.id}/secret`), 403, 'NotPermitted');
    expectErrorBody(await readOnly('DELETE', `/webhooks/endpoints/${victim.id}`), 403, 'NotPermitted');
    const sdkError = await rejectionOf(
      new Polar({ accessToken: readOnlyToken, serverURL: sdkServerURL(t.server, 'sandbox') }).webhooks.createWebhookEndpoint({ url: receiver, format: 'raw', events: [] }),
    );
    expect(sdkError).toBeInstanceOf(SDKError);
    expect((sdkError as SDKError).statusCode).toBe(403);
    expect(await rawRow(victim.id)).toBe(rowBefore);
  });

  it('refuses a customer token (403) and no token (401)', async () => {
    const customer = expectStatus(await t.org.api('POST', '/customers/', { email: `buyer-${randomUUID()}@example.com` }), 201);
    const session = await t.org.polar.customerSessions.create({ customerId: customer.id });
    const asCustomer = restClient(t.server.base('sandbox'), session.token);
    expectErrorBody(await asCustomer('GET', '/webhooks/endpoints'), 403, 'NotPermitted');
    expectErrorBody(await asCustomer('GET', `/webhooks/endpoints/${victim.id}`), 403, 'NotPermitted');
    expectErrorBody(await asCustomer('POST', '/webhooks/endpoints', { url: receiver, format: 'raw', events: [] }), 403, 'NotPermitted');
    await graphqlFailure(graphqlClient(t.server.base('sandbox'), session.token)('{ core { webhookEndpoints { items { id } } } }'), 'NOT_PERMITTED');
    expectErrorBody(await t.org.publicApi('GET', '/webhooks/endpoints'), 401, 'Unauthorized');
    expectErrorBody(await t.org.publicApi('DELETE', `/webhooks/endpoints/${victim.id}`), 401, 'Unauthorized');
    expect(await t.org.polar.webhooks.getWebhookEndpoint({ id: victim.id })).toMatchObject({ id: victim.id });
  });

  it('does not let a production token reach a sandbox endpoint', async () => {
    const production = await newOrganization(t.server);
    const response = await production.api('GET', `/webhooks/endpoints/${victim.id}`);
    expectErrorBody(response, 404, 'ResourceNotFound');
  });
});

describe('the client library’s validation error', () => {
  it('parses a refused URL as HTTPValidationError', async () => {
    const error = await rejectionOf(t.org.polar.webhooks.createWebhookEndpoint({ url: 'http://169.254.169.254/', format: 'raw', events: ['order.paid'] }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'url'] });
  });
});

describe('production', () => {
  const strict = usePostgres;
  it(strict ? 'on PostgreSQL takes only https to public hosts' : 'embedded takes http to loopback, as sandbox does', async () => {
    const production = await newOrganization(t.server);
    const loopback = await production.api('POST', '/webhooks/endpoints', { url: receiver, format: 'raw', events: ['order.paid'] });
    if (strict) {
      expect(expectValidationError(loopback, ['body', 'url']).msg).toBe('The webhook URL must use https.');
      const https = await production.api('POST', '/webhooks/endpoints', { url: 'https://127.0.0.1/hook', format: 'raw', events: ['order.paid'] });
      expect(expectValidationError(https, ['body', 'url']).msg).toBe('The webhook URL must not point to a private or reserved address.');
      const named = await production.api('POST', '/webhooks/endpoints', { url: 'https://localhost/hook', format: 'raw', events: ['order.paid'] });
      expect(expectValidationError(named, ['body', 'url']).msg).toBe('The webhook URL must name a public host.');
      const prod = t.server.kassa.environments.production.environment.prisma;
      expect(await prod.webhookEndpoint.count({ where: { organizationId: production.organizationId } })).toBe(0);
    } else {
      expectStatus(loopback, 201);
    }
    expectStatus(await production.api('POST', '/webhooks/endpoints', { url: 'https://hooks.example.com/kassa', format: 'raw', events: ['order.paid'] }), 201);
  });
});

// License keys end to end: issued for a benefit grant by the license-keys service (as the grants
// code does, in its transaction), then read, updated and checked over REST and through the official
// client, @polar-sh/sdk, whose schemas parse every response, including the customer portal's
// endpoints that need no token. Benefits and customers are made through the REST API; the grant row
// a key hangs off is written in the issuing transaction, as the grants code writes it.
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/context.ts';
import type { Db } from '../../src/db/client.ts';
import { createOrganization, issueAccessToken } from '../../src/modules/organizations/service.ts';
import { issueLicenseKey, revokeLicenseKey, type LicenseKeyBenefitProperties } from '../../src/modules/license-keys/service.ts';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { expectGraphQLError, expectStatus, graphqlData } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ resetClockAfterEach: true });

const environment = () => t.server.kassa.environments.production.environment;
const prisma = () => environment().prisma;

/** The customer's software: no token at all. */
const anonymous = () => new Polar({ serverURL: t.server.url });
const anonymousApi = () => restClient(t.server.base());

async function newCustomer(org: Org, email = `buyer-${randomUUID().slice(0, 8)}@example.com`): Promise<string> {
  return expectStatus(await org.api('POST', '/customers/', { email, name: 'Ada Buyer' }), 201).id;
}

async function newBenefit(org: Org, properties: Record<string, unknown>): Promise<string> {
  const body = expectStatus(await org.api('POST', '/benefits/', { type: 'license_keys', description: 'Desktop app license', properties }), 201);
  return body.id;
}

const now = () => t.server.clock.now ?? new Date();

/** Issues the key of a (new or given) grant of the benefit to the customer, as the grants code does. */
async function issueKey(org: Org, benefitId: string, customerId: string, grantId: string = randomUUID()) {
  return prisma().$transaction(async (tx) => {
    const db = tx as Db;
    const benefit = await db.benefit.findUniqueOrThrow({ where: { id: benefitId } });
    await db.benefitGrant.upsert({
      where: { id: grantId },
      create: { id: grantId, organizationId: org.organizationId, benefitId, customerId, scopeId: randomUUID(), grantedAt: now() },
      update: {},
    });
    const ctx = systemContext(environment(), db, org.organizationId, now, 'license-keys-test');
    const issued = await issueLicenseKey(ctx, db, { id: grantId, organizationId: org.organizationId, customerId, benefitId }, benefit.properties as LicenseKeyBenefitProperties);
    return { ...issued, grantId };
  });
}

async function revoke(grantId: string) {
  await prisma().$transaction((tx) => revokeLicenseKey(tx as Db, grantId));
}

const keyPattern = /^[0-9A-F]{8}(-[0-9A-F]{8}){4}$/;

const licenseKeyWireKeys = [
  'benefit_id',
  'created_at',
  'customer',
  'customer_id',
  'display_key',
  'expires_at',
  'id',
  'key',
  'last_validated_at',
  'limit_activations',
  'limit_usage',
  'modified_at',
  'organization_id',
  'status',
  'usage',
  'validations',
];
const activationWireKeys = ['created_at', 'id', 'label', 'license_key_id', 'meta', 'modified_at'];

/** The one answer for every key that does not work here, whatever the reason. */
const keyNotFound = { error: 'ResourceNotFound', detail: 'License key not found.' };

// ---------------------------------------------------------------------------------------------

describe('issuing a license key for a grant', () => {
  let org: Org;
  let customerId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server);
    customerId = await newCustomer(org);
  });

  it('makes a key of 160 random bits after the uppercased prefix, with the benefit’s limits', async () => {
    const benefitId = await newBenefit(org, { prefix: 'kassa', activations: { limit: 3, enable_customer_admin: true }, limit_usage: 100 });
    const issued = await issueKey(org, benefitId, customerId);
    expect(issued.key).toMatch(/^KASSA-[0-9A-F]{8}(-[0-9A-F]{8}){4}$/);
    expect(issued.displayKey).toBe(`****-${issued.key.slice(-8)}`);
    const stored = await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } });
    expect(stored).toMatchObject({
      organizationId: org.organizationId,
      customerId,
      benefitId,
      grantId: issued.grantId,
      status: 'granted',
      limitActivations: 3,
      limitUsage: 100,
      usage: 0,
      validations: 0,
      expiresAt: null,
    });
  });

  it('makes just the random part without a prefix, and a different key every time', async () => {
    const benefitId = await newBenefit(org, {});
    const keys = await Promise.all([1, 2, 3].map(() => issueKey(org, benefitId, customerId)));
    for (const { key } of keys) expect(key).toMatch(keyPattern);
    expect(new Set(keys.map((k) => k.key)).size).toBe(3);
    const stored = await prisma().licenseKey.findUniqueOrThrow({ where: { id: keys[0].id } });
    expect(stored).toMatchObject({ limitActivations: null, limitUsage: null, expiresAt: null });
  });

  it('is idempotent per grant: issuing again returns the same key, with the terms the organization set since', async () => {
    const benefitId = await newBenefit(org, { prefix: 'idem', limit_usage: 100 });
    const first = await issueKey(org, benefitId, customerId);
    expectStatus(await org.api('PATCH', `/license-keys/${first.id}`, { limit_usage: 7 }), 200);
    const again = await issueKey(org, benefitId, customerId, first.grantId);
    expect(again).toEqual(first);
    expect(await prisma().licenseKey.count({ where: { grantId: first.grantId } })).toBe(1);
    expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: first.id } })).limitUsage).toBe(7);
  });

  it('dates the expiry from the grant: calendar months end on the month’s last day, days are 24 hours', async () => {
    t.server.clock.now = new Date('2025-01-31T10:00:00.000Z');
    try {
      const monthly = await issueKey(org, await newBenefit(org, { expires: { ttl: 1, timeframe: 'month' } }), customerId);
      const yearly = await issueKey(org, await newBenefit(org, { expires: { ttl: 2, timeframe: 'year' } }), customerId);
      const daily = await issueKey(org, await newBenefit(org, { expires: { ttl: 10, timeframe: 'day' } }), customerId);
      const expiry = async (id: string) => (await prisma().licenseKey.findUniqueOrThrow({ where: { id } })).expiresAt?.toISOString();
      expect(await expiry(monthly.id)).toBe('2025-02-28T10:00:00.000Z');
      expect(await expiry(yearly.id)).toBe('2027-01-31T10:00:00.000Z');
      expect(await expiry(daily.id)).toBe('2025-02-10T10:00:00.000Z');
    } finally {
      t.server.clock.now = null;
    }
  });

  it('revoking the grant revokes the key; granting again restores the same key with a fresh expiry', async () => {
    t.server.clock.now = new Date('2025-03-01T00:00:00.000Z');
    try {
      const benefitId = await newBenefit(org, { expires: { ttl: 1, timeframe: 'month' } });
      const issued = await issueKey(org, benefitId, customerId);
      const kept = await issueKey(org, benefitId, customerId);
      await revoke(issued.grantId);
      expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).status).toBe('revoked');
      expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: kept.id } })).status).toBe('granted');

      t.server.clock.now = new Date('2025-06-15T00:00:00.000Z');
      const regranted = await issueKey(org, benefitId, customerId, issued.grantId);
      expect(regranted.key).toBe(issued.key);
      const stored = await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } });
      expect(stored.status).toBe('granted');
      expect(stored.expiresAt?.toISOString()).toBe('2025-07-15T00:00:00.000Z');
    } finally {
      t.server.clock.now = null;
    }
  });
});

describe('the Core API through the official SDK', () => {
  let org: Org;
  let customerId: string;
  let benefitId: string;
  let issued: Awaited<ReturnType<typeof issueKey>>;
  beforeAll(async () => {
    org = await newOrganization(t.server);
    customerId = await newCustomer(org, 'grace@example.com');
    benefitId = await newBenefit(org, { prefix: 'app', activations: { limit: 2, enable_customer_admin: false }, limit_usage: 50 });
    issued = await issueKey(org, benefitId, customerId);
  });

  it('gets a key with its customer and activations, every field the client requires present', async () => {
    const key = await org.polar.licenseKeys.get({ id: issued.id });
    expect(key).toMatchObject({
      id: issued.id,
      organizationId: org.organizationId,
      customerId,
      benefitId,
      key: issued.key,
      displayKey: `****-${issued.key.slice(-8)}`,
      status: 'granted',
      limitActivations: 2,
      usage: 0,
      limitUsage: 50,
      validations: 0,
      lastValidatedAt: null,
      expiresAt: null,
      activations: [],
    });
    expect(key.createdAt).toBeInstanceOf(Date);
    expect(key.customer).toMatchObject({ id: customerId, email: 'grace@example.com', name: 'Ada Buyer', organizationId: org.organizationId });

    const raw = expectStatus(await org.api('GET', `/license-keys/${issued.id}`), 200);
    expect(Object.keys(raw).sort()).toEqual([...licenseKeyWireKeys, 'activations'].sort());
    expect(raw.created_at).toEqual(datetime);
  });

  it('lists keys oldest first, filtered by benefit and organization, with the list envelope', async () => {
    const second = await issueKey(org, benefitId, customerId);
    const otherBenefit = await newBenefit(org, {});
    await issueKey(org, otherBenefit, customerId);

    const page = await org.polar.licenseKeys.list({ benefitId, organizationId: org.organizationId });
    expect(page.result.items.map((k) => k.id)).toEqual([issued.id, second.id]);
    expect(page.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });

    const firstPage = expectStatus(await org.api('GET', `/license-keys/?benefit_id=${benefitId}&limit=1&page=2`), 200);
    expect(firstPage.items.map((k: { id: string }) => k.id)).toEqual([second.id]);
    expect(firstPage.pagination).toEqual({ total_count: 2, max_page: 2 });
    expect(Object.keys(firstPage.items[0]).sort()).toEqual(licenseKeyWireKeys);

    const all = expectStatus(await org.api('GET', '/license-keys/'), 200);
    expect(all.pagination.total_count).toBe(3);
    expectStatus(await org.api('GET', '/license-keys/?limit=101'), 422);
  });

  it('updates the limits, usage, expiry and status of a key', async () => {
    const updated = await org.polar.licenseKeys.update({
      id: issued.id,
      licenseKeyUpdate: { limitActivations: 5, limitUsage: 80, usage: 7, expiresAt: new Date('2030-01-01T00:00:00Z') },
    });
    expect(updated).toMatchObject({ limitActivations: 5, limitUsage: 80, usage: 7, status: 'granted' });
    expect(updated.expiresAt?.toISOString()).toBe('2030-01-01T00:00:00.000Z');

    const cleared = expectStatus(await org.api('PATCH', `/license-keys/${issued.id}`, { limit_usage: null, expires_at: null }), 200);
    expect(cleared).toMatchObject({ limit_usage: null, expires_at: null, limit_activations: 5, usage: 7 });
    expect(Object.keys(cleared).sort()).toEqual(licenseKeyWireKeys);

    const disabled = await org.polar.licenseKeys.update({ id: issued.id, licenseKeyUpdate: { status: 'disabled' } });
    expect(disabled.status).toBe('disabled');
    // The client always sends usage (0 when not given), as it does against the original service.
    expect(disabled.usage).toBe(0);
    await org.polar.licenseKeys.update({ id: issued.id, licenseKeyUpdate: { status: 'granted', limitActivations: 2, limitUsage: 50 } });
  });

  it('refuses out-of-range limits, negative usage and unknown fields with 422', async () => {
    for (const body of [{ limit_activations: 0 }, { limit_activations: 51 }, { limit_usage: 0 }, { usage: -1 }, { status: 'lost' }, { uses: 1 }]) {
      const response = await org.api('PATCH', `/license-keys/${issued.id}`, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.detail[0].loc[0]).toBe('body');
    }
    const error = await rejectionOf(org.polar.licenseKeys.update({ id: issued.id, licenseKeyUpdate: { limitActivations: 0 } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0].loc).toEqual(['body', 'limit_activations']);
  });

  it('answers an unknown key with 404 ResourceNotFound, and a malformed id with 422', async () => {
    const error = await rejectionOf(org.polar.licenseKeys.get({ id: randomUUID() }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    expect(expectStatus(await org.api('GET', `/license-keys/${randomUUID()}`), 404)).toEqual(keyNotFound);
    expectStatus(await org.api('GET', '/license-keys/not-a-uuid'), 422);
  });

  it('validates, activates, reads the activation and deactivates with the organization token', async () => {
    const validated = await org.polar.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId });
    expect(validated).toMatchObject({ id: issued.id, validations: 1, status: 'granted' });
    expect(validated.lastValidatedAt).toBeInstanceOf(Date);

    const activation = await org.polar.licenseKeys.activate({ key: issued.key, organizationId: org.organizationId, label: 'Build server', meta: { cores: 16 } });
    expect(activation).toMatchObject({ licenseKeyId: issued.id, label: 'Build server', meta: { cores: 16 } });
    expect(activation.licenseKey.id).toBe(issued.id);

    const read = await org.polar.licenseKeys.getActivation({ id: issued.id, activationId: activation.id });
    expect(read).toMatchObject({ id: activation.id, label: 'Build server', licenseKey: { id: issued.id, key: issued.key } });
    const raw = expectStatus(await org.api('GET', `/license-keys/${issued.id}/activations/${activation.id}`), 200);
    expect(Object.keys(raw).sort()).toEqual([...activationWireKeys, 'license_key'].sort());
    expect(Object.keys(raw.license_key).sort()).toEqual(licenseKeyWireKeys);

    const key = await org.polar.licenseKeys.get({ id: issued.id });
    expect(key.activations.map((a) => a.id)).toEqual([activation.id]);

    await org.polar.licenseKeys.deactivate({ key: issued.key, organizationId: org.organizationId, activationId: activation.id });
    const gone = await rejectionOf(org.polar.licenseKeys.getActivation({ id: issued.id, activationId: activation.id }));
    expect(gone).toBeInstanceOf(ResourceNotFound);
    expect((gone as ResourceNotFound).detail).toBe('License key activation not found.');
  });

  it('needs license_keys scopes: read for reading, write for changing and checking', async () => {
    const { token } = await issueAccessToken(prisma(), t.server.config, org.organizationId, { comment: 'reader', scopes: ['license_keys:read'] }, new Date());
    const reader = restClient(t.server.base(), token);
    expectStatus(await reader('GET', `/license-keys/${issued.id}`), 200);
    expectStatus(await reader('GET', '/license-keys/'), 200);
    expect(expectStatus(await reader('PATCH', `/license-keys/${issued.id}`, { usage: 1 }), 403).error).toBe('NotPermitted');
    expectStatus(await reader('POST', '/license-keys/validate', { key: issued.key, organization_id: org.organizationId }), 403);
    expectStatus(await reader('POST', '/license-keys/activate', { key: issued.key, organization_id: org.organizationId, label: 'x' }), 403);

    const { token: unrelated } = await issueAccessToken(prisma(), t.server.config, org.organizationId, { comment: 'products', scopes: ['products:read'] }, new Date());
    expectStatus(await restClient(t.server.base(), unrelated)('GET', `/license-keys/${issued.id}`), 403);
    expectStatus(await anonymousApi()('GET', `/license-keys/${issued.id}`), 401);
    expectStatus(await anonymousApi()('POST', '/license-keys/validate', { key: issued.key, organization_id: org.organizationId }), 401);
  });
});

describe('the customer portal endpoints, without a token', () => {
  let org: Org;
  let customerId: string;
  let benefitId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server);
    customerId = await newCustomer(org);
    benefitId = await newBenefit(org, { prefix: 'desk', activations: { limit: 2, enable_customer_admin: true }, limit_usage: 10 });
  });

  it('validates a key: counts the validation and returns the key with its customer', async () => {
    const issued = await issueKey(org, benefitId, customerId);
    const client = anonymous();
    t.server.clock.now = new Date('2025-05-05T12:00:00.000Z');
    try {
      const first = await client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId });
      expect(first).toMatchObject({ id: issued.id, key: issued.key, status: 'granted', validations: 1, usage: 0, customerId, benefitId });
      expect(first.lastValidatedAt?.toISOString()).toBe('2025-05-05T12:00:00.000Z');
      expect(first.activation ?? null).toBeNull();
      expect(first.customer.id).toBe(customerId);

      const second = await client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId, benefitId, customerId });
      expect(second.validations).toBe(2);

      const raw = expectStatus(await anonymousApi()('POST', '/customer-portal/license-keys/validate', { key: issued.key, organization_id: org.organizationId }), 200);
      expect(Object.keys(raw).sort()).toEqual([...licenseKeyWireKeys, 'activation'].sort());
      expect(raw.validations).toBe(3);
    } finally {
      t.server.clock.now = null;
    }
  });

  it('refuses a key of another benefit or customer than the one named', async () => {
    const issued = await issueKey(org, benefitId, customerId);
    const client = anonymous();
    const wrongBenefit = await rejectionOf(client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId, benefitId: randomUUID() }));
    expect(wrongBenefit).toBeInstanceOf(ResourceNotFound);
    expect((wrongBenefit as ResourceNotFound).detail).toBe('License key does not match given benefit.');
    const wrongCustomer = await rejectionOf(client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId, customerId: randomUUID() }));
    expect(wrongCustomer).toBeInstanceOf(ResourceNotFound);
    expect((wrongCustomer as ResourceNotFound).detail).toBe('License key does not match given customer.');
    expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).validations).toBe(0);
  });

  it('activates up to the limit, refuses one more with 403, and a deactivation frees a slot', async () => {
    const issued = await issueKey(org, benefitId, customerId);
    const client = anonymous();
    const meta = { os: 'macOS', build: 42, ratio: 1.5, trial: false };
    const laptop = await client.customerPortal.licenseKeys.activate({ key: issued.key, organizationId: org.organizationId, label: 'Laptop', meta });
    expect(laptop).toMatchObject({ label: 'Laptop', meta, licenseKeyId: issued.id, licenseKey: { id: issued.id, limitActivations: 2 } });
    expect(laptop.id).toEqual(uuid);
    const desktop = await client.customerPortal.licenseKeys.activate({ key: issued.key, organizationId: org.organizationId, label: 'Desktop' });
    expect(desktop.meta).toEqual({});

    const third = await rejectionOf(client.customerPortal.licenseKeys.activate({ key: issued.key, organizationId: org.organizationId, label: 'Tablet' }));
    expect(third).toBeInstanceOf(NotPermitted);
    expect((third as NotPermitted).detail).toBe('License key only supports 2 activations.');

    const validated = await client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId, activationId: laptop.id });
    expect(validated.activation).toMatchObject({ id: laptop.id, label: 'Laptop', meta });

    const deactivated = await anonymousApi()('POST', '/customer-portal/license-keys/deactivate', { key: issued.key, organization_id: org.organizationId, activation_id: laptop.id });
    expect(deactivated.status).toBe(204);
    expect(deactivated.body).toBeNull();
    const staleActivation = await rejectionOf(client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId, activationId: laptop.id }));
    expect(staleActivation).toBeInstanceOf(ResourceNotFound);
    expect((staleActivation as ResourceNotFound).detail).toBe('License key activation not found.');
    const again = await rejectionOf(client.customerPortal.licenseKeys.deactivate({ key: issued.key, organizationId: org.organizationId, activationId: laptop.id }));
    expect(again).toBeInstanceOf(ResourceNotFound);

    const tablet = await client.customerPortal.licenseKeys.activate({ key: issued.key, organizationId: org.organizationId, label: 'Tablet' });
    await client.customerPortal.licenseKeys.deactivate({ key: issued.key, organizationId: org.organizationId, activationId: tablet.id });
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: issued.id } })).toBe(1);
  });

  it('does not let an activation of one key be validated or deactivated through another key', async () => {
    const mine = await issueKey(org, benefitId, customerId);
    const other = await issueKey(org, benefitId, customerId);
    const client = anonymous();
    const activation = await client.customerPortal.licenseKeys.activate({ key: other.key, organizationId: org.organizationId, label: 'Theirs' });
    const validate = await rejectionOf(client.customerPortal.licenseKeys.validate({ key: mine.key, organizationId: org.organizationId, activationId: activation.id }));
    expect(validate).toBeInstanceOf(ResourceNotFound);
    const deactivate = await rejectionOf(client.customerPortal.licenseKeys.deactivate({ key: mine.key, organizationId: org.organizationId, activationId: activation.id }));
    expect(deactivate).toBeInstanceOf(ResourceNotFound);
    expect(await prisma().licenseKeyActivation.count({ where: { id: activation.id } })).toBe(1);
  });

  it('refuses activations of a key without an activation limit', async () => {
    const issued = await issueKey(org, await newBenefit(org, { prefix: 'plain' }), customerId);
    const error = await rejectionOf(anonymous().customerPortal.licenseKeys.activate({ key: issued.key, organizationId: org.organizationId, label: 'Laptop' }));
    expect(error).toBeInstanceOf(NotPermitted);
    expect((error as NotPermitted).detail).toMatch(/^This license key does not support activations\./);
  });

  it('adds to the usage and refuses an increment past the usage limit, changing nothing', async () => {
    const issued = await issueKey(org, benefitId, customerId);
    const client = anonymous();
    const check = (incrementUsage: number) => client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId, incrementUsage });
    expect((await check(4)).usage).toBe(4);
    const refused = await rejectionOf(check(7));
    expect(refused).toBeInstanceOf(SDKError);
    expect((refused as SDKError).statusCode).toBe(400);
    expect(JSON.parse((refused as SDKError).body)).toEqual({ error: 'BadRequest', detail: 'License key only has 6 more usages.' });
    expect(await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).toMatchObject({ usage: 4, validations: 1 });
    expect((await check(6)).usage).toBe(10);
    expect(await rejectionOf(check(1))).toBeInstanceOf(SDKError);

    const negative = await anonymousApi()('POST', '/customer-portal/license-keys/validate', { key: issued.key, organization_id: org.organizationId, increment_usage: -5 });
    expect(expectStatus(negative, 422).detail[0].loc).toEqual(['body', 'increment_usage']);
    expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).usage).toBe(10);
  });

  it('refuses malformed bodies with 422 naming the field', async () => {
    const api = anonymousApi();
    const issued = await issueKey(org, benefitId, customerId);
    const missingLabel = await api('POST', '/customer-portal/license-keys/activate', { key: issued.key, organization_id: org.organizationId });
    expect(expectStatus(missingLabel, 422).detail[0].loc).toEqual(['body', 'label']);
    const badOrganization = await api('POST', '/customer-portal/license-keys/validate', { key: issued.key, organization_id: 'acme' });
    expect(expectStatus(badOrganization, 422).detail[0].loc).toEqual(['body', 'organization_id']);
    const nestedMeta = await api('POST', '/customer-portal/license-keys/activate', { key: issued.key, organization_id: org.organizationId, label: 'x', meta: { deep: { a: 1 } } });
    expectStatus(nestedMeta, 422);
    const conditions = await api('POST', '/customer-portal/license-keys/activate', { key: issued.key, organization_id: org.organizationId, label: 'x', conditions: { major: 2 } });
    expect(expectStatus(conditions, 422).detail[0].loc).toEqual(['body', 'conditions']);
    const longLabel = await api('POST', '/customer-portal/license-keys/activate', { key: issued.key, organization_id: org.organizationId, label: 'x'.repeat(256) });
    expect(expectStatus(longLabel, 422).detail[0].loc).toEqual(['body', 'label']);
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: issued.id } })).toBe(0);
  });

  it('answers through GraphQL too, with no token', async () => {
    const issued = await issueKey(org, benefitId, customerId);
    const gql = graphqlClient(t.server.base());
    const response = await gql(
      `mutation ($input: LicenseKeyValidateInput!) { licenseKeyValidate(input: $input) { id displayKey validations customer { email } activation { id } } }`,
      { input: { key: issued.key, organizationId: org.organizationId } },
    );
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.licenseKeyValidate).toMatchObject({ id: issued.id, displayKey: issued.displayKey, validations: 1, activation: null });
    const unknown = await gql(`mutation ($input: LicenseKeyValidateInput!) { licenseKeyValidate(input: $input) { id } }`, {
      input: { key: 'NOPE', organizationId: org.organizationId },
    });
    expect(unknown.body.errors?.[0]).toMatchObject({ message: 'License key not found.', extensions: { code: 'RESOURCE_NOT_FOUND' } });
  });
});

describe('keys that no longer work', () => {
  let org: Org;
  let customerId: string;
  let benefitId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server);
    customerId = await newCustomer(org);
    benefitId = await newBenefit(org, { activations: { limit: 3, enable_customer_admin: false } });
  });

  const validateBody = (key: string, organizationId: string) => ({ key, organization_id: organizationId });

  it('a revoked key stops validating and activating, answered exactly as an unknown key', async () => {
    const issued = await issueKey(org, benefitId, customerId);
    const api = anonymousApi();
    const activation = expectStatus(await api('POST', '/customer-portal/license-keys/activate', { ...validateBody(issued.key, org.organizationId), label: 'PC' }), 200);
    await revoke(issued.grantId);

    const revoked = await api('POST', '/customer-portal/license-keys/validate', validateBody(issued.key, org.organizationId));
    const unknown = await api('POST', '/customer-portal/license-keys/validate', validateBody(`${issued.key.slice(0, -1)}${issued.key.endsWith('0') ? '1' : '0'}`, org.organizationId));
    expect(expectStatus(revoked, 404)).toEqual(keyNotFound);
    expect(expectStatus(unknown, 404)).toEqual(keyNotFound);
    expect(expectStatus(await api('POST', '/customer-portal/license-keys/activate', { ...validateBody(issued.key, org.organizationId), label: 'PC 2' }), 404)).toEqual(keyNotFound);
    const deactivate = await api('POST', '/customer-portal/license-keys/deactivate', { ...validateBody(issued.key, org.organizationId), activation_id: activation.id });
    expect(expectStatus(deactivate, 404)).toEqual(keyNotFound);

    const viaSdk = await rejectionOf(org.polar.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId }));
    expect(viaSdk).toBeInstanceOf(ResourceNotFound);
    expect((await org.polar.licenseKeys.get({ id: issued.id })).status).toBe('revoked');
  });

  it('a disabled key is answered as an unknown key, and works again once granted', async () => {
    const issued = await issueKey(org, benefitId, customerId);
    await org.polar.licenseKeys.update({ id: issued.id, licenseKeyUpdate: { status: 'disabled' } });
    const api = anonymousApi();
    expect(expectStatus(await api('POST', '/customer-portal/license-keys/validate', validateBody(issued.key, org.organizationId)), 404)).toEqual(keyNotFound);
    expect(expectStatus(await api('POST', '/customer-portal/license-keys/activate', { ...validateBody(issued.key, org.organizationId), label: 'PC' }), 404)).toEqual(keyNotFound);
    await org.polar.licenseKeys.update({ id: issued.id, licenseKeyUpdate: { status: 'granted' } });
    expectStatus(await api('POST', '/customer-portal/license-keys/validate', validateBody(issued.key, org.organizationId)), 200);
  });

  it('an expired key is refused from its expiry on: 404 on validation and 403 on activation, as the original service does', async () => {
    t.server.clock.now = new Date('2025-08-01T00:00:00.000Z');
    try {
      const issued = await issueKey(org, await newBenefit(org, { expires: { ttl: 1, timeframe: 'day' }, activations: { limit: 2, enable_customer_admin: false } }), customerId);
      const client = anonymous();
      t.server.clock.now = new Date('2025-08-01T23:59:59.999Z');
      expect((await client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId })).validations).toBe(1);

      t.server.clock.now = new Date('2025-08-02T00:00:00.000Z');
      const validation = await rejectionOf(client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId }));
      expect(validation).toBeInstanceOf(ResourceNotFound);
      expect((validation as ResourceNotFound).detail).toBe('License key has expired.');
      const activation = await rejectionOf(client.customerPortal.licenseKeys.activate({ key: issued.key, organizationId: org.organizationId, label: 'PC' }));
      expect(activation).toBeInstanceOf(NotPermitted);
      expect((activation as NotPermitted).detail).toBe('License key has expired.');
      expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).validations).toBe(1);

      // The organization extends it, and it works again.
      await org.polar.licenseKeys.update({ id: issued.id, licenseKeyUpdate: { expiresAt: new Date('2026-08-02T00:00:00.000Z'), usage: 0 } });
      expect((await client.customerPortal.licenseKeys.validate({ key: issued.key, organizationId: org.organizationId })).validations).toBe(2);
    } finally {
      t.server.clock.now = null;
    }
  });
});

describe('another organization', () => {
  let owner: Org;
  let intruder: Org;
  let issued: Awaited<ReturnType<typeof issueKey>>;
  let activationId: string;
  beforeAll(async () => {
    owner = await newOrganization(t.server);
    intruder = await newOrganization(t.server);
    const customerId = await newCustomer(owner);
    issued = await issueKey(owner, await newBenefit(owner, { activations: { limit: 5, enable_customer_admin: false } }), customerId);
    activationId = (await anonymous().customerPortal.licenseKeys.activate({ key: issued.key, organizationId: owner.organizationId, label: 'Owner PC' })).id;
  });

  it('cannot get, list, update or read the activations of the key: 404 as if it did not exist', async () => {
    expect(expectStatus(await intruder.api('GET', `/license-keys/${issued.id}`), 404)).toEqual(keyNotFound);
    expect(expectStatus(await intruder.api('PATCH', `/license-keys/${issued.id}`, { status: 'disabled' }), 404)).toEqual(keyNotFound);
    expect(expectStatus(await intruder.api('GET', `/license-keys/${issued.id}/activations/${activationId}`), 404)).toEqual(keyNotFound);
    expect(await rejectionOf(intruder.polar.licenseKeys.get({ id: issued.id }))).toBeInstanceOf(ResourceNotFound);
    const listed = await intruder.polar.licenseKeys.list({ organizationId: owner.organizationId });
    expect(listed.result).toEqual({ items: [], pagination: { totalCount: 0, maxPage: 0 } });
    expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).status).toBe('granted');
  });

  it('cannot validate, activate or deactivate the key with its own token, naming either organization', async () => {
    for (const organizationId of [owner.organizationId, intruder.organizationId]) {
      expect(expectStatus(await intruder.api('POST', '/license-keys/validate', { key: issued.key, organization_id: organizationId }), 404)).toEqual(keyNotFound);
      expect(expectStatus(await intruder.api('POST', '/license-keys/activate', { key: issued.key, organization_id: organizationId, label: 'x' }), 404)).toEqual(keyNotFound);
      const deactivate = await intruder.api('POST', '/license-keys/deactivate', { key: issued.key, organization_id: organizationId, activation_id: activationId });
      expect(expectStatus(deactivate, 404)).toEqual(keyNotFound);
    }
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: issued.id } })).toBe(1);
    expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).validations).toBe(0);
  });

  it('naming another organization on the public endpoints gets the same 404 as a random key', async () => {
    const api = anonymousApi();
    const wrongOrganization = await api('POST', '/customer-portal/license-keys/validate', { key: issued.key, organization_id: intruder.organizationId });
    const randomKey = await api('POST', '/customer-portal/license-keys/validate', { key: randomUUID().toUpperCase(), organization_id: owner.organizationId });
    const unknownOrganization = await api('POST', '/customer-portal/license-keys/validate', { key: issued.key, organization_id: randomUUID() });
    expect(wrongOrganization.status).toBe(404);
    expect(wrongOrganization.body).toEqual(randomKey.body);
    expect(unknownOrganization.body).toEqual(randomKey.body);
    expect(randomKey.body).toEqual(keyNotFound);
    const activate = await rejectionOf(anonymous().customerPortal.licenseKeys.activate({ key: issued.key, organizationId: intruder.organizationId, label: 'x' }));
    expect(activate).toBeInstanceOf(ResourceNotFound);
    expect((activate as ResourceNotFound).detail).toBe(keyNotFound.detail);
  });

  it('a user reaches only keys of their own organizations, and only under the key’s organization', async () => {
    const signIn = await graphqlClient(t.server.base())('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', {
      email: owner.userEmail,
      password: owner.userPassword,
    });
    const userToken = signIn.body.data.signIn.token as string;
    const user = await prisma().user.findUniqueOrThrow({ where: { email: owner.userEmail } });
    const secondOrganization = await createOrganization(prisma(), { name: 'Second shop', ownerId: user.id });
    const asUser = restClient(t.server.base(), userToken);

    expectStatus(await asUser('GET', `/license-keys/${issued.id}`), 200);
    const validated = expectStatus(await asUser('POST', '/license-keys/validate', { key: issued.key, organization_id: owner.organizationId }), 200);
    expect(validated.id).toBe(issued.id);
    const underOtherOrganization = await asUser('POST', '/license-keys/validate', { key: issued.key, organization_id: secondOrganization.id });
    expect(expectStatus(underOtherOrganization, 404)).toEqual(keyNotFound);
    expect(expectStatus(await asUser('POST', '/license-keys/validate', { key: issued.key, organization_id: intruder.organizationId }), 404)).toEqual(keyNotFound);
  });
});

// The REST bodies are checked by the REST layer before the service sees them; GraphQL inputs reach
// the service's own checks, which these tests hold to the same rules and the same answers.
describe('the same rules through GraphQL', () => {
  let org: Org;
  let customerId: string;
  const keyFields = 'id status usage validations limitActivations limitUsage modifiedAt';
  const update = (id: string, input: object) =>
    org.gql(`mutation ($id: UUID!, $input: LicenseKeyUpdateInput!) { core { licenseKeyUpdate(id: $id, input: $input) { ${keyFields} } } }`, { id, input });
  const validate = (input: object) =>
    graphqlClient(t.server.base())(`mutation ($input: LicenseKeyValidateInput!) { licenseKeyValidate(input: $input) { ${keyFields} } }`, { input });
  const activate = (input: object) =>
    graphqlClient(t.server.base())(`mutation ($input: LicenseKeyActivateInput!) { licenseKeyActivate(input: $input) { id label } }`, { input });
  const stored = (id: string) => prisma().licenseKey.findUniqueOrThrow({ where: { id } });
  beforeAll(async () => {
    org = await newOrganization(t.server);
    customerId = await newCustomer(org);
  });

  it('licenseKeyUpdate refuses each out-of-range value with BAD_USER_INPUT naming the field and the rule, writing nothing', async () => {
    const issued = await issueKey(org, await newBenefit(org, { activations: { limit: 2, enable_customer_admin: false }, limit_usage: 10 }), customerId);
    const before = await stored(issued.id);
    const refusals: [object, string, string, string][] = [
      [{ usage: -1 }, 'usage', 'Input should be greater than or equal to 0', 'greater_than_equal'],
      [{ limitActivations: 0 }, 'limitActivations', 'Input should be from 1 to 50', 'greater_than'],
      [{ limitActivations: 51 }, 'limitActivations', 'Input should be from 1 to 50', 'less_than_equal'],
      [{ limitUsage: 0 }, 'limitUsage', 'Input should be greater than 0', 'greater_than'],
    ];
    for (const [input, field, msg, type] of refusals) {
      const error = expectGraphQLError(await update(issued.id, input), 'BAD_USER_INPUT');
      expect(error.extensions.issues, JSON.stringify(input)).toEqual([{ loc: ['input', field], msg, type }]);
    }
    expect(await stored(issued.id)).toEqual(before);
  });

  it('licenseKeyUpdate accepts the bounds, clears a limit sent as null, leaves a null status or usage as it is, and stamps modifiedAt', async () => {
    const issued = await issueKey(org, await newBenefit(org, { activations: { limit: 2, enable_customer_admin: false }, limit_usage: 10 }), customerId);
    t.server.clock.now = new Date('2031-02-03T04:05:06.000Z');
    try {
      const lowest = await graphqlData(update(issued.id, { limitActivations: 1, limitUsage: 1, usage: 0 }));
      expect(lowest.core.licenseKeyUpdate).toMatchObject({ limitActivations: 1, limitUsage: 1, usage: 0, modifiedAt: '2031-02-03T04:05:06.000Z' });
      const highest = await graphqlData(update(issued.id, { limitActivations: 50, usage: 3 }));
      expect(highest.core.licenseKeyUpdate).toMatchObject({ limitActivations: 50, limitUsage: 1, usage: 3 });

      t.server.clock.now = new Date('2031-02-04T00:00:00.000Z');
      const cleared = await graphqlData(update(issued.id, { status: null, usage: null, limitActivations: null }));
      expect(cleared.core.licenseKeyUpdate).toEqual({
        id: issued.id,
        status: 'granted',
        usage: 3,
        validations: 0,
        limitActivations: null,
        limitUsage: 1,
        modifiedAt: '2031-02-04T00:00:00.000Z',
      });
    } finally {
      t.server.clock.now = null;
    }
  });

  it('licenseKeyValidate refuses a negative incrementUsage before touching the key, and takes 0 as a plain validation', async () => {
    const issued = await issueKey(org, await newBenefit(org, { limit_usage: 10 }), customerId);
    const error = expectGraphQLError(await validate({ key: issued.key, organizationId: org.organizationId, incrementUsage: -1 }), 'BAD_USER_INPUT');
    expect(error.extensions.issues).toEqual([{ loc: ['input', 'incrementUsage'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' }]);
    expect(await stored(issued.id)).toMatchObject({ usage: 0, validations: 0 });
    const plain = await graphqlData(validate({ key: issued.key, organizationId: org.organizationId, incrementUsage: 0 }));
    expect(plain.licenseKeyValidate).toMatchObject({ usage: 0, validations: 1 });
  });

  it('counts usage without limit on a key that has none, up to the largest usage a key holds and never past it', async () => {
    const issued = await issueKey(org, await newBenefit(org, {}), customerId);
    const counted = await graphqlData(validate({ key: issued.key, organizationId: org.organizationId, incrementUsage: 1000 }));
    expect(counted.licenseKeyValidate).toMatchObject({ usage: 1000, validations: 1, limitUsage: null });

    await graphqlData(update(issued.id, { usage: 2_147_483_645 }));
    const past = expectGraphQLError(await validate({ key: issued.key, organizationId: org.organizationId, incrementUsage: 3 }), 'BAD_USER_INPUT');
    expect(past.extensions.issues).toEqual([{ loc: ['input', 'incrementUsage'], msg: "A license key's usage cannot exceed 2147483647.", type: 'less_than_equal' }]);
    expect(await stored(issued.id)).toMatchObject({ usage: 2_147_483_645, validations: 1 });
    const full = await graphqlData(validate({ key: issued.key, organizationId: org.organizationId, incrementUsage: 2 }));
    expect(full.licenseKeyValidate).toMatchObject({ usage: 2_147_483_647, validations: 2 });
  });

  it('still validates a key whose usage limit was lowered below its usage, and refuses any more usage with BAD_REQUEST', async () => {
    const issued = await issueKey(org, await newBenefit(org, { limit_usage: 10 }), customerId);
    await graphqlData(validate({ key: issued.key, organizationId: org.organizationId, incrementUsage: 8 }));
    await graphqlData(update(issued.id, { limitUsage: 5 }));
    const plain = await graphqlData(validate({ key: issued.key, organizationId: org.organizationId }));
    expect(plain.licenseKeyValidate).toMatchObject({ usage: 8, limitUsage: 5, validations: 2 });
    const more = await validate({ key: issued.key, organizationId: org.organizationId, incrementUsage: 1 });
    expect(expectGraphQLError(more, 'BAD_REQUEST').message).toBe('License key only has 0 more usages.');
    expect(await stored(issued.id)).toMatchObject({ usage: 8, validations: 2 });
  });

  it('licenseKeyActivate takes a label of 255 characters and empty conditions, and refuses a longer label or any condition', async () => {
    const issued = await issueKey(org, await newBenefit(org, { activations: { limit: 5, enable_customer_admin: false } }), customerId);
    const base = { key: issued.key, organizationId: org.organizationId };
    const longest = await graphqlData(activate({ ...base, label: 'x'.repeat(255), conditions: {} }));
    expect(longest.licenseKeyActivate.label).toHaveLength(255);

    const tooLong = expectGraphQLError(await activate({ ...base, label: 'x'.repeat(256) }), 'BAD_USER_INPUT');
    expect(tooLong.extensions.issues).toEqual([{ loc: ['input', 'label'], msg: 'String should have at most 255 characters', type: 'string_too_long' }]);
    const conditions = expectGraphQLError(await activate({ ...base, label: 'PC', conditions: { major: 2 } }), 'BAD_USER_INPUT');
    expect(conditions.extensions.issues).toEqual([
      { loc: ['input', 'conditions'], msg: 'Activation conditions are not supported: identify the device in meta instead.', type: 'value_error' },
    ]);
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: issued.id } })).toBe(1);
  });

  it('lists keys made at the same instant in id order, so pages never overlap', async () => {
    const benefitId = await newBenefit(org, {});
    t.server.clock.now = new Date('2031-05-05T05:05:05.000Z');
    let ids: string[];
    try {
      ids = (await Promise.all(Array.from({ length: 6 }, () => issueKey(org, benefitId, customerId)))).map((k) => k.id);
    } finally {
      t.server.clock.now = null;
    }
    const listed = await graphqlData(org.gql(`query ($b: [UUID!]) { core { licenseKeys(benefitId: $b, limit: 10) { items { id } } } }`, { b: [benefitId] }));
    expect(listed.core.licenseKeys.items.map((k: { id: string }) => k.id)).toEqual([...ids].sort());
  });
});

describe('concurrent checks of one key', () => {
  let org: Org;
  let customerId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server);
    customerId = await newCustomer(org);
  });

  it('never activates a key more often than its limit', async () => {
    const issued = await issueKey(org, await newBenefit(org, { activations: { limit: 3, enable_customer_admin: false } }), customerId);
    const api = anonymousApi();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api('POST', '/customer-portal/license-keys/activate', { key: issued.key, organization_id: org.organizationId, label: `Device ${i}` })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 403, 403, 403, 403, 403, 403, 403]);
    for (const refused of responses.filter((r) => r.status === 403)) expect(refused.body).toEqual({ error: 'NotPermitted', detail: 'License key only supports 3 activations.' });
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: issued.id } })).toBe(3);
  });

  it('never counts usage past its limit', async () => {
    const issued = await issueKey(org, await newBenefit(org, { limit_usage: 5 }), customerId);
    const api = anonymousApi();
    const responses = await Promise.all(
      Array.from({ length: 9 }, () => api('POST', '/customer-portal/license-keys/validate', { key: issued.key, organization_id: org.organizationId, increment_usage: 1 })),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(5);
    expect(responses.filter((r) => r.status === 400)).toHaveLength(4);
    expect(await prisma().licenseKey.findUniqueOrThrow({ where: { id: issued.id } })).toMatchObject({ usage: 5, validations: 5 });
  });
});

// The Customer Portal's benefit grants and license keys: a signed-in customer lists and reads what
// they hold, through the official client, and reaches nothing of anyone else's. A checkout's session
// reaches only what that checkout bought. A revoked grant leaves the portal, as on Polar; its license
// key stays listed, revoked.
import { randomUUID } from 'node:crypto';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import type { Org } from '../helpers/organizations.ts';
import { uploadFile } from '../helpers/files.ts';
import { paidOrderOf } from '../helpers/purchases.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { expectErrorBody, expectStatus, expectValidationError, graphqlData } from '../helpers/responses.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox' } });

const base = () => t.server.base('sandbox');
const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

async function product(of: Org, name: string, benefits: string[]) {
  const created = await of.polar.products.create({ name, recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd' }] });
  await of.polar.products.updateBenefits({ id: created.id, productBenefitsUpdate: { benefits } });
  return created.id;
}

interface Purchase {
  checkoutId: string;
  orderId: string;
  customerId: string;
  /** The session the checkout's confirmation handed its buyer: it reaches this purchase only. */
  checkoutToken: string;
  grantIds: string[];
  keyIds: string[];
}

/** A purchase with a test card, once every benefit of the product is granted. */
async function buy(of: Org, productId: string, email: string, benefits: number): Promise<Purchase> {
  const checkout = await of.polar.checkouts.create({ products: [productId] });
  const confirmed = await of.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: email, customerName: 'Buyer', confirmationTokenId: 'tok_visa' },
  });
  const order = await paidOrderOf(of, checkout.id);
  const grants = await eventually(
    () => prisma().benefitGrant.findMany({ where: { orderId: order.id, grantedAt: { not: null } }, orderBy: { createdAt: 'asc' } }),
    (found) => found.length === benefits,
    'the benefits to be granted',
  );
  const keys = await prisma().licenseKey.findMany({ where: { grantId: { in: grants.map((g) => g.id) } } });
  return { checkoutId: checkout.id, orderId: order.id, customerId: order.customerId, checkoutToken: confirmed.customerSessionToken!, grantIds: grants.map((g) => g.id), keyIds: keys.map((k) => k.id) };
}

/** A full customer session, as the organization issues one through the official client. */
async function sessionOf(of: Org, customerId: string) {
  return (await of.polar.customerSessions.create({ customerId })).token;
}

const grantsOf = async (token: string, request: Record<string, unknown> = {}) =>
  (await t.org.buyer.customerPortal.benefitGrants.list({ customerSession: token }, request)).result;
const keysOf = async (token: string, request: Record<string, unknown> = {}) =>
  (await t.org.buyer.customerPortal.licenseKeys.list({ customerSession: token }, request)).result;
const portal = (token?: string) => restClient(base(), token);
const sorted = (ids: string[]) => [...ids].sort();

let customBenefitId: string;
let keysBenefitId: string;
let lockedKeysBenefitId: string;
let filesBenefitId: string;
let fileId: string;
let archivedFileId: string;
let aliceBundle: Purchase;
let alicePlugin: Purchase;
let bobBundle: Purchase;
let carolPlugin: Purchase;
let alice: string;
let bob: string;
let carol: string;

beforeAll(async () => {
  fileId = (await uploadFile(t.org, Buffer.from('the whole handbook'), 'handbook.pdf')).id;
  archivedFileId = (await uploadFile(t.org, Buffer.from('last year’s edition'), 'handbook-2030.pdf')).id;
  customBenefitId = (await t.org.polar.benefits.create({ type: 'custom', description: 'Welcome note', properties: { note: 'Thanks for buying!' } })).id;
  keysBenefitId = (await t.org.polar.benefits.create({
    type: 'license_keys',
    description: 'App license',
    properties: { prefix: 'app', activations: { limit: 3, enableCustomerAdmin: true }, limitUsage: 100 },
  })).id;
  lockedKeysBenefitId = (await t.org.polar.benefits.create({ type: 'license_keys', description: 'Plugin license', properties: { activations: { limit: 2, enableCustomerAdmin: false } } })).id;
  filesBenefitId = (await t.org.polar.benefits.create({
    type: 'downloadables',
    description: 'The handbook',
    properties: { files: [fileId, archivedFileId], archived: { [archivedFileId]: true } },
  })).id;
  const bundle = await product(t.org, 'Bundle', [customBenefitId, keysBenefitId, filesBenefitId]);
  const plugin = await product(t.org, 'Plugin', [lockedKeysBenefitId]);
  const foreignKeys = (await t.other.polar.benefits.create({ type: 'license_keys', description: 'Foreign license', properties: {} })).id;
  const foreignPlugin = await product(t.other, 'Foreign plugin', [foreignKeys]);

  // The organization creates Alice, a returning buyer, so both her checkouts reach one customer.
  expect((await t.org.api('POST', '/customers/', { email: 'alice@example.com', name: 'Buyer' })).status).toBe(201);
  aliceBundle = await buy(t.org, bundle, 'alice@example.com', 3);
  alicePlugin = await buy(t.org, plugin, 'alice@example.com', 1);
  bobBundle = await buy(t.org, bundle, 'bob@example.com', 3);
  carolPlugin = await buy(t.other, foreignPlugin, 'carol@example.com', 1);
  expect(alicePlugin.customerId).toBe(aliceBundle.customerId);
  [alice, bob, carol] = await Promise.all([sessionOf(t.org, aliceBundle.customerId), sessionOf(t.org, bobBundle.customerId), sessionOf(t.other, carolPlugin.customerId)]);
});

describe('benefit grants through the official client', () => {
  it("lists the customer's grants, newest first, each with its benefit as a holder sees it and what it gave", async () => {
    const page = await grantsOf(alice);
    expect(page.pagination).toEqual({ totalCount: 4, maxPage: 1 });
    expect(sorted(page.items.map((g) => g.id))).toEqual(sorted([...aliceBundle.grantIds, ...alicePlugin.grantIds]));
    expect(page.items[0].id).toBe(alicePlugin.grantIds[0]);
    for (const grant of page.items) {
      expect(grant).toMatchObject({ customerId: aliceBundle.customerId, isGranted: true, isRevoked: false, revokedAt: null, customer: { id: aliceBundle.customerId, email: 'alice@example.com' } });
      expect(grant.benefit.organization).toMatchObject({ id: t.org.organizationId });
    }
    const byType = Object.fromEntries(page.items.map((g) => [g.benefit.id, g]));
    expect(byType[customBenefitId]).toMatchObject({ orderId: aliceBundle.orderId, subscriptionId: null, benefit: { type: 'custom', description: 'Welcome note', properties: { note: 'Thanks for buying!' } }, properties: {} });
    const [appKey] = await prisma().licenseKey.findMany({ where: { benefitId: keysBenefitId, customerId: aliceBundle.customerId } });
    expect(byType[keysBenefitId]).toMatchObject({
      benefit: { type: 'license_keys', properties: { prefix: 'app', expires: null, activations: { limit: 3, enableCustomerAdmin: true }, limitUsage: 100 } },
      properties: { licenseKeyId: appKey.id, displayKey: `****-${appKey.key.slice(-8)}` },
    });
    // The archived file is not offered to new holders.
    expect(byType[filesBenefitId]).toMatchObject({ benefit: { type: 'downloadables', properties: { activeFiles: [fileId] } }, properties: { files: [fileId] } });
  });

  it('reads one grant by id, the same as listed', async () => {
    const listed = (await grantsOf(alice, { benefitId: keysBenefitId })).items;
    expect(listed).toHaveLength(1);
    expect(await t.org.buyer.customerPortal.benefitGrants.get({ customerSession: alice }, { id: listed[0].id })).toEqual(listed[0]);
  });

  it('answers with the REST body the client parses: snake_case, every required field present', async () => {
    const body = expectStatus(await portal(alice)('GET', `/customer-portal/benefit-grants/${aliceBundle.grantIds[0]}`), 200);
    expect(body).toEqual({
      id: aliceBundle.grantIds[0],
      created_at: datetime,
      modified_at: datetime,
      granted_at: datetime,
      revoked_at: null,
      is_granted: true,
      is_revoked: false,
      customer_id: aliceBundle.customerId,
      benefit_id: uuid,
      subscription_id: null,
      order_id: aliceBundle.orderId,
      properties: expect.any(Object),
      customer: {
        id: aliceBundle.customerId,
        created_at: datetime,
        modified_at: expect.toSatisfy((v: unknown) => v === null || typeof v === 'string'),
        email: 'alice@example.com',
        email_verified: false,
        name: 'Buyer',
        billing_name: expect.toSatisfy((v: unknown) => v === null || typeof v === 'string'),
        billing_address: expect.toSatisfy((v: unknown) => v === null || typeof v === 'object'),
        tax_id: null,
        oauth_accounts: {},
      },
      benefit: expect.objectContaining({ id: expect.any(String), type: expect.any(String), organization_id: t.org.organizationId, metadata: {}, organization: expect.objectContaining({ id: t.org.organizationId }) }),
    });
  });

  it('filters by type, benefit, order, checkout, subscription and organization, and sorts and pages', async () => {
    const ids = async (request: Record<string, unknown>) => (await grantsOf(alice, request)).items.map((g) => g.id);
    expect(await ids({ typeFilter: 'license_keys' })).toHaveLength(2);
    expect(await ids({ typeFilter: ['custom', 'downloadables'] })).toHaveLength(2);
    expect(await ids({ benefitId: lockedKeysBenefitId })).toEqual(alicePlugin.grantIds);
    expect(sorted(await ids({ orderId: aliceBundle.orderId }))).toEqual(sorted(aliceBundle.grantIds));
    expect(await ids({ checkoutId: alicePlugin.checkoutId })).toEqual(alicePlugin.grantIds);
    expect(await ids({ subscriptionId: randomUUID() })).toEqual([]);
    expect(await ids({ organizationId: t.other.organizationId })).toEqual([]);
    expect(sorted(await ids({ organizationId: t.org.organizationId }))).toEqual(sorted([...aliceBundle.grantIds, ...alicePlugin.grantIds]));
    const types = (await grantsOf(alice, { sorting: ['type'] })).items.map((g) => g.benefit.type);
    expect(types).toEqual(['custom', 'downloadables', 'license_keys', 'license_keys']);
    expect((await grantsOf(alice, { sorting: ['granted_at'] })).items.at(-1)!.id).toBe(alicePlugin.grantIds[0]);
    const second = await grantsOf(alice, { page: 2, limit: 3 });
    expect(second.pagination).toEqual({ totalCount: 4, maxPage: 2 });
    expect(second.items).toHaveLength(1);
  });

  it('refuses bad input on grants and keys alike: 422 naming the parameter', async () => {
    expectValidationError(await portal(alice)('GET', '/customer-portal/benefit-grants/?limit=0'), ['query', 'limit']);
    expectValidationError(await portal(alice)('GET', '/customer-portal/benefit-grants/?limit=101'), ['query', 'limit']);
    expectValidationError(await portal(alice)('GET', '/customer-portal/benefit-grants/?sorting=price'), ['query', 'sorting', 0]);
    expectValidationError(await portal(alice)('GET', '/customer-portal/benefit-grants/?type=telepathy'), ['query', 'type', 0]);
    expectValidationError(await portal(alice)('GET', '/customer-portal/benefit-grants/?order_id=not-a-uuid'), ['query', 'order_id', 0]);
    expectValidationError(await portal(alice)('GET', '/customer-portal/benefit-grants/not-a-uuid'), ['path', 'id']);
    expectValidationError(await portal(alice)('GET', '/customer-portal/license-keys/?benefit_id=x'), ['query', 'benefit_id', 0]);
    expectValidationError(await portal(alice)('GET', '/customer-portal/license-keys/?page=0'), ['query', 'page']);
  });
});

describe('license keys through the official client', () => {
  it("lists the customer's keys, oldest first, with the key readable and its holder", async () => {
    const page = await keysOf(alice);
    expect(page.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    expect(page.items.map((k) => k.id)).toEqual([...aliceBundle.keyIds, ...alicePlugin.keyIds]);
    const [app] = page.items;
    expect(app).toMatchObject({
      organizationId: t.org.organizationId,
      customerId: aliceBundle.customerId,
      customer: { id: aliceBundle.customerId, email: 'alice@example.com', organizationId: t.org.organizationId },
      benefitId: keysBenefitId,
      key: expect.stringMatching(/^APP-[0-9A-F]{8}(-[0-9A-F]{8}){4}$/),
      status: 'granted',
      limitActivations: 3,
      usage: 0,
      limitUsage: 100,
      validations: 0,
    });
    expect(app.displayKey).toBe(`****-${app.key.slice(-8)}`);
    expect((await keysOf(alice, { benefitId: lockedKeysBenefitId })).items.map((k) => k.id)).toEqual(alicePlugin.keyIds);
    expect((await keysOf(alice, { organizationId: t.other.organizationId })).items).toEqual([]);
    expect((await keysOf(alice, { page: 2, limit: 1 })).items.map((k) => k.id)).toEqual(alicePlugin.keyIds);
  });

  it('lists no activations in the list items, as the client library expects', async () => {
    const body = expectStatus(await portal(alice)('GET', '/customer-portal/license-keys/'), 200);
    expect(body.items[0]).not.toHaveProperty('activations');
    expect(body.items[0].customer).toMatchObject({ id: aliceBundle.customerId, avatar_url: expect.stringContaining('gravatar'), metadata: {}, external_id: null, deleted_at: null });
  });

  it('reads a key with its activations where the benefit lets customers manage them', async () => {
    const [appKeyId] = aliceBundle.keyIds;
    const app = await t.org.buyer.customerPortal.licenseKeys.get({ customerSession: alice }, { id: appKeyId });
    expect(app.activations).toEqual([]);
    const activation = await t.org.buyer.customerPortal.licenseKeys.activate({ key: app.key, organizationId: t.org.organizationId, label: 'Laptop', meta: { os: 'linux' } });
    const activated = await t.org.buyer.customerPortal.licenseKeys.get({ customerSession: alice }, { id: appKeyId });
    expect(activated.activations).toEqual([{ id: activation.id, licenseKeyId: appKeyId, label: 'Laptop', meta: { os: 'linux' }, createdAt: expect.any(Date), modifiedAt: expect.any(Date) }]);
  });

  it("hides the activations where the benefit keeps them to the organization", async () => {
    const [pluginKeyId] = alicePlugin.keyIds;
    const plugin = await t.org.buyer.customerPortal.licenseKeys.get({ customerSession: alice }, { id: pluginKeyId });
    await t.org.buyer.customerPortal.licenseKeys.activate({ key: plugin.key, organizationId: t.org.organizationId, label: 'Studio' });
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: pluginKeyId } })).toBe(1);
    expect((await t.org.buyer.customerPortal.licenseKeys.get({ customerSession: alice }, { id: pluginKeyId })).activations).toEqual([]);
  });

  it('still validates a key without a token: the check routes come before the {id} route', async () => {
    const [appKeyId] = bobBundle.keyIds;
    const { key } = await prisma().licenseKey.findUniqueOrThrow({ where: { id: appKeyId } });
    const validated = await t.org.buyer.customerPortal.licenseKeys.validate({ key, organizationId: t.org.organizationId });
    expect(validated.id).toBe(appKeyId);
    expect((await keysOf(bob)).items[0].validations).toBe(1);
  });
});

describe('what another customer reaches', () => {
  it("answers another customer's grant, of this organization or another, exactly as one that does not exist: 404", async () => {
    const unknown = await portal(alice)('GET', `/customer-portal/benefit-grants/${randomUUID()}`);
    expectErrorBody(unknown, 404, 'ResourceNotFound');
    for (const id of [bobBundle.grantIds[0], carolPlugin.grantIds[0]]) {
      const foreign = await portal(alice)('GET', `/customer-portal/benefit-grants/${id}`);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(unknown.body);
    }
    expect(await rejectionOf(t.org.buyer.customerPortal.benefitGrants.get({ customerSession: alice }, { id: bobBundle.grantIds[0] }))).toBeInstanceOf(ResourceNotFound);
  });

  it("answers another customer's license key exactly as one that does not exist: 404", async () => {
    const unknown = await portal(alice)('GET', `/customer-portal/license-keys/${randomUUID()}`);
    expectErrorBody(unknown, 404, 'ResourceNotFound');
    for (const id of [bobBundle.keyIds[0], carolPlugin.keyIds[0]]) {
      const foreign = await portal(alice)('GET', `/customer-portal/license-keys/${id}`);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(unknown.body);
    }
    expect(await rejectionOf(t.org.buyer.customerPortal.licenseKeys.get({ customerSession: alice }, { id: carolPlugin.keyIds[0] }))).toBeInstanceOf(ResourceNotFound);
  });

  it("lists only the customer's own, whatever the filters name", async () => {
    expect(sorted((await grantsOf(bob)).items.map((g) => g.id))).toEqual(sorted(bobBundle.grantIds));
    expect((await keysOf(bob)).items.map((k) => k.id)).toEqual(bobBundle.keyIds);
    expect((await grantsOf(carol)).items.map((g) => g.id)).toEqual(carolPlugin.grantIds);
    expect((await grantsOf(alice, { orderId: bobBundle.orderId })).items).toEqual([]);
    expect((await grantsOf(alice, { checkoutId: [bobBundle.checkoutId, carolPlugin.checkoutId] })).items).toEqual([]);
    expect((await grantsOf(carol, { organizationId: t.org.organizationId })).items).toEqual([]);
    expect((await keysOf(carol, { organizationId: t.org.organizationId })).items).toEqual([]);
  });

  it('reaches nothing of another customer through GraphQL either', async () => {
    const gql = graphqlClient(base(), alice);
    const data = await graphqlData(gql('{ customerPortal { benefitGrants(limit: 100) { items { id customer { id } } } licenseKeys(limit: 100) { items { id customerId } } } }'));
    expect(data.customerPortal.benefitGrants.items.every((g: { customer: { id: string } }) => g.customer.id === aliceBundle.customerId)).toBe(true);
    expect(data.customerPortal.licenseKeys.items.every((k: { customerId: string }) => k.customerId === aliceBundle.customerId)).toBe(true);
    const foreign = await gql('query ($id: UUID!) { customerPortal { benefitGrant(id: $id) { id } } }', { id: bobBundle.grantIds[0] });
    expect(foreign.body.errors?.[0].extensions.code).toBe('RESOURCE_NOT_FOUND');
  });
});

describe("a checkout's session", () => {
  it('reaches only the grants and keys of the purchase that checkout made', async () => {
    const token = aliceBundle.checkoutToken;
    expect(sorted((await grantsOf(token)).items.map((g) => g.id))).toEqual(sorted(aliceBundle.grantIds));
    expect((await keysOf(token)).items.map((k) => k.id)).toEqual(aliceBundle.keyIds);
    expect((await grantsOf(token, { checkoutId: alicePlugin.checkoutId })).items).toEqual([]);
    expect((await portal(token)('GET', `/customer-portal/benefit-grants/${alicePlugin.grantIds[0]}`)).status).toBe(404);
    expect((await portal(token)('GET', `/customer-portal/license-keys/${alicePlugin.keyIds[0]}`)).status).toBe(404);
    expectStatus(await portal(token)('GET', `/customer-portal/license-keys/${aliceBundle.keyIds[0]}`), 200);
  });
});

describe('a revoked grant', () => {
  it('leaves the list and is not found, as on Polar; its license key stays listed, revoked', async () => {
    const dave = await buy(t.org, (await prisma().product.findFirstOrThrow({ where: { organizationId: t.org.organizationId, name: 'Plugin' } })).id, 'dave@example.com', 1);
    const token = await sessionOf(t.org, dave.customerId);
    expect((await grantsOf(token)).items.map((g) => g.id)).toEqual(dave.grantIds);
    const order = await t.org.polar.orders.get({ id: dave.orderId });
    await t.org.polar.refunds.create({ orderId: dave.orderId, reason: 'customer_request', amount: order.netAmount, revokeBenefits: true });
    await eventually(() => grantsOf(token), (page) => page.items.length === 0, 'the revoked grant to leave the list');
    expect((await grantsOf(token)).pagination).toEqual({ totalCount: 0, maxPage: 0 });
    expect((await portal(token)('GET', `/customer-portal/benefit-grants/${dave.grantIds[0]}`)).status).toBe(404);
    const keys = (await keysOf(token)).items;
    expect(keys.map((k) => [k.id, k.status])).toEqual([[dave.keyIds[0], 'revoked']]);
    expect((await t.org.buyer.customerPortal.licenseKeys.get({ customerSession: token }, { id: dave.keyIds[0] })).status).toBe('revoked');
  });
});

describe('tokens of the wrong kind', () => {
  const routes = () => [
    '/customer-portal/benefit-grants/',
    `/customer-portal/benefit-grants/${aliceBundle.grantIds[0]}`,
    '/customer-portal/license-keys/',
    `/customer-portal/license-keys/${aliceBundle.keyIds[0]}`,
  ];

  it('refuses an organization token on the portal routes: 403', async () => {
    for (const path of routes()) expectErrorBody(await t.org.api('GET', path), 403, 'NotPermitted');
    const error = await rejectionOf(t.org.polar.customerPortal.benefitGrants.list({ customerSession: t.org.token }, {}));
    expect((error as SDKError).statusCode).toBe(403);
    const gql = await t.org.gql('{ customerPortal { benefitGrants { items { id } } } }');
    expect(gql.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
  });

  it('refuses no token, an unknown one and a revoked one: 401', async () => {
    const session = await t.org.polar.customerSessions.create({ customerId: aliceBundle.customerId });
    expectStatus(await portal(session.token)('GET', '/customer-portal/license-keys/'), 200);
    expectStatus(await t.org.api('DELETE', `/customer-sessions/${session.id}`), 204);
    for (const token of [undefined, `${session.token}x`, session.token]) {
      for (const path of routes()) expect((await portal(token)('GET', path)).status, `${path} with ${token}`).toBe(401);
    }
  });

  it("refuses a customer token on Core's grants and keys: 403", async () => {
    expectErrorBody(await portal(alice)('GET', `/benefits/${keysBenefitId}/grants`), 403, 'NotPermitted');
    expectErrorBody(await portal(alice)('GET', `/license-keys/${aliceBundle.keyIds[0]}`), 403, 'NotPermitted');
  });
});

// The Customer Portal's customer and organization: a signed-in customer reads and changes their own
// billing details, and their email once they confirm the code sent to it (a session the
// organization issued, not a checkout's; portal-email-change.test.ts probes the change); anyone reads an
// organization's public profile and products by slug. Through the official client, and from the
// attacker's side over raw REST and GraphQL.
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, sdkServerURL, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectValidationError } from '../helpers/responses.ts';
import { datetime } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';
import type { MemoryTransport } from '../../src/email/transport.ts';

const t = useTestServer({
  env: { TEST_CARD_DELAY_MS: '0', EMAIL_TRANSPORT: 'memory' },
  organizations: { org: 'production', other: 'production' },
  resetClockAfterEach: true,
});

const prisma = (environment: 'production' | 'sandbox' = 'production') => t.server.kassa.environments[environment].environment.prisma;
const email = () => `${randomUUID()}@example.com`;

/** The code in the newest mail sent to `to` in production. */
function codeSentTo(to: string): string {
  const mail = (t.server.kassa.environments.production.environment.email as MemoryTransport).sent.filter((m) => m.to === to).at(-1);
  return /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1] ?? 'no code was sent';
}

/** A new customer of the organization, signed in to the portal by a session the organization issued. */
async function signedIn(of: Org, body: Record<string, unknown> = {}) {
  const created = await of.api('POST', '/customers/', { email: email(), ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const session = await of.polar.customerSessions.create({ customerId: created.body.id });
  const base = t.server.base(of.environment);
  return {
    id: created.body.id as string,
    email: created.body.email as string,
    session,
    token: session.token,
    api: restClient(base, session.token),
    gql: graphqlClient(base, session.token),
    security: { customerSession: session.token },
  };
}

/** The customer as the organization sees it, and the events recorded about it. */
async function organizationView(of: Org, customerId: string) {
  const customer = (await of.api('GET', `/customers/${customerId}`)).body;
  const events = (await eventsOf(t.server, of.organizationId, of.environment)).filter((e) => e.resourceId === customerId).map((e) => e.type);
  return { customer, events };
}

const portalCustomerKeys = ['billing_address', 'billing_name', 'created_at', 'email', 'email_verified', 'id', 'modified_at', 'name', 'oauth_accounts', 'tax_id'];

describe('the signed-in customer', () => {
  it('reads their own profile through the official client, without the organization’s fields', async () => {
    const me = await signedIn(t.org, { name: 'Ada Lovelace', external_id: `ext-${randomUUID()}`, metadata: { tier: 'gold' } });
    const customer = await t.org.polar.customerPortal.customers.get(me.security);
    expect(customer).toMatchObject({ id: me.id, email: me.email, name: 'Ada Lovelace', emailVerified: false, billingName: null, billingAddress: null, taxId: null, oauthAccounts: {} });

    const raw = await me.api('GET', '/customer-portal/customers/me');
    expect(raw.status).toBe(200);
    expect(Object.keys(raw.body).sort()).toEqual(portalCustomerKeys);
    expect(raw.body.created_at).toEqual(datetime);
  });

  it('changes billing name, address and tax id through the official client, recording customer.updated', async () => {
    const me = await signedIn(t.org);
    const updated = await t.org.polar.customerPortal.customers.update(me.security, {
      billingName: 'Analytical Engines SARL',
      billingAddress: { line1: '1 rue de Rivoli', postalCode: '75001', city: 'Paris', country: 'FR' },
      taxId: 'FR 61 954 506 077',
    });
    expect(updated).toMatchObject({
      id: me.id,
      billingName: 'Analytical Engines SARL',
      billingAddress: { line1: '1 rue de Rivoli', line2: null, postalCode: '75001', city: 'Paris', state: null, country: 'FR' },
      taxId: ['FR61954506077', 'eu_vat'],
    });
    expect(await t.org.polar.customerPortal.customers.get(me.security)).toEqual(updated);

    const { customer, events } = await organizationView(t.org, me.id);
    expect(customer).toMatchObject({ billing_address: { city: 'Paris', country: 'FR' }, tax_id: ['FR61954506077', 'eu_vat'] });
    expect(events).toEqual(['customer.created', 'customer.updated']);
  });

  it('changes only the fields given, and clears a billing detail given as null', async () => {
    const me = await signedIn(t.org);
    await t.org.polar.customerPortal.customers.update(me.security, { billingName: 'Kept Ltd', billingAddress: { country: 'US' }, taxId: '91-1144442' });
    const cleared = await me.api('PATCH', '/customer-portal/customers/me', { tax_id: null });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body).toMatchObject({ billing_name: 'Kept Ltd', billing_address: { country: 'US' }, tax_id: null });
  });

  it('moves a kept tax id to the format of a new billing country', async () => {
    const me = await signedIn(t.org);
    await t.org.polar.customerPortal.customers.update(me.security, { billingAddress: { country: 'US' }, taxId: '911144442' });
    const moved = await t.org.polar.customerPortal.customers.update(me.security, { billingAddress: { country: 'GB', city: 'London' } });
    expect(moved.taxId).toEqual(['911144442', 'gb_vat']);
  });

  it('changes their email over REST once they confirm the code sent to it: the organization sees it and customer.updated records it', async () => {
    const me = await signedIn(t.org);
    const newEmail = email();
    const asked = await me.api('PATCH', '/customer-portal/customers/me', { email: newEmail });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(asked.body.email).toBe(me.email);
    expect((await organizationView(t.org, me.id)).events).toEqual(['customer.created']);
    const response = await me.api('POST', '/customer-portal/customers/me/email/verify', { code: codeSentTo(newEmail) });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ email: newEmail, email_verified: true });
    expect(Object.keys(response.body).sort()).toEqual(portalCustomerKeys);

    const { customer, events } = await organizationView(t.org, me.id);
    expect(customer.email).toBe(newEmail);
    expect(events).toEqual(['customer.created', 'customer.updated']);
    const recorded = (await eventsOf(t.server, t.org.organizationId)).filter((e) => e.resourceId === me.id && e.type === 'customer.updated');
    expect(recorded.map((e) => (e.data as { email: string }).email)).toEqual([newEmail]);
    // The session signs in the same customer: their id did not change.
    expect((await me.api('GET', '/customer-portal/customers/me')).body.email).toBe(newEmail);
  });

  it('keeps a verified email and its mark until a new one is confirmed, and changes only its case at once', async () => {
    const me = await signedIn(t.org);
    await prisma().customer.update({ where: { id: me.id }, data: { emailVerified: true } });
    const recased = await me.api('PATCH', '/customer-portal/customers/me', { email: me.email.toUpperCase() });
    expect(recased.body, JSON.stringify(recased.body)).toMatchObject({ email: me.email.toUpperCase(), email_verified: true });
    const asked = await me.api('PATCH', '/customer-portal/customers/me', { email: email() });
    expect(asked.body, JSON.stringify(asked.body)).toMatchObject({ email: me.email.toUpperCase(), email_verified: true });
  });

  it('changes their email over GraphQL once they confirm the code sent to it', async () => {
    const me = await signedIn(t.org);
    const newEmail = email();
    const asked = await me.gql('mutation ($input: CustomerPortalCustomerUpdateInput!) { customerPortal { customerUpdate(input: $input) { id email pendingEmail } } }', {
      input: { email: newEmail },
    });
    expect(asked.body).toEqual({ data: { customerPortal: { customerUpdate: { id: me.id, email: me.email, pendingEmail: newEmail } } } });
    const response = await me.gql('mutation ($input: CustomerPortalEmailVerifyInput!) { customerPortal { customerEmailVerify(input: $input) { id email } } }', {
      input: { code: codeSentTo(newEmail) },
    });
    expect(response.body).toEqual({ data: { customerPortal: { customerEmailVerify: { id: me.id, email: newEmail } } } });
  });

  it('asking for the email of another customer of the organization changes no email, and answers as for a free one', async () => {
    const me = await signedIn(t.org);
    const neighbour = await signedIn(t.org);
    const taken = await me.api('PATCH', '/customer-portal/customers/me', { email: neighbour.email.toUpperCase() });
    const free = await me.api('PATCH', '/customer-portal/customers/me', { email: email() });
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect(taken.body).toEqual(free.body);
    expect(taken.body.email).toBe(me.email);
    expect((await organizationView(t.org, me.id)).events).toEqual(['customer.created']);
    expect((await organizationView(t.org, neighbour.id)).customer.email).toBe(neighbour.email);
  });

  it('may take an email used in another organization, or by a deleted customer', async () => {
    const me = await signedIn(t.org);
    const elsewhere = await signedIn(t.other);
    expect((await me.api('PATCH', '/customer-portal/customers/me', { email: elsewhere.email })).status).toBe(200);
    const byOtherOrganization = await me.api('POST', '/customer-portal/customers/me/email/verify', { code: codeSentTo(elsewhere.email) });
    expect(byOtherOrganization.status, JSON.stringify(byOtherOrganization.body)).toBe(200);

    const gone = await signedIn(t.org);
    expect((await t.org.api('DELETE', `/customers/${gone.id}`)).status).toBe(204);
    expect((await me.api('PATCH', '/customer-portal/customers/me', { email: gone.email })).status).toBe(200);
    const freed = await me.api('POST', '/customer-portal/customers/me/email/verify', { code: codeSentTo(gone.email) });
    expect(freed.status, JSON.stringify(freed.body)).toBe(200);
    expect(freed.body.email).toBe(gone.email);
  });

  const badUpdates: [string, Record<string, unknown>, (string | number)[]][] = [
    ['a country that is not one', { billing_address: { country: 'XX' } }, ['body', 'billing_address', 'country']],
    ['a region that is not a country', { billing_address: { country: 'EU' } }, ['body', 'billing_address', 'country']],
    ['a malformed email', { email: 'not-an-email' }, ['body', 'email']],
    ['no email', { email: null }, ['body', 'email']],
    ['a tax id without a billing country', { tax_id: 'FR61954506077' }, ['body', 'billing_address']],
    ['a tax id of a country without tax ids', { billing_address: { country: 'AQ' }, tax_id: '12345' }, ['body', 'tax_id']],
    ['a tax id that is no number', { billing_address: { country: 'FR' }, tax_id: '**' }, ['body', 'tax_id']],
    ['a billing name of 257 characters', { billing_name: 'x'.repeat(257) }, ['body', 'billing_name']],
  ];

  it.each(badUpdates)('refuses %s with 422 naming the field, changing nothing', async (_label, body, loc) => {
    const me = await signedIn(t.org);
    const before = await organizationView(t.org, me.id);
    expectValidationError(await me.api('PATCH', '/customer-portal/customers/me', { billing_name: 'Should not stick', ...body }), loc);
    expect(await organizationView(t.org, me.id)).toEqual(before);
  });

  it('refuses a bad country through the official client with its validation error', async () => {
    const me = await signedIn(t.org);
    const error = await rejectionOf(t.org.polar.customerPortal.customers.update(me.security, { billingAddress: { country: 'ZZ' } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((await t.org.polar.customerPortal.customers.get(me.security)).billingAddress).toBeNull();
  });

  it('does not change another customer of the organization', async () => {
    const me = await signedIn(t.org);
    const neighbour = await signedIn(t.org);
    await t.org.polar.customerPortal.customers.update(me.security, { billingName: 'Mine only' });
    expect((await t.org.polar.customerPortal.customers.get(neighbour.security)).billingName).toBeNull();
    expect((await organizationView(t.org, neighbour.id)).events).toEqual(['customer.created']);
  });
});

describe('who may read or change the profile', () => {
  it("refuses a checkout's session with 403: it reads only what the checkout bought", async () => {
    const shop = await newOrganization(t.server, 'sandbox');
    const product = await shop.polar.products.create({ name: 'Guide', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd' }] });
    const checkout = await shop.polar.checkouts.create({ products: [product.id] });
    const confirmed = await shop.buyer.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { customerEmail: email(), customerName: 'Ada Buyer', confirmationTokenId: 'tok_visa' },
    });
    const token = confirmed.customerSessionToken;
    expect(token).toEqual(expect.any(String));
    const api = restClient(t.server.base('sandbox'), token);
    const customerId = confirmed.customerId!;
    const before = await organizationView(shop, customerId);

    expectErrorBody(await api('GET', '/customer-portal/customers/me'), 403, 'NotPermitted');
    expectErrorBody(await api('PATCH', '/customer-portal/customers/me', { email: email(), billing_name: 'Hijacked' }), 403, 'NotPermitted');
    const gql = await graphqlClient(t.server.base('sandbox'), token)('mutation { customerPortal { customerUpdate(input: { billingName: "Hijacked" }) { id } } }');
    expect(gql.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
    const polar = new Polar({ serverURL: sdkServerURL(t.server, 'sandbox') });
    expect(await rejectionOf(polar.customerPortal.customers.get({ customerSession: token! }))).toBeInstanceOf(Error);

    expect(await organizationView(shop, customerId)).toEqual(before);
  });

  it('refuses an organization token on the portal profile with 403', async () => {
    expectErrorBody(await t.org.api('GET', '/customer-portal/customers/me'), 403, 'NotPermitted');
    expectErrorBody(await t.org.api('PATCH', '/customer-portal/customers/me', { billing_name: 'Org' }), 403, 'NotPermitted');
    const gql = await t.org.gql('query { customerPortal { customer { id } } }');
    expect(gql.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
  });

  it('refuses no token, and a token that is no session, with 401', async () => {
    expectErrorBody(await t.org.publicApi('GET', '/customer-portal/customers/me'), 401, 'Unauthorized');
    expectErrorBody(await t.org.publicApi('PATCH', '/customer-portal/customers/me', { billing_name: 'Nobody' }), 401, 'Unauthorized');
    expectErrorBody(await restClient(t.server.base(), 'polar_cst_forged')('GET', '/customer-portal/customers/me'), 401, 'Unauthorized');
  });

  it('refuses a revoked session with 401, changing nothing', async () => {
    const me = await signedIn(t.org);
    expect((await t.org.api('DELETE', `/customer-sessions/${me.session.id}`)).status).toBe(204);
    const before = await organizationView(t.org, me.id);
    expectErrorBody(await me.api('GET', '/customer-portal/customers/me'), 401, 'Unauthorized');
    expectErrorBody(await me.api('PATCH', '/customer-portal/customers/me', { billing_name: 'Too late' }), 401, 'Unauthorized');
    expect(await organizationView(t.org, me.id)).toEqual(before);
  });

  it('refuses an expired session with 401, changing nothing', async () => {
    const me = await signedIn(t.org);
    expect((await me.api('GET', '/customer-portal/customers/me')).status).toBe(200);
    t.server.clock.now = new Date(me.session.expiresAt.getTime() + 1);
    try {
      expectErrorBody(await me.api('GET', '/customer-portal/customers/me'), 401, 'Unauthorized');
      expectErrorBody(await me.api('PATCH', '/customer-portal/customers/me', { billing_name: 'Too late' }), 401, 'Unauthorized');
    } finally {
      t.server.clock.now = null;
    }
    expect((await organizationView(t.org, me.id)).events).toEqual(['customer.created']);
  });
});

describe('the organization by slug', () => {
  const slugOf = async (of: Org) => (await prisma(of.environment).organization.findUniqueOrThrow({ where: { id: of.organizationId } })).slug;
  let shop: Org;
  let live: string[];
  let archived: string;

  beforeAll(async () => {
    shop = await newOrganization(t.server);
    const support = await shop.polar.benefits.create({ type: 'custom', description: 'Priority support', properties: { note: 'call 555-SECRET' }, metadata: { cost: 'internal' } });
    const create = (name: string, recurringInterval: 'month' | null) =>
      shop.polar.products.create({ name, recurringInterval, metadata: { margin: 'secret' }, prices: [{ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'usd' }] });
    const ebook = await create('Ebook', null);
    const club = await create('Club', 'month');
    const old = await create('Retired', null);
    await shop.polar.products.updateBenefits({ id: club.id, productBenefitsUpdate: { benefits: [support.id] } });
    await shop.polar.products.update({ id: old.id, productUpdate: { isArchived: true } });
    live = [ebook.id, club.id];
    archived = old.id;
    await t.other.polar.products.create({ name: 'Not of this shop', recurringInterval: null, prices: [{ amountType: 'free' }] });
  });

  it('is readable by anyone through the official client, with the live products only', async () => {
    const slug = await slugOf(shop);
    const found = await shop.buyer.customerPortal.organizations.get({ slug });
    expect(found.organization).toMatchObject({ id: shop.organizationId, slug });
    expect(found.products.map((p) => p.id)).toEqual(live);
    expect(found.products.map((p) => p.id)).not.toContain(archived);
    expect(found.products.every((p) => p.organizationId === shop.organizationId && !p.isArchived)).toBe(true);
    const club = found.products.find((p) => p.name === 'Club')!;
    expect(club).toMatchObject({ isRecurring: true, recurringInterval: 'month', medias: [] });
    expect(club.prices).toEqual([expect.objectContaining({ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'usd' })]);
    expect(club.benefits).toEqual([expect.objectContaining({ type: 'custom', description: 'Priority support', organizationId: shop.organizationId })]);
  });

  it('carries only public data on the wire: no metadata, no benefit properties', async () => {
    const response = await t.org.publicApi('GET', `/customer-portal/organizations/${await slugOf(shop)}`);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['organization', 'products']);
    const [product] = response.body.products;
    expect(Object.keys(product).sort()).toEqual([
      'benefits', 'created_at', 'description', 'id', 'is_archived', 'is_recurring', 'medias', 'modified_at', 'name', 'organization_id', 'prices', 'recurring_interval',
    ]);
    const benefit = response.body.products.flatMap((p: { benefits: object[] }) => p.benefits)[0];
    expect(Object.keys(benefit).sort()).toEqual(['created_at', 'deletable', 'description', 'id', 'modified_at', 'organization_id', 'selectable', 'type']);
    const text = JSON.stringify(response.body);
    for (const secret of ['555-SECRET', 'internal', 'margin', 'Not of this shop', t.other.organizationId]) expect(text).not.toContain(secret);
  });

  it('answers the same to a signed-in customer of another organization', async () => {
    const stranger = await signedIn(t.other);
    const response = await stranger.api('GET', `/customer-portal/organizations/${await slugOf(shop)}`);
    expect(response.status).toBe(200);
    expect(response.body.products.map((p: { id: string }) => p.id)).toEqual(live);
  });

  it('lists at most 100 products, oldest first: a public answer has a bounded size', async () => {
    const big = await newOrganization(t.server);
    // 101 products: the 101st, the newest, is left out.
    for (let i = 0; i < 101; i++) expect((await big.api('POST', '/products/', { name: `Item ${String(i).padStart(3, '0')}`, recurring_interval: null, prices: [{ amount_type: 'free' }] })).status).toBe(201);
    const response = await t.org.publicApi('GET', `/customer-portal/organizations/${await slugOf(big)}`);
    expect(response.status).toBe(200);
    expect(response.body.products).toHaveLength(100);
    expect(response.body.products[0].name).toBe('Item 000');
    expect(response.body.products.map((p: { name: string }) => p.name)).not.toContain('Item 100');
  });

  it('answers an unknown slug with 404', async () => {
    expectErrorBody(await t.org.publicApi('GET', `/customer-portal/organizations/no-such-shop-${randomUUID()}`), 404, 'ResourceNotFound');
    expect(await rejectionOf(t.org.buyer.customerPortal.organizations.get({ slug: 'no-such-shop' }))).toBeInstanceOf(ResourceNotFound);
  });

  it('is, for the signed-in customer, the organization they buy from', async () => {
    const me = await signedIn(shop);
    const response = await me.gql('query { customerPortal { organization { id slug } } }');
    expect(response.body).toEqual({ data: { customerPortal: { organization: { id: shop.organizationId, slug: await slugOf(shop) } } } });
  });
});

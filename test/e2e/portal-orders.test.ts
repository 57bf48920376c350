// Customer Portal orders end to end, from the customer's side and from the attacker's. A backend
// signs its customer in by external id; with that token the customer lists and reads their orders
// through the official client (@polar-sh/sdk, whose schemas parse every response), sets billing
// details, generates and downloads the invoice. Another customer of the organization, a customer of
// another organization, a checkout's session, an organization token and no token at all try the
// same routes and get nothing.
//
// In sandbox, on a test clock, with the sandbox job runner stopped: the tests run the due work
// themselves (`settle`), so every purchase and renewal is deterministic.
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import type { CustomerOrder } from '@polar-sh/sdk/models/components/customerorder.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { InvoiceAlreadyExists } from '@polar-sh/sdk/models/errors/invoicealreadyexists.js';
import { MissingInvoiceBillingDetails } from '@polar-sh/sdk/models/errors/missinginvoicebillingdetails.js';
import { NotPaidOrder } from '@polar-sh/sdk/models/errors/notpaidorder.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, graphqlClient, restClient, settleJobs } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, sdkServerURL, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectStatus } from '../helpers/responses.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const start = new Date('2031-05-04T09:00:00.000Z');
const MINUTE = 60_000;
const DAY = 86_400_000;
// Merchant-only data: it is set on the product, the benefit and the checkout, and must never reach a customer.
const SECRET = 'merchant-only-7f3a';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, stopSandboxJobs: true, clock: start });

const sandbox = () => t.server.kassa.environments.sandbox;
const prisma = () => sandbox().environment.prisma;

/** Runs the sweeps and every due job until nothing is left to do at the current time. */
async function settle() {
  await settleJobs(sandbox().jobs);
}

/** The official client as a customer's app uses it: no organization token, a customer session per call. */
const portalClient = () => new Polar({ serverURL: sdkServerURL(t.server, 'sandbox') });
const portalApi = (token?: string): Api => restClient(t.server.base('sandbox'), token);
const portalGql = (token?: string) => graphqlClient(t.server.base('sandbox'), token);

async function product(org: Org, name: string, priceAmount: number, recurringInterval: 'month' | null = null) {
  return org.polar.products.create({ name, recurringInterval, prices: [{ amountType: 'fixed', priceAmount, priceCurrency: 'usd' }], metadata: { cost_center: SECRET } });
}

interface Purchase {
  checkoutId: string;
  /** The session the checkout confirmation hands its buyer. */
  checkoutSessionToken: string;
  orderId: string;
  customerId: string;
}

/** A buyer confirms a checkout of the product with a test card; the payment is settled. The clock then moves on a minute. */
async function purchase(org: Org, productId: string, email: string, { name, card = 'tok_visa' }: { name?: string; card?: string } = {}): Promise<Purchase> {
  const checkout = await org.polar.checkouts.create({ products: [productId], metadata: { campaign: SECRET } });
  const confirmed = await org.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: email, ...(name ? { customerName: name } : {}), confirmationTokenId: card },
  });
  await settle();
  const [order] = (await org.polar.orders.list({ checkoutId: checkout.id })).result.items;
  t.server.clock.now = new Date(t.server.clock.now!.getTime() + MINUTE);
  return { checkoutId: checkout.id, checkoutSessionToken: confirmed.customerSessionToken, orderId: order.id, customerId: order.customerId };
}

/** A customer session issued by the organization's backend, by customer id. */
async function sessionFor(org: Org, customerId: string): Promise<string> {
  return (await org.polar.customerSessions.create({ customerId })).token;
}

const BILLING = { billing_name: 'Alice Reader Ltd', billing_address: { line1: '1 Quay Street', postal_code: 'D02 X285', city: 'Dublin', country: 'IE' } };

// The organization's shop and its customers, shared by the tests below.
let org: Org;
let other: Org;
let alice: { token: string; customerId: string; ebook: Purchase; course: Purchase; plan: Purchase; declined: Purchase };
let bob: { token: string; order: Purchase };
let carol: { token: string; order: Purchase };
let productIds: { ebook: string; course: string; plan: string };

beforeAll(async () => {
  [org, other] = await Promise.all([newOrganization(t.server, 'sandbox'), newOrganization(t.server, 'sandbox')]);
  const benefit = await org.polar.benefits.create({ type: 'custom', description: 'Reader community', properties: { note: 'Welcome aboard' }, metadata: { internal: SECRET } });
  const [ebook, course, plan] = [await product(org, 'Field Guide Ebook', 1999), await product(org, 'Video Course', 4900), await product(org, 'Monthly Plan', 900, 'month')];
  await org.polar.products.updateBenefits({ id: ebook.id, productBenefitsUpdate: { benefits: [benefit.id] } });
  productIds = { ebook: ebook.id, course: course.id, plan: plan.id };

  // The shop set Alice's address, so all her purchases reach her.
  await org.polar.customers.create({ email: 'alice@example.com' });
  const aliceEbook = await purchase(org, ebook.id, 'alice@example.com');
  const aliceCourse = await purchase(org, course.id, 'alice@example.com', { name: 'Alice Reader' });
  const alicePlan = await purchase(org, plan.id, 'alice@example.com');
  const aliceDeclined = await purchase(org, course.id, 'alice@example.com', { card: 'tok_chargeDeclined' });
  const bobEbook = await purchase(org, ebook.id, 'bob@example.com', { name: 'Bob Buyer' });
  const carolOrder = await purchase(other, (await product(other, 'Other Shop Ebook', 1500)).id, 'carol@example.com', { name: 'Carol' });

  // The backend names its customer by its own id, as the acceptance flow does.
  expectStatus(await org.api('PATCH', `/customers/${aliceEbook.customerId}`, { external_id: 'crm-alice' }), 200);
  const aliceSession = await org.polar.customerSessions.create({ externalCustomerId: 'crm-alice' });
  expect(aliceSession.customerId).toBe(aliceEbook.customerId);

  alice = { token: aliceSession.token, customerId: aliceEbook.customerId, ebook: aliceEbook, course: aliceCourse, plan: alicePlan, declined: aliceDeclined };
  bob = { token: await sessionFor(org, bobEbook.customerId), order: bobEbook };
  carol = { token: await sessionFor(other, carolOrder.customerId), order: carolOrder };
});

const aliceOrderIds = () => [alice.declined.orderId, alice.plan.orderId, alice.course.orderId, alice.ebook.orderId];

// =============================================================================================
// The customer's own orders
// =============================================================================================

describe('a customer reads their own orders through the official client', () => {
  it('lists exactly their own orders, newest first, as the client library’s CustomerOrder', async () => {
    const page = await portalClient().customerPortal.orders.list({ customerSession: alice.token }, {});
    expect(page.result.items.map((o) => o.id)).toEqual(aliceOrderIds());
    expect(page.result.pagination).toEqual({ totalCount: 4, maxPage: 1 });
    expect(new Set(page.result.items.map((o) => o.customerId))).toEqual(new Set([alice.customerId]));
  });

  it('carries the product with its prices, public benefits and organization, and the subscription of a subscription order', async () => {
    const portal = portalClient();
    const ebook = await portal.customerPortal.orders.get({ customerSession: alice.token }, { id: alice.ebook.orderId });
    expect(ebook).toMatchObject({
      id: alice.ebook.orderId,
      status: 'paid',
      paid: true,
      totalAmount: 1999,
      currency: 'usd',
      billingReason: 'purchase',
      isInvoiceGenerated: false,
      productId: productIds.ebook,
      subscriptionId: null,
      subscription: null,
      checkoutId: alice.ebook.checkoutId,
      discountId: null,
      nextPaymentAttemptAt: null,
      product: {
        id: productIds.ebook,
        name: 'Field Guide Ebook',
        isRecurring: false,
        organizationId: org.organizationId,
        prices: [expect.objectContaining({ amountType: 'fixed', priceAmount: 1999 })],
        benefits: [expect.objectContaining({ type: 'custom', description: 'Reader community', organizationId: org.organizationId })],
        medias: [],
        organization: expect.objectContaining({ id: org.organizationId }),
      },
      items: [expect.objectContaining({ label: 'Field Guide Ebook', amount: 1999 })],
    });

    const plan = await portal.customerPortal.orders.get({ customerSession: alice.token }, { id: alice.plan.orderId });
    expect(plan).toMatchObject({ billingReason: 'subscription_create', product: { isRecurring: true, recurringInterval: 'month' } });
    expect(plan.subscription).toMatchObject({ id: plan.subscriptionId, status: 'active', customerId: alice.customerId, productId: productIds.plan, discountId: null });
  });

  it('shows the customer no merchant metadata and no way to another record', async () => {
    const listed = expectStatus(await portalApi(alice.token)('GET', '/customer-portal/orders/'), 200);
    const one = expectStatus(await portalApi(alice.token)('GET', `/customer-portal/orders/${alice.plan.orderId}`), 200);
    const ebook = expectStatus(await portalApi(alice.token)('GET', `/customer-portal/orders/${alice.ebook.orderId}`), 200);
    for (const body of [listed, one, ebook]) expect(JSON.stringify(body)).not.toContain(SECRET);
    expect(Object.keys(one).sort()).toEqual(
      [
        'billing_address', 'billing_name', 'billing_reason', 'checkout_id', 'created_at', 'currency', 'customer_id', 'discount_amount', 'discount_id',
        'id', 'is_invoice_generated', 'items', 'modified_at', 'net_amount', 'next_payment_attempt_at', 'paid', 'product', 'product_id',
        'refunded_amount', 'refunded_tax_amount', 'status', 'subscription', 'subscription_id', 'subtotal_amount', 'tax_amount', 'total_amount', 'user_id',
      ].sort(),
    );
    expect(one.product).not.toHaveProperty('metadata');
    expect(one.subscription).not.toHaveProperty('metadata');
    expect(Object.keys(ebook.product.benefits[0]).sort()).toEqual(['created_at', 'deletable', 'description', 'id', 'modified_at', 'organization_id', 'selectable', 'type']);
  });

  it('offers in GraphQL no type that leads from an order into Core types or to metadata', async () => {
    const { body } = await portalGql(alice.token)(`{ __schema { types { name kind fields { name type { name kind ofType { name kind ofType { name kind ofType { name } } } } } } } }`);
    const types = new Map<string, { name: string; fields: { name: string; type: any }[] | null }>(body.data.__schema.types.map((t: any) => [t.name, t]));
    const named = (type: any): string => (type.name ?? named(type.ofType));
    const reachable = new Set<string>();
    const visit = (name: string) => {
      if (reachable.has(name)) return;
      reachable.add(name);
      for (const field of types.get(name)?.fields ?? []) visit(named(field.type));
    };
    visit('CustomerOrder');
    for (const core of ['Customer', 'Order', 'Subscription', 'Product', 'Benefit', 'BenefitGrant', 'Checkout', 'Refund']) expect(reachable, core).not.toContain(core);
    for (const name of reachable) expect((types.get(name)?.fields ?? []).map((f) => f.name), name).not.toContain('metadata');
  });

  it('filters by product, billing type, subscription and product name', async () => {
    const api = portalApi(alice.token);
    const ids = async (query: string) => expectStatus(await api('GET', `/customer-portal/orders/${query}`), 200).items.map((o: { id: string }) => o.id);
    expect(await ids(`?product_id=${productIds.course}`)).toEqual([alice.declined.orderId, alice.course.orderId]);
    expect(await ids('?product_billing_type=recurring')).toEqual([alice.plan.orderId]);
    expect(await ids('?product_billing_type=one_time')).toEqual([alice.declined.orderId, alice.course.orderId, alice.ebook.orderId]);
    const plan = expectStatus(await api('GET', `/customer-portal/orders/${alice.plan.orderId}`), 200);
    expect(await ids(`?subscription_id=${plan.subscription_id}`)).toEqual([alice.plan.orderId]);
    // `query` searches the product's name, case-insensitively, with LIKE wildcards matching only themselves.
    expect(await ids('?query=GUIDE')).toEqual([alice.ebook.orderId]);
    expect(await ids('?query=%25')).toEqual([]);
    expect(await ids(`?organization_id=${other.organizationId}`)).toEqual([]);
    expect(await ids(`?organization_id=${org.organizationId}`)).toEqual(aliceOrderIds());

    const sdk = await portalClient().customerPortal.orders.list({ customerSession: alice.token }, { productBillingType: 'recurring', query: 'plan' });
    expect(sdk.result.items.map((o) => o.id)).toEqual([alice.plan.orderId]);
  });

  it('sorts and pages', async () => {
    const api = portalApi(alice.token);
    const byProduct = expectStatus(await api('GET', '/customer-portal/orders/?sorting=product&sorting=created_at'), 200);
    expect(byProduct.items.map((o: { product: { name: string } }) => o.product.name)).toEqual(['Field Guide Ebook', 'Monthly Plan', 'Video Course', 'Video Course']);
    const byAmount = expectStatus(await api('GET', '/customer-portal/orders/?sorting=-net_amount&sorting=created_at'), 200);
    expect(byAmount.items.map((o: { net_amount: number }) => o.net_amount)).toEqual([4900, 4900, 1999, 900]);
    const second = expectStatus(await api('GET', '/customer-portal/orders/?limit=3&page=2'), 200);
    expect(second).toMatchObject({ items: [{ id: alice.ebook.orderId }], pagination: { total_count: 4, max_page: 2 } });
  });
});

// =============================================================================================
// Billing details and the invoice
// =============================================================================================

describe('billing details and the invoice, with the same rules and errors as Core', () => {
  it('refuses to invoice an order without a billing address: 422 MissingInvoiceBillingDetails', async () => {
    const error = await rejectionOf(portalClient().customerPortal.orders.generateInvoice({ customerSession: alice.token }, { id: alice.course.orderId }));
    expect(error).toBeInstanceOf(MissingInvoiceBillingDetails);
    expect((error as MissingInvoiceBillingDetails).statusCode).toBe(422);
    expect(await prisma().invoice.count({ where: { orderId: alice.course.orderId } })).toBe(0);
  });

  it('refuses to invoice an unpaid order: 422 NotPaidOrder', async () => {
    expectStatus(await portalApi(alice.token)('PATCH', `/customer-portal/orders/${alice.declined.orderId}`, BILLING), 200);
    const error = await rejectionOf(portalClient().customerPortal.orders.generateInvoice({ customerSession: alice.token }, { id: alice.declined.orderId }));
    expect(error).toBeInstanceOf(NotPaidOrder);
    expect(await prisma().invoice.count({ where: { orderId: alice.declined.orderId } })).toBe(0);
  });

  it('answers GET invoice before generation with 404, telling to generate it first', async () => {
    const error = await rejectionOf(portalClient().customerPortal.orders.invoice({ customerSession: alice.token }, { id: alice.ebook.orderId }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    expect((error as ResourceNotFound).detail).toMatch(/generate/i);
  });

  it('refuses a billing address with an unknown country: 422 at body.billing_address.country, nothing changed', async () => {
    const before = expectStatus(await org.api('GET', `/orders/${alice.ebook.orderId}`), 200);
    const response = await portalApi(alice.token)('PATCH', `/customer-portal/orders/${alice.ebook.orderId}`, { billing_address: { country: 'XX' } });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'billing_address', 'country'] })]);
    const unknownKey = await portalApi(alice.token)('PATCH', `/customer-portal/orders/${alice.ebook.orderId}`, { billing_name: 'X', customer_id: bob.order.customerId });
    expect(unknownKey.status).toBe(422);
    expect(unknownKey.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'customer_id'], type: 'extra_forbidden' })]);
    expect(expectStatus(await org.api('GET', `/orders/${alice.ebook.orderId}`), 200)).toEqual(before);
  });

  it('sets billing details through the official client, recording order.updated as Core does', async () => {
    const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    const updated = await portalClient().customerPortal.orders.update(
      { customerSession: alice.token },
      { id: alice.ebook.orderId, customerOrderUpdate: { billingName: BILLING.billing_name, billingAddress: { line1: '1 Quay Street', postalCode: 'D02 X285', city: 'Dublin', country: 'IE' } } },
    );
    expect(updated).toMatchObject({ id: alice.ebook.orderId, billingName: 'Alice Reader Ltd', billingAddress: { city: 'Dublin', country: 'IE' }, isInvoiceGenerated: false });
    const core = expectStatus(await org.api('GET', `/orders/${alice.ebook.orderId}`), 200);
    expect(core).toMatchObject({ billing_name: 'Alice Reader Ltd', billing_address: { country: 'IE', postal_code: 'D02 X285' } });
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(before);
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([['order.updated', alice.ebook.orderId]]);
    expect(events[0].data).toEqual(core);
  });

  it('generates the invoice: 202, the order invoiced, one order.updated event, and a link to the PDF', async () => {
    const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    const response = await portalApi(alice.token)('POST', `/customer-portal/orders/${alice.ebook.orderId}/invoice`);
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    expect(response.body).toMatchObject({ id: alice.ebook.orderId, is_invoice_generated: true });
    const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(before);
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([['order.updated', alice.ebook.orderId]]);

    const { url } = await portalClient().customerPortal.orders.invoice({ customerSession: alice.token }, { id: alice.ebook.orderId });
    const file = await fetch(url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await file.arrayBuffer()).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect((await portalClient().customerPortal.orders.get({ customerSession: alice.token }, { id: alice.ebook.orderId })).isInvoiceGenerated).toBe(true);
  });

  it('answers a second generation with 409 InvoiceAlreadyExists, changing nothing', async () => {
    const invoices = await prisma().invoice.findMany({ where: { orderId: alice.ebook.orderId } });
    const error = await rejectionOf(portalClient().customerPortal.orders.generateInvoice({ customerSession: alice.token }, { id: alice.ebook.orderId }));
    expect(error).toBeInstanceOf(InvoiceAlreadyExists);
    expect(await prisma().invoice.findMany({ where: { orderId: alice.ebook.orderId } })).toEqual(invoices);
  });

  it('refuses billing changes once the invoice exists: 422, nothing changed, no event', async () => {
    const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    const order = expectStatus(await org.api('GET', `/orders/${alice.ebook.orderId}`), 200);
    const error = await rejectionOf(
      portalClient().customerPortal.orders.update({ customerSession: alice.token }, { id: alice.ebook.orderId, customerOrderUpdate: { billingName: 'Someone Else', billingAddress: null } }),
    );
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).statusCode).toBe(422);
    expect(expectStatus(await org.api('GET', `/orders/${alice.ebook.orderId}`), 200)).toEqual(order);
    expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(before);
  });
});

// =============================================================================================
// The attacker's side
// =============================================================================================

describe('another customer’s order is answered exactly as one that does not exist', () => {
  const attempts = (id: string) =>
    [
      ['GET', `/customer-portal/orders/${id}`, undefined],
      ['PATCH', `/customer-portal/orders/${id}`, { billing_name: 'Mallory', billing_address: { country: 'US' } }],
      ['POST', `/customer-portal/orders/${id}/invoice`, undefined],
      ['GET', `/customer-portal/orders/${id}/invoice`, undefined],
    ] as const;

  for (const [who, token] of [
    ['another customer of the same organization', () => bob.token],
    ['a customer of another organization', () => carol.token],
  ] as const) {
    it(`refuses ${who} every route on the victim’s orders with 404, changing nothing`, async () => {
      const before = { events: (await eventsOf(t.server, org.organizationId, 'sandbox')).length, invoices: await prisma().invoice.count() };
      const coreView = () => Promise.all(aliceOrderIds().map(async (id) => expectStatus(await org.api('GET', `/orders/${id}`), 200)));
      const victimOrders = await coreView();
      const api = portalApi(token());
      const unknown = randomUUID();
      for (const victim of [alice.course.orderId, alice.ebook.orderId, alice.plan.orderId]) {
        const answers = attempts(victim);
        const unknownAnswers = attempts(unknown);
        for (const [i, [method, path, body]] of answers.entries()) {
          const response = await api(method, path, body);
          expectErrorBody(response, 404, 'ResourceNotFound');
          expect(response.body, `${method} ${path}`).toEqual((await api(unknownAnswers[i][0], unknownAnswers[i][1], unknownAnswers[i][2])).body);
        }
      }
      expect((await eventsOf(t.server, org.organizationId, 'sandbox')).length).toBe(before.events);
      expect(await prisma().invoice.count()).toBe(before.invoices);
      expect(await coreView()).toEqual(victimOrders);
    });
  }

  it('raises the official client’s not-found errors for another customer’s order', async () => {
    const portal = portalClient();
    const session = { customerSession: bob.token };
    for (const call of [
      () => portal.customerPortal.orders.get(session, { id: alice.course.orderId }),
      () => portal.customerPortal.orders.update(session, { id: alice.course.orderId, customerOrderUpdate: { billingName: 'Mallory', billingAddress: { country: 'US' } } }),
      () => portal.customerPortal.orders.invoice(session, { id: alice.ebook.orderId }),
    ]) {
      expect(await rejectionOf(call())).toBeInstanceOf(ResourceNotFound);
    }
    // The client library declares no 404 for invoice generation: it raises its generic error with the status.
    const generation = await rejectionOf(portal.customerPortal.orders.generateInvoice(session, { id: alice.course.orderId }));
    expect(generation).toBeInstanceOf(SDKError);
    expect((generation as SDKError).statusCode).toBe(404);
    expect((await org.polar.orders.get({ id: alice.course.orderId })).billingName).toBe('Alice Reader');
  });

  it('lists to each customer only their own orders, whatever the filters name', async () => {
    const api = portalApi(bob.token);
    const ids = async (query = '') => expectStatus(await api('GET', `/customer-portal/orders/${query}`), 200).items.map((o: { id: string }) => o.id);
    expect(await ids()).toEqual([bob.order.orderId]);
    const alicePlan = expectStatus(await portalApi(alice.token)('GET', `/customer-portal/orders/${alice.plan.orderId}`), 200);
    expect(await ids(`?subscription_id=${alicePlan.subscription_id}`)).toEqual([]);
    expect(await ids(`?product_id=${productIds.course}`)).toEqual([]);
    const carolList = expectStatus(await portalApi(carol.token)('GET', '/customer-portal/orders/'), 200);
    expect(carolList.items.map((o: { id: string }) => o.id)).toEqual([carol.order.orderId]);
    expect(carolList.pagination).toEqual({ total_count: 1, max_page: 1 });
  });

  it('answers another customer’s order in GraphQL as RESOURCE_NOT_FOUND, for reads and changes', async () => {
    const gql = portalGql(bob.token);
    const read = await gql('query ($id: UUID!) { customerPortal { order(id: $id) { id billingName } } }', { id: alice.course.orderId });
    expect(read.body.errors?.map((e: any) => e.extensions.code)).toEqual(['RESOURCE_NOT_FOUND']);
    const change = await gql('mutation ($id: UUID!) { customerPortal { orderUpdate(id: $id, input: { billingName: "Mallory" }) { id } } }', { id: alice.course.orderId });
    expect(change.body.errors?.map((e: any) => e.extensions.code)).toEqual(['RESOURCE_NOT_FOUND']);
    expect((await org.polar.orders.get({ id: alice.course.orderId })).billingName).toBe('Alice Reader');
  });
});

describe('a checkout’s customer session reaches only what that checkout bought, and only to read', () => {
  it('lists and reads only the checkout’s order', async () => {
    const api = portalApi(alice.course.checkoutSessionToken);
    const listed = expectStatus(await api('GET', '/customer-portal/orders/'), 200);
    expect(listed.items.map((o: { id: string }) => o.id)).toEqual([alice.course.orderId]);
    expectStatus(await api('GET', `/customer-portal/orders/${alice.course.orderId}`), 200);
    for (const id of [alice.ebook.orderId, alice.plan.orderId, bob.order.orderId]) {
      expectErrorBody(await api('GET', `/customer-portal/orders/${id}`), 404, 'ResourceNotFound');
      expectErrorBody(await api('GET', `/customer-portal/orders/${id}/invoice`), 404, 'ResourceNotFound');
    }
  });

  it('may not change billing details nor generate an invoice: 403, nothing changed', async () => {
    const api = portalApi(alice.course.checkoutSessionToken);
    const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
    expectErrorBody(await api('PATCH', `/customer-portal/orders/${alice.course.orderId}`, BILLING), 403, 'NotPermitted');
    expectErrorBody(await api('POST', `/customer-portal/orders/${alice.course.orderId}/invoice`), 403, 'NotPermitted');
    expect((await org.polar.orders.get({ id: alice.course.orderId })).billingAddress).toBeNull();
    expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(before);
  });
});

describe('tokens that do not sign a customer in', () => {
  const routes = () =>
    [
      ['GET', '/customer-portal/orders/', undefined],
      ['GET', `/customer-portal/orders/${alice.ebook.orderId}`, undefined],
      ['PATCH', `/customer-portal/orders/${alice.course.orderId}`, BILLING],
      ['POST', `/customer-portal/orders/${alice.course.orderId}/invoice`, undefined],
      ['GET', `/customer-portal/orders/${alice.ebook.orderId}/invoice`, undefined],
    ] as const;

  it('refuses the organization’s own token on every portal order route: 403', async () => {
    for (const [method, path, body] of routes()) expectErrorBody(await org.api(method, path, body), 403, 'NotPermitted');
    expect((await org.polar.orders.get({ id: alice.course.orderId })).billingAddress).toBeNull();
  });

  it('asks for a token when there is none, or it is revoked or expired: 401', async () => {
    const session = await org.polar.customerSessions.create({ customerId: alice.customerId });
    expectStatus(await portalApi(session.token)('GET', '/customer-portal/orders/'), 200);
    expect((await org.api('DELETE', `/customer-sessions/${session.id}`)).status).toBe(204);
    const expiring = await sessionFor(org, alice.customerId);
    t.server.clock.now = new Date(t.server.clock.now!.getTime() + 2 * 60 * MINUTE);
    try {
      for (const token of [undefined, session.token, expiring, `${expiring}x`]) {
        for (const [method, path, body] of routes()) expectErrorBody(await portalApi(token)(method, path, body), 401, 'Unauthorized');
      }
    } finally {
      t.server.clock.now = new Date(t.server.clock.now!.getTime() - 2 * 60 * MINUTE);
    }
  });

  it('refuses a customer token on the Core order routes', async () => {
    for (const [method, path] of [
      ['GET', '/orders/'],
      ['GET', `/orders/${alice.ebook.orderId}`],
      ['POST', `/orders/${alice.course.orderId}/invoice`],
    ] as const) {
      const response = await portalApi(alice.token)(method, path);
      expect([401, 403], `${method} ${path}: ${JSON.stringify(response.body)}`).toContain(response.status);
    }
  });
});

describe('bad input gets a 4xx naming the parameter, never a 500', () => {
  it.each([
    ['?limit=0', ['query', 'limit']],
    ['?limit=101', ['query', 'limit']],
    ['?page=0', ['query', 'page']],
    ['?sorting=-status', ['query', 'sorting', 0]],
    ['?product_billing_type=weekly', ['query', 'product_billing_type', 0]],
    ['?product_id=not-a-uuid', ['query', 'product_id', 0]],
  ])('GET orders/%s is a 422 at %j', async (query, loc) => {
    const response = await portalApi(alice.token)('GET', `/customer-portal/orders/${query}`);
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    expect(response.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
  });

  it('answers a malformed order id with 422 on every route', async () => {
    for (const [method, path] of [
      ['GET', '/customer-portal/orders/12345'],
      ['PATCH', '/customer-portal/orders/12345'],
      ['POST', '/customer-portal/orders/12345/invoice'],
      ['GET', '/customer-portal/orders/12345/invoice'],
    ] as const) {
      const response = await portalApi(alice.token)(method, path, method === 'PATCH' ? { billing_name: 'X' } : undefined);
      expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(422);
    }
  });

  it('answers a PATCH whose body is not a JSON object with a 4xx, nothing changed', async () => {
    const before = expectStatus(await org.api('GET', `/orders/${alice.course.orderId}`), 200);
    for (const body of ['not json', '[]', '"text"', '{"billing_name": 5}']) {
      const response = await portalApi(alice.token)('PATCH', `/customer-portal/orders/${alice.course.orderId}`, body);
      expect(response.status, `${body}: ${JSON.stringify(response.body)}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `${body}: ${JSON.stringify(response.body)}`).toBeLessThan(500);
    }
    expect(expectStatus(await org.api('GET', `/orders/${alice.course.orderId}`), 200)).toEqual(before);
  });
});

// =============================================================================================
// A declined renewal (moves the clock a month on; last)
// =============================================================================================

describe('a declined renewal, seen by its customer', () => {
  let dave: Purchase;
  let renewal: CustomerOrder;
  let token: string;
  beforeAll(async () => {
    dave = await purchase(org, productIds.plan, 'dave@example.com', { name: 'Dave' });
    const subscription = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: dave.checkoutId } });
    const set = await org.gql('mutation ($id: UUID!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: "tok_chargeDeclined") { id } } }', { id: subscription.id });
    expect(set.body.errors).toBeUndefined();
    t.server.clock.now = new Date(subscription.currentPeriodEnd.getTime() + MINUTE);
    await settle();
    token = await sessionFor(org, dave.customerId);
    const page = await portalClient().customerPortal.orders.list({ customerSession: token }, { subscriptionId: subscription.id });
    expect(page.result.items.map((o) => o.billingReason)).toEqual(['subscription_cycle', 'subscription_create']);
    renewal = page.result.items[0];
  });
  afterAll(() => {
    t.server.clock.now = start;
  });

  it('tells when the unpaid renewal is charged again, and nothing for the paid first order', async () => {
    const subscription = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: dave.checkoutId } });
    expect(subscription.status).toBe('past_due');
    expect(renewal).toMatchObject({ status: 'pending', paid: false, subscription: { status: 'past_due' } });
    expect(renewal.nextPaymentAttemptAt).toEqual(subscription.retryAt);
    expect(subscription.retryAt!.getTime()).toBe(t.server.clock.now!.getTime() + DAY);
    const first = await portalClient().customerPortal.orders.get({ customerSession: token }, { id: dave.orderId });
    expect(first.nextPaymentAttemptAt).toBeNull();
  });

  it('refuses to invoice the unpaid renewal: 422 NotPaidOrder', async () => {
    expectStatus(await portalApi(token)('PATCH', `/customer-portal/orders/${renewal.id}`, BILLING), 200);
    const error = await rejectionOf(portalClient().customerPortal.orders.generateInvoice({ customerSession: token }, { id: renewal.id }));
    expect(error).toBeInstanceOf(NotPaidOrder);
  });
});

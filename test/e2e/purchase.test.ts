// The purchase flow end to end, in sandbox: a checkout is created by the organization, filled in
// and confirmed by the buyer with a test card, and the payment job turns it into a paid order (or
// a failed checkout). Once through the official client (@polar-sh/sdk), whose own schemas parse
// every response, and once through GraphQL. Payment runs in a background job shortly after the
// confirmation, so the outcome is polled for, never waited for a fixed time.
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { ResponseValidationError } from '@polar-sh/sdk/models/errors/responsevalidationerror.js';
import type { Checkout } from '@polar-sh/sdk/models/components/checkout.js';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { restClient, type RestResponse } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, type Org } from '../helpers/organizations.ts';
import { buyWithCheckout, checkoutWhen, fixedProduct, ordersOfCheckout, paidOrderOf } from '../helpers/purchases.ts';
import { expectStatus, graphqlData, graphqlFailure } from '../helpers/responses.ts';
import { uuid } from '../helpers/matchers.ts';
import { eventually, rejectionOf, sleep } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '300' } });

const TEST_CARD_DELAY_MS = 300;
const PAID_ORDER_EVENTS = ['checkout.created', 'customer.created', 'order.created', 'checkout.updated', 'order.updated', 'order.paid', 'checkout.updated'];

const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

/** Checkout amounts against the order's: amount→subtotal, and discount, net, tax, total alike. */
function amountsOfCheckout(c: { amount: number; discountAmount: number; netAmount: number; taxAmount: number | null; totalAmount: number }) {
  return { subtotal: c.amount, discount: c.discountAmount, net: c.netAmount, tax: c.taxAmount, total: c.totalAmount };
}
function amountsOfOrder(o: { subtotalAmount: number; discountAmount: number; netAmount: number; taxAmount: number; totalAmount: number }) {
  return { subtotal: o.subtotalAmount, discount: o.discountAmount, net: o.netAmount, tax: o.taxAmount, total: o.totalAmount };
}

// ---------------------------------------------------------------------------------------------
// The official client
// ---------------------------------------------------------------------------------------------

describe('a purchase through the official SDK in sandbox', () => {
  async function payWhatYouWantProduct(org: Org) {
    return org.polar.products.create({
      name: 'Donation',
      recurringInterval: null,
      prices: [{ amountType: 'custom', priceCurrency: 'usd', minimumAmount: 500, maximumAmount: 10_000, presetAmount: 2_000 }],
    });
  }
  async function freeProduct(org: Org) {
    return org.polar.products.create({ name: 'Free sample', recurringInterval: null, prices: [{ amountType: 'free' }] });
  }

  describe('creating checkouts', () => {
    let org: Org;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
    });

    it('creates an open checkout for a fixed price with its amounts, its page url and an expiry one hour out', async () => {
      const product = await fixedProduct(org);
      const before = Date.now();
      const checkout = await org.polar.checkouts.create({ products: [product.id], metadata: { source: 'e2e' } });
      expect(checkout).toMatchObject({
        id: uuid,
        status: 'open',
        paymentProcessor: 'stripe',
        amount: 1999,
        discountAmount: 0,
        netAmount: 1999,
        taxAmount: 0,
        totalAmount: 1999,
        currency: 'usd',
        productId: product.id,
        productPriceId: product.prices[0].id,
        customerId: null,
        customerEmail: null,
        metadata: { source: 'e2e' },
        isFreeProductPrice: false,
        isPaymentRequired: true,
        isPaymentFormRequired: true,
        discount: null,
      });
      expect(checkout.products.map((p) => p.id)).toEqual([product.id]);
      expect(checkout.product.id).toBe(product.id);
      expect(checkout.clientSecret.length).toBeGreaterThan(20);
      expect(checkout.url).toContain(checkout.clientSecret);
      const lifetime = checkout.expiresAt.getTime() - checkout.createdAt.getTime();
      expect(lifetime).toBeGreaterThan(3600_000 - 5_000);
      expect(lifetime).toBeLessThanOrEqual(3600_000 + 5_000);
      expect(checkout.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5_000);
    });

    it('returns the external customer id under both external_customer_id and customer_external_id', async () => {
      const product = await fixedProduct(org, 'External id book');
      const checkout = await org.polar.checkouts.create({ products: [product.id], externalCustomerId: 'crm-42' });
      expect(checkout.externalCustomerId).toBe('crm-42');
      expect(checkout.customerExternalId).toBe('crm-42');
      const rest = expectStatus(await org.api('GET', `/checkouts/${checkout.id}`), 200);
      expect(rest.external_customer_id).toBe('crm-42');
      expect(rest.customer_external_id).toBe('crm-42');
      const listed = expectStatus(await org.api('GET', `/checkouts/?product_id=${product.id}`), 200);
      expect(listed.items.map((c: any) => [c.external_customer_id, c.customer_external_id])).toEqual([['crm-42', 'crm-42']]);
    });

    it('returns both external id keys as null when none was given', async () => {
      const product = await fixedProduct(org, 'Anonymous book');
      const checkout = await org.polar.checkouts.create({ products: [product.id] });
      expect(checkout.externalCustomerId).toBeNull();
      expect(checkout.customerExternalId).toBeNull();
    });

    it('creates a pay-what-you-want checkout at the amount asked when it is within the price bounds', async () => {
      const product = await payWhatYouWantProduct(org);
      const checkout = await org.polar.checkouts.create({ products: [product.id], amount: 2_500 });
      expect(checkout).toMatchObject({ amount: 2_500, discountAmount: 0, netAmount: 2_500, taxAmount: 0, totalAmount: 2_500, isPaymentRequired: true });
      const atMinimum = await org.polar.checkouts.create({ products: [product.id], amount: 500 });
      expect(atMinimum.totalAmount).toBe(500);
      const atMaximum = await org.polar.checkouts.create({ products: [product.id], amount: 10_000 });
      expect(atMaximum.totalAmount).toBe(10_000);
    });

    it('starts a pay-what-you-want checkout at the preset amount when no amount is given', async () => {
      const product = await payWhatYouWantProduct(org);
      const checkout = await org.polar.checkouts.create({ products: [product.id] });
      expect(checkout.amount).toBe(2_000);
      expect(checkout.totalAmount).toBe(2_000);
    });

    it.each([
      ['below the minimum', 499],
      ['above the maximum', 10_001],
    ])('refuses a pay-what-you-want amount %s with a 422 naming the amount', async (_case, amount) => {
      const product = await payWhatYouWantProduct(org);
      const error = await rejectionOf(org.polar.checkouts.create({ products: [product.id], amount }));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).statusCode).toBe(422);
      expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'amount'] })]);
      const listed = await org.polar.checkouts.list({ productId: product.id });
      expect(listed.result.items).toEqual([]);
    });

    it('creates a checkout of a free product that requires no payment', async () => {
      const product = await freeProduct(org);
      const checkout = await org.polar.checkouts.create({ products: [product.id] });
      expect(checkout).toMatchObject({ amount: 0, netAmount: 0, totalAmount: 0, isFreeProductPrice: true, isPaymentRequired: false, isPaymentFormRequired: false });
    });
  });

  describe('the buyer reading and filling in the checkout by its client secret, without a token', () => {
    let org: Org;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
    });

    it('reads the checkout with its organization and product', async () => {
      const product = await fixedProduct(org, 'Readable book');
      const checkout = await org.polar.checkouts.create({ products: [product.id], metadata: { secret: 'merchant-only' } });
      const seen = await org.buyer.checkouts.clientGet({ clientSecret: checkout.clientSecret });
      expect(seen).toMatchObject({ id: checkout.id, status: 'open', amount: 1999, totalAmount: 1999, productId: product.id, clientSecret: checkout.clientSecret });
      expect(seen.organization.id).toBe(org.organizationId);
      expect(seen.product.name).toBe('Readable book');
      // The merchant's metadata is not shown to the buyer.
      const raw = await restClient(t.server.base('sandbox'))('GET', `/checkouts/client/${checkout.clientSecret}`);
      expect(raw.status).toBe(200);
      expect(raw.body).not.toHaveProperty('metadata');
    });

    it('changes the email and the pay-what-you-want amount, which the organization then sees', async () => {
      const product = await payWhatYouWantProduct(org);
      const checkout = await org.polar.checkouts.create({ products: [product.id], customerEmail: 'first@example.com' });
      const updated = await org.buyer.checkouts.clientUpdate({
        clientSecret: checkout.clientSecret,
        checkoutUpdatePublic: { customerEmail: 'second@example.com', amount: 7_500 },
      });
      expect(updated).toMatchObject({ id: checkout.id, status: 'open', customerEmail: 'second@example.com', amount: 7_500, netAmount: 7_500, totalAmount: 7_500 });
      const seen = await org.polar.checkouts.get({ id: checkout.id });
      expect(seen).toMatchObject({ customerEmail: 'second@example.com', amount: 7_500, totalAmount: 7_500 });
    });

    it('refuses a client update with an amount outside the price bounds, leaving the amount as it was', async () => {
      const product = await payWhatYouWantProduct(org);
      const checkout = await org.polar.checkouts.create({ products: [product.id], amount: 3_000 });
      const error = await rejectionOf(org.buyer.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { amount: 20_000 } }));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'amount'] })]);
      expect((await org.polar.checkouts.get({ id: checkout.id })).amount).toBe(3_000);
    });
  });

  describe('paying with tok_visa', () => {
    let org: Org;
    let checkout: Checkout;
    let confirmed: Awaited<ReturnType<Polar['checkouts']['clientConfirm']>>;
    let justAfterConfirm: Order[];
    let paid: Order;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Paid ebook', 1999);
      checkout = await org.polar.checkouts.create({ products: [product.id], externalCustomerId: 'crm-visa', metadata: { campaign: 'spring' } });
      confirmed = await org.buyer.checkouts.clientConfirm({
        clientSecret: checkout.clientSecret,
        checkoutConfirmStripe: { customerEmail: 'visa@example.com', customerName: 'Vi Sa', confirmationTokenId: 'tok_visa' },
      });
      justAfterConfirm = await ordersOfCheckout(org, checkout.id);
      paid = await paidOrderOf(org, checkout.id);
    });

    it('confirms the checkout and hands the buyer a customer session token', () => {
      expect(confirmed).toMatchObject({ id: checkout.id, status: 'confirmed', customerEmail: 'visa@example.com', customerId: uuid });
      expect(confirmed.customerSessionToken).toEqual(expect.any(String));
      expect(confirmed.customerSessionToken.length).toBeGreaterThan(10);
    });

    it('creates one order at once, pending until the payment job has run', () => {
      expect(justAfterConfirm).toHaveLength(1);
      const [order] = justAfterConfirm;
      // The payment job may already have run when the list is read: pending, or already paid.
      expect(['pending', 'paid']).toContain(order.status);
      expect(order.paid).toBe(order.status === 'paid');
      expect(order.id).toBe(paid.id);
    });

    it('pays the order, which becomes paid with paid: true', () => {
      expect(paid).toMatchObject({ status: 'paid', paid: true, checkoutId: checkout.id, customerId: confirmed.customerId, productId: checkout.productId, currency: 'usd', billingReason: 'purchase' });
      expect(paid.metadata).toEqual({ campaign: 'spring' });
      expect(paid.customer).toMatchObject({ id: confirmed.customerId, email: 'visa@example.com', name: 'Vi Sa', externalId: 'crm-visa' });
      expect(paid.items).toEqual([expect.objectContaining({ label: 'Paid ebook', amount: 1999, taxAmount: 0, productPriceId: checkout.productPriceId })]);
    });

    it("gives the order the checkout's amounts: subtotal, discount, net, tax and total", () => {
      expect(amountsOfOrder(paid)).toEqual(amountsOfCheckout(checkout));
      expect(amountsOfOrder(paid)).toEqual({ subtotal: 1999, discount: 0, net: 1999, tax: 0, total: 1999 });
    });

    it('moves the checkout to succeeded', async () => {
      const final = await checkoutWhen(org, checkout.id, 'succeeded');
      expect(final.customerId).toBe(confirmed.customerId);
      expect(final.externalCustomerId).toBe('crm-visa');
      expect(final.customerExternalId).toBe('crm-visa');
    });

    it('records exactly checkout.created, customer.created, order.created, checkout.updated, order.updated, order.paid, checkout.updated', async () => {
      await checkoutWhen(org, checkout.id, 'succeeded');
      const events = await eventsOf(t.server, org.organizationId, 'sandbox');
      expect(events.map((e) => e.type)).toEqual(PAID_ORDER_EVENTS);
      const c = checkout.id;
      const o = paid.id;
      expect(events.map((e) => e.resourceId)).toEqual([c, confirmed.customerId, o, c, o, o, c]);
    });

    it('records the order.paid event with the order exactly as GET /v1/orders/{id} returns it', async () => {
      const events = await eventsOf(t.server, org.organizationId, 'sandbox');
      const orderPaid = events.find((e) => e.type === 'order.paid')!;
      const rest = expectStatus(await org.api('GET', `/orders/${paid.id}`), 200);
      expect(rest).toMatchObject({ status: 'paid', paid: true, subtotal_amount: 1999, total_amount: 1999 });
      expect(orderPaid.data).toEqual(rest);
    });

    it('records the checkout moving to confirmed, then to succeeded', async () => {
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.type.startsWith('checkout.'));
      expect(events.map((e) => (e.data as { status: string }).status)).toEqual(['open', 'confirmed', 'succeeded']);
      const rest = expectStatus(await org.api('GET', `/checkouts/${checkout.id}`), 200);
      expect(events[2].data).toEqual(rest);
    });
  });

  describe('paying a pay-what-you-want price at the amount the buyer chose', () => {
    it('charges the chosen amount and gives the order the checkout amounts', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await payWhatYouWantProduct(org);
      const checkout = await org.polar.checkouts.create({ products: [product.id] });
      const chosen = await org.buyer.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { amount: 4_200 } });
      expect(chosen.totalAmount).toBe(4_200);
      await org.buyer.checkouts.clientConfirm({
        clientSecret: checkout.clientSecret,
        checkoutConfirmStripe: { customerEmail: 'generous@example.com', confirmationTokenId: 'tok_visa' },
      });
      const order = await paidOrderOf(org, checkout.id);
      const final = await checkoutWhen(org, checkout.id, 'succeeded');
      expect(amountsOfOrder(order)).toEqual(amountsOfCheckout(final));
      expect(order.totalAmount).toBe(4_200);
      const payments = await prisma().payment.findMany({ where: { orderId: order.id } });
      expect(payments.map((p) => [p.amount, p.status])).toEqual([[4_200, 'succeeded']]);
    });
  });

  describe('paying with tok_chargeDeclined', () => {
    it('fails the checkout and leaves the order pending and unpaid, with no order.paid event', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Declined ebook');
      const checkout = await org.polar.checkouts.create({ products: [product.id] });
      const confirmed = await org.buyer.checkouts.clientConfirm({
        clientSecret: checkout.clientSecret,
        checkoutConfirmStripe: { customerEmail: 'declined@example.com', confirmationTokenId: 'tok_chargeDeclined' },
      });
      expect(confirmed.status).toBe('confirmed');
      await checkoutWhen(org, checkout.id, 'failed');
      const orders = await ordersOfCheckout(org, checkout.id);
      expect(orders).toHaveLength(1);
      expect(orders[0]).toMatchObject({ status: 'pending', paid: false, totalAmount: 1999 });
      const payments = await prisma().payment.findMany({ where: { orderId: orders[0].id } });
      expect(payments.map((p) => [p.status, p.declineReason])).toEqual([['failed', 'card_declined']]);
      const types = (await eventsOf(t.server, org.organizationId, 'sandbox')).map((e) => e.type);
      expect(types).toEqual(['checkout.created', 'customer.created', 'order.created', 'checkout.updated', 'checkout.updated']);
    });
  });

  describe('paying with tok_delayedFailure', () => {
    it('keeps the checkout confirmed until the processing delay has passed, then fails it', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Slow bank ebook');
      const checkout = await org.polar.checkouts.create({ products: [product.id] });
      const startedAt = Date.now();
      await org.buyer.checkouts.clientConfirm({
        clientSecret: checkout.clientSecret,
        checkoutConfirmStripe: { customerEmail: 'slow@example.com', confirmationTokenId: 'tok_delayedFailure' },
      });
      // The charge takes TEST_CARD_DELAY_MS from when the job starts, so right after confirming it is still under way.
      expect((await org.polar.checkouts.get({ id: checkout.id })).status).toBe('confirmed');
      const failed = await checkoutWhen(org, checkout.id, 'failed');
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(TEST_CARD_DELAY_MS);
      expect(failed.status).toBe('failed');
      const orders = await ordersOfCheckout(org, checkout.id);
      expect(orders.map((o) => [o.status, o.paid])).toEqual([['pending', false]]);
      const payments = await prisma().payment.findMany({ where: { orderId: orders[0].id } });
      expect(payments.map((p) => [p.status, p.declineReason])).toEqual([['failed', 'processing_error']]);
      // The processor's own clock: at least the delay passed between the confirmation and the outcome.
      expect(payments[0].processedAt!.getTime() - checkout.createdAt.getTime()).toBeGreaterThanOrEqual(TEST_CARD_DELAY_MS);
    });
  });

  describe('a free product', () => {
    it('is confirmed without a card and its order is paid at zero', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await freeProduct(org);
      const checkout = await org.polar.checkouts.create({ products: [product.id] });
      const confirmed = await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: 'freebie@example.com' } });
      expect(confirmed).toMatchObject({ status: 'confirmed', totalAmount: 0, isPaymentRequired: false });
      const order = await paidOrderOf(org, checkout.id);
      expect(order).toMatchObject({ status: 'paid', paid: true });
      expect(amountsOfOrder(order)).toEqual({ subtotal: 0, discount: 0, net: 0, tax: 0, total: 0 });
      expect(amountsOfOrder(order)).toEqual(amountsOfCheckout(checkout));
      await checkoutWhen(org, checkout.id, 'succeeded');
      expect((await eventsOf(t.server, org.organizationId, 'sandbox')).map((e) => e.type)).toEqual(PAID_ORDER_EVENTS);
    });
  });

  describe('a returning buyer', () => {
    it('is the same customer on a second purchase when the organization set that email: one customer, one customer.created', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Collectible', 800);
      await org.polar.customers.create({ email: 'loyal@example.com' });
      const first = await buyWithCheckout(org, product.id, 'loyal@example.com');
      const eventsAfterFirst = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const second = await buyWithCheckout(org, product.id, 'loyal@example.com');
      expect(second.order.id).not.toBe(first.order.id);
      expect(second.order.customerId).toBe(first.order.customerId);
      const customers = await org.polar.customers.list({});
      expect(customers.result.items.map((c) => c.id)).toEqual([first.order.customerId]);
      const events = await eventsOf(t.server, org.organizationId, 'sandbox');
      expect(events.filter((e) => e.type === 'customer.created')).toHaveLength(1);
      expect(events.slice(eventsAfterFirst).map((e) => e.type)).toEqual(PAID_ORDER_EVENTS.filter((t) => t !== 'customer.created'));
    });
  });

  describe('listing and updating orders', () => {
    let org: Org;
    let book: string;
    let course: string;
    let alice: Awaited<ReturnType<typeof buyWithCheckout>>;
    let bob: Awaited<ReturnType<typeof buyWithCheckout>>;
    let aliceAgain: Awaited<ReturnType<typeof buyWithCheckout>>;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      book = (await fixedProduct(org, 'Book', 1_000)).id;
      course = (await fixedProduct(org, 'Course', 5_000)).id;
      // Alice's address is set by the organization, so both her purchases reach her.
      await org.polar.customers.create({ email: 'alice@example.com' });
      alice = await buyWithCheckout(org, book, 'alice@example.com');
      bob = await buyWithCheckout(org, course, 'bob@example.com');
      aliceAgain = await buyWithCheckout(org, course, 'alice@example.com');
    });

    const ids = (page: { result: { items: { id: string }[] } }) => page.result.items.map((o) => o.id).sort();
    const sorted = (...list: string[]) => [...list].sort();

    it('lists every order of the organization', async () => {
      const page = await org.polar.orders.list({});
      expect(ids(page)).toEqual(sorted(alice.order.id, bob.order.id, aliceAgain.order.id));
      expect(page.result.pagination.totalCount).toBe(3);
    });

    it('filters by product_id', async () => {
      expect(ids(await org.polar.orders.list({ productId: course }))).toEqual(sorted(bob.order.id, aliceAgain.order.id));
      expect(ids(await org.polar.orders.list({ productId: book }))).toEqual([alice.order.id]);
    });

    it('filters by customer_id', async () => {
      expect(ids(await org.polar.orders.list({ customerId: alice.order.customerId }))).toEqual(sorted(alice.order.id, aliceAgain.order.id));
      expect(ids(await org.polar.orders.list({ customerId: bob.order.customerId }))).toEqual([bob.order.id]);
    });

    it('filters by checkout_id', async () => {
      expect(ids(await org.polar.orders.list({ checkoutId: bob.checkout.id }))).toEqual([bob.order.id]);
      expect(ids(await org.polar.orders.list({ checkoutId: [alice.checkout.id, aliceAgain.checkout.id] }))).toEqual(sorted(alice.order.id, aliceAgain.order.id));
    });

    it('combines filters', async () => {
      expect(ids(await org.polar.orders.list({ productId: course, customerId: alice.order.customerId }))).toEqual([aliceAgain.order.id]);
    });

    it('filters by status and by creation time over REST', async () => {
      const restIds = (response: RestResponse) => expectStatus(response, 200).items.map((o: { id: string }) => o.id).sort();
      const all = sorted(alice.order.id, bob.order.id, aliceAgain.order.id);
      expect(restIds(await org.api('GET', '/orders/?status=paid'))).toEqual(all);
      expect(restIds(await org.api('GET', '/orders/?status=pending&status=refunded'))).toEqual([]);
      const created = new Date((await org.polar.orders.get({ id: bob.order.id })).createdAt);
      expect(restIds(await org.api('GET', `/orders/?created_after=${encodeURIComponent(created.toISOString())}`))).toEqual(sorted(bob.order.id, aliceAgain.order.id));
      expect(restIds(await org.api('GET', `/orders/?created_before=${encodeURIComponent(created.toISOString())}`))).toEqual([alice.order.id]);
      const bad = await org.api('GET', '/orders/?status=shipped&created_after=yesterday');
      expect(bad.status).toBe(422);
      expect(bad.body.detail.map((issue: { loc: unknown }) => issue.loc)).toEqual([['query', 'status', 0], ['query', 'created_after']]);
    });

    it('updates the billing name and address of an order, as GET then shows, with an order.updated event', async () => {
      const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const updated = await org.polar.orders.update({
        id: bob.order.id,
        orderUpdate: { billingName: 'Bob Ltd', billingAddress: { line1: '1 Main St', postalCode: '75001', city: 'Paris', country: 'FR' } },
      });
      expect(updated.billingName).toBe('Bob Ltd');
      expect(updated.billingAddress).toMatchObject({ line1: '1 Main St', postalCode: '75001', city: 'Paris', country: 'FR' });
      expect(updated).toMatchObject({ status: 'paid', paid: true, totalAmount: 5_000 });
      const rest = expectStatus(await org.api('GET', `/orders/${bob.order.id}`), 200);
      expect(rest.billing_name).toBe('Bob Ltd');
      expect(rest.billing_address).toEqual({ line1: '1 Main St', line2: null, postal_code: '75001', city: 'Paris', state: null, country: 'FR' });
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(before);
      expect(events.map((e) => [e.type, e.resourceId])).toEqual([['order.updated', bob.order.id]]);
      expect(events[0].data).toEqual(rest);
    });

    it('clears the billing address of an order', async () => {
      const updated = await org.polar.orders.update({ id: alice.order.id, orderUpdate: { billingName: 'Alice', billingAddress: null } });
      expect(updated.billingName).toBe('Alice');
      expect(updated.billingAddress).toBeNull();
    });
  });

  describe("another organization's orders and checkouts", () => {
    let owner: Org;
    let stranger: Org;
    let purchase: Awaited<ReturnType<typeof buyWithCheckout>>;
    beforeAll(async () => {
      owner = await newOrganization(t.server, 'sandbox');
      stranger = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(owner, 'Private book');
      purchase = await buyWithCheckout(owner, product.id, 'private@example.com');
    });

    it('are not found when read or changed by id', async () => {
      for (const call of [
        () => stranger.polar.orders.get({ id: purchase.order.id }),
        () => stranger.polar.orders.update({ id: purchase.order.id, orderUpdate: { billingName: 'Hijack', billingAddress: null } }),
        () => stranger.polar.checkouts.get({ id: purchase.checkout.id }),
        () => stranger.polar.checkouts.update({ id: purchase.checkout.id, checkoutUpdate: { metadata: { hijacked: true } } }),
      ]) {
        const error = await rejectionOf(call());
        expect(error).toBeInstanceOf(ResourceNotFound);
        expect(error).not.toBeInstanceOf(ResponseValidationError);
        expect((error as ResourceNotFound).statusCode).toBe(404);
        expect((error as ResourceNotFound).error).toBe('ResourceNotFound');
      }
      const order = await owner.polar.orders.get({ id: purchase.order.id });
      expect(order.billingName).not.toBe('Hijack');
    });

    it('are not listed, even when filtered for', async () => {
      expect((await stranger.polar.orders.list({})).result.items).toEqual([]);
      expect((await stranger.polar.orders.list({ checkoutId: purchase.checkout.id })).result.items).toEqual([]);
      expect((await stranger.polar.checkouts.list({})).result.items).toEqual([]);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// GraphQL
// ---------------------------------------------------------------------------------------------

describe('a purchase through GraphQL in sandbox', () => {
  const CHECKOUT = /* GraphQL */ `
    fragment C on Checkout {
      id status clientSecret url expiresAt amount discountAmount netAmount taxAmount totalAmount currency productId productPriceId
      customerId customerEmail isFreeProductPrice isPaymentRequired externalCustomerId customerExternalId metadata
    }`;
  const PUBLIC = /* GraphQL */ `
    fragment PC on CheckoutPublic { id status amount netAmount totalAmount customerEmail organization { id } product { id name } }`;
  const ORDER = /* GraphQL */ `
    fragment O on Order {
      id status paid subtotalAmount discountAmount netAmount taxAmount totalAmount currency billingReason billingName
      billingAddress { line1 line2 postalCode city state country }
      customerId productId checkoutId customer { id email externalId } items { label amount productPriceId }
    }`;
  const CREATE = `mutation ($input: CheckoutCreateInput!) { core { checkoutCreate(input: $input) { ...C } } } ${CHECKOUT}`;
  const GET_CHECKOUT = `query ($id: UUID!) { core { checkout(id: $id) { ...C } } } ${CHECKOUT}`;
  const LIST_CHECKOUTS = `query ($productId: [UUID!], $status: [CheckoutStatus!]) { core { checkouts(productId: $productId, status: $status) { items { ...C } pagination { totalCount } } } } ${CHECKOUT}`;
  const CLIENT_GET = `query ($s: String!) { checkoutClient(clientSecret: $s) { ...PC } } ${PUBLIC}`;
  const CLIENT_UPDATE = `mutation ($s: String!, $input: CheckoutUpdatePublicInput!) { checkoutClientUpdate(clientSecret: $s, input: $input) { ...PC } } ${PUBLIC}`;
  const CLIENT_CONFIRM = `mutation ($s: String!, $input: CheckoutConfirmInput!) {
    checkoutClientConfirm(clientSecret: $s, input: $input) { id status customerId customerEmail totalAmount customerSessionToken } }`;
  const GET_ORDER = `query ($id: UUID!) { core { order(id: $id) { ...O } } } ${ORDER}`;
  const LIST_ORDERS = `query ($productId: [UUID!], $customerId: [UUID!], $checkoutId: [UUID!]) {
    core { orders(productId: $productId, customerId: $customerId, checkoutId: $checkoutId, limit: 100) { items { ...O } pagination { totalCount } } } } ${ORDER}`;
  const UPDATE_ORDER = `mutation ($id: UUID!, $input: OrderUpdateInput!) { core { orderUpdate(id: $id, input: $input) { ...O } } } ${ORDER}`;

  async function product(org: Org, price: Record<string, unknown>, name = 'GraphQL product') {
    return expectStatus(await org.api('POST', '/products/', { name, recurring_interval: null, prices: [price] }), 201) as { id: string; prices: { id: string }[] };
  }
  const fixed = { amount_type: 'fixed', price_amount: 2_500, price_currency: 'usd' };
  const custom = { amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, maximum_amount: 10_000, preset_amount: 2_000 };

  async function createCheckout(org: Org, input: Record<string, unknown>) {
    return (await graphqlData(org.gql(CREATE, { input }))).core.checkoutCreate;
  }
  async function getCheckout(org: Org, id: string) {
    return (await graphqlData(org.gql(GET_CHECKOUT, { id }))).core.checkout;
  }
  async function confirm(org: Org, clientSecret: string, input: Record<string, unknown>) {
    return (await graphqlData(org.publicGql(CLIENT_CONFIRM, { s: clientSecret, input }))).checkoutClientConfirm;
  }
  async function orders(org: Org, filters: Record<string, unknown> = {}) {
    return (await graphqlData(org.gql(LIST_ORDERS, filters))).core.orders;
  }
  async function checkoutWhen(org: Org, id: string, status: string) {
    return eventually(() => getCheckout(org, id), (c) => c.status === status, `the checkout to be ${status}`);
  }
  async function paidOrderOf(org: Org, checkoutId: string) {
    const page = await eventually(() => orders(org, { checkoutId: [checkoutId] }), (p) => p.items.length === 1 && p.items[0].status === 'paid', 'the order to be paid');
    return page.items[0];
  }
  async function buy(org: Org, productId: string, customerEmail: string) {
    const checkout = await createCheckout(org, { products: [productId] });
    await confirm(org, checkout.clientSecret, { customerEmail, confirmationTokenId: 'tok_visa' });
    const order = await paidOrderOf(org, checkout.id);
    await checkoutWhen(org, checkout.id, 'succeeded');
    return { checkout, order };
  }

  describe('creating checkouts', () => {
    let org: Org;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
    });

    it('creates an open checkout for a fixed price with its amounts and both external customer id fields', async () => {
      const p = await product(org, fixed);
      const checkout = await createCheckout(org, { products: [p.id], externalCustomerId: 'gql-crm-1' });
      expect(checkout).toMatchObject({
        status: 'open',
        amount: 2_500,
        discountAmount: 0,
        netAmount: 2_500,
        taxAmount: 0,
        totalAmount: 2_500,
        currency: 'usd',
        productId: p.id,
        productPriceId: p.prices[0].id,
        isFreeProductPrice: false,
        isPaymentRequired: true,
        externalCustomerId: 'gql-crm-1',
        customerExternalId: 'gql-crm-1',
      });
      expect(checkout.url).toContain(checkout.clientSecret);
    });

    it('accepts the deprecated customerExternalId input as the external customer id', async () => {
      const p = await product(org, fixed);
      const checkout = await createCheckout(org, { products: [p.id], customerExternalId: 'gql-crm-legacy' });
      expect(checkout.externalCustomerId).toBe('gql-crm-legacy');
      expect(checkout.customerExternalId).toBe('gql-crm-legacy');
    });

    it('creates a pay-what-you-want checkout at an amount within the bounds', async () => {
      const p = await product(org, custom);
      const checkout = await createCheckout(org, { products: [p.id], amount: 9_999 });
      expect(checkout).toMatchObject({ amount: 9_999, netAmount: 9_999, totalAmount: 9_999 });
    });

    it.each([
      ['below the minimum', 100],
      ['above the maximum', 50_000],
    ])('refuses a pay-what-you-want amount %s with BAD_USER_INPUT naming the amount', async (_case, amount) => {
      const p = await product(org, custom);
      const error = await graphqlFailure(org.gql(CREATE, { input: { products: [p.id], amount } }), 'BAD_USER_INPUT');
      expect(error.extensions.issues).toEqual([{ loc: ['input', 'amount'], msg: expect.any(String), type: expect.any(String) }]);
      expect((await graphqlData(org.gql(LIST_CHECKOUTS, { productId: [p.id] }))).core.checkouts.items).toEqual([]);
    });

    it('creates a checkout of a free product with nothing to pay', async () => {
      const p = await product(org, { amount_type: 'free' });
      const checkout = await createCheckout(org, { products: [p.id] });
      expect(checkout).toMatchObject({ amount: 0, totalAmount: 0, isFreeProductPrice: true, isPaymentRequired: false });
    });
  });

  describe('the buyer, without a token', () => {
    it('reads the checkout by client secret and changes the email and the amount', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const p = await product(org, custom, 'Tip jar');
      const checkout = await createCheckout(org, { products: [p.id], customerEmail: 'before@example.com' });
      const seen = (await graphqlData(org.publicGql(CLIENT_GET, { s: checkout.clientSecret }))).checkoutClient;
      expect(seen).toMatchObject({ id: checkout.id, status: 'open', amount: 2_000, customerEmail: 'before@example.com', organization: { id: org.organizationId }, product: { id: p.id, name: 'Tip jar' } });
      const updated = (await graphqlData(org.publicGql(CLIENT_UPDATE, { s: checkout.clientSecret, input: { customerEmail: 'after@example.com', amount: 6_000 } }))).checkoutClientUpdate;
      expect(updated).toMatchObject({ customerEmail: 'after@example.com', amount: 6_000, netAmount: 6_000, totalAmount: 6_000 });
      expect(await getCheckout(org, checkout.id)).toMatchObject({ customerEmail: 'after@example.com', amount: 6_000, totalAmount: 6_000 });
    });
  });

  describe('paying with tok_visa', () => {
    let org: Org;
    let checkout: any;
    let confirmed: any;
    let justAfterConfirm: any[];
    let paid: any;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const p = await product(org, fixed, 'GraphQL course');
      checkout = await createCheckout(org, { products: [p.id], externalCustomerId: 'gql-visa' });
      confirmed = await confirm(org, checkout.clientSecret, { customerEmail: 'gql-visa@example.com', confirmationTokenId: 'tok_visa' });
      justAfterConfirm = (await orders(org, { checkoutId: [checkout.id] })).items;
      paid = await paidOrderOf(org, checkout.id);
    });

    it('confirms the checkout and returns a customer session token', () => {
      expect(confirmed).toMatchObject({ id: checkout.id, status: 'confirmed', customerEmail: 'gql-visa@example.com', customerId: uuid, totalAmount: 2_500 });
      expect(confirmed.customerSessionToken).toEqual(expect.any(String));
      expect(confirmed.customerSessionToken.length).toBeGreaterThan(10);
    });

    it('creates one order at once, pending until the payment job has run, then paid', () => {
      expect(justAfterConfirm).toHaveLength(1);
      // The payment job may already have run when the list is read: pending, or already paid.
      expect(['pending', 'paid']).toContain(justAfterConfirm[0].status);
      expect(justAfterConfirm[0].paid).toBe(justAfterConfirm[0].status === 'paid');
      expect(paid).toMatchObject({ id: justAfterConfirm[0].id, status: 'paid', paid: true, checkoutId: checkout.id, customerId: confirmed.customerId, billingReason: 'purchase' });
      expect(paid.customer).toEqual({ id: confirmed.customerId, email: 'gql-visa@example.com', externalId: 'gql-visa' });
      expect(paid.items).toEqual([{ label: 'GraphQL course', amount: 2_500, productPriceId: checkout.productPriceId }]);
    });

    it("gives the order the checkout's amounts", () => {
      expect(amountsOfOrder(paid)).toEqual(amountsOfCheckout(checkout));
    });

    it('moves the checkout to succeeded, keeping both external customer id fields', async () => {
      const final = await checkoutWhen(org, checkout.id, 'succeeded');
      expect(final).toMatchObject({ customerId: confirmed.customerId, externalCustomerId: 'gql-visa', customerExternalId: 'gql-visa' });
    });

    it('records the paid-order events in order, the order.paid data being GET /v1/orders/{id}', async () => {
      await checkoutWhen(org, checkout.id, 'succeeded');
      const events = await eventsOf(t.server, org.organizationId, 'sandbox');
      expect(events.map((e) => e.type)).toEqual(PAID_ORDER_EVENTS);
      const rest = expectStatus(await org.api('GET', `/orders/${paid.id}`), 200);
      expect(events.find((e) => e.type === 'order.paid')!.data).toEqual(rest);
    });

    it('reads the same order by id', async () => {
      expect((await graphqlData(org.gql(GET_ORDER, { id: paid.id }))).core.order).toEqual(paid);
    });
  });

  describe('paying with the failing test cards', () => {
    it('fails the checkout on tok_chargeDeclined, leaving the order pending and unpaid', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const p = await product(org, fixed);
      const checkout = await createCheckout(org, { products: [p.id] });
      expect((await confirm(org, checkout.clientSecret, { customerEmail: 'gql-declined@example.com', confirmationTokenId: 'tok_chargeDeclined' })).status).toBe('confirmed');
      await checkoutWhen(org, checkout.id, 'failed');
      const page = await orders(org, { checkoutId: [checkout.id] });
      expect(page.items.map((o: any) => [o.status, o.paid])).toEqual([['pending', false]]);
    });

    it('keeps the checkout confirmed on tok_delayedFailure until the delay has passed, then fails it', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const p = await product(org, fixed);
      const checkout = await createCheckout(org, { products: [p.id] });
      const startedAt = Date.now();
      await confirm(org, checkout.clientSecret, { customerEmail: 'gql-slow@example.com', confirmationTokenId: 'tok_delayedFailure' });
      expect((await getCheckout(org, checkout.id)).status).toBe('confirmed');
      await checkoutWhen(org, checkout.id, 'failed');
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(TEST_CARD_DELAY_MS);
      const page = await orders(org, { checkoutId: [checkout.id] });
      expect(page.items.map((o: any) => [o.status, o.paid])).toEqual([['pending', false]]);
    });
  });

  describe('a free product', () => {
    it('is confirmed without a card and its order is paid at zero', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const p = await product(org, { amount_type: 'free' });
      const checkout = await createCheckout(org, { products: [p.id] });
      expect((await confirm(org, checkout.clientSecret, { customerEmail: 'gql-free@example.com' })).status).toBe('confirmed');
      const order = await paidOrderOf(org, checkout.id);
      expect(amountsOfOrder(order)).toEqual({ subtotal: 0, discount: 0, net: 0, tax: 0, total: 0 });
      await checkoutWhen(org, checkout.id, 'succeeded');
    });
  });

  describe('orders of several purchases', () => {
    let org: Org;
    let book: string;
    let course: string;
    let first: Awaited<ReturnType<typeof buy>>;
    let second: Awaited<ReturnType<typeof buy>>;
    let other: Awaited<ReturnType<typeof buy>>;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      book = (await product(org, fixed, 'GQL book')).id;
      course = (await product(org, { ...fixed, price_amount: 9_000 }, 'GQL course')).id;
      expect((await org.api('POST', '/customers/', { email: 'repeat@example.com' })).status).toBe(201);
      first = await buy(org, book, 'repeat@example.com');
      second = await buy(org, course, 'repeat@example.com');
      other = await buy(org, course, 'other@example.com');
    });
    const ids = (page: { items: { id: string }[] }) => page.items.map((o) => o.id).sort();
    const sorted = (...list: string[]) => [...list].sort();

    it('reuses the customer holding an email: one customer.created for two purchases', async () => {
      expect(second.order.customerId).toBe(first.order.customerId);
      expect(other.order.customerId).not.toBe(first.order.customerId);
      const created = (await eventsOf(t.server, org.organizationId, 'sandbox')).filter((e) => e.type === 'customer.created');
      expect(created.map((e) => e.resourceId).sort()).toEqual(sorted(first.order.customerId, other.order.customerId));
    });

    it('filters orders by productId, customerId and checkoutId', async () => {
      expect(ids(await orders(org, { productId: [course] }))).toEqual(sorted(second.order.id, other.order.id));
      expect(ids(await orders(org, { customerId: [first.order.customerId] }))).toEqual(sorted(first.order.id, second.order.id));
      expect(ids(await orders(org, { checkoutId: [other.checkout.id] }))).toEqual([other.order.id]);
      expect(ids(await orders(org, { productId: [book], customerId: [other.order.customerId] }))).toEqual([]);
    });

    it('lists the checkouts by status', async () => {
      const page = (await graphqlData(org.gql(LIST_CHECKOUTS, { status: ['succeeded'] }))).core.checkouts;
      expect(page.items.map((c: any) => c.id).sort()).toEqual(sorted(first.checkout.id, second.checkout.id, other.checkout.id));
      expect((await graphqlData(org.gql(LIST_CHECKOUTS, { status: ['open'] }))).core.checkouts.pagination.totalCount).toBe(0);
    });

    it('updates the billing name and address of an order', async () => {
      const updated = (
        await graphqlData(org.gql(UPDATE_ORDER, { id: first.order.id, input: { billingName: 'Repeat AB', billingAddress: { line1: 'Storgatan 1', city: 'Stockholm', country: 'SE' } } }))
      ).core.orderUpdate;
      expect(updated.billingName).toBe('Repeat AB');
      expect(updated.billingAddress).toEqual({ line1: 'Storgatan 1', line2: null, postalCode: null, city: 'Stockholm', state: null, country: 'SE' });
      expect((await graphqlData(org.gql(GET_ORDER, { id: first.order.id }))).core.order).toEqual(updated);
    });

    it("does not find the order or the checkout from another organization", async () => {
      const stranger = await newOrganization(t.server, 'sandbox');
      await graphqlFailure(stranger.gql(GET_ORDER, { id: first.order.id }), 'RESOURCE_NOT_FOUND');
      await graphqlFailure(stranger.gql(GET_CHECKOUT, { id: first.checkout.id }), 'RESOURCE_NOT_FOUND');
      await graphqlFailure(stranger.gql(UPDATE_ORDER, { id: first.order.id, input: { billingName: 'Hijack' } }), 'RESOURCE_NOT_FOUND');
      expect((await orders(stranger, { checkoutId: [first.checkout.id] })).items).toEqual([]);
      expect((await graphqlData(org.gql(GET_ORDER, { id: first.order.id }))).core.order.billingName).not.toBe('Hijack');
    });
  });
});

describe('an environment without a payment processor', () => {
  const bare = useTestServer({ env: { PRODUCTION_PAYMENT_PROCESSOR: 'none' } });

  it('still pays the order of a free product, and refuses a checkout that needs payment', async () => {
    const org = await newOrganization(bare.server, 'production');
    const free = await org.polar.products.create({ name: 'Free sample', recurringInterval: null, prices: [{ amountType: 'free' }] });
    const checkout = await org.polar.checkouts.create({ products: [free.id] });
    await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: 'free@example.com' } });
    expect(await paidOrderOf(org, checkout.id)).toMatchObject({ status: 'paid', paid: true, totalAmount: 0 });

    const paid = await fixedProduct(org, 'Needs a card', 500);
    const needsCard = await org.polar.checkouts.create({ products: [paid.id] });
    const refused = await org.publicApi('POST', `/checkouts/client/${needsCard.clientSecret}/confirm`, { customer_email: 'card@example.com', confirmation_token_id: 'tok_visa' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('PaymentError');
  });
});

// Order invoices end to end, in sandbox: an invoice is issued on request for a paid order with
// billing details, numbered in sequence per organization, frozen from then on, and downloaded as a
// PDF through a signed link that expires. Once through the official client (@polar-sh/sdk), whose
// schemas parse every response, with the raw REST bodies alongside; once through GraphQL.
// Orders are bought through a checkout with a test card and polled for until paid.
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { InvoiceAlreadyExists } from '@polar-sh/sdk/models/errors/invoicealreadyexists.js';
import { MissingInvoiceBillingDetails } from '@polar-sh/sdk/models/errors/missinginvoicebillingdetails.js';
import { NotPaidOrder } from '@polar-sh/sdk/models/errors/notpaidorder.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { ResponseValidationError } from '@polar-sh/sdk/models/errors/responsevalidationerror.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import type { Order } from '@polar-sh/sdk/models/components/order.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { buy, declinedOrder, fixedProduct, paidOrderOf } from '../helpers/purchases.ts';
import { expectStatus, graphqlData, graphqlFailure } from '../helpers/responses.ts';
import { rejectionOf, sleep } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '300' } });

const HOUR_MS = 3600_000;

const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

const BILLING = { billing_name: 'Invoiced Buyer GmbH', billing_address: { line1: 'Hauptstraße 5', postal_code: '10115', city: 'Berlin', country: 'DE' } };

/** Gives an order billing details over REST and issues its invoice (202). */
async function invoiced(org: Org, orderId: string, billing: typeof BILLING = BILLING) {
  expectStatus(await org.api('PATCH', `/orders/${orderId}`, billing), 200);
  return expectStatus(await org.api('POST', `/orders/${orderId}/invoice`), 202);
}

/** The signed link of an order's invoice, through REST. */
async function invoiceLink(org: Org, orderId: string): Promise<string> {
  const body = expectStatus(await org.api('GET', `/orders/${orderId}/invoice`), 200);
  expect(body).toEqual({ url: expect.any(String) });
  return body.url;
}

/** Downloads a link: the status, the headers and the body's bytes. */
async function download(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function pdfText(bytes: Buffer): Promise<string> {
  const { extractText } = await import('unpdf');
  const { text } = await extractText(new Uint8Array(bytes), { mergePages: true });
  return String(text).replace(/\s+/g, ' ');
}

/** The invoice number an order's invoice was issued with, as its download names it. */
async function invoiceNumberOf(org: Org, orderId: string): Promise<string> {
  const file = await download(await invoiceLink(org, orderId));
  expect(file.status).toBe(200);
  const disposition = file.headers.get('content-disposition') ?? '';
  const match = /filename="invoice-(.+)\.pdf"/.exec(disposition);
  expect(match, disposition).not.toBeNull();
  return match![1];
}

/** The sequence at the end of an invoice number: `ACME-0007` → 7. */
const sequenceOf = (number: string) => Number(/-(\d{4,})$/.exec(number)?.[1]);

/** A token of the organization holding only the products scopes, issued by its owner through GraphQL. */
const productsOnlyToken = (org: Org) => tokenWithScopes(t.server, org, ['products:read', 'products:write'], 'products only');

// ---------------------------------------------------------------------------------------------
// The official client and REST
// ---------------------------------------------------------------------------------------------

describe('invoices through the official SDK and REST in sandbox', () => {
  describe('the life of one invoice', () => {
    let org: Org;
    let order: Order;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Invoiced ebook', 1999);
      // No customer name: the order has no billing details yet.
      order = await buy(org, product.id, 'invoice-buyer@example.com');
    });

    it('starts without billing details and without an invoice', async () => {
      const seen = await org.polar.orders.get({ id: order.id });
      expect(seen).toMatchObject({ status: 'paid', paid: true, billingName: null, billingAddress: null, isInvoiceGenerated: false });
    });

    it('answers 404 ResourceNotFound to GET invoice before generation, telling to generate it first', async () => {
      const error = await rejectionOf(org.polar.orders.invoice({ id: order.id }));
      expect(error).toBeInstanceOf(ResourceNotFound);
      expect((error as ResourceNotFound).statusCode).toBe(404);
      expect((error as ResourceNotFound).detail).toMatch(/generate/i);
      const rest = await org.api('GET', `/orders/${order.id}/invoice`);
      expect(rest.status).toBe(404);
      expect(rest.body).toEqual({ error: 'ResourceNotFound', detail: expect.stringMatching(/generate/i) });
    });

    it('refuses to generate the invoice of a paid order without billing name and address: 422 MissingInvoiceBillingDetails', async () => {
      const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const error = await rejectionOf(org.polar.orders.generateInvoice({ id: order.id }));
      expect(error).toBeInstanceOf(MissingInvoiceBillingDetails);
      expect(error).not.toBeInstanceOf(ResponseValidationError);
      expect((error as MissingInvoiceBillingDetails).statusCode).toBe(422);
      expect((error as MissingInvoiceBillingDetails).error).toBe('MissingInvoiceBillingDetails');
      const rest = await org.api('POST', `/orders/${order.id}/invoice`);
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ error: 'MissingInvoiceBillingDetails', detail: expect.stringMatching(/billing/i) });
      expect((await org.polar.orders.get({ id: order.id })).isInvoiceGenerated).toBe(false);
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(before);
    });

    it('still refuses with a billing name but no billing address', async () => {
      await org.polar.orders.update({ id: order.id, orderUpdate: { billingName: 'Name Only', billingAddress: null } });
      const rest = await org.api('POST', `/orders/${order.id}/invoice`);
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ error: 'MissingInvoiceBillingDetails', detail: expect.any(String) });
      expect(await prisma().invoice.count({ where: { orderId: order.id } })).toBe(0);
    });

    it('generates the invoice once the billing details are set: 202 with a JSON body, the order invoiced, one order.updated event', async () => {
      const updated = await org.polar.orders.update({
        id: order.id,
        orderUpdate: { billingName: 'Invoiced Buyer GmbH', billingAddress: { line1: 'Hauptstraße 5', postalCode: '10115', city: 'Berlin', country: 'DE' } },
      });
      expect(updated).toMatchObject({ billingName: 'Invoiced Buyer GmbH', billingAddress: { country: 'DE', city: 'Berlin' }, isInvoiceGenerated: false });
      const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;

      const response = await fetch(`${t.server.base('sandbox')}/orders/${order.id}/invoice`, { method: 'POST', headers: { authorization: `Bearer ${org.token}` } });
      expect(response.status).toBe(202);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = JSON.parse(await response.text());
      expect(body).toMatchObject({ id: order.id, is_invoice_generated: true, billing_name: 'Invoiced Buyer GmbH' });

      const seen = await org.polar.orders.get({ id: order.id });
      expect(seen.isInvoiceGenerated).toBe(true);
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(before);
      expect(events.map((e) => [e.type, e.resourceId])).toEqual([['order.updated', order.id]]);
      const rest = expectStatus(await org.api('GET', `/orders/${order.id}`), 200);
      expect(rest.is_invoice_generated).toBe(true);
      expect(events[0].data).toEqual(rest);
    });

    it('answers 409 InvoiceAlreadyExists to a second generation, changing nothing', async () => {
      const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const invoiceBefore = await prisma().invoice.findUniqueOrThrow({ where: { orderId: order.id } });
      const error = await rejectionOf(org.polar.orders.generateInvoice({ id: order.id }));
      expect(error).toBeInstanceOf(InvoiceAlreadyExists);
      expect((error as InvoiceAlreadyExists).statusCode).toBe(409);
      expect((error as InvoiceAlreadyExists).error).toBe('InvoiceAlreadyExists');
      const rest = await org.api('POST', `/orders/${order.id}/invoice`);
      expect(rest.status).toBe(409);
      expect(rest.body).toEqual({ error: 'InvoiceAlreadyExists', detail: expect.any(String) });
      expect(rest.body.detail.length).toBeGreaterThan(0);
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(before);
      const invoices = await prisma().invoice.findMany({ where: { orderId: order.id } });
      expect(invoices.map((i) => [i.id, i.number])).toEqual([[invoiceBefore.id, invoiceBefore.number]]);
    });

    it('refuses to change the billing details once the invoice exists: 422, nothing changed, no event', async () => {
      const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const restBefore = expectStatus(await org.api('GET', `/orders/${order.id}`), 200);
      const error = await rejectionOf(org.polar.orders.update({ id: order.id, orderUpdate: { billingName: 'Someone Else', billingAddress: { country: 'US' } } }));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).statusCode).toBe(422);
      const rest = await org.api('PATCH', `/orders/${order.id}`, { billing_name: 'Someone Else', billing_address: null });
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ detail: [expect.objectContaining({ loc: ['body'], msg: expect.stringMatching(/invoice/i) })] });
      expect(expectStatus(await org.api('GET', `/orders/${order.id}`), 200)).toEqual(restBefore);
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(before);
    });

    it('gives a signed link, valid for an hour, to this environment', async () => {
      const { url } = await org.polar.orders.invoice({ id: order.id });
      const parsed = new URL(url);
      expect(`${parsed.origin}${parsed.pathname}`).toMatch(new RegExp(`^${t.server.url}/sandbox/v1/invoices/[0-9a-f-]{36}\\.pdf$`));
      const expires = Number(parsed.searchParams.get('expires')) * 1000;
      expect(expires).toBeGreaterThan(Date.now() + HOUR_MS - 60_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + HOUR_MS + 1_000);
      expect(parsed.searchParams.get('signature')).toEqual(expect.any(String));
    });

    it('downloads a real PDF with the number, the buyer, the product and the total as money', async () => {
      const { url } = await org.polar.orders.invoice({ id: order.id });
      const file = await download(url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('application/pdf');
      expect(file.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const invoice = await prisma().invoice.findUniqueOrThrow({ where: { orderId: order.id } });
      expect(invoice.number).toMatch(/-0001$/);
      expect(file.headers.get('content-disposition')).toContain(`invoice-${invoice.number}.pdf`);
      const text = await pdfText(file.bytes);
      expect(text).toContain(invoice.number);
      // The buyer block: billing name, then the address down to the country.
      expect(text).toMatch(/Bill to Invoiced Buyer GmbH Hauptstraße 5 10115 Berlin DE\b/);
      expect(text).toContain('Invoiced ebook');
      expect(text).toMatch(/Total \$19\.99/);
    });

    it('keeps the invoice as issued: the same PDF on every download', async () => {
      const first = await download((await org.polar.orders.invoice({ id: order.id })).url);
      const second = await download(await invoiceLink(org, order.id));
      expect(first.status).toBe(200);
      expect(second.bytes.equals(first.bytes)).toBe(true);
    });

    it('answers 404 to a link with a tampered signature', async () => {
      const url = new URL(await invoiceLink(org, order.id));
      const signature = url.searchParams.get('signature')!;
      url.searchParams.set('signature', `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`);
      const tampered = await download(url.toString());
      expect(tampered.status).toBe(404);
      expect(tampered.headers.get('content-type')).not.toBe('application/pdf');
      url.searchParams.delete('signature');
      expect((await download(url.toString())).status).toBe(404);
    });

    it('answers 404 to a link whose expiry was pushed back', async () => {
      const url = new URL(await invoiceLink(org, order.id));
      url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
      const altered = await download(url.toString());
      expect(altered.status).toBe(404);
      expect(JSON.parse(altered.bytes.toString())).toEqual({ error: 'NotFound', detail: expect.any(String) });
    });

    it('answers 410 to a link once it has expired, and a fresh link works again', async () => {
      const url = await invoiceLink(org, order.id);
      t.server.clock.now = new Date(Date.now() + 2 * HOUR_MS);
      try {
        const expired = await download(url);
        expect(expired.status).toBe(410);
        expect(JSON.parse(expired.bytes.toString())).toEqual({ error: 'Expired', detail: expect.any(String) });
      } finally {
        t.server.clock.now = null;
      }
      expect((await download(await invoiceLink(org, order.id))).status).toBe(200);
    });

    it('never reaches the invoice from another environment: the same link under /v1 is 404', async () => {
      const url = await invoiceLink(org, order.id);
      expect(url).toContain('/sandbox/v1/invoices/');
      const production = url.replace('/sandbox/v1/', '/v1/');
      expect((await download(production)).status).toBe(404);
      expect((await download(url)).status).toBe(200);
    });
  });

  describe('an unpaid order', () => {
    it('is refused an invoice with 422 NotPaidOrder, even with billing details', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Declined book');
      const order = await declinedOrder(org, product.id, 'unpaid@example.com', 'Declined Buyer');
      expectStatus(await org.api('PATCH', `/orders/${order.id}`, BILLING), 200);
      const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const error = await rejectionOf(org.polar.orders.generateInvoice({ id: order.id }));
      expect(error).toBeInstanceOf(NotPaidOrder);
      expect(error).not.toBeInstanceOf(ResponseValidationError);
      expect((error as NotPaidOrder).statusCode).toBe(422);
      expect((error as NotPaidOrder).error).toBe('NotPaidOrder');
      const rest = await org.api('POST', `/orders/${order.id}/invoice`);
      expect(rest.status).toBe(422);
      expect(rest.body).toEqual({ error: 'NotPaidOrder', detail: expect.stringMatching(/paid/i) });
      expect((await org.polar.orders.get({ id: order.id })).isInvoiceGenerated).toBe(false);
      expect(await prisma().invoice.count({ where: { orderId: order.id } })).toBe(0);
      expect(await eventsOf(t.server, org.organizationId, 'sandbox')).toHaveLength(before);
    });
  });

  describe('amounts in currencies without two decimals', () => {
    it('shows yen without decimals and Kuwaiti dinars with three, as ISO 4217 counts them', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      for (const [currency, total] of [['jpy', /Total ¥1,999\b/], ['kwd', /Total KWD 1\.500\b/]] as const) {
        const product = await org.polar.products.create({ name: `Book in ${currency}`, recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: currency === 'jpy' ? 1999 : 1500, priceCurrency: currency }] });
        const order = await buy(org, product.id, `${currency}-buyer@example.com`);
        await invoiced(org, order.id);
        const text = await pdfText((await download(await invoiceLink(org, order.id))).bytes);
        expect(text).toMatch(total);
        expect(text).toContain(`All amounts in ${currency.toUpperCase()}.`);
      }
    });
  });

  describe('a discounted order', () => {
    it('shows the discount by name with the amount taken off, and the discounted net and total', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Discounted guide', 2000);
      const discount = await org.polar.discounts.create({ name: 'Spring', type: 'percentage', basisPoints: 2500, duration: 'once' });
      const checkout = await org.polar.checkouts.create({ products: [product.id], discountId: discount.id });
      await org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: 'spring-buyer@example.com', confirmationTokenId: 'tok_visa' } });
      const order = await paidOrderOf(org, checkout.id);
      expect(order).toMatchObject({ subtotalAmount: 2000, discountAmount: 500, netAmount: 1500, totalAmount: 1500, discountId: discount.id });
      await invoiced(org, order.id);
      const text = await pdfText((await download(await invoiceLink(org, order.id))).bytes);
      expect(text).toContain('Discounted guide $20.00');
      expect(text).toContain('Subtotal $20.00 Discount (Spring) -$5.00 Net amount $15.00 Tax $0.00 Total $15.00');
    });
  });

  describe('invoice numbers', () => {
    it('are sequential per organization and independent across organizations', async () => {
      const acme = await newOrganization(t.server, 'sandbox', { organizationName: 'Acme Books' });
      const zenith = await newOrganization(t.server, 'sandbox', { organizationName: 'Zenith Labs' });
      const acmeBook = await fixedProduct(acme, 'Acme book', 1_000);
      const zenithBook = await fixedProduct(zenith, 'Zenith book', 2_000);
      const [a1, a2, z1] = await Promise.all([
        buy(acme, acmeBook.id, 'first@example.com'),
        buy(acme, acmeBook.id, 'second@example.com'),
        buy(zenith, zenithBook.id, 'third@example.com'),
      ]);
      await invoiced(acme, a1.id);
      await invoiced(zenith, z1.id);
      await invoiced(acme, a2.id);
      expect(await invoiceNumberOf(acme, a1.id)).toBe('ACME-BOOKS-0001');
      expect(await invoiceNumberOf(acme, a2.id)).toBe('ACME-BOOKS-0002');
      expect(await invoiceNumberOf(zenith, z1.id)).toBe('ZENITH-LABS-0001');
    });

    it('stay distinct and consecutive when four orders of one organization are invoiced at once', async () => {
      const org = await newOrganization(t.server, 'sandbox', { organizationName: 'Parallel Press' });
      const product = await fixedProduct(org, 'Parallel book', 1_500);
      const orders = await Promise.all([1, 2, 3, 4].map((n) => buy(org, product.id, `parallel-${n}@example.com`)));
      for (const order of orders) expectStatus(await org.api('PATCH', `/orders/${order.id}`, BILLING), 200);
      const responses = await Promise.all(orders.map((order) => org.api('POST', `/orders/${order.id}/invoice`)));
      expect(responses.map((r) => r.status)).toEqual([202, 202, 202, 202]);
      const numbers = await Promise.all(orders.map((order) => invoiceNumberOf(org, order.id)));
      expect(new Set(numbers).size).toBe(4);
      expect(numbers.map(sequenceOf).sort((x, y) => x - y)).toEqual([1, 2, 3, 4]);
      for (const number of numbers) expect(number).toMatch(/^PARALLEL-PRESS-000[1-4]$/);
      const stored = await prisma().invoice.findMany({ where: { organizationId: org.organizationId }, orderBy: { sequence: 'asc' } });
      expect(stored.map((i) => i.sequence)).toEqual([1, 2, 3, 4]);
      expect(stored.map((i) => i.number).sort()).toEqual([...numbers].sort());
    });
  });

  describe("another organization's order", () => {
    it('is not found on GET or POST invoice, before and after its invoice exists', async () => {
      const owner = await newOrganization(t.server, 'sandbox');
      const stranger = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(owner, 'Private invoice book');
      const order = await buy(owner, product.id, 'private-invoice@example.com');
      expectStatus(await owner.api('PATCH', `/orders/${order.id}`, BILLING), 200);

      // Before the owner generates it: the stranger can neither read nor issue it.
      const getError = await rejectionOf(stranger.polar.orders.invoice({ id: order.id }));
      expect(getError).toBeInstanceOf(ResourceNotFound);
      expect((getError as ResourceNotFound).statusCode).toBe(404);
      // generateInvoice maps no 404: the client library throws its generic error, with the status.
      const postError = await rejectionOf(stranger.polar.orders.generateInvoice({ id: order.id }));
      expect(postError).toBeInstanceOf(SDKError);
      expect((postError as SDKError).statusCode).toBe(404);
      const post = await stranger.api('POST', `/orders/${order.id}/invoice`);
      expect(post.status).toBe(404);
      expect(post.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
      expect((await owner.polar.orders.get({ id: order.id })).isInvoiceGenerated).toBe(false);
      expect(await prisma().invoice.count({ where: { orderId: order.id } })).toBe(0);

      // After: still nothing for the stranger.
      expectStatus(await owner.api('POST', `/orders/${order.id}/invoice`), 202);
      const get = await stranger.api('GET', `/orders/${order.id}/invoice`);
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
      const again = await stranger.api('POST', `/orders/${order.id}/invoice`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
    });
  });

  describe('a token with only the products scopes', () => {
    it('gets 403 naming orders:read on GET and POST invoice', async () => {
      const org = await newOrganization(t.server, 'sandbox');
      const product = await fixedProduct(org, 'Scoped invoice book');
      const order = await buy(org, product.id, 'scoped-invoice@example.com');
      expectStatus(await org.api('PATCH', `/orders/${order.id}`, BILLING), 200);
      const token = await productsOnlyToken(org);
      const limited = restClient(t.server.base('sandbox'), token);
      const post = await limited('POST', `/orders/${order.id}/invoice`);
      expect(post.status).toBe(403);
      expect(post.body).toEqual({ error: 'NotPermitted', detail: expect.stringContaining('orders:read') });
      const get = await limited('GET', `/orders/${order.id}/invoice`);
      expect(get.status).toBe(403);
      expect(get.body).toEqual({ error: 'NotPermitted', detail: expect.stringContaining('orders:read') });
      const sdkError = await rejectionOf(new Polar({ accessToken: token, serverURL: `${t.server.url}/sandbox` }).orders.invoice({ id: order.id }));
      expect(sdkError).toBeInstanceOf(SDKError);
      expect((sdkError as SDKError).statusCode).toBe(403);
      expect((await org.polar.orders.get({ id: order.id })).isInvoiceGenerated).toBe(false);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// GraphQL
// ---------------------------------------------------------------------------------------------

describe('invoices through GraphQL in sandbox', () => {
  const GENERATE = 'mutation ($id: UUID!) { core { orderInvoiceGenerate(id: $id) { id isInvoiceGenerated billingName } } }';
  const INVOICE = 'query ($id: UUID!) { core { orderInvoice(id: $id) { url } } }';
  const UPDATE = `mutation ($id: UUID!, $input: OrderUpdateInput!) { core { orderUpdate(id: $id, input: $input) {
    id billingName billingAddress { line1 line2 postalCode city state country } isInvoiceGenerated } } }`;
  const ORDER = 'query ($id: UUID!) { core { order(id: $id) { id billingName billingAddress { line1 postalCode city country } isInvoiceGenerated } } }';

  describe('the life of one invoice', () => {
    let org: Org;
    let order: Order;
    beforeAll(async () => {
      org = await newOrganization(t.server, 'sandbox', { organizationName: 'Graph Goods' });
      const product = await fixedProduct(org, 'GraphQL handbook', 4_250);
      order = await buy(org, product.id, 'gql-invoice@example.com');
    });

    it('has no invoice before generation: RESOURCE_NOT_FOUND telling to generate it first', async () => {
      const error = await graphqlFailure(org.gql(INVOICE, { id: order.id }), 'RESOURCE_NOT_FOUND', 404);
      expect(error.message).toMatch(/generate/i);
    });

    it('refuses to generate without billing details: MISSING_INVOICE_BILLING_DETAILS', async () => {
      const error = await graphqlFailure(org.gql(GENERATE, { id: order.id }), 'MISSING_INVOICE_BILLING_DETAILS', 422);
      expect(error.message).toMatch(/billing/i);
      expect((await graphqlData(org.gql(ORDER, { id: order.id }))).core.order.isInvoiceGenerated).toBe(false);
    });

    it('generates the invoice after orderUpdate sets the billing details, recording one order.updated', async () => {
      const updated = (
        await graphqlData(org.gql(UPDATE, { id: order.id, input: { billingName: 'Graph Buyer SARL', billingAddress: { line1: '3 rue de la Paix', postalCode: '75002', city: 'Paris', country: 'FR' } } }))
      ).core.orderUpdate;
      expect(updated).toMatchObject({ billingName: 'Graph Buyer SARL', isInvoiceGenerated: false, billingAddress: { country: 'FR', city: 'Paris' } });
      const before = (await eventsOf(t.server, org.organizationId, 'sandbox')).length;
      const generated = (await graphqlData(org.gql(GENERATE, { id: order.id }))).core.orderInvoiceGenerate;
      expect(generated).toEqual({ id: order.id, isInvoiceGenerated: true, billingName: 'Graph Buyer SARL' });
      const events = (await eventsOf(t.server, org.organizationId, 'sandbox')).slice(before);
      expect(events.map((e) => [e.type, e.resourceId])).toEqual([['order.updated', order.id]]);
      expect(events[0].data).toMatchObject({ id: order.id, is_invoice_generated: true });
    });

    it('refuses a second generation: INVOICE_ALREADY_EXISTS', async () => {
      await graphqlFailure(org.gql(GENERATE, { id: order.id }), 'INVOICE_ALREADY_EXISTS', 409);
      expect(await prisma().invoice.count({ where: { orderId: order.id } })).toBe(1);
    });

    it('refuses orderUpdate once invoiced: BAD_USER_INPUT, the billing details unchanged', async () => {
      const before = (await graphqlData(org.gql(ORDER, { id: order.id }))).core.order;
      await graphqlFailure(org.gql(UPDATE, { id: order.id, input: { billingName: 'Changed Later' } }), 'BAD_USER_INPUT', 422);
      await graphqlFailure(org.gql(UPDATE, { id: order.id, input: { billingAddress: { country: 'US' } } }), 'BAD_USER_INPUT', 422);
      expect((await graphqlData(org.gql(ORDER, { id: order.id }))).core.order).toEqual(before);
    });

    it('gives a link to a PDF with the number, the buyer, the product and the total as money', async () => {
      const { url } = (await graphqlData(org.gql(INVOICE, { id: order.id }))).core.orderInvoice;
      expect(url.startsWith(`${t.server.url}/sandbox/v1/invoices/`)).toBe(true);
      const file = await download(url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('application/pdf');
      expect(file.bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');
      const text = await pdfText(file.bytes);
      expect(text).toContain('GRAPH-GOODS-0001');
      expect(text).toMatch(/Bill to Graph Buyer SARL 3 rue de la Paix 75002 Paris FR\b/);
      expect(text).toContain('GraphQL handbook');
      expect(text).toMatch(/Total \$42\.50/);
    });

    it('answers 410 to its link after the hour, 404 when tampered with', async () => {
      const { url } = (await graphqlData(org.gql(INVOICE, { id: order.id }))).core.orderInvoice;
      expect((await download(url.replace(/signature=[^&]+/, 'signature=forged'))).status).toBe(404);
      t.server.clock.now = new Date(Date.now() + 2 * HOUR_MS);
      try {
        expect((await download(url)).status).toBe(410);
      } finally {
        t.server.clock.now = null;
      }
    });
  });

  it('refuses to generate the invoice of an unpaid order: NOT_PAID_ORDER', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const product = await fixedProduct(org, 'Unpaid GraphQL book');
    const order = await declinedOrder(org, product.id, 'gql-unpaid@example.com', 'Declined Buyer');
    await graphqlData(org.gql(UPDATE, { id: order.id, input: { billingName: 'Unpaid Buyer', billingAddress: { country: 'NL' } } }));
    const error = await graphqlFailure(org.gql(GENERATE, { id: order.id }), 'NOT_PAID_ORDER', 422);
    expect(error.message).toMatch(/paid/i);
    expect(await prisma().invoice.count({ where: { orderId: order.id } })).toBe(0);
  });

  it("does not find another organization's order to invoice or to link", async () => {
    const owner = await newOrganization(t.server, 'sandbox');
    const stranger = await newOrganization(t.server, 'sandbox');
    const product = await fixedProduct(owner, 'Private GraphQL book');
    const order = await buy(owner, product.id, 'gql-private@example.com');
    await graphqlData(owner.gql(UPDATE, { id: order.id, input: { billingName: 'Owner Buyer', billingAddress: { country: 'SE' } } }));
    await graphqlFailure(stranger.gql(GENERATE, { id: order.id }), 'RESOURCE_NOT_FOUND', 404);
    expect(await prisma().invoice.count({ where: { orderId: order.id } })).toBe(0);
    await graphqlData(owner.gql(GENERATE, { id: order.id }));
    await graphqlFailure(stranger.gql(INVOICE, { id: order.id }), 'RESOURCE_NOT_FOUND', 404);
    await graphqlFailure(stranger.gql(GENERATE, { id: order.id }), 'RESOURCE_NOT_FOUND', 404);
  });

  it('refuses a token with only the products scopes, naming orders:read', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const product = await fixedProduct(org, 'Scoped GraphQL book');
    const order = await buy(org, product.id, 'gql-scoped@example.com');
    await graphqlData(org.gql(UPDATE, { id: order.id, input: { billingName: 'Scoped Buyer', billingAddress: { country: 'IT' } } }));
    const limited = graphqlClient(t.server.base('sandbox'), await productsOnlyToken(org));
    const generate = await graphqlFailure(limited(GENERATE, { id: order.id }), 'NOT_PERMITTED', 403);
    expect(generate.message).toContain('orders:read');
    const link = await graphqlFailure(limited(INVOICE, { id: order.id }), 'NOT_PERMITTED', 403);
    expect(link.message).toContain('orders:read');
    expect((await graphqlData(org.gql(ORDER, { id: order.id }))).core.order.isInvoiceGenerated).toBe(false);
  });
});

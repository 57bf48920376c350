// Order invoices: generated only on request, for a paid order with billing details, numbered in
// sequence per organization, immutable once issued. They are downloaded through a signed link
// that expires, so a link that leaks stops working.
import type { Context, Environment } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { checkLink, linkKey, signLink } from '../../auth/signed-links.ts';
import { KassaError, ResourceNotFoundError } from '../../graphql/errors.ts';
import { reach } from '../../auth/reach.ts';
import { recordOrderEvents } from '../orders/events.ts';
import { renderInvoicePdf } from './pdf.ts';

export const invoiceLinkLifetimeMs = 3600 * 1000;

export const invoiceAlreadyExists = () =>
  new KassaError('The invoice of this order exists already; fetch it with GET.', 'INVOICE_ALREADY_EXISTS', 409, 'InvoiceAlreadyExists');
export const notPaidOrder = () => new KassaError('This order is not paid: an invoice is issued only for a paid order.', 'NOT_PAID_ORDER', 422, 'NotPaidOrder');
export const missingBillingDetails = () =>
  new KassaError(
    'An invoice needs the billing name and address: set them on the order (PATCH) first.',
    'MISSING_INVOICE_BILLING_DETAILS',
    422,
    'MissingInvoiceBillingDetails',
  );

export async function generateInvoice(ctx: Context, orderId: string, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await db.$queryRaw`SELECT id FROM orders WHERE id = ${orderId}::uuid FOR UPDATE`;
    const order = await db.order.findFirst({
      where: { AND: [reach(ctx).order, { id: orderId }] },
      include: { items: { orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] }, invoice: { select: { id: true } }, organization: true, discount: { select: { name: true } } },
    });
    if (!order) throw new ResourceNotFoundError('Order not found.');
    if (order.invoice) throw invoiceAlreadyExists();
    if (!order.paid) throw notPaidOrder();
    const address = order.billingAddress as { country?: string } | null;
    if (!order.billingName || !address?.country) throw missingBillingDetails();
    // Numbers are gapless per organization: the organization row serializes their allocation.
    await db.$queryRaw`SELECT id FROM organizations WHERE id = ${order.organizationId}::uuid FOR UPDATE`;
    const last = await db.invoice.aggregate({ where: { organizationId: order.organizationId }, _max: { sequence: true } });
    const sequence = (last._max.sequence ?? 0) + 1;
    // The slug is unique in the environment, so no two organizations issue the same number.
    const number = `${order.organization.slug.toUpperCase()}-${String(sequence).padStart(4, '0')}`;
    const issuedAt = ctx.now();
    const pdf = await renderInvoicePdf({
      number,
      issuedAt,
      seller: { name: order.organization.name },
      buyer: { name: order.billingName, address: order.billingAddress as never },
      orderId: order.id,
      currency: order.currency,
      lines: order.items.map((item) => ({ label: item.label, amount: item.amount })),
      subtotal: order.subtotalAmount,
      discount: order.discountAmount,
      discountName: order.discount?.name ?? null,
      net: order.netAmount,
      tax: order.taxAmount,
      total: order.totalAmount,
    });
    await db.invoice.create({ data: { organizationId: order.organizationId, orderId: order.id, sequence, number, pdf: new Uint8Array(pdf), createdAt: issuedAt } });
    await db.order.update({ where: { id: order.id }, data: { invoiceGeneratedAt: issuedAt } });
    await recordOrderEvents(ctx, db, ['order.updated'], order);
    return db.order.findUniqueOrThrow({ ...query, where: { id: order.id } });
  });
}

/** The environment's key for signing invoice links. */
const invoiceLinkKey = (prisma: Db) => linkKey(prisma, 'invoice-links');

export async function invoiceUrl(ctx: Context, orderId: string): Promise<{ url: string }> {
  const order = await ctx.prisma.order.findFirst({ where: { AND: [reach(ctx).order, { id: orderId }] }, include: { invoice: { select: { id: true } } } });
  if (!order) throw new ResourceNotFoundError('Order not found.');
  if (!order.invoice) throw new ResourceNotFoundError('This order has no invoice yet: generate it first, with a POST to its invoice.');
  const link = signLink(await invoiceLinkKey(ctx.prisma), order.invoice.id, new Date(ctx.now().getTime() + invoiceLinkLifetimeMs));
  return { url: `${ctx.environment.publicUrl}/v1/invoices/${order.invoice.id}.pdf?${link.query}` };
}

export type InvoiceDownload = { status: 200; number: string; pdf: Buffer } | { status: 404 | 410; detail: string };

/** The PDF behind a signed link; a link that was not issued by Kassa reads as not found. */
export async function downloadInvoice(environment: Environment, invoiceId: string, query: URLSearchParams, now: Date): Promise<InvoiceDownload> {
  const link = checkLink(await invoiceLinkKey(environment.prisma), invoiceId, query, now);
  if (link === 'forged') return { status: 404, detail: 'No invoice at this link.' };
  if (link === 'expired') return { status: 410, detail: 'This invoice link has expired: ask for a new one.' };
  const invoice = await environment.prisma.invoice.findUnique({ where: { id: invoiceId } });
  if (!invoice) return { status: 404, detail: 'No invoice at this link.' };
  return { status: 200, number: invoice.number, pdf: Buffer.from(invoice.pdf) };
}

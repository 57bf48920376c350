// The invoice document: seller, buyer, number, lines and the amount breakdown, in the order's
// currency. Rendered once, when the invoice is generated, and kept as issued. pdfkit (with fontkit
// and its font tables, about 25 MB resident) is loaded by the first invoice, not at start.
import { formatMoney } from '../../currencies.ts';

export interface InvoiceDocument {
  number: string;
  issuedAt: Date;
  seller: { name: string };
  buyer: { name: string; address: { line1: string | null; line2: string | null; postal_code: string | null; city: string | null; state: string | null; country: string } };
  orderId: string;
  currency: string;
  lines: { label: string; amount: number }[];
  subtotal: number;
  discount: number;
  /** The name of the discount that took `discount` off, shown beside it. */
  discountName: string | null;
  net: number;
  tax: number;
  total: number;
}

export async function renderInvoicePdf(invoice: InvoiceDocument): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', margin: 56, info: { Title: `Invoice ${invoice.number}`, Author: invoice.seller.name }, compress: false });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const money = (amount: number) => formatMoney(amount, invoice.currency);
  const address = invoice.buyer.address;

  doc.font('Helvetica-Bold').fontSize(20).text('Invoice');
  doc.moveDown(0.5).font('Helvetica').fontSize(10);
  doc.text(`Invoice number: ${invoice.number}`);
  doc.text(`Date of issue: ${invoice.issuedAt.toISOString().slice(0, 10)}`);
  doc.text(`Order: ${invoice.orderId}`);
  doc.moveDown();
  doc.font('Helvetica-Bold').text('From');
  doc.font('Helvetica').text(invoice.seller.name);
  doc.moveDown();
  doc.font('Helvetica-Bold').text('Bill to');
  doc.font('Helvetica').text(invoice.buyer.name);
  for (const line of [address.line1, address.line2, [address.postal_code, address.city].filter(Boolean).join(' '), address.state, address.country]) {
    if (line) doc.text(line);
  }
  doc.moveDown();
  doc.font('Helvetica-Bold').text('Description', 56, doc.y, { continued: false });
  for (const line of invoice.lines) {
    const y = doc.y;
    doc.font('Helvetica').text(line.label, 56, y, { width: 340 });
    doc.text(money(line.amount), 400, y, { width: 140, align: 'right' });
  }
  doc.moveDown();
  for (const [label, amount, bold] of [
    ['Subtotal', invoice.subtotal, false],
    [invoice.discountName ? `Discount (${invoice.discountName})` : 'Discount', -invoice.discount, false],
    ['Net amount', invoice.net, false],
    ['Tax', invoice.tax, false],
    ['Total', invoice.total, true],
  ] as const) {
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').text(label, 280, y, { width: 120 });
    doc.text(money(amount), 400, y, { width: 140, align: 'right' });
  }
  doc.moveDown();
  doc.font('Helvetica').fontSize(9).text(`All amounts in ${invoice.currency.toUpperCase()}.`, 56);
  doc.end();
  return done;
}

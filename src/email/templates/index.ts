// Every email Kassa sends, rendered here and only here: a plain-text part and an HTML part built
// from the same blocks, in the reader's locale (catalogue.ts). Every value that reaches the HTML
// part is escaped where the block is written out, so a merchant's product or organization name
// shows as the text it is. Money is integer minor units, written with the currency's ISO exponent
// (currencies.ts formatMoney); dates are written in UTC.
import { formatMoney } from '../../currencies.ts';
import type { EmailMessage } from '../transport.ts';
import { catalogues, resolveLocale, translate, type Locale, type MessageKey } from './catalogue.ts';

export { resolveLocale, type Locale } from './catalogue.ts';

/** What an email is made of, top to bottom. */
type Block =
  | { kind: 'paragraph'; text: string }
  | { kind: 'note'; text: string }
  | { kind: 'link'; label: string; url: string }
  | { kind: 'lines'; rows: { label: string; amount: string; strong?: boolean }[] };

interface Draft {
  subject: string;
  blocks: Block[];
  footer: string;
}

/** An amount of money in minor units and its currency. */
export interface Money {
  amount: number;
  currency: string;
}

export interface OrderSummary {
  reference: string;
  createdAt: Date;
  productName: string;
  currency: string;
  items: { label: string; amount: number }[];
  subtotalAmount: number;
  discountAmount: number;
  discountName: string | null;
  taxAmount: number;
  totalAmount: number;
}

/** Every email, by template name, with what it is rendered from. */
export interface Templates {
  order_receipt: { organization: string; customerName: string | null; order: OrderSummary; portalUrl: string };
  subscription_renewed: { organization: string; customerName: string | null; order: OrderSummary; nextRenewal: Date | null; portalUrl: string };
  subscription_canceled: { organization: string; customerName: string | null; product: string; endsAt: Date; portalUrl: string };
  subscription_revoked: { organization: string; customerName: string | null; product: string; portalUrl: string };
  payment_failed: { organization: string; customerName: string | null; product: string; amount: Money; nextAttemptAt: Date | null; fixUrl: string };
  portal_sign_in: { organization: string; url: string; minutes: number };
  verify_email: { url: string; hours: number };
  account_exists: { signInUrl: string };
  email_code: { organization: string; code: string; minutes: number };
  email_taken: { organization: string };
  merchant_new_order: { organization: string; customer: string; product: string; total: Money };
  merchant_new_subscription: { organization: string; customer: string; product: string; amount: Money; interval: string };
}

export type TemplateName = keyof Templates;

type Writer = {
  t(key: MessageKey, params?: Record<string, string | number>): string;
  money(amount: number, currency: string): string;
  date(date: Date): string;
};

function writer(locale: Locale): Writer {
  const intl = catalogues[locale].intl;
  const dates = new Intl.DateTimeFormat(intl, { dateStyle: 'long', timeZone: 'UTC' });
  return {
    t: (key, params) => translate(locale, key, params),
    money: (amount, currency) => formatMoney(amount, currency, intl),
    date: (date) => dates.format(date),
  };
}

const greeting = (w: Writer, name: string | null): Block => ({ kind: 'paragraph', text: name ? w.t('greeting.named', { name }) : w.t('greeting.anonymous') });

function orderLines(w: Writer, order: OrderSummary): Block {
  const money = (amount: number) => w.money(amount, order.currency);
  const rows: { label: string; amount: string; strong?: boolean }[] = order.items.map((item) => ({ label: item.label, amount: money(item.amount) }));
  rows.push({ label: w.t('lines.subtotal'), amount: money(order.subtotalAmount) });
  if (order.discountAmount > 0) {
    rows.push({ label: order.discountName ? w.t('lines.discount_named', { name: order.discountName }) : w.t('lines.discount'), amount: money(-order.discountAmount) });
  }
  rows.push({ label: w.t('lines.tax'), amount: money(order.taxAmount) });
  rows.push({ label: w.t('lines.total'), amount: money(order.totalAmount), strong: true });
  return { kind: 'lines', rows };
}

const drafts: { [K in TemplateName]: (w: Writer, data: Templates[K]) => Draft } = {
  order_receipt: (w, { organization, customerName, order, portalUrl }) => ({
    subject: w.t('order_receipt.subject', { organization }),
    blocks: [
      greeting(w, customerName),
      { kind: 'paragraph', text: w.t('order_receipt.intro', { total: w.money(order.totalAmount, order.currency), organization }) },
      { kind: 'note', text: w.t('order_receipt.order', { reference: order.reference, date: w.date(order.createdAt) }) },
      orderLines(w, order),
      { kind: 'paragraph', text: w.t('order_receipt.portal') },
      { kind: 'link', label: w.t('order_receipt.portal_link'), url: portalUrl },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  subscription_renewed: (w, { organization, customerName, order, nextRenewal, portalUrl }) => ({
    subject: w.t('subscription_renewed.subject', { product: order.productName, organization }),
    blocks: [
      greeting(w, customerName),
      { kind: 'paragraph', text: w.t('subscription_renewed.intro', { product: order.productName, total: w.money(order.totalAmount, order.currency) }) },
      ...(nextRenewal ? [{ kind: 'paragraph' as const, text: w.t('subscription_renewed.next', { date: w.date(nextRenewal) }) }] : []),
      { kind: 'note', text: w.t('order_receipt.order', { reference: order.reference, date: w.date(order.createdAt) }) },
      orderLines(w, order),
      { kind: 'link', label: w.t('order_receipt.portal_link'), url: portalUrl },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  subscription_canceled: (w, { organization, customerName, product, endsAt, portalUrl }) => ({
    subject: w.t('subscription_canceled.subject', { product, organization }),
    blocks: [
      greeting(w, customerName),
      { kind: 'paragraph', text: w.t('subscription_canceled.intro', { product, date: w.date(endsAt) }) },
      { kind: 'paragraph', text: w.t('subscription_canceled.resume') },
      { kind: 'link', label: w.t('order_receipt.portal_link'), url: portalUrl },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  subscription_revoked: (w, { organization, customerName, product, portalUrl }) => ({
    subject: w.t('subscription_revoked.subject', { product, organization }),
    blocks: [
      greeting(w, customerName),
      { kind: 'paragraph', text: w.t('subscription_revoked.intro', { product }) },
      { kind: 'paragraph', text: w.t('subscription_revoked.again') },
      { kind: 'link', label: w.t('order_receipt.portal_link'), url: portalUrl },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  payment_failed: (w, { organization, customerName, product, amount, nextAttemptAt, fixUrl }) => ({
    subject: w.t('payment_failed.subject', { organization }),
    blocks: [
      greeting(w, customerName),
      { kind: 'paragraph', text: w.t('payment_failed.intro', { amount: w.money(amount.amount, amount.currency), product }) },
      { kind: 'paragraph', text: nextAttemptAt ? w.t('payment_failed.retry', { date: w.date(nextAttemptAt) }) : w.t('payment_failed.last') },
      { kind: 'link', label: w.t('payment_failed.fix_link'), url: fixUrl },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  portal_sign_in: (w, { organization, url, minutes }) => ({
    subject: w.t('portal_sign_in.subject', { organization }),
    blocks: [
      { kind: 'paragraph', text: w.t('portal_sign_in.intro', { organization }) },
      { kind: 'link', label: w.t('portal_sign_in.link'), url },
      { kind: 'note', text: w.t('portal_sign_in.expiry', { minutes }) },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  verify_email: (w, { url, hours }) => ({
    subject: w.t('verify_email.subject'),
    blocks: [
      { kind: 'paragraph', text: w.t('verify_email.intro') },
      { kind: 'link', label: w.t('verify_email.link'), url },
      { kind: 'note', text: w.t('verify_email.expiry', { hours }) },
    ],
    footer: w.t('footer.kassa'),
  }),
  account_exists: (w, { signInUrl }) => ({
    subject: w.t('account_exists.subject'),
    blocks: [
      { kind: 'paragraph', text: w.t('account_exists.intro') },
      { kind: 'paragraph', text: w.t('account_exists.sign_in') },
      { kind: 'link', label: w.t('account_exists.sign_in_link'), url: signInUrl },
      { kind: 'note', text: w.t('account_exists.ignore') },
    ],
    footer: w.t('footer.kassa'),
  }),
  email_code: (w, { organization, code, minutes }) => ({
    subject: w.t('email_code.subject', { code, organization }),
    blocks: [
      { kind: 'paragraph', text: w.t('email_code.intro', { organization }) },
      { kind: 'paragraph', text: w.t('email_code.code', { code }) },
      { kind: 'note', text: w.t('email_code.expiry', { minutes }) },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  email_taken: (w, { organization }) => ({
    subject: w.t('email_taken.subject', { organization }),
    blocks: [
      { kind: 'paragraph', text: w.t('email_taken.intro', { organization }) },
      { kind: 'paragraph', text: w.t('email_taken.explain') },
      { kind: 'paragraph', text: w.t('email_taken.advice') },
    ],
    footer: w.t('footer.sent_by', { organization }),
  }),
  merchant_new_order: (w, { organization, customer, product, total }) => ({
    subject: w.t('merchant_new_order.subject', { product, total: w.money(total.amount, total.currency) }),
    blocks: [
      { kind: 'paragraph', text: w.t('merchant_new_order.intro', { customer, total: w.money(total.amount, total.currency), product, organization }) },
      { kind: 'note', text: w.t('merchant.settings', { organization }) },
    ],
    footer: w.t('footer.kassa'),
  }),
  merchant_new_subscription: (w, { organization, customer, product, amount, interval }) => ({
    subject: w.t('merchant_new_subscription.subject', { product }),
    blocks: [
      { kind: 'paragraph', text: w.t('merchant_new_subscription.intro', { customer, product, organization, amount: w.money(amount.amount, amount.currency), interval }) },
      { kind: 'note', text: w.t('merchant.settings', { organization }) },
    ],
    footer: w.t('footer.kassa'),
  }),
};

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => entities[c]);
}

/** A subject is one header line: line breaks in a merchant's names become spaces. */
const oneLine = (text: string) => text.replace(/[\r\n]+/g, ' ').trim();

function textPart(draft: Draft): string {
  const parts = draft.blocks.map((block) => {
    switch (block.kind) {
      case 'paragraph':
      case 'note':
        return block.text;
      case 'link':
        return `${block.label}: ${block.url}`;
      case 'lines': {
        const width = Math.max(...block.rows.map((row) => row.label.length));
        return block.rows.map((row) => `${row.label.padEnd(width)}  ${row.amount}`).join('\n');
      }
    }
  });
  return [...parts, '--', draft.footer].join('\n\n');
}

const cell = 'padding:4px 0;border-bottom:1px solid #e5e7eb';

function htmlPart(draft: Draft, locale: Locale): string {
  const parts = draft.blocks.map((block) => {
    switch (block.kind) {
      case 'paragraph':
        return `<p style="margin:0 0 16px">${escapeHtml(block.text)}</p>`;
      case 'note':
        return `<p style="margin:0 0 16px;color:#57606a">${escapeHtml(block.text)}</p>`;
      case 'link':
        return `<p style="margin:0 0 16px"><a href="${escapeHtml(block.url)}" style="display:inline-block;padding:10px 18px;background:#0a58ca;color:#ffffff;border-radius:6px;text-decoration:none">${escapeHtml(block.label)}</a></p>`;
      case 'lines':
        return `<table role="presentation" style="width:100%;border-collapse:collapse;margin:0 0 16px">${block.rows
          .map((row) => {
            const weight = row.strong ? 'font-weight:600;' : '';
            return `<tr><td style="${weight}${cell}">${escapeHtml(row.label)}</td><td style="${weight}${cell};text-align:right;white-space:nowrap">${escapeHtml(row.amount)}</td></tr>`;
          })
          .join('')}</table>`;
    }
  });
  return `<!doctype html>
<html lang="${locale}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(oneLine(draft.subject))}</title></head>
<body style="margin:0;padding:24px;background:#f6f8fa;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1f24">
<div style="max-width:560px;margin:0 auto;padding:24px;background:#ffffff;border:1px solid #d0d7de;border-radius:8px">
${parts.join('\n')}
<p style="margin:24px 0 0;font-size:13px;color:#57606a">${escapeHtml(draft.footer)}</p>
</div>
</body>
</html>`;
}

/** The email `template` to `to`, in `locale` (a language tag; English when Kassa has no catalogue for it). */
export function renderEmail<K extends TemplateName>(template: K, to: string, data: Templates[K], locale?: string | null): EmailMessage {
  const resolved = resolveLocale(locale);
  const draft = drafts[template](writer(resolved), data);
  return { to, subject: oneLine(draft.subject), text: textPart(draft), html: htmlPart(draft, resolved) };
}

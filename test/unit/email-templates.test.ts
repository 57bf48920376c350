// The emails' templates: both parts from one source, merchants' names escaped in HTML, money in the
// currency's own exponent, and each locale falling back to English message by message.
import { describe, expect, it } from 'vitest';
import { escapeHtml, renderEmail, resolveLocale } from '../../src/email/templates/index.ts';

const order = (overrides: Partial<Parameters<typeof renderEmail<'order_receipt'>>[2]['order']> = {}) => ({
  reference: 'ORD-1',
  createdAt: new Date('2026-03-04T10:00:00Z'),
  productName: 'Pro plan',
  currency: 'usd',
  items: [{ label: 'Pro plan', amount: 1999 }],
  subtotalAmount: 1999,
  discountAmount: 500,
  discountName: 'Spring',
  taxAmount: 299,
  totalAmount: 1798,
  ...overrides,
});

describe('email templates', () => {
  it('a receipt lists its lines, discount, tax and total, in text and in HTML', () => {
    const mail = renderEmail('order_receipt', 'buyer@example.com', { organization: 'Shop', customerName: 'Ada', order: order(), portalUrl: 'https://kassa.example/portal/shop' });
    expect(mail.to).toBe('buyer@example.com');
    expect(mail.subject).toBe('Your receipt from Shop');
    for (const part of [mail.text, mail.html!]) {
      expect(part).toContain('$19.99');
      expect(part).toContain('-$5.00');
      expect(part).toContain('Discount (Spring)');
      expect(part).toContain('$2.99');
      expect(part).toContain('$17.98');
      expect(part).toContain('https://kassa.example/portal/shop');
      expect(part).toContain('March 4, 2026');
    }
    expect(mail.html).toMatch(/^<!doctype html>/);
  });

  it('money follows the currency exponent: 0 digits for JPY, 3 for KWD', () => {
    const yen = renderEmail('order_receipt', 'a@example.com', { organization: 'S', customerName: null, order: order({ currency: 'jpy', items: [{ label: 'x', amount: 1999 }], subtotalAmount: 1999, discountAmount: 0, taxAmount: 0, totalAmount: 1999 }), portalUrl: 'https://x' });
    expect(yen.text).toContain('¥1,999');
    expect(yen.text).not.toContain('Discount');
    const dinar = renderEmail('merchant_new_order', 'm@example.com', { organization: 'S', customer: 'c@example.com', product: 'P', total: { amount: 1500, currency: 'kwd' } });
    expect(dinar.text).toContain('KWD');
    expect(dinar.text).toContain('1.500');
  });

  it('a merchant-controlled name cannot add markup to the HTML part, and stays itself in the text part', () => {
    const evil = '<script>alert("x")</script> & <img src=x onerror=alert(1)>';
    const mail = renderEmail('subscription_revoked', 'a@example.com', { organization: evil, customerName: '"Bob"', product: evil, portalUrl: 'https://x/?a=1&b="2"' });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<img');
    expect(mail.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;');
    expect(mail.html).toContain('href="https://x/?a=1&amp;b=&quot;2&quot;"');
    expect(mail.text).toContain(evil);
    expect(escapeHtml(`'`)).toBe('&#39;');
  });

  it('a subject keeps to one line whatever a name holds', () => {
    const mail = renderEmail('portal_sign_in', 'a@example.com', { organization: 'Shop\r\nBcc: victim@example.com', url: 'https://x', minutes: 15 });
    expect(mail.subject).not.toMatch(/[\r\n]/);
  });

  it('German and French have their own words and money format; a message they lack falls back to English', () => {
    const data = { organization: 'Laden', customerName: 'Ada', order: order({ currency: 'eur' }), portalUrl: 'https://x' };
    const german = renderEmail('order_receipt', 'a@example.com', data, 'de-DE');
    expect(german.subject).toBe('Ihre Quittung von Laden');
    expect(german.text).toContain('17,98');
    expect(german.text).toContain('Gesamt');
    expect(german.text).toContain('4. März 2026');
    expect(german.html).toContain('<html lang="de">');
    const french = renderEmail('order_receipt', 'a@example.com', data, 'fr');
    expect(french.subject).toBe('Votre reçu de Laden');
    // No German catalogue entry for the cancellation notice: English words, German dates.
    const canceled = renderEmail('subscription_canceled', 'a@example.com', { organization: 'Laden', customerName: null, product: 'Pro', endsAt: new Date('2026-05-01T00:00:00Z'), portalUrl: 'https://x' }, 'de');
    expect(canceled.subject).toBe('Your Pro subscription at Laden will end');
    expect(canceled.text).toContain('Hallo,');
    expect(canceled.text).toContain('1. Mai 2026');
  });

  it('an unknown or missing locale is English', () => {
    expect(resolveLocale('xx-YY')).toBe('en');
    expect(resolveLocale(undefined)).toBe('en');
    expect(resolveLocale(42)).toBe('en');
    expect(resolveLocale('FR_ca')).toBe('fr');
    expect(renderEmail('verify_email', 'a@example.com', { url: 'https://x', hours: 24 }, 'klingon').subject).toBe('Confirm your email address for Kassa');
  });
});

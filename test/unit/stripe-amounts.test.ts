import { describe, expect, it } from 'vitest';
import { minorUnitExponent } from '../../src/currencies.ts';
import { fromStripeAmount, stripeAmount, stripeExponent, stripeMinimumCharge } from '../../src/stripe-amounts.ts';

const sent = (amount: number, currency: string, purpose?: 'charge' | 'refund') => {
  const result = stripeAmount(amount, currency, purpose);
  return result.ok ? result.amount : result.detail;
};

describe('amounts sent to Stripe', () => {
  it('sends two-decimal and zero-decimal amounts as they are', () => {
    expect([sent(1999, 'usd'), sent(1999, 'EUR'), sent(1999, 'jpy'), sent(50000, 'krw'), sent(1000, 'clp'), sent(5000, 'xof')]).toEqual([1999, 1999, 1999, 50000, 1000, 5000]);
  });

  it('sends three-decimal amounts in thousandths when the last digit is 0, and refuses the rest naming the nearest tens', () => {
    expect([sent(1500, 'kwd'), sent(5120, 'bhd'), sent(10000, 'jod'), sent(2500, 'omr'), sent(3000, 'tnd')]).toEqual([1500, 5120, 10000, 2500, 3000]);
    expect(sent(5124, 'kwd')).toBe('Stripe takes KWD amounts in minor units whose last digit is 0: round 5124 to the nearest ten (5120 or 5130).');
    expect(stripeAmount(5124, 'kwd', 'refund').ok).toBe(false);
  });

  it('sends ISK and UGX, zero-decimal in ISO, as two-decimal amounts: whole units times 100', () => {
    expect([sent(500, 'isk'), sent(5000, 'ugx')]).toEqual([50000, 500000]);
    expect(fromStripeAmount(50000, 'isk')).toEqual({ ok: true, amount: 500 });
  });

  it('sends MGA, two-decimal in ISO but zero-decimal at Stripe, in whole ariary only', () => {
    expect(sent(150000, 'mga')).toBe(1500);
    expect(sent(150050, 'mga')).toBe('Stripe takes MGA in whole units only; MGA\u00a01,500.50 is not a whole amount.');
    expect(fromStripeAmount(1500, 'mga')).toEqual({ ok: true, amount: 150000 });
  });

  it('charges HUF and TWD in two decimals, cents included: only payouts must be whole units', () => {
    expect([sent(17550, 'huf'), sent(1999, 'twd')]).toEqual([17550, 1999]);
  });

  it('refuses currencies whose minor unit Stripe does not document, and codes that are no currency', () => {
    for (const currency of ['iqd', 'lyd', 'clf', 'uyw', 'uyi']) expect(stripeAmount(10000, currency).ok).toBe(false);
    expect(sent(1000, 'xyz')).toBe('"xyz" is not an ISO 4217 currency.');
  });

  it('refuses amounts that are not positive integers', () => {
    for (const amount of [0, -100, 19.99, Number.NaN]) expect(stripeAmount(amount, 'usd').ok).toBe(false);
  });

  it("refuses a charge under Stripe's minimum for its currency, and lets a refund of any size through", () => {
    expect([sent(50, 'usd'), sent(30, 'gbp'), sent(50, 'eur'), sent(50, 'jpy'), sent(17500, 'huf')]).toEqual([50, 30, 50, 50, 17500]);
    expect(sent(49, 'usd')).toBe("Stripe's minimum charge in USD is $0.50; $0.49 is less.");
    expect(sent(49, 'jpy')).toBe("Stripe's minimum charge in JPY is ¥50; ¥49 is less.");
    expect(sent(29, 'gbp')).toMatch(/minimum charge in GBP is £0\.30/);
    expect([sent(1, 'usd', 'refund'), sent(1, 'jpy', 'refund')]).toEqual([1, 1]);
  });

  it("covers every currency of Stripe's minimum table, each with as many decimals at Stripe as in ISO", () => {
    expect(Object.keys(stripeMinimumCharge).sort()).toEqual(['aed', 'aud', 'bgn', 'brl', 'cad', 'chf', 'czk', 'dkk', 'eur', 'gbp', 'hkd', 'huf', 'inr', 'jpy', 'mxn', 'myr', 'nok', 'nzd', 'pln', 'ron', 'sek', 'sgd', 'thb', 'usd']);
    for (const [currency, minimum] of Object.entries(stripeMinimumCharge)) {
      expect(sent(minimum, currency)).toBe(minimum);
      expect(minorUnitExponent(currency)).toBe(currency === 'jpy' ? 0 : 2);
    }
  });
});

describe('amounts Stripe reports back', () => {
  it('turns them into Kassa minor units, the inverse of what was sent', () => {
    for (const [amount, currency] of [[1999, 'usd'], [1999, 'jpy'], [1500, 'kwd'], [500, 'isk'], [5000, 'ugx'], [150000, 'mga'], [17550, 'huf']] as const) {
      const stripe = stripeAmount(amount, currency);
      expect(stripe.ok && fromStripeAmount(stripe.amount, currency)).toEqual({ ok: true, amount });
    }
  });

  it('refuses an amount with no Kassa equivalent: a fractional króna from before Stripe required whole ones', () => {
    expect(fromStripeAmount(4010, 'isk')).toEqual({ ok: false, detail: '4010 from Stripe is not a whole number of ISK minor units.' });
    expect(fromStripeAmount(100, 'iqd').ok).toBe(false);
  });
});

describe('the decimals of Stripe’s unit, which the checkout page gives Stripe.js', () => {
  it('follows Stripe’s tables, not ISO’s, and has none for a currency Stripe documents no unit of', () => {
    const decimals = Object.fromEntries(['usd', 'jpy', 'isk', 'ugx', 'mga', 'kwd', 'huf', 'iqd'].map((c) => [c, stripeExponent(c)]));
    expect(decimals).toEqual({ usd: 2, jpy: 0, isk: 2, ugx: 2, mga: 0, kwd: 3, huf: 2, iqd: null });
  });
});

// The discount arithmetic, as properties over every price and every discount: the amount off is
// never negative and never more than the price, net + discount is the price exactly, and a
// percentage is rounded half up to the minor unit (as the original service rounds it).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { discountAmount, discountAppliesToPeriod, discountedAmounts, type DiscountTerms } from '../../src/modules/discounts/amounts.ts';

const price = fc.integer({ min: 0, max: 99_999_999 });
const fixed = fc.integer({ min: 1, max: 99_999_999 }).map((amount): DiscountTerms => ({ type: 'fixed', amount, basisPoints: null }));
const percentage = fc.integer({ min: 1, max: 10_000 }).map((basisPoints): DiscountTerms => ({ type: 'percentage', amount: null, basisPoints }));
const terms = fc.oneof(fixed, percentage);

describe('discount amounts', () => {
  it('are never negative and never more than the price; net + discount = price and total = net + tax, exactly', () => {
    fc.assert(
      fc.property(terms, price, fc.integer({ min: 0, max: 10_000_000 }), (discount, amount, tax) => {
        const off = discountAmount(discount, amount);
        expect(Number.isInteger(off)).toBe(true);
        expect(off).toBeGreaterThanOrEqual(0);
        expect(off).toBeLessThanOrEqual(amount);
        const { discountAmount: d, netAmount, totalAmount } = discountedAmounts(discount, amount, tax);
        expect(d).toBe(off);
        expect(netAmount + d).toBe(amount);
        expect(netAmount).toBeGreaterThanOrEqual(0);
        expect(totalAmount).toBe(netAmount + tax);
      }),
      { numRuns: 2000 },
    );
  });

  it('a percentage is the exact share rounded half up: within half a minor unit, and up on exactly a half', () => {
    fc.assert(
      fc.property(percentage, price, (discount, amount) => {
        const off = discountAmount(discount, amount);
        // In integers: 10000 × off lies within (exact − 5000, exact + 5000], the tie going up.
        const exact = amount * discount.basisPoints!;
        expect(off * 10_000 - exact).toBeGreaterThan(-5000);
        expect(off * 10_000 - exact).toBeLessThanOrEqual(5000);
      }),
      { numRuns: 2000 },
    );
    // Every exact half: amount × basis points ending in 5000.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9_999 }), (whole) => {
        expect(discountAmount({ type: 'percentage', amount: null, basisPoints: 5000 }, 2 * whole + 1)).toBe(whole + 1);
      }),
    );
    const tenth: DiscountTerms = { type: 'percentage', amount: null, basisPoints: 1000 };
    expect([1995, 1994, 1996, 5, 4, 0].map((amount) => discountAmount(tenth, amount))).toEqual([200, 199, 200, 1, 0, 0]);
    expect(discountAmount({ type: 'percentage', amount: null, basisPoints: 10_000 }, 1999)).toBe(1999);
  });

  it('a fixed discount takes its amount, or the whole price when the price is less', () => {
    fc.assert(
      fc.property(fixed, price, (discount, amount) => {
        expect(discountAmount(discount, amount)).toBe(Math.min(discount.amount!, amount));
      }),
    );
  });

  it('is more for a larger price, never less (for the same discount)', () => {
    fc.assert(
      fc.property(terms, price, price, (discount, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        expect(discountAmount(discount, low)).toBeLessThanOrEqual(discountAmount(discount, high));
      }),
    );
  });
});

describe('which periods of a subscription a discount covers', () => {
  const first = new Date('2027-01-31T10:00:00.000Z');
  const periods = ['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30'].map((day) => new Date(`${day}T10:00:00.000Z`));
  const covered = (duration: 'once' | 'forever' | 'repeating', durationInMonths: number | null = null) =>
    periods.map((start) => discountAppliesToPeriod({ duration, durationInMonths }, first, start));

  it('once: the first period; forever: all; repeating n: the periods starting within the first n months', () => {
    expect(covered('once')).toEqual([true, false, false, false]);
    expect(covered('forever')).toEqual([true, true, true, true]);
    expect(covered('repeating', 1)).toEqual([true, false, false, false]);
    expect(covered('repeating', 2)).toEqual([true, true, false, false]);
    expect(covered('repeating', 3)).toEqual([true, true, true, false]);
  });

  it('repeating n covers exactly n monthly periods, whatever the day of the month it starts on', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 36 }), fc.date({ min: new Date('2020-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }), (months, start) => {
        const starts = Array.from({ length: 48 }, (_, i) => {
          const date = new Date(start.getTime());
          const day = date.getUTCDate();
          date.setUTCDate(1);
          date.setUTCMonth(date.getUTCMonth() + i);
          date.setUTCDate(Math.min(day, new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate()));
          return date;
        });
        expect(starts.filter((s) => discountAppliesToPeriod({ duration: 'repeating', durationInMonths: months }, start, s))).toHaveLength(months);
      }),
    );
  });
});

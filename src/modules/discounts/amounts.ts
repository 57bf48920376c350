// Discount arithmetic, pure. Amounts are integer minor units. For every amount a ≥ 0:
// 0 ≤ discountAmount(d, a) ≤ a, and net = a − discount, so net + discount = a exactly.
// A percentage is basis points of 10000, rounded half up as the original service does
// (12.5 → 13, 12.4 → 12); a fixed discount takes its amount, at most the whole price.
import { addInterval } from '../../calendar.ts';

export interface DiscountTerms {
  type: 'fixed' | 'percentage';
  amount: number | null;
  basisPoints: number | null;
}

export interface DiscountSchedule {
  duration: 'once' | 'forever' | 'repeating';
  durationInMonths: number | null;
}

/** What the discount takes off `amount`: never negative, never more than `amount`. */
export function discountAmount(terms: DiscountTerms, amount: number): number {
  if (amount <= 0) return 0;
  // amount ≤ 99999999 and basis points ≤ 10000: the product stays far below 2^53, so this is exact.
  const off = terms.type === 'fixed' ? (terms.amount ?? 0) : Math.floor((amount * (terms.basisPoints ?? 0) + 5000) / 10000);
  return Math.min(amount, Math.max(0, off));
}

/** The amounts of a discounted price: net is what remains; total adds the tax (0 today). */
export function discountedAmounts(terms: DiscountTerms | null, amount: number, taxAmount = 0) {
  const discount = terms ? discountAmount(terms, amount) : 0;
  const net = amount - discount;
  return { discountAmount: discount, netAmount: net, totalAmount: net + taxAmount };
}

/**
 * Whether the discount still applies to a subscription's period starting at `periodStart`, the
 * first period having started at `firstPeriodStart`: `once` the first period only, `forever`
 * every period, `repeating` the periods that start within its first `durationInMonths` months
 * (repeating 2 on a monthly subscription: the first two orders).
 */
export function discountAppliesToPeriod(schedule: DiscountSchedule, firstPeriodStart: Date, periodStart: Date): boolean {
  switch (schedule.duration) {
    case 'once':
      return periodStart.getTime() <= firstPeriodStart.getTime();
    case 'forever':
      return true;
    case 'repeating':
      return periodStart.getTime() < addInterval(firstPeriodStart, 'month', schedule.durationInMonths ?? 1).getTime();
  }
}

// Calendar arithmetic in UTC, for billing periods and expiries.

export type CalendarUnit = 'day' | 'week' | 'month' | 'year';

/** The lengths counts over a range are grouped by (meter quantities, revenue metrics), shortest first. */
export const timeIntervals = ['hour', 'day', 'week', 'month', 'year'] as const;
export type TimeInterval = (typeof timeIntervals)[number];

/**
 * `start` moved on by `count` units. Months and years keep the day of the month where they can
 * and clamp to the month's last day otherwise (Jan 31 + 1 month = Feb 28), so a period anchored on
 * the 31st comes back to the 31st whenever the month has one.
 */
export function addInterval(start: Date, unit: CalendarUnit, count: number): Date {
  const date = new Date(start.getTime());
  if (unit === 'day' || unit === 'week') {
    date.setUTCDate(date.getUTCDate() + count * (unit === 'week' ? 7 : 1));
    return date;
  }
  const months = count * (unit === 'year' ? 12 : 1);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return date;
}

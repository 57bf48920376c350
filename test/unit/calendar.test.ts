import { describe, expect, it } from 'vitest';
import { addInterval } from '../../src/calendar.ts';

const at = (iso: string) => new Date(iso);

describe('calendar arithmetic', () => {
  it('moves days and weeks by whole days, across month and year ends', () => {
    expect(addInterval(at('2027-12-30T10:00:00Z'), 'day', 3)).toEqual(at('2028-01-02T10:00:00Z'));
    expect(addInterval(at('2027-02-25T10:00:00Z'), 'week', 1)).toEqual(at('2027-03-04T10:00:00Z'));
  });

  it('keeps the day of the month, clamping to shorter months without drifting', () => {
    const anchor = at('2027-01-31T10:00:00Z');
    expect([1, 2, 3, 13].map((n) => addInterval(anchor, 'month', n).toISOString())).toEqual([
      '2027-02-28T10:00:00.000Z',
      '2027-03-31T10:00:00.000Z',
      '2027-04-30T10:00:00.000Z',
      '2028-02-29T10:00:00.000Z',
    ]);
  });

  it('moves years by twelve months, so Feb 29 falls on Feb 28 in common years', () => {
    expect(addInterval(at('2028-02-29T00:00:00Z'), 'year', 1)).toEqual(at('2029-02-28T00:00:00Z'));
    expect(addInterval(at('2028-02-29T00:00:00Z'), 'year', 4)).toEqual(at('2032-02-29T00:00:00Z'));
  });
});

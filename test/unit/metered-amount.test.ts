// A metered line's amount: units × unit amount in minor units, rounded half up once, then capped.
import { describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.ts';
import { meteredAmount } from '../../src/modules/usage/credits.ts';

const unit = (text: string) => new Prisma.Decimal(text);

describe('a metered amount', () => {
  it('rounds half up to a whole minor unit, once per line', () => {
    expect(meteredAmount(3, unit('0.5'), null)).toBe(2);
    expect(meteredAmount(2.98, unit('0.5'), null)).toBe(1);
    expect(meteredAmount(1, unit('0.499999999999'), null)).toBe(0);
    expect(meteredAmount(1000, unit('0.0015'), null)).toBe(2);
  });

  it('multiplies exactly, with no float drift', () => {
    // 0.1 × 5 is 0.5 exactly here, where floats give 0.5000000000000001 or 0.49999…: half up makes it 1.
    expect(meteredAmount(3, unit('0.1'), null)).toBe(0);
    expect(meteredAmount(5, unit('0.1'), null)).toBe(1);
    expect(meteredAmount(1, unit('2.5'), null)).toBe(3);
    expect(meteredAmount(1_000_000, unit('0.000000000001'), null)).toBe(0);
  });

  it('is capped after rounding', () => {
    expect(meteredAmount(19_990, unit('0.5'), 5000)).toBe(5000);
    expect(meteredAmount(10, unit('1'), 0)).toBe(0);
    expect(meteredAmount(0, unit('7'), 100)).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { formatMoney, isKnownCurrency, knownCurrencies, majorUnits, minorUnitExponent, parseMajorUnits } from '../../src/currencies.ts';

describe('ISO 4217 minor units', () => {
  it('gives each currency its ISO exponent, whatever Intl (CLDR) shows it with', () => {
    const exponents = Object.fromEntries(['usd', 'eur', 'jpy', 'krw', 'clp', 'isk', 'ugx', 'vnd', 'xof', 'uyi', 'kwd', 'bhd', 'iqd', 'lyd', 'tnd', 'clf', 'uyw', 'huf', 'twd', 'mga'].map((c) => [c, minorUnitExponent(c)]));
    expect(exponents).toEqual({ usd: 2, eur: 2, jpy: 0, krw: 0, clp: 0, isk: 0, ugx: 0, vnd: 0, xof: 0, uyi: 0, kwd: 3, bhd: 3, iqd: 3, lyd: 3, tnd: 3, clf: 4, uyw: 4, huf: 2, twd: 2, mga: 2 });
  });

  it('lists exactly the zero-, three- and four-decimal currencies ISO names; every other is two-decimal', () => {
    const byExponent = (n: number) => knownCurrencies.filter((c) => minorUnitExponent(c) === n);
    expect(byExponent(0)).toEqual(['bif', 'clp', 'djf', 'gnf', 'isk', 'jpy', 'kmf', 'krw', 'pyg', 'rwf', 'ugx', 'uyi', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
    expect(byExponent(3)).toEqual(['bhd', 'iqd', 'jod', 'kwd', 'lyd', 'omr', 'tnd']);
    expect(byExponent(4)).toEqual(['clf', 'uyw']);
    expect(knownCurrencies.every((c) => [0, 2, 3, 4].includes(minorUnitExponent(c)))).toBe(true);
  });

  it('knows every code Intl knows, except withdrawn ones and units without a minor unit', () => {
    const intl = Intl.supportedValuesOf('currency').map((c) => c.toLowerCase());
    const dropped = intl.filter((c) => !isKnownCurrency(c));
    expect(dropped.filter((c) => !['hrk', 'sll', 'zwl', 'xdr', 'xsu'].includes(c))).toEqual([]);
  });

  it('reads codes in any case and refuses what is not an ISO currency with a minor unit', () => {
    expect([isKnownCurrency('USD'), isKnownCurrency('usd'), isKnownCurrency('xyz'), isKnownCurrency('xau'), isKnownCurrency('hrk')]).toEqual([true, true, false, false, false]);
    expect(() => minorUnitExponent('xyz')).toThrow(RangeError);
  });
});

describe('formatMoney', () => {
  it('shows minor units with exactly the ISO number of decimals', () => {
    expect(formatMoney(1999, 'usd')).toBe('$19.99');
    expect(formatMoney(1999, 'jpy')).toBe('¥1,999');
    expect(formatMoney(1500, 'kwd')).toBe('KWD\u00a01.500');
    expect(formatMoney(1500, 'IQD')).toBe('IQD\u00a01.500');
    expect(formatMoney(12345, 'clf')).toBe('CLF\u00a01.2345');
    expect(formatMoney(175000, 'huf')).toBe('HUF\u00a01,750.00');
    expect(formatMoney(5, 'usd')).toBe('$0.05');
    expect(formatMoney(-1999, 'usd')).toBe('-$19.99');
  });

  it('writes the amount in the given locale', () => {
    expect(formatMoney(123456, 'eur', 'de-DE')).toBe('1.234,56\u00a0€');
  });

  it('keeps every digit of amounts too large for a float division to stay exact', () => {
    expect(formatMoney(Number.MAX_SAFE_INTEGER, 'kwd')).toBe('KWD\u00a09,007,199,254,740.991');
  });

  it('still shows a withdrawn currency, with Intl digits, rather than failing', () => {
    expect(formatMoney(1999, 'hrk')).toBe('HRK\u00a019.99');
  });
});

describe('amounts a buyer types', () => {
  it('reads major units with up to the currency decimals, a point or a comma', () => {
    expect(['12', '12.5', '12,50', ' 12.50 '].map((t) => parseMajorUnits(t, 'usd'))).toEqual([1200, 1250, 1250, 1250]);
    expect(['1999', '1999.5'].map((t) => parseMajorUnits(t, 'jpy'))).toEqual([1999, null]);
    expect(['1.5', '1.250', '1.2505'].map((t) => parseMajorUnits(t, 'kwd'))).toEqual([1500, 1250, null]);
    expect(['', 'abc', '12.345', '-1', '1,000.00'].map((t) => parseMajorUnits(t, 'usd'))).toEqual([null, null, null, null, null]);
  });

  it('writes minor units back as the plain decimal a buyer types', () => {
    expect([majorUnits(1999, 'usd'), majorUnits(1999, 'jpy'), majorUnits(1500, 'kwd'), majorUnits(5, 'usd')]).toEqual(['19.99', '1999', '1.500', '0.05']);
  });
});

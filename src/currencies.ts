// Currencies as ISO 4217 defines them. Kassa stores every amount as an integer count of the
// currency's minor unit, and the minor unit is 10^-exponent of the major one: 1999 usd is 19.99
// dollars, 1999 jpy is 1,999 yen, 1500 kwd is 1.500 dinars. The exponent is ISO's, never CLDR's
// (which Intl uses for display and which differs for IQD, HUF, MGA, UGX, …): an amount stored under
// one exponent and shown under another is off by a power of ten.
// Neutral: it imports nothing of Kassa, so modules, pages and wire/ can all use it.

/**
 * The minor-unit exponent of every currency and fund of ISO 4217 List One (the list of
 * 2024-06-25, plus XCG, in use since 2025-03-31), by lowercase code. Codes with no minor unit
 * ("N.A.": XAU, XDR, XSU, XTS, XXX, …) are not here: an integer count of minor units means nothing
 * for them. Withdrawn codes (HRK, SLL, ZWL, …) are not here either; ANG and BGN, being replaced
 * by XCG (2025) and EUR (2026), still are, for the prices already made in them.
 */
const minorUnitExponents: Readonly<Record<string, number>> = {
  aed: 2, afn: 2, all: 2, amd: 2, ang: 2, aoa: 2, ars: 2, aud: 2, awg: 2, azn: 2,
  bam: 2, bbd: 2, bdt: 2, bgn: 2, bhd: 3, bif: 0, bmd: 2, bnd: 2, bob: 2, bov: 2,
  brl: 2, bsd: 2, btn: 2, bwp: 2, byn: 2, bzd: 2,
  cad: 2, cdf: 2, che: 2, chf: 2, chw: 2, clf: 4, clp: 0, cny: 2, cop: 2, cou: 2,
  crc: 2, cuc: 2, cup: 2, cve: 2, czk: 2,
  djf: 0, dkk: 2, dop: 2, dzd: 2,
  egp: 2, ern: 2, etb: 2, eur: 2,
  fjd: 2, fkp: 2,
  gbp: 2, gel: 2, ghs: 2, gip: 2, gmd: 2, gnf: 0, gtq: 2, gyd: 2,
  hkd: 2, hnl: 2, htg: 2, huf: 2,
  idr: 2, ils: 2, inr: 2, iqd: 3, irr: 2, isk: 0,
  jmd: 2, jod: 3, jpy: 0,
  kes: 2, kgs: 2, khr: 2, kmf: 0, kpw: 2, krw: 0, kwd: 3, kyd: 2, kzt: 2,
  lak: 2, lbp: 2, lkr: 2, lrd: 2, lsl: 2, lyd: 3,
  mad: 2, mdl: 2, mga: 2, mkd: 2, mmk: 2, mnt: 2, mop: 2, mru: 2, mur: 2, mvr: 2,
  mwk: 2, mxn: 2, mxv: 2, myr: 2, mzn: 2,
  nad: 2, ngn: 2, nio: 2, nok: 2, npr: 2, nzd: 2,
  omr: 3,
  pab: 2, pen: 2, pgk: 2, php: 2, pkr: 2, pln: 2, pyg: 0,
  qar: 2,
  ron: 2, rsd: 2, rub: 2, rwf: 0,
  sar: 2, sbd: 2, scr: 2, sdg: 2, sek: 2, sgd: 2, shp: 2, sle: 2, sos: 2, srd: 2,
  ssp: 2, stn: 2, svc: 2, syp: 2, szl: 2,
  thb: 2, tjs: 2, tmt: 2, tnd: 3, top: 2, try: 2, ttd: 2, twd: 2, tzs: 2,
  uah: 2, ugx: 0, usd: 2, usn: 2, uyi: 0, uyu: 2, uyw: 4, uzs: 2,
  ved: 2, ves: 2, vnd: 0, vuv: 0,
  wst: 2,
  xaf: 0, xcd: 2, xcg: 2, xof: 0, xpf: 0,
  yer: 2,
  zar: 2, zmw: 2, zwg: 2,
};

/** Every code of the table, lowercase and sorted: the currencies a price may be in. */
export const knownCurrencies: readonly string[] = Object.keys(minorUnitExponents).sort();

/** Whether `currency` (any case) is an ISO 4217 currency with a minor unit. */
export function isKnownCurrency(currency: string): boolean {
  return Object.hasOwn(minorUnitExponents, currency.toLowerCase());
}

/**
 * How many digits of an amount of `currency` (any case) are minor units: 2 for usd, 0 for jpy,
 * 3 for kwd, 4 for clf. Throws a RangeError for a code outside the table, since guessing would
 * misstate the amount by a power of ten.
 */
export function minorUnitExponent(currency: string): number {
  const code = currency.toLowerCase();
  if (!Object.hasOwn(minorUnitExponents, code)) throw new RangeError(`"${currency}" is not an ISO 4217 currency with a minor unit.`);
  return minorUnitExponents[code];
}

/** An integer of minor units as an exact decimal string: (-1999, 2) is "-19.99", (5, 3) is "0.005". */
function decimal(amount: number, exponent: number): `${number}` {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`An amount is an integer of minor units, not ${amount}.`);
  const digits = Math.abs(amount).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = exponent ? `.${digits.slice(digits.length - exponent)}` : '';
  return `${amount < 0 ? '-' : ''}${whole}${fraction}` as `${number}`;
}

/**
 * The decimals an amount of `currency` is shown and typed with: the ISO exponent, or for a code
 * outside the table (a withdrawn currency a price was created in before prices were checked
 * against it) Intl's own digits, as Kassa showed it before: showing an amount must not fail.
 */
function shownExponent(currency: string): number {
  if (isKnownCurrency(currency)) return minorUnitExponent(currency);
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).resolvedOptions().maximumFractionDigits ?? 2;
}

/**
 * Minor units as money written in `locale`, with exactly the ISO number of decimals:
 * 1999 usd is "$19.99", 1999 jpy is "¥1,999", 1500 kwd is "KWD 1.500". The digits reach Intl as
 * an exact decimal string, never through a float division.
 */
export function formatMoney(amount: number, currency: string, locale = 'en-US'): string {
  const exponent = shownExponent(currency);
  const format = new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase(), minimumFractionDigits: exponent, maximumFractionDigits: exponent });
  return format.format(decimal(amount, exponent));
}

/** Minor units as the plain decimal a buyer would type: 1999 usd is "19.99", 1999 jpy is "1999". */
export function majorUnits(amount: number, currency: string): string {
  return decimal(amount, shownExponent(currency));
}

/**
 * An amount typed in major units ("12", "12.5", "12,50", "1.250") as minor units of `currency`, or
 * null when it is not one: no more decimals than the currency has (none for jpy), one decimal
 * mark (a point or a comma), no grouping.
 */
export function parseMajorUnits(typed: string, currency: string): number | null {
  const exponent = shownExponent(currency);
  const match = /^\s*(\d{1,15})(?:[.,](\d+))?\s*$/.exec(typed);
  if (!match || (match[2] ?? '').length > exponent) return null;
  const amount = Number(match[1] + (match[2] ?? '').padEnd(exponent, '0'));
  return Number.isSafeInteger(amount) ? amount : null;
}

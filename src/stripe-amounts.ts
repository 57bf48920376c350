// Kassa's amounts (integer ISO 4217 minor units, src/currencies.ts) as the `amount` of Stripe's API,
// and back. Stripe also counts in a "smallest unit", but its own: for most currencies that is the
// ISO minor unit, and where it is not, sending Kassa's number unchanged would charge a hundred times
// too much or too little. So every amount bound for Stripe passes through `stripeAmount`, and every
// amount Stripe reports (refunds, disputes) through `fromStripeAmount`. The checkout page tells
// Stripe.js the amount in the same unit (`stripeExponent`), for the Payment Element to show.
//
// What this relies on, from Stripe's "Supported currencies" page (https://docs.stripe.com/currencies)
// and the support article it links for ISK:
// - "All API requests expect amount values in the currency's minor unit": 1000 charges 10 USD.
//   Currencies are two-decimal unless the page lists them otherwise.
// - Zero-decimal currencies take whole units, "without requiring multiplication": bif clp djf gnf
//   jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf. All are zero-decimal in ISO too, except mga
//   (ISO: 2 decimals), whose Kassa amount must therefore be whole ariary and is divided by 100.
// - Three-decimal currencies (bhd jod kwd omr tnd) take thousandths, but "to ensure compatibility
//   with Stripe's payments partners ... the least-significant (last) digit [must] be 0. Your
//   integration must round amounts to the nearest ten" (5.124 KWD is sent as 5120 or 5130). Kassa
//   refuses instead of rounding: the order says what the buyer owes, and a rounded charge would
//   take a different amount. The rule covers Payment Intents, Refunds and Disputes alike.
// - Special case ISK: zero-decimal in ISO, but "ISK will remain a two-decimal currency in the
//   Stripe API, and an ISK amount of 100 will continue to represent 1 króna"; since 2023-04-14
//   Stripe refuses amounts that are not multiples of 100 (invalid_charge_amount_no_decimal_compatible).
//   So Kassa's whole krónur are multiplied by 100.
// - Special case UGX: zero-decimal in ISO; Stripe's special-cases table keeps it two-decimal in
//   the API for backwards compatibility, with the decimal part 00, as for ISK, so whole shillings
//   are multiplied by 100. Stripe's zero-decimal list names UGX too; the special case is the more
//   specific rule, and it is the one followed here. Confirm it with a test-mode charge before
//   selling in UGX.
// - Special cases HUF and TWD: Stripe "treats [them] as a zero-decimal currency for payouts, even
//   though you can charge two-decimal amounts"; only a manual payout must be divisible by 100.
//   Kassa charges and refunds and never creates payouts, so two-decimal amounts are sent as they
//   are, fillér and cents included.
// - Minimum charge amounts: the table below is Stripe's "Minimum and maximum charge amounts", in
//   API units. Stripe applies it in the account's settlement currency; Kassa knows no exchange
//   rates, so it checks a charge against the entry of the charge's own currency, which is exact
//   when the two are the same and a lower bound Stripe may still refuse otherwise. Refunds have no
//   minimum. The maximum (eight digits for most currencies) is left to Stripe.
import { formatMoney, isKnownCurrency, minorUnitExponent } from './currencies.ts';

export type StripeAmount = { ok: true; amount: number } | { ok: false; detail: string };

const zeroDecimal = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const threeDecimal = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);
const twoDecimalForCompatibility = new Set(['isk', 'ugx']);

/**
 * Stripe's minimum charge per currency, in Stripe's API units (usd 50 is $0.50, jpy 50 is ¥50).
 * Each of these currencies has as many decimals in Stripe's API as in ISO 4217, so the numbers
 * are Kassa amounts as well.
 */
export const stripeMinimumCharge: Readonly<Record<string, number>> = {
  usd: 50, aed: 200, aud: 50, bgn: 100, brl: 50, cad: 50, chf: 50, czk: 1500, dkk: 250, eur: 50,
  gbp: 30, hkd: 400, huf: 17500, inr: 50, jpy: 50, mxn: 1000, myr: 200, nok: 300, nzd: 50, pln: 200,
  ron: 200, sek: 300, sgd: 50, thb: 1000,
};

/** How many decimals Stripe's API amount of `currency` carries, or null when Stripe documents none. */
export function stripeExponent(currency: string): number | null {
  if (zeroDecimal.has(currency)) return 0;
  if (twoDecimalForCompatibility.has(currency)) return 2;
  if (threeDecimal.has(currency)) return 3;
  // Two-decimal unless listed: an ISO exponent of 0, 3 or 4 that Stripe does not list (iqd, lyd,
  // clf, uyw, uyi) has no documented Stripe amount.
  return minorUnitExponent(currency) === 2 ? 2 : null;
}

/** Kassa's `amount` of `currency` scaled to `to` decimals from `from`, or null when it is not exact. */
function rescale(amount: number, from: number, to: number): number | null {
  if (to >= from) return amount * 10 ** (to - from);
  const divisor = 10 ** (from - to);
  return amount % divisor === 0 ? amount / divisor : null;
}

/**
 * Kassa's `amount` (minor units of `currency`) as the `amount` Stripe's API takes, or why Stripe
 * cannot be sent it. A charge is also checked against Stripe's minimum; a refund is not.
 */
export function stripeAmount(amount: number, currency: string, purpose: 'charge' | 'refund' = 'charge'): StripeAmount {
  const code = currency.toLowerCase();
  if (!isKnownCurrency(code)) return { ok: false, detail: `"${currency}" is not an ISO 4217 currency.` };
  if (!Number.isSafeInteger(amount) || amount < 1) return { ok: false, detail: `Stripe takes a positive integer amount, not ${amount}.` };
  const exponent = stripeExponent(code);
  if (exponent === null) return { ok: false, detail: `Stripe takes no amounts in ${code.toUpperCase()}: its ${minorUnitExponent(code)}-decimal minor unit is not one Stripe documents.` };
  const sent = rescale(amount, minorUnitExponent(code), exponent);
  if (sent === null) return { ok: false, detail: `Stripe takes ${code.toUpperCase()} in whole units only; ${formatMoney(amount, code)} is not a whole amount.` };
  if (threeDecimal.has(code) && sent % 10 !== 0) {
    const below = amount - (amount % 10);
    return { ok: false, detail: `Stripe takes ${code.toUpperCase()} amounts in minor units whose last digit is 0: round ${amount} to the nearest ten (${below} or ${below + 10}).` };
  }
  const minimum = stripeMinimumCharge[code];
  if (purpose === 'charge' && minimum !== undefined && sent < minimum) {
    return { ok: false, detail: `Stripe's minimum charge in ${code.toUpperCase()} is ${formatMoney(minimum, code)}; ${formatMoney(amount, code)} is less.` };
  }
  return { ok: true, amount: sent };
}

/** An `amount` Stripe reports in `currency` (a refund, a dispute) as Kassa's minor units. */
export function fromStripeAmount(amount: number, currency: string): StripeAmount {
  const code = currency.toLowerCase();
  if (!isKnownCurrency(code)) return { ok: false, detail: `"${currency}" is not an ISO 4217 currency.` };
  if (!Number.isSafeInteger(amount) || amount < 0) return { ok: false, detail: `Stripe reports a non-negative integer amount, not ${amount}.` };
  const exponent = stripeExponent(code);
  if (exponent === null) return { ok: false, detail: `Stripe takes no amounts in ${code.toUpperCase()}.` };
  const kept = rescale(amount, exponent, minorUnitExponent(code));
  // A fractional ISK or UGX amount from before Stripe required whole units has no Kassa amount.
  if (kept === null) return { ok: false, detail: `${amount} from Stripe is not a whole number of ${code.toUpperCase()} minor units.` };
  return { ok: true, amount: kept };
}

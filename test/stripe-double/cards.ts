// Stripe's documented test PaymentMethods (docs.stripe.com/testing) and what each does when charged,
// set up or refunded. The double knows only these cards; any other `pm_card_…` id is unknown.

export interface TestCard {
  brand: string;
  last4: string;
  funding: 'credit' | 'debit' | 'prepaid';
  country: string;
  /** A charge declines with this decline code, on and off session. */
  decline?: { code: string; message: string };
  /**
   * 3-D Secure: 'always' asks on every payment (an off-session payment fails with
   * authentication_required); 'unless_set_up' asks on-session and during setup, but off-session
   * payments with a card set up for future use go through.
   */
  authentication: 'never' | 'always' | 'unless_set_up';
  /** 'fail_later': a refund is accepted, then fails asynchronously. */
  refunds: 'succeed' | 'fail_later';
  /** The payment succeeds, then the buyer's bank opens a dispute. */
  disputed: boolean;
}

const plain = { funding: 'credit', country: 'US', authentication: 'never', refunds: 'succeed', disputed: false } as const;

export const testCards: Record<string, TestCard> = {
  pm_card_visa: { ...plain, brand: 'visa', last4: '4242' },
  pm_card_visa_debit: { ...plain, brand: 'visa', last4: '5556', funding: 'debit' },
  pm_card_mastercard: { ...plain, brand: 'mastercard', last4: '4444' },
  pm_card_amex: { ...plain, brand: 'amex', last4: '8431' },
  pm_card_chargeDeclined: { ...plain, brand: 'visa', last4: '0002', decline: { code: 'generic_decline', message: 'Your card was declined.' } },
  pm_card_chargeDeclinedInsufficientFunds: {
    ...plain,
    brand: 'visa',
    last4: '9995',
    decline: { code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  },
  // 4000002760003184
  pm_card_authenticationRequired: { ...plain, brand: 'visa', last4: '3184', authentication: 'always' },
  // 4000002500003155
  pm_card_authenticationRequiredOnSetup: { ...plain, brand: 'visa', last4: '3155', authentication: 'unless_set_up' },
  // 4000000000005126
  pm_card_refundFail: { ...plain, brand: 'visa', last4: '5126', refunds: 'fail_later' },
  // 4000000000000259
  pm_card_createDispute: { ...plain, brand: 'visa', last4: '0259', disputed: true },
};

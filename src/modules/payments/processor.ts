// Payment processors. A processor charges a payment method for an amount; it is called by the
// payment job, never inside a request. `charge` is idempotent per payment id, so a job that runs
// again after a crash does not charge twice.

export interface ChargeRequest {
  /** Kassa's payment id: the processor's idempotency key. */
  paymentId: string;
  amount: number;
  currency: string;
  /** A one-time token from the buyer's page (a Stripe ConfirmationToken, a test card) or a saved method. */
  paymentMethod: string;
  /** Who pays: processors that keep saved methods keep them on their own record of the customer. */
  customer: { id: string; email: string; name: string | null; processorCustomerId: string | null };
  /** Keep the method for later charges made without the buyer (a subscription's first payment). */
  saveForLater: boolean;
  /** The buyer is not there to authenticate (renewals, retries of past-due periods). */
  offSession: boolean;
}

/** What the processor knows of the customer and the method after a charge, for later charges. */
interface Saved {
  /** The processor's customer the method is saved on. */
  processorCustomerId?: string;
  /** The saved method later charges use (a Stripe PaymentMethod id). */
  savedPaymentMethod?: string;
}

export type ChargeResult =
  | ({ status: 'succeeded'; processorId: string } & Saved)
  | ({ status: 'failed'; processorId: string; declineReason: string } & Saved)
  /**
   * Not settled yet: the buyer must authenticate (`requires_action`, with the secret their page
   * finishes it with), or the bank has not answered (`processing`). The processor's webhook, or a
   * reconciliation that asks it, settles the payment later.
   */
  | ({ status: 'requires_action'; processorId: string; clientSecret: string } & Saved)
  | ({ status: 'processing'; processorId: string } & Saved);

export type SettledCharge = Extract<ChargeResult, { status: 'succeeded' | 'failed' }>;

export interface RefundRequest {
  /** Kassa's refund id: the processor's idempotency key. */
  refundId: string;
  /** The processor's id of the charge being refunded. */
  chargeId: string;
  amount: number;
  currency: string;
  /** The payment method the charge was made with. */
  paymentMethod: string;
}

/** A payment method the processor keeps for a customer, as the portal lists it. */
export interface SavedPaymentMethod {
  id: string;
  type: string;
  createdAt: Date;
  card: { brand: string; last4: string; expMonth: number; expYear: number; wallet: string | null } | null;
  isDefault: boolean;
}

export type SetupResult =
  | { status: 'succeeded'; paymentMethod: SavedPaymentMethod }
  | { status: 'requires_action'; clientSecret: string }
  | { status: 'failed'; declineReason: string };

export interface PaymentProcessor {
  readonly name: string;
  /** Whether the processor knows this payment method at all (checked when a checkout is confirmed). */
  acceptsPaymentMethod(paymentMethod: string): boolean;
  /**
   * Asks the processor about a buyer's one-time token before a checkout is confirmed: a message
   * saying what is wrong with it (unknown, used, expired), or null. Null also when the processor
   * cannot be reached: the charge finds out, and the payment waits for it. With `setupFor` (a Kassa
   * customer id), a token already used to save a method on that customer is fine: it is the same
   * request again, once the customer authenticated.
   */
  checkPaymentMethod?(paymentMethod: string, options?: { setupFor?: string }): Promise<string | null>;
  /**
   * Whether a subscription may renew with this method, charged without the buyer: what is wrong with
   * it, or null. Processors that keep saved methods take only one saved on the customer's own record
   * (`processorCustomerId`). Throws when the processor cannot be asked.
   */
  checkRenewalMethod?(paymentMethod: string, processorCustomerId: string | null): Promise<string | null>;
  /** Whether the processor can charge this amount in this currency: what is wrong with it, or null. */
  checkAmount?(amount: number, currency: string): string | null;
  charge(request: ChargeRequest): Promise<ChargeResult>;
  refund(request: RefundRequest): Promise<{ status: 'succeeded' | 'failed'; processorId: string }>;
  /**
   * Asks the processor where a charge stands, for payments whose answer never came (a lost
   * webhook, a crash): the charge's result, or null when the processor has no charge for the
   * payment at all.
   */
  lookUp?(payment: { paymentId: string; processorId: string | null; amount: number; currency: string }): Promise<ChargeResult | null>;
  /** Gives up a charge still waiting for the buyer: where it stands afterwards (it may have succeeded meanwhile). */
  cancel?(processorId: string): Promise<ChargeResult>;
  /** What the buyer's page needs to take a payment method (a publishable key). */
  pageSettings?(): Record<string, string>;
  /** Saved methods, for processors that keep them per customer. */
  savedMethods?: {
    list(processorCustomerId: string): Promise<SavedPaymentMethod[]>;
    /** Saves a buyer's one-time token on the customer, made on the processor when it has none yet. */
    add(customer: ChargeRequest['customer'], token: string, options: { setDefault: boolean; returnUrl: string }): Promise<SetupResult & { processorCustomerId: string }>;
    remove(processorCustomerId: string, paymentMethodId: string): Promise<boolean>;
    /** Makes one of the customer's saved methods their default: the method, or null when it is not theirs. */
    setDefault(processorCustomerId: string, paymentMethodId: string): Promise<SavedPaymentMethod | null>;
  };
}

/**
 * The built-in test processor: deterministic test cards, no money moves.
 * - `tok_visa` always succeeds;
 * - `tok_delayedSuccess` succeeds after a delay, as a slow bank would;
 * - `tok_chargeDeclined` is declined at once (`card_declined`);
 * - `tok_delayedFailure` fails after a delay (`processing_error`), as a slow bank would;
 * - `tok_processorUnavailable` cannot be charged at all: every call errors, as when the processor is down;
 * - `tok_refundFail` is charged, but the bank refuses every refund of the charge (`failed`), after a
 *   delay, as Stripe's refund-failure test card does.
 */
export const testCards = {
  succeeds: 'tok_visa',
  succeedsAfterDelay: 'tok_delayedSuccess',
  declined: 'tok_chargeDeclined',
  failsAfterDelay: 'tok_delayedFailure',
  unavailable: 'tok_processorUnavailable',
  refundFails: 'tok_refundFail',
} as const;

export const unknownPaymentMethod = `Unknown payment method. In sandbox, use a test card: ${Object.values(testCards).join(', ')}.`;

export class TestPaymentProcessor implements PaymentProcessor {
  readonly name = 'test';
  private readonly outcomes = new Map<string, Promise<ChargeResult>>();

  constructor(private readonly delayMs = 1500) {}

  acceptsPaymentMethod(paymentMethod: string): boolean {
    return (Object.values(testCards) as string[]).includes(paymentMethod);
  }

  charge(request: ChargeRequest): Promise<ChargeResult> {
    if (request.paymentMethod === testCards.unavailable && request.amount > 0) return Promise.reject(new Error('The test processor is unavailable.'));
    let outcome = this.outcomes.get(request.paymentId);
    if (!outcome) {
      outcome = this.decide(request);
      this.outcomes.set(request.paymentId, outcome);
    }
    return outcome;
  }

  async refund({ refundId, paymentMethod }: RefundRequest): Promise<{ status: 'succeeded' | 'failed'; processorId: string }> {
    const processorId = `test_re_${refundId.replace(/-/g, '')}`;
    if (paymentMethod !== testCards.refundFails) return { status: 'succeeded', processorId };
    await this.bankDelay();
    return { status: 'failed', processorId };
  }

  /** How long a slow bank takes to answer (TEST_CARD_DELAY_MS). */
  private bankDelay(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, this.delayMs));
  }

  private async decide({ paymentId, amount, paymentMethod }: ChargeRequest): Promise<ChargeResult> {
    const processorId = `test_ch_${paymentId.replace(/-/g, '')}`;
    if (amount === 0 || paymentMethod === testCards.succeeds || paymentMethod === testCards.refundFails) return { status: 'succeeded', processorId };
    if (paymentMethod === testCards.succeedsAfterDelay) {
      await this.bankDelay();
      return { status: 'succeeded', processorId };
    }
    if (paymentMethod === testCards.failsAfterDelay) {
      await this.bankDelay();
      return { status: 'failed', processorId, declineReason: 'processing_error' };
    }
    return { status: 'failed', processorId, declineReason: 'card_declined' };
  }
}

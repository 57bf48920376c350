// Payment processors. A processor charges a payment method for an amount; it is called by the
// payment job, never inside a request. `charge` is idempotent per payment id, so a job that runs
// again after a crash does not charge twice.

export interface ChargeRequest {
  /** Kassa's payment id: the processor's idempotency key. */
  paymentId: string;
  amount: number;
  currency: string;
  paymentMethod: string;
}

export type ChargeResult = { status: 'succeeded'; processorId: string } | { status: 'failed'; processorId: string; declineReason: string };

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

export interface PaymentProcessor {
  readonly name: string;
  /** Whether the processor knows this payment method at all (checked when a checkout is confirmed). */
  acceptsPaymentMethod(paymentMethod: string): boolean;
  charge(request: ChargeRequest): Promise<ChargeResult>;
  refund(request: RefundRequest): Promise<{ status: 'succeeded' | 'failed'; processorId: string }>;
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

// The Stripe processor: charges through Stripe's PaymentIntents with the official `stripe` client.
//
// - A buyer's page makes a ConfirmationToken with Stripe.js; the payment job creates and confirms
//   a PaymentIntent from it, with Kassa's payment id as the idempotency key and in its metadata,
//   so a job run again after a crash gets the same PaymentIntent back instead of a second charge.
// - A subscription's first payment saves the method (`setup_future_usage: off_session`) on the
//   customer's Stripe record; renewals charge it off-session.
// - `requires_action` (3-D Secure) and `processing` are not outcomes: the payment stays pending
//   and Stripe's webhook, or a reconciliation that asks Stripe, settles it.
// - Declines are outcomes (`failed`, with Stripe's decline code); a Stripe that cannot be reached,
//   rate-limits or errors is not: the call throws and the job tries again later.
import type Stripe from 'stripe';
import type { StripeConfig } from '../../config.ts';
import type { ChargeRequest, ChargeResult, PaymentProcessor, RefundRequest, SavedPaymentMethod, SetupResult } from './processor.ts';
import { fromStripeAmount, stripeAmount } from '../../stripe-amounts.ts';

/**
 * Stripe's client for one environment's account, pointed at STRIPE_API_URL when set. The `stripe`
 * package (about 18 MB resident) is loaded only where an environment charges through Stripe.
 */
export async function stripeClient(config: StripeConfig): Promise<Stripe> {
  const url = config.apiUrl;
  const { default: Stripe } = await import('stripe');
  return new Stripe(config.secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    appInfo: { name: 'Kassa' },
    ...(url ? { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)), protocol: url.protocol === 'https:' ? 'https' : 'http' } : {}),
  });
}


/** The id of an expandable field, whether Stripe sent the id or the object. */
const idOf = (value: string | { id: string } | null | undefined): string | undefined => (typeof value === 'string' ? value : value?.id);

/**
 * Whether a PaymentIntent is for a payment's amount, in its currency: Kassa makes each one so, and
 * one that is not (made elsewhere, naming the payment in its metadata) says nothing about the payment.
 */
export function intentFits(intent: Pick<Stripe.PaymentIntent, 'amount' | 'currency'>, payment: { amount: number; currency: string }): boolean {
  const amount = stripeAmount(payment.amount, payment.currency);
  return amount.ok && intent.amount === amount.amount && intent.currency?.toLowerCase() === payment.currency.toLowerCase();
}

/** A PaymentIntent's state as a charge result. */
export function chargeResultOf(intent: Stripe.PaymentIntent): ChargeResult {
  const saved = { processorCustomerId: idOf(intent.customer), savedPaymentMethod: intent.setup_future_usage ? idOf(intent.payment_method) : undefined };
  switch (intent.status) {
    case 'succeeded':
      return { status: 'succeeded', processorId: intent.id, ...saved };
    case 'requires_action':
      return { status: 'requires_action', processorId: intent.id, clientSecret: intent.client_secret ?? '', ...saved };
    case 'processing':
    case 'requires_capture':
    case 'requires_confirmation':
      return { status: 'processing', processorId: intent.id, ...saved };
    case 'canceled':
      return { status: 'failed', processorId: intent.id, declineReason: intent.cancellation_reason === 'abandoned' ? 'authentication_abandoned' : 'canceled', ...saved };
    default: {
      // requires_payment_method: the last attempt failed.
      const error = intent.last_payment_error;
      return { status: 'failed', processorId: intent.id, declineReason: error?.decline_code ?? error?.code ?? 'card_declined', ...saved };
    }
  }
}

export class StripePaymentProcessor implements PaymentProcessor {
  readonly name = 'stripe';

  constructor(
    readonly stripe: Stripe,
    private readonly config: StripeConfig,
  ) {}

  private isCardError(error: unknown): error is Stripe.errors.StripeCardError {
    return error instanceof this.stripe.errors.StripeCardError;
  }

  private isInvalidRequest(error: unknown): error is Stripe.errors.StripeInvalidRequestError {
    return error instanceof this.stripe.errors.StripeInvalidRequestError;
  }

  /** A ConfirmationToken from Stripe.js, or a PaymentMethod saved on a customer. */
  acceptsPaymentMethod(paymentMethod: string): boolean {
    return /^(ctoken|pm)_[0-9A-Za-z]{1,255}$/.test(paymentMethod);
  }

  async checkPaymentMethod(paymentMethod: string, options: { setupFor?: string } = {}): Promise<string | null> {
    if (!paymentMethod.startsWith('ctoken_')) return 'A checkout takes a Stripe ConfirmationToken (ctoken_…), made by Stripe.js on the buyer’s page.';
    let token: Stripe.ConfirmationToken;
    try {
      token = await this.stripe.confirmationTokens.retrieve(paymentMethod);
    } catch (error) {
      if (this.isInvalidRequest(error) && error.statusCode === 404) return 'Unknown confirmation token: make a new one with Stripe.js on the checkout page.';
      // Stripe could not be asked: the charge will be, and the payment waits for it.
      return null;
    }
    const used = 'This confirmation token was used already: make a new one with Stripe.js.';
    if (token.payment_intent) return used;
    if (token.setup_intent) return options.setupFor && (await this.setupFor(idOf(token.setup_intent)!)) === options.setupFor ? null : used;
    if (token.expires_at && token.expires_at * 1000 <= Date.now()) return 'This confirmation token has expired: make a new one with Stripe.js.';
    return null;
  }

  /** The Kassa customer a SetupIntent saves a method for; null when it cannot be told. */
  private async setupFor(setupIntentId: string): Promise<string | null> {
    try {
      return (await this.stripe.setupIntents.retrieve(setupIntentId)).metadata?.kassa_customer_id ?? null;
    } catch {
      return null;
    }
  }

  async checkRenewalMethod(paymentMethod: string, processorCustomerId: string | null): Promise<string | null> {
    const notSaved = "A subscription renews with a PaymentMethod (pm_…) saved on its customer's Stripe record: the card of its first payment, or one the customer added in the portal.";
    if (!paymentMethod.startsWith('pm_') || !processorCustomerId) return notSaved;
    let method: Stripe.PaymentMethod;
    try {
      method = await this.stripe.paymentMethods.retrieve(paymentMethod);
    } catch (error) {
      if (this.isInvalidRequest(error) && error.statusCode === 404) return notSaved;
      throw error;
    }
    // Another customer's card (of this organization or another) is as good as unknown.
    return idOf(method.customer) === processorCustomerId ? null : notSaved;
  }

  checkAmount(amount: number, currency: string): string | null {
    const value = stripeAmount(amount, currency);
    return value.ok ? null : value.detail;
  }

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const amount = stripeAmount(request.amount, request.currency);
    if (!amount.ok) return { status: 'failed', processorId: 'not-charged', declineReason: 'invalid_amount' };
    const customer = request.customer.processorCustomerId ?? (await this.customerFor(request.customer));
    const token = request.paymentMethod.startsWith('ctoken_');
    try {
      const intent = await this.stripe.paymentIntents.create(
        {
          amount: amount.amount,
          currency: request.currency,
          customer,
          confirm: true,
          ...(token ? { confirmation_token: request.paymentMethod } : { payment_method: request.paymentMethod }),
          ...(request.offSession ? { off_session: true } : {}),
          ...(request.saveForLater && !request.offSession ? { setup_future_usage: 'off_session' as const } : {}),
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          metadata: { kassa_payment_id: request.paymentId },
        },
        { idempotencyKey: `kassa-payment-${request.paymentId}` },
      );
      return { ...chargeResultOf(intent), processorCustomerId: customer };
    } catch (error) {
      if (this.isCardError(error)) {
        const intent = error.payment_intent;
        return { status: 'failed', processorId: intent?.id ?? 'not-charged', declineReason: error.decline_code ?? error.code ?? 'card_declined', processorCustomerId: customer };
      }
      // A token or method Stripe refuses (unknown, used, expired, not the customer's) will not work on a retry either.
      if (this.isInvalidRequest(error) && error.code !== 'idempotency_key_in_use') {
        return { status: 'failed', processorId: idOf(error.payment_intent) ?? 'not-charged', declineReason: error.code ?? 'invalid_payment_method', processorCustomerId: customer };
      }
      throw error;
    }
  }

  /** The customer's record at Stripe, made once per Kassa customer (the idempotency key says which). */
  private async customerFor(customer: ChargeRequest['customer']): Promise<string> {
    const made = await this.stripe.customers.create(
      { email: customer.email, ...(customer.name ? { name: customer.name } : {}), metadata: { kassa_customer_id: customer.id } },
      { idempotencyKey: `kassa-customer-${customer.id}` },
    );
    return made.id;
  }

  async refund({ refundId, chargeId, amount, currency }: RefundRequest): Promise<{ status: 'succeeded' | 'failed'; processorId: string }> {
    // A refund made before (its answer lost, or made a day ago) is found by its metadata, so
    // asking again never returns the money twice, even after Stripe forgot the idempotency key.
    const earlier = await this.stripe.refunds.list({ payment_intent: chargeId, limit: 100 });
    let refund = earlier.data.find((r) => r.metadata?.kassa_refund_id === refundId);
    if (!refund) {
      const value = stripeAmount(amount, currency, 'refund');
      if (!value.ok) return { status: 'failed', processorId: 'not-refunded' };
      refund = await this.stripe.refunds.create(
        { payment_intent: chargeId, amount: value.amount, metadata: { kassa_refund_id: refundId } },
        { idempotencyKey: `kassa-refund-${refundId}` },
      );
    }
    if (refund.status === 'succeeded') return { status: 'succeeded', processorId: refund.id };
    if (refund.status === 'failed' || refund.status === 'canceled') return { status: 'failed', processorId: refund.id };
    // Pending at the bank: asked again later, and Stripe's refund webhooks wake the job sooner.
    throw new RefundPendingError(refund.id);
  }

  async lookUp(payment: { paymentId: string; processorId: string | null; amount: number; currency: string }): Promise<ChargeResult | null> {
    if (payment.processorId?.startsWith('pi_')) return chargeResultOf(await this.stripe.paymentIntents.retrieve(payment.processorId));
    const found = await this.stripe.paymentIntents.search({ query: `metadata['kassa_payment_id']:'${payment.paymentId}'`, limit: 10 });
    // Only the PaymentIntent Kassa made for the payment: its amount, in its currency.
    const made = found.data.find((intent) => intentFits(intent, payment));
    return made ? chargeResultOf(made) : null;
  }

  async cancel(processorId: string): Promise<ChargeResult> {
    try {
      return chargeResultOf(await this.stripe.paymentIntents.cancel(processorId, { cancellation_reason: 'abandoned' }));
    } catch (error) {
      // It can no longer be cancelled: it moved on meanwhile, so say where it is.
      if (this.isInvalidRequest(error)) return chargeResultOf(await this.stripe.paymentIntents.retrieve(processorId));
      throw error;
    }
  }

  pageSettings(): Record<string, string> {
    return { publishable_key: this.config.publishableKey };
  }

  readonly savedMethods = {
    list: async (processorCustomerId: string): Promise<SavedPaymentMethod[]> => {
      const [customer, methods] = await Promise.all([
        this.stripe.customers.retrieve(processorCustomerId),
        this.stripe.customers.listPaymentMethods(processorCustomerId, { limit: 100 }),
      ]);
      const defaultMethod = customer.deleted ? undefined : idOf(customer.invoice_settings?.default_payment_method);
      return methods.data.map((method) => savedMethod(method, defaultMethod));
    },
    add: async (customer: ChargeRequest['customer'], token: string, options: { setDefault: boolean; returnUrl: string }): Promise<SetupResult & { processorCustomerId: string }> => {
      const processorCustomerId = customer.processorCustomerId ?? (await this.customerFor(customer));
      try {
        const created = await this.stripe.setupIntents.create(
          { customer: processorCustomerId, confirm: true, confirmation_token: token, usage: 'off_session', return_url: options.returnUrl, metadata: { kassa_customer_id: customer.id } },
          { idempotencyKey: `kassa-setup-${customer.id}-${token}` },
        );
        // Asked again with the same token after the buyer authenticated, Stripe replays the first
        // answer (requires_action): where the SetupIntent stands now is what counts.
        const intent = created.status === 'requires_action' ? await this.stripe.setupIntents.retrieve(created.id) : created;
        if (intent.status === 'requires_action') return { status: 'requires_action', clientSecret: intent.client_secret ?? '', processorCustomerId };
        if (intent.status !== 'succeeded') return { status: 'failed', declineReason: intent.last_setup_error?.decline_code ?? intent.last_setup_error?.code ?? 'setup_failed', processorCustomerId };
        const methodId = idOf(intent.payment_method);
        if (!methodId) return { status: 'failed', declineReason: 'setup_failed', processorCustomerId };
        if (options.setDefault) await this.stripe.customers.update(processorCustomerId, { invoice_settings: { default_payment_method: methodId } });
        const method = await this.stripe.paymentMethods.retrieve(methodId);
        return { status: 'succeeded', paymentMethod: savedMethod(method, options.setDefault ? methodId : undefined), processorCustomerId };
      } catch (error) {
        if (this.isCardError(error) || this.isInvalidRequest(error)) {
          return { status: 'failed', declineReason: (this.isCardError(error) ? error.decline_code : undefined) ?? error.code ?? 'setup_failed', processorCustomerId };
        }
        throw error;
      }
    },
    remove: async (processorCustomerId: string, paymentMethodId: string): Promise<boolean> => {
      let method: Stripe.PaymentMethod;
      try {
        method = await this.stripe.paymentMethods.retrieve(paymentMethodId);
      } catch (error) {
        if (this.isInvalidRequest(error) && error.statusCode === 404) return false;
        throw error;
      }
      // Another customer's method is as good as unknown.
      if (idOf(method.customer) !== processorCustomerId) return false;
      await this.stripe.paymentMethods.detach(paymentMethodId);
      return true;
    },
    setDefault: async (processorCustomerId: string, paymentMethodId: string): Promise<SavedPaymentMethod | null> => {
      let method: Stripe.PaymentMethod;
      try {
        method = await this.stripe.paymentMethods.retrieve(paymentMethodId);
      } catch (error) {
        if (this.isInvalidRequest(error) && error.statusCode === 404) return null;
        throw error;
      }
      // Another customer's method is as good as unknown.
      if (idOf(method.customer) !== processorCustomerId) return null;
      await this.stripe.customers.update(processorCustomerId, { invoice_settings: { default_payment_method: paymentMethodId } });
      return savedMethod(method, paymentMethodId);
    },
  };

  /** Verifies a webhook's signature over the exact bytes received; throws when it does not match or is stale. */
  verifyWebhook(body: Buffer, signature: string): Stripe.Event {
    return this.stripe.webhooks.constructEvent(body, signature, this.config.webhookSecret);
  }

  /** Amounts Stripe reports (refunds, disputes) in Kassa's minor units. */
  kassaAmount(amount: number, currency: string): number {
    const converted = fromStripeAmount(amount, currency);
    // An amount Kassa's units cannot hold exactly (an old fractional ISK one) is kept as Stripe reported it.
    return converted.ok ? converted.amount : amount;
  }
}

function savedMethod(method: Stripe.PaymentMethod, defaultMethod: string | undefined): SavedPaymentMethod {
  const card = method.card;
  return {
    id: method.id,
    type: method.type,
    createdAt: new Date(method.created * 1000),
    card: card ? { brand: card.brand, last4: card.last4, expMonth: card.exp_month, expYear: card.exp_year, wallet: card.wallet?.type ?? null } : null,
    isDefault: method.id === defaultMethod,
  };
}

/** A refund Stripe has not finished: the refund job asks again later. */
export class RefundPendingError extends Error {
  constructor(readonly processorId: string) {
    super(`Stripe refund ${processorId} is still pending at the bank.`);
  }
}

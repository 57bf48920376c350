// Stripe's API objects as the double builds them, typed with the stripe package's own definitions
// so that a missing or misspelled field is a compile error. Factories only: the rules that move
// objects between states live in api.ts.
import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import type { TestCard } from './cards.ts';

/** Who is asking and when: every object carries livemode from the key kind and its creation time. */
export interface Context {
  livemode: boolean;
  now: number;
}

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function newId(prefix: string, length = 24): string {
  return `${prefix}_${Array.from(randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join('')}`;
}

export function list<T>(url: string, data: T[], hasMore = false): Stripe.ApiList<T> {
  return { object: 'list', data, has_more: hasMore, url };
}

export function customer(ctx: Context, fields: { email: string | null; name: string | null; description: string | null; metadata: Stripe.Metadata }): Stripe.Customer {
  return {
    id: newId('cus', 14),
    object: 'customer',
    address: null,
    balance: 0,
    created: ctx.now,
    currency: null,
    default_source: null,
    delinquent: false,
    description: fields.description,
    discount: null,
    email: fields.email,
    invoice_prefix: randomBytes(4).toString('hex').toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: ctx.livemode,
    metadata: fields.metadata,
    name: fields.name,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

function cardDetails(card: TestCard, now: number) {
  return {
    brand: card.brand,
    checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
    country: card.country,
    display_brand: card.brand,
    exp_month: 12,
    exp_year: new Date(now * 1000).getUTCFullYear() + 3,
    fingerprint: `fp${card.last4}${card.brand}`,
    funding: card.funding,
    generated_from: null,
    last4: card.last4,
    networks: { available: [card.brand], preferred: null },
    regulated_status: 'unregulated' as const,
    three_d_secure_usage: { supported: true },
    wallet: null,
  };
}

const noBillingDetails = { address: null, email: null, name: null, phone: null, tax_id: null };

export function paymentMethod(ctx: Context, card: TestCard): Stripe.PaymentMethod {
  return {
    id: newId('pm'),
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    billing_details: noBillingDetails,
    card: cardDetails(card, ctx.now),
    created: ctx.now,
    customer: null,
    customer_account: null,
    livemode: ctx.livemode,
    metadata: {},
    type: 'card',
  };
}

const twelveHours = 12 * 60 * 60;

export function confirmationToken(
  ctx: Context,
  card: TestCard,
  fields: { returnUrl: string | null; setupFutureUsage: Stripe.ConfirmationToken.SetupFutureUsage | null },
): Stripe.ConfirmationToken {
  return {
    id: newId('ctoken'),
    object: 'confirmation_token',
    created: ctx.now,
    expires_at: ctx.now + twelveHours,
    livemode: ctx.livemode,
    metadata: null,
    mandate_data: null,
    payment_intent: null,
    payment_method_options: null,
    payment_method_preview: {
      billing_details: noBillingDetails,
      card: cardDetails(card, ctx.now),
      customer: null,
      customer_account: null,
      type: 'card',
    },
    return_url: fields.returnUrl,
    setup_future_usage: fields.setupFutureUsage,
    setup_intent: null,
    shipping: null,
    use_stripe_sdk: true,
  };
}

export interface PaymentIntentFields {
  amount: number;
  currency: string;
  customer: string | null;
  description: string | null;
  metadata: Stripe.Metadata;
  setupFutureUsage: Stripe.PaymentIntent.SetupFutureUsage | null;
  automaticPaymentMethods: Stripe.PaymentIntent.AutomaticPaymentMethods | null;
  receiptEmail: string | null;
}

export function paymentIntent(ctx: Context, fields: PaymentIntentFields): Stripe.PaymentIntent {
  const id = newId('pi');
  return {
    id,
    object: 'payment_intent',
    allowed_payment_method_types: null,
    amount: fields.amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: fields.automaticPaymentMethods,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic_async',
    client_secret: `${id}_secret_${newId('x').slice(2)}`,
    confirmation_method: 'automatic',
    created: ctx.now,
    currency: fields.currency,
    customer: fields.customer,
    customer_account: null,
    description: fields.description,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: ctx.livemode,
    managed_payments: null,
    metadata: fields.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_configuration_details: null,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    payment_record: null,
    processing: null,
    receipt_email: fields.receiptEmail,
    review: null,
    setup_future_usage: fields.setupFutureUsage,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: 'requires_payment_method',
    transfer_data: null,
    transfer_group: null,
  };
}

/** What stripe.js is told to do for 3-D Secure; the double's `authenticate` control plays the buyer. */
export function threeDSecureAction(): Stripe.PaymentIntent.NextAction {
  const source = newId('src');
  return {
    type: 'use_stripe_sdk',
    use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: `https://hooks.stripe.com/redirect/authenticate/${source}`, source } as Stripe.PaymentIntent.NextAction.UseStripeSdk,
  };
}

export interface ChargeOutcome {
  paid: boolean;
  declineCode?: string;
  failureCode?: string;
  message?: string;
}

export function charge(ctx: Context, intent: Stripe.PaymentIntent, method: Stripe.PaymentMethod, outcome: ChargeOutcome): Stripe.Charge {
  const card = method.card!;
  return {
    id: newId('ch'),
    object: 'charge',
    amount: intent.amount,
    amount_captured: outcome.paid ? intent.amount : 0,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: outcome.paid ? newId('txn') : null,
    billing_details: noBillingDetails,
    calculated_statement_descriptor: 'KASSA',
    captured: outcome.paid,
    created: ctx.now,
    currency: intent.currency,
    customer: typeof intent.customer === 'string' ? intent.customer : null,
    description: intent.description,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: outcome.failureCode ?? null,
    failure_message: outcome.message ?? null,
    fraud_details: {},
    livemode: ctx.livemode,
    metadata: intent.metadata,
    on_behalf_of: null,
    outcome: outcome.paid
      ? { advice_code: null, network_advice_code: null, network_decline_code: null, network_status: 'approved_by_network', reason: null, risk_level: 'normal', risk_score: 32, seller_message: 'Payment complete.', type: 'authorized' }
      : { advice_code: 'try_again_later', network_advice_code: null, network_decline_code: null, network_status: 'declined_by_network', reason: outcome.declineCode ?? null, risk_level: 'normal', risk_score: 32, seller_message: 'The bank did not return any further details with this decline.', type: 'issuer_declined' },
    paid: outcome.paid,
    payment_intent: intent.id,
    payment_method: method.id,
    payment_method_details: {
      type: 'card',
      card: {
        amount_authorized: outcome.paid ? intent.amount : null,
        authorization_code: outcome.paid ? String(100000 + Math.floor(Math.random() * 900000)) : null,
        brand: card.brand,
        checks: card.checks,
        country: card.country,
        electronic_commerce_indicator: null,
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        funding: card.funding,
        installments: null,
        last4: card.last4,
        mandate: null,
        network: card.brand,
        network_transaction_id: outcome.paid ? String(Math.floor(Math.random() * 1e15)) : null,
        regulated_status: card.regulated_status,
        three_d_secure: null,
        transaction_link_id: null,
        wallet: null,
      },
    },
    receipt_email: intent.receipt_email,
    receipt_number: null,
    receipt_url: outcome.paid ? `https://pay.stripe.com/receipts/payment/${newId('x', 40).slice(2)}` : null,
    refunded: false,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: outcome.paid ? 'succeeded' : 'failed',
    transfer_data: null,
    transfer_group: null,
  };
}

export function refund(
  ctx: Context,
  paid: Stripe.Charge,
  fields: { amount: number; reason: Stripe.Refund.Reason | null; metadata: Stripe.Metadata },
): Stripe.Refund {
  return {
    id: newId('re'),
    object: 'refund',
    amount: fields.amount,
    balance_transaction: newId('txn'),
    charge: paid.id,
    created: ctx.now,
    currency: paid.currency,
    customer: paid.customer,
    customer_account: null,
    destination_details: { type: 'card', card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' } } as Stripe.Refund.DestinationDetails,
    metadata: fields.metadata,
    payment_intent: paid.payment_intent,
    payment_method: paid.payment_method,
    reason: fields.reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  };
}

export function dispute(ctx: Context, disputed: Stripe.Charge, fields: { amount: number; reason: string }): Stripe.Dispute {
  const sevenDays = 7 * 24 * 60 * 60;
  return {
    id: newId('dp'),
    object: 'dispute',
    amount: fields.amount,
    balance_transactions: [],
    charge: disputed.id,
    created: ctx.now,
    currency: disputed.currency,
    enhanced_eligibility_types: [],
    evidence: {
      access_activity_log: null,
      billing_address: null,
      cancellation_policy: null,
      cancellation_policy_disclosure: null,
      cancellation_rebuttal: null,
      customer_communication: null,
      customer_email_address: null,
      customer_name: null,
      customer_purchase_ip: null,
      customer_signature: null,
      duplicate_charge_documentation: null,
      duplicate_charge_explanation: null,
      duplicate_charge_id: null,
      enhanced_evidence: {},
      product_description: null,
      receipt: null,
      refund_policy: null,
      refund_policy_disclosure: null,
      refund_refusal_explanation: null,
      service_date: null,
      service_documentation: null,
      shipping_address: null,
      shipping_carrier: null,
      shipping_date: null,
      shipping_documentation: null,
      shipping_tracking_number: null,
      uncategorized_file: null,
      uncategorized_text: null,
    },
    evidence_details: { due_by: ctx.now + sevenDays, enhanced_eligibility: {}, has_evidence: false, past_due: false, submission_count: 0, submission_method: 'not_submitted' },
    intended_submission_method: null,
    is_charge_refundable: false,
    livemode: ctx.livemode,
    metadata: {},
    payment_intent: disputed.payment_intent,
    reason: fields.reason,
    status: 'needs_response',
  };
}

export interface SetupIntentFields {
  customer: string | null;
  description: string | null;
  metadata: Stripe.Metadata;
  usage: 'off_session' | 'on_session';
  automaticPaymentMethods: Stripe.SetupIntent.AutomaticPaymentMethods | null;
}

export function setupIntent(ctx: Context, fields: SetupIntentFields): Stripe.SetupIntent {
  const id = newId('seti');
  return {
    id,
    object: 'setup_intent',
    allowed_payment_method_types: null,
    application: null,
    automatic_payment_methods: fields.automaticPaymentMethods,
    cancellation_reason: null,
    client_secret: `${id}_secret_${newId('x').slice(2)}`,
    created: ctx.now,
    customer: fields.customer,
    customer_account: null,
    description: fields.description,
    excluded_payment_method_types: null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: ctx.livemode,
    mandate: null,
    metadata: fields.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_configuration_details: null,
    payment_method_options: { card: { mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    single_use_mandate: null,
    status: 'requires_payment_method',
    usage: fields.usage,
  };
}

export function event(
  ctx: Context,
  fields: {
    type: string;
    apiVersion: string;
    object: { id: string };
    previousAttributes?: Record<string, unknown>;
    request: { id: string | null; idempotency_key: string | null } | null;
    pendingWebhooks: number;
  },
): Stripe.Event {
  return {
    id: newId('evt'),
    object: 'event',
    api_version: fields.apiVersion,
    created: ctx.now,
    data: {
      object: structuredClone(fields.object),
      ...(fields.previousAttributes ? { previous_attributes: structuredClone(fields.previousAttributes) } : {}),
    },
    livemode: ctx.livemode,
    pending_webhooks: fields.pendingWebhooks,
    request: fields.request,
    type: fields.type,
  } as Stripe.Event;
}

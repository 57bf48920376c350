// The Stripe endpoints Kassa uses and the rules behind them: which test card succeeds, declines or
// asks for 3-D Secure, what a refund may take, which events each change emits. It knows nothing of
// HTTP; index.ts handles keys, idempotency and transport, and calls `handle` with parsed params.
//
// Invariants, as in Stripe: a charge's amount_refunded never exceeds its amount; a confirmation
// token confirms at most one intent; a single-use PaymentMethod is never charged twice; every
// state change emits its event(s) after the change, in the order Stripe documents them.
import type Stripe from 'stripe';
import { testCards, type TestCard } from './cards.ts';
import type { FormObject } from './form.ts';
import * as build from './objects.ts';
import type { Context } from './objects.ts';

export interface ErrorBody {
  type: 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: Stripe.PaymentIntent;
  setup_intent?: Stripe.SetupIntent;
  payment_method?: Stripe.PaymentMethod;
}

/** An answer in Stripe's error shape: `{ error: body }` with the HTTP status Stripe uses. */
export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
  }
}

export interface RequestContext extends Context {
  requestId: string | null;
  idempotencyKey: string | null;
}

function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replaceAll('_', '-')}`;
}

function invalid(message: string, extra: Partial<ErrorBody> = {}): StripeApiError {
  return new StripeApiError(400, { type: 'invalid_request_error', message, ...extra, ...(extra.code ? { doc_url: docUrl(extra.code) } : {}) });
}

// Stripe answers 404 for a missing object in the path and 400 for one named by a parameter.
function noSuch(kind: string, id: string, param?: string, livemodeMismatch?: boolean): StripeApiError {
  const mismatch = livemodeMismatch === undefined ? '' : livemodeMismatch
    ? '; a similar object exists in test mode, but a live mode key was used to make this request.'
    : '; a similar object exists in live mode, but a test mode key was used to make this request.';
  const body: ErrorBody = { type: 'invalid_request_error', code: 'resource_missing', doc_url: docUrl('resource_missing'), message: `No such ${kind}: '${id}'${mismatch}` };
  if (param) body.param = param;
  return new StripeApiError(param ? 400 : 404, body);
}

// ---- Reading Stripe's form parameters -------------------------------------------------------

function text(params: FormObject, name: string): string | null {
  const value = params[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(`Invalid string: ${JSON.stringify(value)}`, { param: name });
  return value;
}

function integer(params: FormObject, name: string): number | null {
  const value = text(params, name);
  if (value === null) return null;
  if (!/^-?\d+$/.test(value)) throw invalid(`Invalid integer: ${value}`, { param: name, code: 'parameter_invalid_integer' });
  return Number(value);
}

function boolean(params: FormObject, name: string): boolean {
  const value = text(params, name);
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw invalid(`Invalid boolean: ${value}`, { param: name });
}

function oneOf<T extends string>(params: FormObject, name: string, allowed: readonly T[]): T | null {
  const value = text(params, name);
  if (value === null) return null;
  if (!allowed.includes(value as T)) throw invalid(`Invalid ${name}: must be one of ${allowed.join(', ')}`, { param: name });
  return value as T;
}

function nested(params: FormObject, name: string): FormObject {
  const value = params[name];
  if (value === undefined || value === null) return {};
  if (typeof value === 'string' || Array.isArray(value)) throw invalid(`Invalid object`, { param: name });
  return value;
}

function required<T>(value: T | null, name: string): T {
  if (value === null) throw invalid(`Missing required param: ${name}.`, { param: name, code: 'parameter_missing' });
  return value;
}

/** Stripe merges metadata on update: an empty value removes a key, an empty `metadata` clears all. */
function mergeMetadata(current: Stripe.Metadata, params: FormObject): Stripe.Metadata {
  if (!('metadata' in params)) return current;
  if (params.metadata === null) return {};
  const merged = { ...current };
  for (const [key, value] of Object.entries(nested(params, 'metadata'))) {
    if (value === null) delete merged[key];
    else if (typeof value === 'string') merged[key] = value;
    else throw invalid('Invalid metadata value', { param: `metadata[${key}]` });
  }
  return merged;
}

// ---- Money ----------------------------------------------------------------------------------

const zeroDecimal = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const threeDecimal = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);
// Stripe's minimum charge amounts (docs.stripe.com/currencies#minimum-and-maximum-charge-amounts).
const minimumCharge: Record<string, number> = {
  usd: 50, aed: 200, aud: 50, bgn: 100, brl: 50, cad: 50, chf: 50, czk: 1500, dkk: 250, eur: 50, gbp: 30, hkd: 400, huf: 17500,
  inr: 50, jpy: 50, mxn: 1000, myr: 200, nok: 300, nzd: 50, pln: 200, ron: 200, sek: 300, sgd: 50, thb: 1000,
};
const maximumCharge = 99_999_999;

function displayAmount(amount: number, currency: string): string {
  const decimals = zeroDecimal.has(currency) ? 0 : threeDecimal.has(currency) ? 3 : 2;
  const major = amount / 10 ** decimals;
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase(), minimumFractionDigits: decimals }).format(major);
  } catch {
    return major.toFixed(decimals);
  }
}

function checkChargeAmount(amount: number, currency: string): void {
  const minimum = minimumCharge[currency] ?? 1;
  if (amount < minimum) {
    throw invalid(`Amount must be at least ${displayAmount(minimum, currency)} ${currency}`, { param: 'amount', code: 'amount_too_small' });
  }
  if (amount > maximumCharge) {
    throw invalid(`Amount must be no more than ${displayAmount(maximumCharge, currency)} ${currency}`, { param: 'amount', code: 'amount_too_large' });
  }
  // Card networks settle three-decimal currencies in steps of 0.010.
  if (threeDecimal.has(currency) && amount % 10 !== 0) {
    throw invalid(`Invalid amount: ${amount} ${currency}. Amounts in ${currency.toUpperCase()} must be divisible by 10, as the smallest amount a card network can charge is 0.010.`, {
      param: 'amount',
      code: 'invalid_charge_amount',
    });
  }
}

function readCurrency(params: FormObject): string {
  const currency = required(text(params, 'currency'), 'currency').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw invalid(`Invalid currency: ${currency}.`, { param: 'currency' });
  return currency;
}

// ---- The account ----------------------------------------------------------------------------

type StripeObject = { id: string; object: string; livemode?: boolean };

interface CardState {
  card: TestCard;
  /** Set up for future off-session use (by a SetupIntent, or a payment with setup_future_usage). */
  setUp: boolean;
  /** A single-use PaymentMethod that has been used and was never attached: it cannot be used again. */
  consumed: boolean;
}

type Handler = (params: FormObject, ctx: RequestContext, id: string) => unknown;

export interface AccountOptions {
  apiVersion: string;
  /** How long an asynchronous outcome (a refund failing, a dispute opening) takes. */
  asyncDelayMs: number;
  clock: () => number;
  onEvent: (event: Stripe.Event) => void;
  targetCount: () => number;
}

export class StripeAccount {
  readonly objects = new Map<string, StripeObject>();
  readonly events: Stripe.Event[] = [];
  private readonly cards = new Map<string, CardState>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly routes: Array<[string, RegExp, Handler]>;

  constructor(private readonly options: AccountOptions) {
    const id = '([A-Za-z0-9_]+)';
    this.routes = [
      ['POST', /^\/v1\/customers$/, (p, c) => this.createCustomer(p, c)],
      ['GET', new RegExp(`^/v1/customers/${id}$`), (p, c, i) => this.find(i, 'customer', c)],
      ['POST', new RegExp(`^/v1/customers/${id}$`), (p, c, i) => this.updateCustomer(i, p, c)],
      ['GET', new RegExp(`^/v1/customers/${id}/payment_methods$`), (p, c, i) => this.listPaymentMethods(i, p, c, `/v1/customers/${i}/payment_methods`)],
      ['POST', /^\/v1\/test_helpers\/confirmation_tokens$/, (p, c) => this.createConfirmationToken(p, c)],
      ['GET', new RegExp(`^/v1/confirmation_tokens/${id}$`), (p, c, i) => this.find(i, 'confirmation_token', c)],
      ['POST', /^\/v1\/payment_intents$/, (p, c) => this.createPaymentIntent(p, c)],
      ['GET', /^\/v1\/payment_intents$/, (p, c) => this.listPaymentIntents(p, c)],
      ['GET', /^\/v1\/payment_intents\/search$/, (p, c) => this.searchPaymentIntents(p, c)],
      ['GET', new RegExp(`^/v1/payment_intents/${id}$`), (p, c, i) => this.find(i, 'payment_intent', c)],
      ['POST', new RegExp(`^/v1/payment_intents/${id}/confirm$`), (p, c, i) => this.confirmPaymentIntent(this.find(i, 'payment_intent', c), p, c)],
      ['POST', new RegExp(`^/v1/payment_intents/${id}/cancel$`), (p, c, i) => this.cancelPaymentIntent(i, p, c)],
      ['POST', /^\/v1\/refunds$/, (p, c) => this.createRefund(p, c)],
      ['GET', /^\/v1\/refunds$/, (p, c) => this.listRefunds(p, c)],
      ['GET', new RegExp(`^/v1/refunds/${id}$`), (p, c, i) => this.find(i, 'refund', c)],
      ['POST', /^\/v1\/setup_intents$/, (p, c) => this.createSetupIntent(p, c)],
      ['GET', new RegExp(`^/v1/setup_intents/${id}$`), (p, c, i) => this.find(i, 'setup_intent', c)],
      ['POST', new RegExp(`^/v1/setup_intents/${id}/confirm$`), (p, c, i) => this.confirmSetupIntent(this.find(i, 'setup_intent', c), p, c)],
      ['GET', /^\/v1\/payment_methods$/, (p, c) => this.listPaymentMethods(required(text(p, 'customer'), 'customer'), p, c, '/v1/payment_methods')],
      ['GET', new RegExp(`^/v1/payment_methods/${id}$`), (p, c, i) => this.find(i, 'payment_method', c)],
      ['POST', new RegExp(`^/v1/payment_methods/${id}/attach$`), (p, c, i) => this.attachPaymentMethod(i, p, c)],
      ['POST', new RegExp(`^/v1/payment_methods/${id}/detach$`), (p, c, i) => this.detachPaymentMethod(i, c)],
      ['GET', new RegExp(`^/v1/charges/${id}$`), (p, c, i) => this.find(i, 'charge', c)],
      ['GET', new RegExp(`^/v1/disputes/${id}$`), (p, c, i) => this.find(i, 'dispute', c)],
      ['GET', /^\/v1\/events$/, (p, c) => this.listEvents(p, c)],
      ['GET', new RegExp(`^/v1/events/${id}$`), (p, c, i) => this.findEvent(i, c)],
    ];
  }

  /** Answers one API request with the object to send back, or throws a StripeApiError. */
  handle(method: string, path: string, params: FormObject, ctx: RequestContext): unknown {
    for (const [routeMethod, pattern, handler] of this.routes) {
      const match = pattern.exec(path);
      if (match && routeMethod === method) return this.expand(structuredClone(handler(params, ctx, match[1])), params, ctx);
    }
    throw new StripeApiError(404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
    });
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  // ---- Lookups ------------------------------------------------------------------------------

  private find<T>(id: string, kind: string, ctx: Context, param?: string): T {
    const found = this.objects.get(id);
    const name = kind === 'payment_method' ? 'PaymentMethod' : kind;
    if (!found || found.object !== kind) throw noSuch(name, id, param);
    if (found.livemode !== undefined && found.livemode !== ctx.livemode) throw noSuch(name, id, param, ctx.livemode);
    return found as unknown as T;
  }

  private store<T extends StripeObject>(object: T): T {
    this.objects.set(object.id, object);
    return object;
  }

  private findEvent(id: string, ctx: Context): Stripe.Event {
    const found = this.events.find((event) => event.id === id && event.livemode === ctx.livemode);
    if (!found) throw noSuch('event', id);
    return found;
  }

  private expand(answer: unknown, params: FormObject, ctx: Context): unknown {
    const expand = params.expand;
    if (!Array.isArray(expand) || answer === null || typeof answer !== 'object') return answer;
    for (const path of expand) {
      if (typeof path !== 'string') continue;
      const isList = (answer as StripeObject).object === 'list';
      const field = isList ? path.replace(/^data\./, '') : path;
      const targets = isList ? (answer as Stripe.ApiList<Record<string, unknown>>).data : [answer as Record<string, unknown>];
      for (const target of targets) {
        const value = target[field];
        if (value === null) continue;
        const referenced = typeof value === 'string' ? this.objects.get(value) : undefined;
        if (!referenced || referenced.livemode !== ctx.livemode) throw invalid(`This property cannot be expanded (${path}).`, { param: 'expand' });
        target[field] = structuredClone(referenced);
      }
    }
    return answer;
  }

  private paginate<T extends { id: string }>(url: string, newestFirst: T[], params: FormObject): Stripe.ApiList<T> {
    const limit = integer(params, 'limit') ?? 10;
    if (limit < 1 || limit > 100) throw invalid('Invalid limit: must be between 1 and 100', { param: 'limit' });
    const after = text(params, 'starting_after');
    const start = after ? newestFirst.findIndex((item) => item.id === after) + 1 : 0;
    if (after && start === 0) throw noSuch('object', after, 'starting_after');
    const page = newestFirst.slice(start, start + limit);
    return build.list(url, page, start + limit < newestFirst.length);
  }

  private all<T extends StripeObject>(kind: string, ctx: Context): T[] {
    return [...this.objects.values()].filter((object) => object.object === kind && object.livemode === ctx.livemode).reverse() as T[];
  }

  // ---- Events -------------------------------------------------------------------------------

  private emit(ctx: RequestContext, type: string, object: StripeObject, previousAttributes?: Record<string, unknown>): void {
    const event = build.event(
      { livemode: object.livemode ?? ctx.livemode, now: this.options.clock() },
      {
        type,
        apiVersion: this.options.apiVersion,
        object,
        previousAttributes,
        request: { id: ctx.requestId, idempotency_key: ctx.idempotencyKey },
        pendingWebhooks: this.options.targetCount(),
      },
    );
    this.events.push(event);
    this.options.onEvent(event);
  }

  /** Something Stripe does on its own a moment later (the events carry no request). */
  private later(work: (ctx: RequestContext) => void, livemode: boolean): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      work(this.automatic(livemode));
    }, this.options.asyncDelayMs);
    this.timers.add(timer);
  }

  automatic(livemode: boolean): RequestContext {
    return { livemode, now: this.options.clock(), requestId: null, idempotencyKey: null };
  }

  // ---- Customers ----------------------------------------------------------------------------

  private createCustomer(params: FormObject, ctx: RequestContext): Stripe.Customer {
    const created = this.store(
      build.customer(ctx, { email: text(params, 'email'), name: text(params, 'name'), description: text(params, 'description'), metadata: mergeMetadata({}, params) }),
    );
    const settings = nested(params, 'invoice_settings');
    if ('default_payment_method' in settings) this.setDefaultPaymentMethod(created, settings, ctx);
    this.emit(ctx, 'customer.created', created);
    return created;
  }

  private updateCustomer(id: string, params: FormObject, ctx: RequestContext): Stripe.Customer {
    const found = this.find<Stripe.Customer>(id, 'customer', ctx);
    const before = structuredClone(found);
    for (const field of ['email', 'name', 'description', 'phone'] as const) if (field in params) found[field] = text(params, field);
    found.metadata = mergeMetadata(found.metadata, params);
    const settings = nested(params, 'invoice_settings');
    if ('default_payment_method' in settings) this.setDefaultPaymentMethod(found, settings, ctx);
    const previous = Object.fromEntries(Object.entries(before).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(found[key as keyof Stripe.Customer])));
    if (Object.keys(previous).length > 0) this.emit(ctx, 'customer.updated', found, previous);
    return found;
  }

  private setDefaultPaymentMethod(owner: Stripe.Customer, settings: FormObject, ctx: Context): void {
    const methodId = text(settings, 'default_payment_method');
    if (methodId !== null) {
      const method = this.objects.get(methodId) as Stripe.PaymentMethod | undefined;
      if (!method || method.object !== 'payment_method' || method.customer !== owner.id || method.livemode !== ctx.livemode) {
        throw invalid(`The customer does not have a payment method with the ID ${methodId}. The payment method must be attached to the customer.`, {
          param: 'invoice_settings[default_payment_method]',
          code: 'resource_missing',
        });
      }
    }
    owner.invoice_settings.default_payment_method = methodId;
  }

  // ---- Payment methods ----------------------------------------------------------------------

  private newPaymentMethod(card: TestCard, ctx: Context): Stripe.PaymentMethod {
    const method = this.store(build.paymentMethod(ctx, card));
    this.cards.set(method.id, { card, setUp: false, consumed: false });
    return method;
  }

  /** A `payment_method` parameter: one of Stripe's `pm_card_…` test ids, or a stored PaymentMethod. */
  private usablePaymentMethod(id: string, customerId: string | null, ctx: Context): Stripe.PaymentMethod {
    const card = testCards[id];
    if (card) return this.newPaymentMethod(card, ctx);
    const method = this.find<Stripe.PaymentMethod>(id, 'payment_method', ctx, 'payment_method');
    if (method.customer !== null && method.customer !== customerId) {
      throw invalid(
        customerId === null
          ? `The provided PaymentMethod is attached to a Customer (${method.customer}); pass that customer on this request to use it.`
          : `The provided PaymentMethod belongs to a different Customer (${method.customer}) than the one on this request (${customerId}).`,
        { param: 'payment_method' },
      );
    }
    if (method.customer === null && this.cards.get(method.id)!.consumed) {
      throw invalid(
        'The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with a connected account without Customer attachment, or was detached from a Customer. It may not be used again. To use a PaymentMethod multiple times, you must attach it to a Customer first.',
        { param: 'payment_method' },
      );
    }
    return method;
  }

  private attach(method: Stripe.PaymentMethod, customerId: string, ctx: RequestContext): void {
    if (method.customer === customerId) return;
    method.customer = customerId;
    this.emit(ctx, 'payment_method.attached', method);
  }

  private listPaymentMethods(customerId: string, params: FormObject, ctx: RequestContext, url: string): Stripe.ApiList<Stripe.PaymentMethod> {
    this.find(customerId, 'customer', ctx);
    const type = text(params, 'type');
    const methods = this.all<Stripe.PaymentMethod>('payment_method', ctx).filter((method) => method.customer === customerId && (type === null || method.type === type));
    return this.paginate(url, methods, params);
  }

  private attachPaymentMethod(id: string, params: FormObject, ctx: RequestContext): Stripe.PaymentMethod {
    const method = this.find<Stripe.PaymentMethod>(id, 'payment_method', ctx);
    const customerId = required(text(params, 'customer'), 'customer');
    this.find(customerId, 'customer', ctx, 'customer');
    if (method.customer !== null && method.customer !== customerId) throw invalid('The payment method you provided has already been attached to a customer.');
    if (method.customer === null && this.cards.get(method.id)!.consumed) {
      throw invalid(
        'This PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again.',
      );
    }
    this.attach(method, customerId, ctx);
    return method;
  }

  private detachPaymentMethod(id: string, ctx: RequestContext): Stripe.PaymentMethod {
    const method = this.find<Stripe.PaymentMethod>(id, 'payment_method', ctx);
    const previous = method.customer;
    if (previous === null) throw invalid('The payment method you provided is not attached to a customer so detachment is impossible.');
    method.customer = null;
    // A detached PaymentMethod can never be used or attached again.
    this.cards.get(method.id)!.consumed = true;
    const owner = this.objects.get(previous as string) as Stripe.Customer;
    if (owner.invoice_settings.default_payment_method === method.id) {
      owner.invoice_settings.default_payment_method = null;
      this.emit(ctx, 'customer.updated', owner, { invoice_settings: { default_payment_method: method.id } });
    }
    this.emit(ctx, 'payment_method.detached', method, { customer: previous });
    return method;
  }

  // ---- Confirmation tokens (what stripe.js creates in the browser) -------------------------

  private createConfirmationToken(params: FormObject, ctx: RequestContext): Stripe.ConfirmationToken {
    if (ctx.livemode) throw invalid('Test helpers can only be used with a test mode secret key.');
    const methodId = required(text(params, 'payment_method'), 'payment_method');
    const card = testCards[methodId];
    if (!card) throw noSuch('PaymentMethod', methodId, 'payment_method');
    return this.store(
      build.confirmationToken(ctx, card, {
        returnUrl: text(params, 'return_url'),
        setupFutureUsage: oneOf(params, 'setup_future_usage', ['off_session', 'on_session'] as const),
      }),
    );
  }

  /**
   * What Stripe.js does on a buyer's page with a publishable key: a ConfirmationToken for a card,
   * in either mode (the test helper endpoint takes test-mode secret keys only).
   */
  buyerConfirmationToken(card: string, livemode: boolean): Stripe.ConfirmationToken {
    const found = testCards[card];
    if (!found) throw new Error(`No test card ${card}`);
    return this.store(build.confirmationToken(this.automatic(livemode), found, { returnUrl: null, setupFutureUsage: null }));
  }

  /** A confirmation token confirms exactly one intent, within its 12 hours. */
  private redeemConfirmationToken(id: string, intent: { id: string; object: string }, ctx: Context): { token: Stripe.ConfirmationToken; card: TestCard } {
    const token = this.find<Stripe.ConfirmationToken>(id, 'confirmation_token', ctx, 'confirmation_token');
    if (token.payment_intent !== null || token.setup_intent !== null) {
      throw invalid(`ConfirmationToken ${id} has already been used to confirm ${token.payment_intent ?? token.setup_intent}. Create a new ConfirmationToken for each confirmation.`, {
        param: 'confirmation_token',
      });
    }
    if (token.expires_at !== null && token.expires_at <= ctx.now) {
      throw invalid(`ConfirmationToken ${id} expired at ${token.expires_at}. Create a new ConfirmationToken.`, { param: 'confirmation_token' });
    }
    if (intent.object === 'payment_intent') token.payment_intent = intent.id;
    else token.setup_intent = intent.id;
    const preview = token.payment_method_preview!.card!;
    const card = Object.values(testCards).find((candidate) => candidate.last4 === preview.last4 && candidate.brand === preview.brand)!;
    return { token, card };
  }

  // ---- Payment intents ----------------------------------------------------------------------

  private createPaymentIntent(params: FormObject, ctx: RequestContext): Stripe.PaymentIntent {
    const amount = required(integer(params, 'amount'), 'amount');
    const currency = readCurrency(params);
    checkChargeAmount(amount, currency);
    const customerId = text(params, 'customer');
    if (customerId !== null) this.find(customerId, 'customer', ctx, 'customer');
    const intent = this.store(
      build.paymentIntent(ctx, {
        amount,
        currency,
        customer: customerId,
        description: text(params, 'description'),
        metadata: mergeMetadata({}, params),
        setupFutureUsage: oneOf(params, 'setup_future_usage', ['off_session', 'on_session'] as const),
        automaticPaymentMethods: this.automaticPaymentMethods(params),
        receiptEmail: text(params, 'receipt_email'),
      }),
    );
    this.emit(ctx, 'payment_intent.created', intent);
    if (!boolean(params, 'confirm')) return intent;
    return this.confirmPaymentIntent(intent, params, ctx);
  }

  private automaticPaymentMethods(params: FormObject): { enabled: boolean; allow_redirects: 'always' | 'never' } {
    const given = nested(params, 'automatic_payment_methods');
    const allowRedirects = oneOf(given, 'allow_redirects', ['always', 'never'] as const) ?? 'always';
    // Enabled by default since API version 2023-08-16.
    return { enabled: given.enabled === undefined ? true : boolean(given, 'enabled'), allow_redirects: allowRedirects };
  }

  private confirmPaymentIntent(intent: Stripe.PaymentIntent, params: FormObject, ctx: RequestContext): Stripe.PaymentIntent {
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(intent.status)) {
      throw invalid(`You cannot confirm this PaymentIntent because it has a status of ${intent.status}.`, { code: 'payment_intent_unexpected_state', payment_intent: structuredClone(intent) });
    }
    const offSession = params.off_session === 'one_off' || params.off_session === 'recurring' || boolean(params, 'off_session');
    const customerId = typeof intent.customer === 'string' ? intent.customer : null;
    const tokenId = text(params, 'confirmation_token');
    const methodId = text(params, 'payment_method');
    let method: Stripe.PaymentMethod;
    if (tokenId !== null) {
      const { token, card } = this.redeemConfirmationToken(tokenId, intent, ctx);
      method = this.newPaymentMethod(card, ctx);
      intent.setup_future_usage ??= token.setup_future_usage;
    } else if (methodId !== null) {
      method = this.usablePaymentMethod(methodId, customerId, ctx);
    } else if (intent.payment_method !== null) {
      method = this.usablePaymentMethod(intent.payment_method as string, customerId, ctx);
    } else {
      throw invalid("You cannot confirm this PaymentIntent because it's missing a payment method. Pass a confirmation_token or a payment_method.", {
        code: 'payment_intent_unexpected_state',
        payment_intent: structuredClone(intent),
      });
    }
    intent.payment_method = method.id;
    const state = this.cards.get(method.id)!;
    const card = state.card;
    const asksFor3ds = card.authentication === 'always' || (card.authentication === 'unless_set_up' && !(offSession && state.setUp));
    if (card.decline) {
      this.failPayment(intent, method, { code: 'card_declined', declineCode: card.decline.code, message: card.decline.message }, ctx);
    }
    if (asksFor3ds && offSession) {
      this.failPayment(intent, method, { code: 'authentication_required', declineCode: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' }, ctx);
    }
    if (asksFor3ds) {
      intent.status = 'requires_action';
      intent.next_action = build.threeDSecureAction();
      this.emit(ctx, 'payment_intent.requires_action', intent);
      return intent;
    }
    this.completePayment(intent, method, ctx);
    return intent;
  }

  private completePayment(intent: Stripe.PaymentIntent, method: Stripe.PaymentMethod, ctx: RequestContext): void {
    const state = this.cards.get(method.id)!;
    const paid = this.store(build.charge(ctx, intent, method, { paid: true }));
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    intent.latest_charge = paid.id;
    intent.next_action = null;
    intent.last_payment_error = null;
    if (intent.setup_future_usage !== null) {
      state.setUp = true;
      if (typeof intent.customer === 'string') this.attach(method, intent.customer, ctx);
    } else if (method.customer === null) {
      state.consumed = true;
    }
    this.emit(ctx, 'charge.succeeded', paid);
    this.emit(ctx, 'payment_intent.succeeded', intent);
    if (state.card.disputed) this.later((automatic) => this.openDispute(paid, { reason: 'fraudulent', amount: paid.amount }, automatic), ctx.livemode);
  }

  /** Records a failed charge, emits payment_failed and answers 402 with the PaymentIntent, as Stripe does. */
  private failPayment(intent: Stripe.PaymentIntent, method: Stripe.PaymentMethod, failure: { code: string; declineCode: string; message: string }, ctx: RequestContext): never {
    const failed = this.store(build.charge(ctx, intent, method, { paid: false, declineCode: failure.declineCode, failureCode: failure.code, message: failure.message }));
    if (method.customer === null) this.cards.get(method.id)!.consumed = true;
    intent.status = 'requires_payment_method';
    intent.latest_charge = failed.id;
    intent.next_action = null;
    intent.payment_method = null;
    intent.last_payment_error = {
      charge: failed.id,
      code: failure.code as Stripe.PaymentIntent.LastPaymentError.Code,
      decline_code: failure.declineCode,
      doc_url: docUrl(failure.code),
      message: failure.message,
      payment_method: structuredClone(method),
      type: 'card_error',
    };
    this.emit(ctx, 'charge.failed', failed);
    this.emit(ctx, 'payment_intent.payment_failed', intent);
    throw new StripeApiError(402, {
      type: 'card_error',
      code: failure.code,
      decline_code: failure.declineCode,
      doc_url: docUrl(failure.code),
      message: failure.message,
      charge: failed.id,
      payment_intent: structuredClone(intent),
      payment_method: structuredClone(method),
    });
  }

  private cancelPaymentIntent(id: string, params: FormObject, ctx: RequestContext): Stripe.PaymentIntent {
    const intent = this.find<Stripe.PaymentIntent>(id, 'payment_intent', ctx);
    const cancelable = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];
    if (!cancelable.includes(intent.status)) {
      throw invalid(
        `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${cancelable.join(', ')}.`,
        { code: 'payment_intent_unexpected_state', payment_intent: structuredClone(intent) },
      );
    }
    intent.status = 'canceled';
    intent.canceled_at = ctx.now;
    intent.cancellation_reason = oneOf(params, 'cancellation_reason', ['abandoned', 'duplicate', 'fraudulent', 'requested_by_customer'] as const);
    intent.next_action = null;
    this.emit(ctx, 'payment_intent.canceled', intent);
    return intent;
  }

  private listPaymentIntents(params: FormObject, ctx: RequestContext): Stripe.ApiList<Stripe.PaymentIntent> {
    const customerId = text(params, 'customer');
    const intents = this.all<Stripe.PaymentIntent>('payment_intent', ctx).filter((intent) => customerId === null || intent.customer === customerId);
    return this.paginate('/v1/payment_intents', intents, params);
  }

  /**
   * Stripe's search, for the one query form Kassa's reconciliation uses: `metadata['key']:'value'`.
   * Anything else is refused, as a query Stripe could not parse would be.
   */
  private searchPaymentIntents(params: FormObject, ctx: RequestContext): Stripe.ApiSearchResult<Stripe.PaymentIntent> {
    const query = required(text(params, 'query'), 'query');
    const match = /^metadata\['([^']+)'\]:'([^']*)'$/.exec(query);
    if (!match) throw invalid(`The double answers only metadata['key']:'value' searches (got ${query}).`, { param: 'query' });
    const limit = integer(params, 'limit') ?? 10;
    const found = this.all<Stripe.PaymentIntent>('payment_intent', ctx).filter((intent) => intent.metadata?.[match[1]] === match[2]);
    return { object: 'search_result', url: '/v1/payment_intents/search', data: found.slice(0, limit), has_more: found.length > limit, next_page: null } as Stripe.ApiSearchResult<Stripe.PaymentIntent>;
  }

  // ---- Refunds ------------------------------------------------------------------------------

  private listRefunds(params: FormObject, ctx: RequestContext): Stripe.ApiList<Stripe.Refund> {
    const intentId = text(params, 'payment_intent');
    const chargeId = text(params, 'charge');
    const refunds = this.all<Stripe.Refund>('refund', ctx).filter((refund) => (intentId === null || refund.payment_intent === intentId) && (chargeId === null || refund.charge === chargeId));
    return this.paginate('/v1/refunds', refunds, params);
  }

  private refundableCharge(params: FormObject, ctx: RequestContext): Stripe.Charge {
    const intentId = text(params, 'payment_intent');
    const chargeId = text(params, 'charge');
    if (intentId === null && chargeId === null) throw invalid('One of the following params should be provided for this request: payment_intent or charge.');
    if (chargeId !== null) return this.find<Stripe.Charge>(chargeId, 'charge', ctx, 'charge');
    const intent = this.find<Stripe.PaymentIntent>(intentId!, 'payment_intent', ctx, 'payment_intent');
    if (intent.status !== 'succeeded') throw invalid(`This PaymentIntent (${intent.id}) does not have a successful charge to refund.`, { param: 'payment_intent' });
    return this.objects.get(intent.latest_charge as string) as Stripe.Charge;
  }

  private createRefund(params: FormObject, ctx: RequestContext): Stripe.Refund {
    const paid = this.refundableCharge(params, ctx);
    if (paid.status !== 'succeeded') throw invalid(`Charge ${paid.id} has not succeeded and cannot be refunded.`, { param: 'charge' });
    const open = this.all<Stripe.Dispute>('dispute', ctx).some((found) => found.charge === paid.id && !['won', 'lost', 'warning_closed'].includes(found.status));
    if (open) throw invalid(`Charge ${paid.id} has been charged back; cannot issue a refund.`, { code: 'charge_disputed' });
    const remaining = paid.amount - paid.amount_refunded;
    if (remaining === 0) throw invalid(`Charge ${paid.id} has already been refunded.`, { code: 'charge_already_refunded' });
    const amount = integer(params, 'amount') ?? remaining;
    if (amount < 1) throw invalid('Invalid positive integer', { param: 'amount', code: 'parameter_invalid_integer' });
    if (amount > remaining) {
      throw invalid(`Refund amount (${displayAmount(amount, paid.currency)}) is greater than unrefunded amount on charge (${displayAmount(remaining, paid.currency)})`, {
        param: 'amount',
        code: 'amount_too_large',
      });
    }
    const reason = oneOf(params, 'reason', ['duplicate', 'fraudulent', 'requested_by_customer'] as const);
    const created = this.store(build.refund(ctx, paid, { amount, reason, metadata: mergeMetadata({}, params) }));
    const previous = { amount_refunded: paid.amount_refunded, refunded: paid.refunded };
    paid.amount_refunded += amount;
    paid.refunded = paid.amount_refunded === paid.amount;
    this.emit(ctx, 'refund.created', created);
    this.emit(ctx, 'charge.refunded', paid, previous);
    // Stripe's 4000000000005126: the refund starts as succeeded and fails some time afterwards.
    if (this.cards.get(paid.payment_method as string)!.card.refunds === 'fail_later') {
      this.later((automatic) => this.failRefund(created, paid, automatic), ctx.livemode);
    }
    return created;
  }

  private failRefund(failing: Stripe.Refund, paid: Stripe.Charge, ctx: RequestContext): void {
    const previous = { status: failing.status };
    failing.status = 'failed';
    failing.failure_reason = 'expired_or_canceled_card';
    failing.failure_balance_transaction = build.newId('txn');
    // The money comes back to the merchant's balance: it is no longer refunded.
    paid.amount_refunded -= failing.amount;
    paid.refunded = false;
    this.emit(ctx, 'charge.refund.updated', failing, previous);
    this.emit(ctx, 'refund.updated', failing, previous);
    this.emit(ctx, 'refund.failed', failing, previous);
  }

  // ---- Disputes -----------------------------------------------------------------------------

  openDispute(disputed: Stripe.Charge, fields: { reason: string; amount: number }, ctx: RequestContext): Stripe.Dispute {
    if (disputed.status !== 'succeeded') throw new Error(`Charge ${disputed.id} did not succeed and cannot be disputed`);
    if (disputed.disputed) throw new Error(`Charge ${disputed.id} is already disputed`);
    const opened = this.store(build.dispute(ctx, disputed, fields));
    disputed.disputed = true;
    this.emit(ctx, 'charge.dispute.created', opened);
    this.emit(ctx, 'charge.dispute.funds_withdrawn', opened);
    return opened;
  }

  closeDispute(id: string, outcome: 'won' | 'lost', ctx: RequestContext): Stripe.Dispute {
    const closing = this.find<Stripe.Dispute>(id, 'dispute', ctx);
    if (closing.status === 'won' || closing.status === 'lost') throw new Error(`Dispute ${id} is already closed (${closing.status})`);
    const previous = { status: closing.status };
    closing.status = outcome;
    this.emit(ctx, 'charge.dispute.closed', closing, previous);
    if (outcome === 'won') this.emit(ctx, 'charge.dispute.funds_reinstated', closing);
    return closing;
  }

  chargeOf(paymentIntentOrChargeId: string): Stripe.Charge {
    const found = this.objects.get(paymentIntentOrChargeId);
    if (found?.object === 'charge') return found as Stripe.Charge;
    if (found?.object === 'payment_intent' && (found as Stripe.PaymentIntent).latest_charge) {
      return this.objects.get((found as Stripe.PaymentIntent).latest_charge as string) as Stripe.Charge;
    }
    throw new Error(`No charge for ${paymentIntentOrChargeId}`);
  }

  // ---- Setup intents ------------------------------------------------------------------------

  private createSetupIntent(params: FormObject, ctx: RequestContext): Stripe.SetupIntent {
    const customerId = text(params, 'customer');
    if (customerId !== null) this.find(customerId, 'customer', ctx, 'customer');
    const intent = this.store(
      build.setupIntent(ctx, {
        customer: customerId,
        description: text(params, 'description'),
        metadata: mergeMetadata({}, params),
        usage: oneOf(params, 'usage', ['off_session', 'on_session'] as const) ?? 'off_session',
        automaticPaymentMethods: this.automaticPaymentMethods(params),
      }),
    );
    this.emit(ctx, 'setup_intent.created', intent);
    if (!boolean(params, 'confirm')) return intent;
    return this.confirmSetupIntent(intent, params, ctx);
  }

  private confirmSetupIntent(intent: Stripe.SetupIntent, params: FormObject, ctx: RequestContext): Stripe.SetupIntent {
    if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(intent.status)) {
      throw invalid(`You cannot confirm this SetupIntent because it has a status of ${intent.status}.`, { code: 'setup_intent_unexpected_state', setup_intent: structuredClone(intent) });
    }
    const customerId = typeof intent.customer === 'string' ? intent.customer : null;
    const tokenId = text(params, 'confirmation_token');
    const methodId = text(params, 'payment_method') ?? (intent.payment_method as string | null);
    let method: Stripe.PaymentMethod;
    if (tokenId !== null) method = this.newPaymentMethod(this.redeemConfirmationToken(tokenId, intent, ctx).card, ctx);
    else if (methodId !== null) method = this.usablePaymentMethod(methodId, customerId, ctx);
    else throw invalid("You cannot confirm this SetupIntent because it's missing a payment method.", { code: 'setup_intent_unexpected_state', setup_intent: structuredClone(intent) });
    intent.payment_method = method.id;
    const card = this.cards.get(method.id)!.card;
    if (card.decline) {
      intent.status = 'requires_payment_method';
      intent.payment_method = null;
      intent.last_setup_error = {
        code: 'card_declined',
        decline_code: card.decline.code,
        doc_url: docUrl('card_declined'),
        message: card.decline.message,
        payment_method: structuredClone(method),
        type: 'card_error',
      };
      this.emit(ctx, 'setup_intent.setup_failed', intent);
      throw new StripeApiError(402, {
        type: 'card_error',
        code: 'card_declined',
        decline_code: card.decline.code,
        doc_url: docUrl('card_declined'),
        message: card.decline.message,
        setup_intent: structuredClone(intent),
        payment_method: structuredClone(method),
      });
    }
    if (card.authentication !== 'never') {
      intent.status = 'requires_action';
      intent.next_action = build.threeDSecureAction() as Stripe.SetupIntent.NextAction;
      this.emit(ctx, 'setup_intent.requires_action', intent);
      return intent;
    }
    this.completeSetup(intent, method, ctx);
    return intent;
  }

  private completeSetup(intent: Stripe.SetupIntent, method: Stripe.PaymentMethod, ctx: RequestContext): void {
    intent.status = 'succeeded';
    intent.next_action = null;
    intent.last_setup_error = null;
    this.cards.get(method.id)!.setUp = true;
    if (typeof intent.customer === 'string') this.attach(method, intent.customer, ctx);
    this.emit(ctx, 'setup_intent.succeeded', intent);
  }

  // ---- 3-D Secure, as the buyer answers it in stripe.js ------------------------------------

  authenticate(id: string, outcome: 'succeed' | 'fail', ctx: RequestContext): Stripe.PaymentIntent | Stripe.SetupIntent {
    const intent = this.objects.get(id) as Stripe.PaymentIntent | Stripe.SetupIntent | undefined;
    if (!intent || (intent.object !== 'payment_intent' && intent.object !== 'setup_intent')) throw new Error(`No such PaymentIntent or SetupIntent: ${id}`);
    if (intent.status !== 'requires_action') throw new Error(`${id} does not await authentication (status ${intent.status})`);
    const method = this.objects.get(intent.payment_method as string) as Stripe.PaymentMethod;
    if (outcome === 'succeed') {
      if (intent.object === 'payment_intent') this.completePayment(intent, method, ctx);
      else this.completeSetup(intent, method, ctx);
      return intent;
    }
    intent.status = 'requires_payment_method';
    intent.next_action = null;
    intent.payment_method = null;
    if (method.customer === null) this.cards.get(method.id)!.consumed = true;
    if (intent.object === 'payment_intent') {
      intent.last_payment_error = {
        code: 'payment_intent_authentication_failure',
        doc_url: docUrl('payment_intent_authentication_failure'),
        message: 'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to complete this PaymentIntent again.',
        payment_method: structuredClone(method),
        type: 'invalid_request_error',
      };
      this.emit(ctx, 'payment_intent.payment_failed', intent);
    } else {
      intent.last_setup_error = {
        code: 'setup_intent_authentication_failure',
        doc_url: docUrl('setup_intent_authentication_failure'),
        message: 'The latest attempt to set up the payment method has failed because authentication failed.',
        payment_method: structuredClone(method),
        type: 'invalid_request_error',
      };
      this.emit(ctx, 'setup_intent.setup_failed', intent);
    }
    return intent;
  }

  // ---- Events -------------------------------------------------------------------------------

  private listEvents(params: FormObject, ctx: RequestContext): Stripe.ApiList<Stripe.Event> {
    const type = text(params, 'type');
    const events = this.events.filter((event) => event.livemode === ctx.livemode && (type === null || event.type === type)).reverse();
    return this.paginate('/v1/events', events, params);
  }
}


// A Stripe API double for tests: an HTTP server that answers the Stripe endpoints Kassa uses, in
// Stripe's JSON shapes and errors, so the real `stripe` package can be pointed at it (host, port,
// protocol http). Besides the API it offers in-process controls that play what Stripe, the buyer
// or the network would do: 3-D Secure answers, disputes, failures, outages and webhook delivery.
//
// This file is the transport: keys, idempotency, injected failures and the controls. The
// endpoints' rules are in api.ts, object shapes in objects.ts, delivery in webhooks.ts.
//
// Idempotency, as Stripe documents it: a POST with an Idempotency-Key stores its answer per secret
// key; the same key with the same parameters replays it byte for byte (with Idempotent-Replayed:
// true), a different endpoint or parameters is an idempotency_error, and a key whose first request
// is still running is a 409. Answers of requests that failed validation (400/404) are not stored,
// so a corrected retry may reuse the key; 200s and card errors (402) are.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Stripe from 'stripe';
import { StripeAccount, StripeApiError, type ErrorBody, type RequestContext } from './api.ts';
import { fingerprint, parseForm, type FormObject } from './form.ts';
import { newId } from './objects.ts';
import { WebhookDispatcher, type WebhookTarget } from './webhooks.ts';

export { testCards } from './cards.ts';
export type { Delivery, DeliveryMode, WebhookDispatcher, WebhookTarget } from './webhooks.ts';

export interface StripeDoubleOptions {
  webhookTargets?: WebhookTarget[];
  /** The api_version events carry; the stripe package's pinned version by default. */
  apiVersion?: string;
  /** How long Stripe takes to fail a pm_card_refundFail refund or dispute a pm_card_createDispute charge. */
  asyncDelayMs?: number;
}

/**
 * 'rate_limit': 429 code rate_limit (the stripe package does not retry it);
 * 'lock_timeout': 429 code lock_timeout with Stripe-Should-Retry: true (it does);
 * 'server_error': 500 api_error (it retries); 'connection_reset': the socket is destroyed unanswered.
 */
export type FailureKind = 'rate_limit' | 'lock_timeout' | 'server_error' | 'connection_reset';

export interface ApiRequest {
  requestId: string;
  method: string;
  path: string;
  idempotencyKey: string | null;
  params: FormObject;
  livemode: boolean | null;
  /** null when the connection was cut without an answer. */
  status: number | null;
  replayed: boolean;
  injected: FailureKind | null;
  at: Date;
}

interface StoredAnswer {
  endpoint: string;
  fingerprint: string;
  requestId: string;
  status: number | null;
  body: string;
}

const failureAnswers: Record<Exclude<FailureKind, 'connection_reset'>, { status: number; headers: Record<string, string>; error: ErrorBody }> = {
  rate_limit: {
    status: 429,
    headers: {},
    error: {
      type: 'invalid_request_error',
      code: 'rate_limit',
      doc_url: 'https://stripe.com/docs/error-codes/rate-limit',
      message: 'Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.',
    },
  },
  lock_timeout: {
    status: 429,
    headers: { 'stripe-should-retry': 'true' },
    error: {
      type: 'invalid_request_error',
      code: 'lock_timeout',
      doc_url: 'https://stripe.com/docs/error-codes/lock-timeout',
      message:
        'This object cannot be accessed right now because another API request or Stripe process is currently accessing it. If you see this error intermittently, retry the request. If you see this error frequently and are making multiple concurrent requests to a single object, make your requests serially or at a lower rate. See https://stripe.com/docs/rate-limits for more details.',
    },
  },
  server_error: {
    status: 500,
    headers: {},
    error: {
      type: 'api_error',
      message: "Sorry, something went wrong. We've already been notified of the problem, but if you need any help, you can reach us at https://support.stripe.com/contact.",
    },
  },
};

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export class StripeDouble {
  readonly host = '127.0.0.1';
  readonly webhooks: WebhookDispatcher;
  /** Every API request received, oldest first. */
  readonly requests: ApiRequest[] = [];
  private readonly account: StripeAccount;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly idempotent = new Map<string, StoredAnswer | 'in_progress'>();
  /** Failures to inject, in order; one with a path waits for a request to that path (`POST /v1/payment_intents`). */
  private readonly failures: Array<{ kind: FailureKind; when: 'before' | 'after'; path?: string }> = [];
  private latencyMs = 0;
  /** Only requests to this endpoint (`POST /v1/payment_intents`) wait, when set. */
  private latencyPath: string | undefined;
  private clockOffset = 0;
  private listeningPort = 0;

  private constructor(options: StripeDoubleOptions) {
    this.webhooks = new WebhookDispatcher([...(options.webhookTargets ?? [])], (id) => this.account.events.find((event) => event.id === id));
    this.account = new StripeAccount({
      apiVersion: options.apiVersion ?? Stripe.API_VERSION,
      asyncDelayMs: options.asyncDelayMs ?? 50,
      clock: () => this.now(),
      onEvent: (event) => this.webhooks.dispatch(event),
      targetCount: () => this.webhooks.targets.length,
    });
    this.server = createServer((request, response) => void this.answer(request, response));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: StripeDoubleOptions = {}): Promise<StripeDouble> {
    const double = new StripeDouble(options);
    await double.listen(0);
    return double;
  }

  get port(): number {
    return this.listeningPort;
  }

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  /** All events created, oldest first (GET /v1/events lists them newest first). */
  get events(): readonly Stripe.Event[] {
    return this.account.events;
  }

  /** A real Stripe client pointed at the double, for the side of a test that plays stripe.js or an operator. */
  stripe(secretKey = 'sk_test_double', config: Stripe.StripeConfig = {}): Stripe {
    return new Stripe(secretKey, { host: this.host, port: this.port, protocol: 'http', maxNetworkRetries: 2, telemetry: false, ...config });
  }

  /** A copy of any object the double holds (pi_, ch_, re_, dp_, pm_, cus_, seti_, ctoken_). */
  object<T = unknown>(id: string): T | undefined {
    const found = this.account.objects.get(id);
    return found === undefined ? undefined : (structuredClone(found) as T);
  }

  /** Copies of every object of one type ('payment_intent', 'refund', …), oldest first. */
  objects<T = unknown>(type: string): T[] {
    return [...this.account.objects.values()].filter((found) => found.object === type).map((found) => structuredClone(found) as T);
  }

  /** What the buyer does in stripe.js's 3-D Secure popup for an intent in requires_action. */
  /** Stripe.js on the buyer's page, with a publishable key of either mode: a ConfirmationToken for a test card. */
  confirmationToken(card: string, { livemode = false }: { livemode?: boolean } = {}): Stripe.ConfirmationToken {
    return structuredClone(this.account.buyerConfirmationToken(card, livemode));
  }

  authenticate(intentId: string, outcome: 'succeed' | 'fail'): Stripe.PaymentIntent | Stripe.SetupIntent {
    const intent = this.account.objects.get(intentId);
    return structuredClone(this.account.authenticate(intentId, outcome, this.account.automatic(intent?.livemode ?? false)));
  }

  /** The buyer's bank disputes a charge (by its id or its PaymentIntent's): needs_response. */
  dispute(paymentIntentOrChargeId: string, fields: { reason?: string; amount?: number } = {}): Stripe.Dispute {
    const charge = this.account.chargeOf(paymentIntentOrChargeId);
    const opened = this.account.openDispute(charge, { reason: fields.reason ?? 'fraudulent', amount: fields.amount ?? charge.amount }, this.account.automatic(charge.livemode));
    return structuredClone(opened);
  }

  closeDispute(disputeId: string, outcome: 'won' | 'lost'): Stripe.Dispute {
    const found = this.account.objects.get(disputeId);
    return structuredClone(this.account.closeDispute(disputeId, outcome, this.account.automatic(found?.livemode ?? false)));
  }

  /**
   * The next n API requests fail. 'before': the request never reaches Stripe's logic. 'after':
   * it runs (objects, events, the stored idempotent answer) but its answer is lost or replaced,
   * as when a network or proxy fails on the way back.
   */
  failNext(n: number, kind: FailureKind, { when = 'before', path }: { when?: 'before' | 'after'; path?: string } = {}): void {
    for (let i = 0; i < n; i++) this.failures.push({ kind, when, path });
  }

  /** Every answer waits this long after the work is done (the request stays in progress). */
  latency(ms: number, { path }: { path?: string } = {}): void {
    this.latencyMs = ms;
    this.latencyPath = path;
  }

  /** Stripe unreachable: the port refuses connections and open ones are cut, until down(false). */
  async down(isDown: boolean): Promise<void> {
    if (isDown) {
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      for (const socket of this.sockets) socket.destroy();
      await closed;
    } else {
      await this.listen(this.listeningPort);
    }
  }

  /** Moves the double's clock forward, e.g. past a confirmation token's 12-hour expiry. */
  advanceClock(seconds: number): void {
    this.clockOffset += seconds;
  }

  async close(): Promise<void> {
    this.account.stop();
    if (!this.server.listening) return;
    await this.down(true);
  }

  private now(): number {
    return Math.floor(Date.now() / 1000) + this.clockOffset;
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, this.host, () => {
        this.server.off('error', reject);
        this.listeningPort = (this.server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', this.url);
    const method = request.method ?? 'GET';
    const idempotencyKey = method === 'POST' ? ((request.headers['idempotency-key'] as string | undefined) ?? null) : null;
    const params = parseForm(method === 'POST' ? Buffer.concat(chunks).toString('utf8') : url.search.slice(1));
    const logged: ApiRequest = {
      requestId: newId('req', 14),
      method,
      path: url.pathname,
      idempotencyKey,
      params,
      livemode: null,
      status: null,
      replayed: false,
      injected: null,
      at: new Date(),
    };
    this.requests.push(logged);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'request-id': logged.requestId,
      'stripe-version': (request.headers['stripe-version'] as string | undefined) ?? Stripe.API_VERSION,
    };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const send = (status: number, body: string, extra: Record<string, string> = {}) => {
      logged.status = status;
      response.writeHead(status, { ...headers, ...extra, 'content-length': Buffer.byteLength(body) });
      response.end(body);
    };
    const due = (when: 'before' | 'after') => {
      const next = this.failures[0];
      return next?.when === when && (!next.path || next.path === `${method} ${url.pathname}`) ? this.failures.shift()! : null;
    };
    const failure = due('before');
    if (failure) return this.fail(failure.kind, logged, request, send);

    const secretKey = this.authenticated(request);
    if (typeof secretKey !== 'string') return send(401, json({ error: secretKey }));
    logged.livemode = secretKey.includes('_live_');

    const scope = idempotencyKey === null ? null : `${secretKey}\n${idempotencyKey}`;
    const endpoint = `${method} ${url.pathname}`;
    const stored = scope === null ? undefined : this.idempotent.get(scope);
    if (stored === 'in_progress') {
      return send(409, json({ error: { type: 'invalid_request_error', code: 'idempotency_key_in_use', doc_url: 'https://stripe.com/docs/error-codes/idempotency-key-in-use', message: `There is currently another in-progress request using this idempotent key (that probably means you submitted twice, and the other request is still going through): ${idempotencyKey}. Please try again later.` } }));
    }
    if (stored !== undefined) {
      if (stored.endpoint !== endpoint) {
        return send(400, json({ error: { type: 'idempotency_error', message: `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${stored.endpoint}' vs '${endpoint}'). Try using a key other than '${idempotencyKey}' if you meant to execute a different request.` } }));
      }
      if (stored.fingerprint !== fingerprint(params)) {
        return send(400, json({ error: { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.` } }));
      }
      logged.replayed = true;
      return send(stored.status!, stored.body, { 'idempotent-replayed': 'true', 'original-request': stored.requestId });
    }

    if (scope !== null) this.idempotent.set(scope, 'in_progress');
    const ctx: RequestContext = { livemode: logged.livemode, now: this.now(), requestId: logged.requestId, idempotencyKey };
    const { status, body } = this.run(method, url.pathname, params, ctx);
    if (this.latencyMs > 0 && (!this.latencyPath || this.latencyPath === `${method} ${url.pathname}`)) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    if (scope !== null) {
      if (status === 400 || status === 404) this.idempotent.delete(scope);
      else this.idempotent.set(scope, { endpoint, fingerprint: fingerprint(params), requestId: logged.requestId, status, body });
    }
    const lost = due('after');
    if (lost) return this.fail(lost.kind, logged, request, send);
    send(status, body);
  }

  private run(method: string, path: string, params: FormObject, ctx: RequestContext): { status: number; body: string } {
    try {
      return { status: 200, body: json(this.account.handle(method, path, params, ctx)) };
    } catch (error) {
      if (error instanceof StripeApiError) return { status: error.status, body: json({ error: error.body }) };
      return { status: 500, body: json({ error: { type: 'api_error', message: `Stripe double failed: ${(error as Error).stack}` } }) };
    }
  }

  private fail(kind: FailureKind, logged: ApiRequest, request: IncomingMessage, send: (status: number, body: string, extra?: Record<string, string>) => void): void {
    logged.injected = kind;
    if (kind === 'connection_reset') {
      request.socket.destroy();
      return;
    }
    const answer = failureAnswers[kind];
    send(answer.status, json({ error: answer.error }), answer.headers);
  }

  /** The secret key from `Authorization: Bearer sk_…`, or Stripe's 401 error body. */
  private authenticated(request: IncomingMessage): string | ErrorBody {
    const header = request.headers.authorization ?? '';
    const key = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
    if (key === '') {
      return {
        type: 'invalid_request_error',
        message: "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
      };
    }
    if (!/^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/.test(key)) {
      return { type: 'invalid_request_error', message: `Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(4)}${key.slice(-4)}` };
    }
    return key;
  }
}

export function startStripeDouble(options: StripeDoubleOptions = {}): Promise<StripeDouble> {
  return StripeDouble.start(options);
}

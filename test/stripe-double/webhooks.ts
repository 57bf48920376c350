// Webhook delivery as Stripe does it: each event is POSTed as pretty-printed JSON to every target,
// signed with the target's secret in the Stripe-Signature header (the stripe package's own signer).
// Deliveries never block the API answer. A target that fails is not retried on its own; tests
// call redeliver, as an operator would from the Dashboard.
//
// Modes let tests play Stripe's real-world delivery behaviour: events dropped, late, duplicated,
// or held back and released out of order.
import Stripe from 'stripe';

export interface WebhookTarget {
  url: string;
  secret: string;
}

export type DeliveryMode = 'deliver' | 'drop' | 'duplicate' | 'hold' | 'delay';

export interface Delivery {
  eventId: string;
  type: string;
  url: string;
  /** 'failed': the target answered non-2xx or could not be reached. 'dropped': never sent. */
  outcome: 'delivered' | 'failed' | 'dropped';
  status: number | null;
  error: string | null;
  at: Date;
}

type Waiter = { type: string; predicate: (event: Stripe.Event) => boolean; resolve: (event: Stripe.Event) => void };

export class WebhookDispatcher {
  readonly sent: Delivery[] = [];
  readonly held: Stripe.Event[] = [];
  private currentMode: DeliveryMode = 'deliver';
  private delayMs = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly settled: Stripe.Event[] = [];
  private readonly waiters = new Set<Waiter>();

  constructor(
    readonly targets: WebhookTarget[],
    private readonly findEvent: (id: string) => Stripe.Event | undefined,
  ) {}

  addTarget(target: WebhookTarget): void {
    this.targets.push(target);
  }

  /** How the next events are delivered; 'delay' takes the delay in milliseconds. */
  mode(mode: Exclude<DeliveryMode, 'delay'>): void;
  mode(mode: 'delay', ms: number): void;
  mode(mode: DeliveryMode, ms = 0): void {
    this.currentMode = mode;
    this.delayMs = ms;
  }

  /** Called for every event the double creates, in creation order. */
  dispatch(event: Stripe.Event): void {
    switch (this.currentMode) {
      case 'drop':
        for (const target of this.targets) this.record(event, target, 'dropped', null, null);
        this.settle(event);
        return;
      case 'hold':
        this.held.push(event);
        return;
      case 'duplicate':
        this.enqueue(event, 2, 0);
        return;
      case 'delay':
        this.enqueue(event, 1, this.delayMs);
        return;
      case 'deliver':
        this.enqueue(event, 1, 0);
    }
  }

  /** Delivers the held events, oldest first ('forward') or newest first ('reverse'). */
  release({ order = 'forward' }: { order?: 'forward' | 'reverse' } = {}): Promise<void> {
    const events = this.held.splice(0, this.held.length);
    if (order === 'reverse') events.reverse();
    for (const event of events) this.enqueue(event, 1, 0);
    return this.idle();
  }

  /** Sends an event again to every target, with a fresh signature, as the Dashboard's "Resend" does. */
  async redeliver(eventId: string): Promise<Delivery[]> {
    const event = this.findEvent(eventId);
    if (!event) throw new Error(`No such event: ${eventId}`);
    return Promise.all(this.targets.map((target) => this.post(event, target)));
  }

  /** Resolves once every delivery queued so far has been answered. */
  idle(): Promise<void> {
    return this.queue;
  }

  /**
   * The first event of this type (and matching the predicate) whose deliveries have all been
   * answered, or dropped; earlier events count too.
   */
  waitFor(type: string, predicate: (event: Stripe.Event) => boolean = () => true, timeoutMs = 5_000): Promise<Stripe.Event> {
    const found = this.settled.find((event) => event.type === type && predicate(event));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        type,
        predicate,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`No ${type} event was delivered within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private enqueue(event: Stripe.Event, times: number, delayMs: number): void {
    // One queue for all events keeps deliveries in creation order, as tests expect by default.
    this.queue = this.queue.then(async () => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      for (let i = 0; i < times; i++) await Promise.all(this.targets.map((target) => this.post(event, target)));
      this.settle(event);
    });
  }

  private async post(event: Stripe.Event, target: WebhookTarget): Promise<Delivery> {
    const payload = JSON.stringify(event, null, 2);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: target.secret });
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': signature,
        },
        body: payload,
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      return this.record(event, target, response.ok ? 'delivered' : 'failed', response.status, null);
    } catch (error) {
      return this.record(event, target, 'failed', null, (error as Error).message);
    }
  }

  private record(event: Stripe.Event, target: WebhookTarget, outcome: Delivery['outcome'], status: number | null, error: string | null): Delivery {
    const delivery = { eventId: event.id, type: event.type, url: target.url, outcome, status, error, at: new Date() };
    this.sent.push(delivery);
    return delivery;
  }

  private settle(event: Stripe.Event): void {
    this.settled.push(event);
    for (const waiter of this.waiters) {
      if (waiter.type === event.type && waiter.predicate(event)) {
        this.waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  }
}

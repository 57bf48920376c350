// The live stream of an environment's events, behind the GraphQL subscription `coreEvents`. The
// webhook worker publishes each outbox event once its dispatch transaction has committed, so a
// subscriber never sees a change that was rolled back. Dispatch runs in one process at a time per
// database; with Redis configured every process on it receives every event, otherwise only the
// subscribers of the dispatching process do. Each environment has its own topic: sandbox and
// production never mix, even on one Redis.
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from 'graphql-yoga';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { EnvironmentName } from '../config.ts';
import type { Logger } from '../logger.ts';

export interface LiveEvent {
  id: string;
  type: string;
  /** ISO 8601: the same in-process and through Redis. */
  timestamp: string;
  organizationId: string;
  resourceId: string | null;
  data: Record<string, unknown>;
}

type Topics = Record<string, [LiveEvent]>;

export class LiveEvents {
  private readonly pubsub;
  private readonly topic: string;
  private readonly streams = new Set<() => Promise<void>>();
  private readonly clients: Redis[] = [];
  private ended = false;
  private closed = false;

  constructor(environment: EnvironmentName, redisUrl: string | null, logger: Logger) {
    this.topic = `kassa:${environment}:events`;
    if (redisUrl) {
      const Client = redisClientClass();
      const publishClient = new Client(redisUrl);
      const subscribeClient = new Client(redisUrl);
      for (const client of [publishClient, subscribeClient]) {
        // ioredis reconnects (and subscribes again) by itself; an unhandled 'error' would end the process.
        client.on('error', (error) => logger.warn({ err: error, environment }, 'redis connection failed'));
        this.clients.push(client);
      }
      const eventTarget = createRedisEventTarget<CustomEvent<LiveEvent>>({
        publishClient: logFailures(publishClient, logger),
        subscribeClient: logFailures(subscribeClient, logger),
      });
      this.pubsub = createPubSub<Topics>({ eventTarget });
    } else {
      this.pubsub = createPubSub<Topics>();
    }
  }

  /** Call only with committed events. */
  publish(events: LiveEvent[]): void {
    if (this.closed) return;
    for (const event of events) this.pubsub.publish(this.topic, event);
  }

  /**
   * The events `accept` lets through, from now on, until the consumer stops or `close` is called.
   * It listens from the call on, not from the first read: an event committed after the subscription
   * was answered is not missed.
   */
  subscribe(accept: (event: LiveEvent) => boolean): AsyncIterableIterator<LiveEvent> {
    const done = { done: true as const, value: undefined };
    if (this.ended) return (async function* () {})();
    const source = this.pubsub.subscribe(this.topic)[Symbol.asyncIterator]();
    let pending = source.next();
    let finish = () => {};
    const finished = new Promise<typeof done>((resolve) => (finish = () => resolve(done)));
    let ended = false;
    const end = async () => {
      if (ended) return;
      ended = true;
      this.streams.delete(end);
      finish();
      await source.return?.();
    };
    this.streams.add(end);
    return {
      async next() {
        for (;;) {
          const result = await Promise.race([pending, finished]);
          if (result.done) {
            await end();
            return done;
          }
          pending = source.next();
          if (accept(result.value)) return result;
        }
      },
      async return() {
        await end();
        return done;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** Ends every open stream and refuses new ones: their responses finish, so shutdown is not held up. */
  async endStreams(): Promise<void> {
    this.ended = true;
    await Promise.all([...this.streams].map((end) => end()));
  }

  /** Ends the streams and disconnects from Redis; later events are not published. */
  async close(): Promise<void> {
    await this.endStreams();
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.clients.map((client) => client.quit().catch(() => client.disconnect())));
  }
}

/** The client, its commands that the event target leaves unawaited logged when they fail rather than left unhandled. */
function logFailures(client: Redis, logger: Logger): Redis {
  const unawaited = new Set(['publish', 'subscribe', 'unsubscribe']);
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !unawaited.has(property)) return typeof value === 'function' ? value.bind(target) : value;
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch((error: unknown) => logger.warn({ err: error, command: property }, 'redis command failed'));
    },
  });
}

/** ioredis (with its dependencies, several megabytes resident) is loaded only where REDIS_URL is set. */
function redisClientClass(): typeof Redis {
  return (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis;
}

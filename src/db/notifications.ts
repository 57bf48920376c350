// What an environment's database announces with NOTIFY, heard by this process: ended tokens,
// jobs due, events recorded. A NOTIFY sent in a transaction arrives once that transaction commits,
// at every process on the database (this one included). One connection per environment listens on
// every channel the process follows: on PostgreSQL a connection of its own, outside the pool; on
// the embedded database, the database itself (it has no other process to hear from).
//
// A listener that is not listening (before the connection is made, after it dropped) may have
// missed announcements: each subscriber is told when listening starts and stops, and whatever
// depends on hearing every one (the principal cache) must not rely on it meanwhile. The
// connection is made again after a drop.
import pg from 'pg';
import type { Logger } from '../logger.ts';
import type { EmbeddedDatabase } from './embedded.ts';

export interface Subscriber {
  /** A notification on the channel, with its payload ('' when none was given). */
  message(payload: string): void;
  /** Listening started (true) or stopped (false); called at once with the current state. */
  listening?(listening: boolean): void;
}

export interface Notifications {
  /** Follows `channel` (lowercase letters and underscores) until the returned function is called. */
  subscribe(channel: string, subscriber: Subscriber): () => void;
  close(): Promise<void>;
}

const channelName = /^[a-z_]+$/;

/** The channels and their subscribers; each implementation tells it what it hears. */
class Channels {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  listening = false;

  /** Adds a subscriber; unless `quiet`, tells it at once whether listening is on. */
  add(channel: string, subscriber: Subscriber, quiet = false): () => void {
    if (!channelName.test(channel)) throw new Error(`Not a channel name: ${channel}`);
    let set = this.subscribers.get(channel);
    if (!set) this.subscribers.set(channel, (set = new Set()));
    set.add(subscriber);
    if (!quiet) subscriber.listening?.(this.listening);
    return () => void set.delete(subscriber);
  }

  has(channel: string): boolean {
    return this.subscribers.has(channel);
  }

  names(): string[] {
    return [...this.subscribers.keys()];
  }

  deliver(channel: string, payload: string): void {
    for (const subscriber of this.subscribers.get(channel) ?? []) subscriber.message(payload);
  }

  setListening(listening: boolean): void {
    if (this.listening === listening) return;
    this.listening = listening;
    for (const set of this.subscribers.values()) for (const subscriber of set) subscriber.listening?.(listening);
  }
}

/**
 * Listens on one PostgreSQL connection of its own. Statements on it are sent one after another
 * (pg refuses to queue them from pg@9 on).
 */
export function postgresNotifications(url: string, logger: Logger): Notifications {
  const channels = new Channels();
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let statements: Promise<unknown> = Promise.resolve();
  const send = (on: pg.Client, sql: string) => {
    const sent = statements.then(() => on.query(sql));
    statements = sent.catch(() => {});
    return sent;
  };
  /** The channels the current connection listens on. */
  let heard = new Set<string>();
  const listenOn = async (on: pg.Client, channel: string) => {
    if (heard.has(channel)) return;
    heard.add(channel);
    await send(on, `LISTEN ${channel}`);
  };

  const reconnect = () => {
    client = null;
    channels.setListening(false);
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, 1000);
  };
  const connect = async () => {
    if (stopped) return;
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => channels.deliver(message.channel, message.payload ?? ''));
    next.on('error', (error) => logger.warn({ err: error }, 'the notification listener lost its connection'));
    next.on('end', () => {
      if (client === next) reconnect();
    });
    try {
      await next.connect();
      heard = new Set();
      // Channels subscribed to while these LISTENs run are listened on too.
      for (let unheard = channels.names(); unheard.length; unheard = channels.names().filter((channel) => !heard.has(channel))) {
        for (const channel of unheard) await listenOn(next, channel);
      }
      if (stopped) {
        await next.end();
        return;
      }
      client = next;
      channels.setListening(true);
    } catch (error) {
      logger.warn({ err: error }, 'the notification listener could not connect; retrying');
      await next.end().catch(() => {});
      reconnect();
    }
  };
  void connect();

  return {
    subscribe(channel, subscriber) {
      const on = client;
      // A new channel on a live connection: its subscriber is listening once LISTEN has run. Otherwise
      // the channel is listened on when the connection is made.
      if (!on || heard.has(channel)) return channels.add(channel, subscriber);
      const remove = channels.add(channel, subscriber, true);
      listenOn(on, channel).then(
        () => subscriber.listening?.(client === on),
        (error) => {
          logger.warn({ err: error, channel }, 'could not listen; reconnecting');
          void on.end().catch(() => {});
        },
      );
      return remove;
    },
    async close() {
      stopped = true;
      clearTimeout(retry);
      channels.setListening(false);
      const on = client;
      client = null;
      await statements;
      await on?.end().catch(() => {});
    },
  };
}

/** Listens on the embedded database itself: it delivers notifications after their commit, as PostgreSQL does. */
export function embeddedNotifications(database: EmbeddedDatabase, logger: Logger): Notifications {
  const channels = new Channels();
  channels.listening = true;
  let closed = false;
  return {
    subscribe(channel, subscriber) {
      const first = !channels.has(channel);
      const remove = channels.add(channel, subscriber);
      if (first) {
        database.listen(channel, (payload) => channels.deliver(channel, payload)).catch((error) => {
          if (!closed) logger.warn({ err: error, channel }, 'could not listen on the embedded database');
        });
      }
      return remove;
    },
    async close() {
      closed = true;
      channels.setListening(false);
    },
  };
}

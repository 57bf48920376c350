// Resolved principals by token hash, so a request with a token already seen costs no database
// round trip. The cache is exact, not merely short-lived:
// - a token's own expiry is kept with its entry and checked against the request's clock;
// - every change that ends tokens or changes what they reach (revocation, sign-out, a deleted
//   customer, a new membership) announces the token hashes in its own transaction with
//   NOTIFY, which PostgreSQL delivers to every process on the database once it commits, and the
//   process that made the change forgets them itself right after its commit;
// - a lookup that raced such a change is not kept: forgetting moves a generation counter on, and
//   only lookups that started in the current generation are stored;
// - while a process is not listening (before LISTEN, or after its connection dropped) it caches
//   nothing, since it could miss an announcement.
import type { Db } from '../db/client.ts';
import type { Notifications } from '../db/notifications.ts';
import type { Principal } from '../context.ts';

export const principalsChannel = 'kassa_principals';
/** Announced instead of a hash when every cached principal must go. */
const everything = '*';

interface Entry {
  principal: Principal;
  /** When the token stops working by itself (ms since epoch), or null. */
  validUntil: number | null;
  /** Organization tokens: when last use was last recorded (ms since epoch). */
  lastUsedAt: number | null;
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private listening: boolean;

  constructor(
    private readonly capacity = 10_000,
    /** True where no other process can change the database (the embedded one): nothing to listen for. */
    alone = false,
  ) {
    this.listening = alone;
  }

  /** The generation a lookup starts in; pass it to `keep`. */
  get currentGeneration(): number {
    return this.generation;
  }

  get(tokenHash: string, now: Date): Entry | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.validUntil !== null && entry.validUntil <= now.getTime()) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return entry;
  }

  keep(tokenHash: string, entry: Entry, generation: number): void {
    if (!this.listening || generation !== this.generation) return;
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(tokenHash, entry);
  }

  forget(tokenHashes: Iterable<string>): void {
    this.generation++;
    for (const hash of tokenHashes) {
      if (hash === everything) this.entries.clear();
      else this.entries.delete(hash);
    }
  }

  /** Whether announcements are being received; while not, nothing is cached. */
  setListening(listening: boolean): void {
    this.listening = listening;
    this.forget([everything]);
  }
}

/**
 * Announces, in the transaction `db` that makes the change, that these tokens ended or changed
 * (`'*'` for all). Call `forget` on the environment's cache after the commit as well.
 */
export async function announcePrincipalChange(db: Db, tokenHashes: string[]): Promise<void> {
  for (const hash of tokenHashes) await db.$executeRaw`SELECT pg_notify(${principalsChannel}, ${hash})`;
}

/**
 * Applies the announcements heard on the environment's notification connection to `cache`; while
 * that connection is down the cache caches nothing. Returns a stop function.
 */
export function listenForPrincipalChanges(notifications: Notifications, cache: PrincipalCache): () => void {
  const stop = notifications.subscribe(principalsChannel, {
    message: (payload) => cache.forget([payload || everything]),
    listening: (listening) => cache.setListening(listening),
  });
  return () => {
    stop();
    cache.setListening(false);
  };
}

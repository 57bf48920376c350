// The parse caches of the GraphQL endpoint, keyed by document text, and the store of automatic
// persisted queries, keyed by hash. A document may be up to a megabyte of text in 2,000 tokens (a
// long string or comment), so a cache bounded by count alone could be made to hold a gigabyte:
// these are bounded by the total size of what they hold too (by default the length of the keys,
// which are the texts), and drop the least recently used first.
export class DocumentCache<T> {
  private readonly entries = new Map<string, { value: T; size: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxSize: number,
    private readonly sizeOf: (key: string, value: T) => number = (key) => key.length,
  ) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Map keeps insertion order: moving a hit to the end keeps the least recently used first.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: T): void {
    const size = this.sizeOf(key, value);
    if (size > this.maxSize || this.maxEntries === 0) return;
    const previous = this.entries.get(key);
    if (previous && this.entries.delete(key)) this.total -= previous.size;
    this.entries.set(key, { value, size });
    this.total += size;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.total <= this.maxSize) break;
      this.entries.delete(oldest);
      this.total -= entry.size;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The total size of what is held, as `sizeOf` measures it. */
  get heldSize(): number {
    return this.total;
  }
}

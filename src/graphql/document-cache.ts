// The parse caches of the GraphQL endpoint, keyed by document text. A document may be up to a
// megabyte of text in 2,000 tokens (a long string or comment), so a cache bounded by count alone
// could be made to hold a gigabyte: these are bounded by the total length of the texts they hold
// too, and drop the least recently used first.
export class DocumentCache<T> {
  private readonly entries = new Map<string, T>();
  private chars = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxChars: number,
  ) {}

  get(key: string): T | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Map keeps insertion order: moving a hit to the end keeps the least recently used first.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: T): void {
    if (key.length > this.maxChars) return;
    if (this.entries.delete(key)) this.chars -= key.length;
    this.entries.set(key, value);
    this.chars += key.length;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

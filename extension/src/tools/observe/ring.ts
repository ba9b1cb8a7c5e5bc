// A bounded, newest-kept list with a running sequence number: a flood of entries costs at most
// `cap` of them in memory, and what fell off the old end is counted, never silently lost.

export class Ring<T extends { seq: number }> {
  private items: T[] = [];
  private head = 0;
  private nextSeq = 1;
  /** Entries pushed out by newer ones since the capture started. */
  dropped = 0;

  constructor(readonly cap: number) {}

  /** Adds an entry (its seq is assigned here); returns the entry that fell off, if any. */
  push(make: (seq: number) => T): T | undefined {
    const e = make(this.nextSeq++);
    if (this.items.length < this.cap) {
      this.items.push(e);
      return undefined;
    }
    const old = this.items[this.head] as T;
    this.items[this.head] = e;
    this.head = (this.head + 1) % this.cap;
    this.dropped++;
    return old;
  }

  /** Oldest first. */
  list(): T[] {
    return this.items.length < this.cap ? [...this.items] : [...this.items.slice(this.head), ...this.items.slice(0, this.head)];
  }

  get size(): number {
    return this.items.length;
  }

  /** The seq the next entry gets: a cursor for "after". */
  get next(): number {
    return this.nextSeq;
  }
}

// How long a document's fetch/XHR requests took, from its own performance timeline, for
// network_tail: the worker hears only each request's end, so the start comes from here. The log
// starts at the first ask and reads the timeline's buffer then (the page can clear or fill that
// buffer; from then on an observer sees every entry). It only ever holds this document's requests,
// and the worker matches them to the entries it already judged (SECURITY I-65).

export interface ResourceTime {
  url: string;
  /** Epoch ms. */
  start: number;
  end: number;
}

/** Entries kept, newest last. */
const CAP = 1_000;
const KINDS = new Set(["fetch", "xmlhttprequest", "beacon"]);

export class ResourceLog {
  private kept: ResourceTime[] | undefined;
  private observer: PerformanceObserver | undefined;

  /** The timings of these URLs (all of them without a list). */
  times(a: { urls?: unknown }): ResourceTime[] {
    const kept = this.start();
    // Entries the observer has not been handed yet (its callback waits for an idle moment).
    this.take(this.observer?.takeRecords() ?? []);
    const want = Array.isArray(a.urls) ? new Set(a.urls.filter((u): u is string => typeof u === "string")) : undefined;
    return want ? kept.filter((t) => want.has(t.url)) : kept.slice();
  }

  private start(): ResourceTime[] {
    if (this.kept) return this.kept;
    this.kept = [];
    // Nothing is added to the timeline between the two lines: the buffer, then everything after.
    this.take(performance.getEntriesByType("resource"));
    this.observer = new PerformanceObserver((l) => this.take(l.getEntries()));
    this.observer.observe({ type: "resource" });
    return this.kept;
  }

  private take(list: PerformanceEntryList): void {
    const kept = this.kept as ResourceTime[];
    for (const e of list) {
      const r = e as PerformanceResourceTiming;
      if (!KINDS.has(r.initiatorType)) continue;
      kept.push({ url: r.name, start: performance.timeOrigin + r.startTime, end: performance.timeOrigin + r.startTime + r.duration });
    }
    if (kept.length > CAP) kept.splice(0, kept.length - CAP);
  }
}

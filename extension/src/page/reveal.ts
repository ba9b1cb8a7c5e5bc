// reveal: scrolls a virtual list (one that renders only the rows in view and recycles their nodes)
// until an element matching a find predicate or a CSS selector is rendered, within a bound of
// scroll steps and of time; at the bound it says how far it got, never that it reached the end.
import { isScrollable } from "./actions";
import { deepQuery, nextFrames, norm, round } from "./dom";
import { fail } from "./errors";
import { isRef } from "./refs";
import type { EngineContext } from "./context";
import { collect, present, queryOf, type Hit, type Query } from "./find";
import { visibleText } from "./text";
import { BREAK, isText } from "./tree";
import type { RevealArgs, RevealResult, RevealStop } from "./types";

const DEFAULT_STEPS = 1000;
const MAX_STEPS = 2000;
const DEFAULT_BUDGET_MS = 30_000;
/** Jumps by row numbers before scanning: each lands nearer when row heights vary. */
const MAX_JUMPS = 8;
/** How long a scroll's re-render is waited for, past two frames. */
const RENDER_WAIT_MS = 300;

/** The biggest scrollable box on the page (a virtual list's viewport), else the page. */
function mainScroller(): Element {
  let best: Element | null = null;
  let area = 0;
  const all = document.querySelectorAll("body *");
  for (let i = 0; i < all.length; i++) {
    const e = all[i] as Element;
    if (e.scrollHeight <= e.clientHeight + 1) continue;
    if (!isScrollable(e)) continue;
    const a = e.clientWidth * e.clientHeight;
    if (a > area) {
      area = a;
      best = e;
    }
  }
  const page = document.scrollingElement ?? document.documentElement;
  if (best && page.scrollHeight > page.clientHeight + 1 && area < page.clientWidth * page.clientHeight * 0.25) return page;
  return best ?? page;
}

/** reveal's scroller as given: a ref (b12) or a CSS selector; each error names `container`. */
function containerOf(engine: EngineContext, c: unknown): Element {
  if (typeof c !== "string" || c === "") fail("invalid_argument", "container: give a ref (e.g. b12) or a CSS selector");
  if (isRef(c)) return engine.refs.resolve(c);
  let el: Element | null = null;
  try {
    el = deepQuery(c);
  } catch {
    fail("invalid_argument", `container: invalid CSS selector: ${c}`);
  }
  if (!el) fail("not_found", `container: no element matches ${c}`);
  return el;
}

function intArg(v: unknown, dflt: number, lo: number, hi: number): number {
  const n = Math.floor(Number(v ?? dflt));
  return Number.isFinite(n) ? Math.max(lo, Math.min(n, hi)) : dflt;
}

function escRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/**
 * "row 7777" → a pattern for the list's other numbered rows ("Row 12") and the number wanted: the
 * rows in view, with their offsets, place row 7777 (at the same pitch) without scanning to it.
 */
function numberPattern(needle: string): { re: RegExp; n: number } | null {
  const m = /(\d+)(?!.*\d)/.exec(needle);
  if (!m) return null;
  const pre = needle.slice(0, m.index);
  const post = needle.slice(m.index + (m[1] as string).length);
  // A bare number would take any number on the page for a row's.
  if (!/\p{L}/u.test(pre + post)) return null;
  const lead = /^[\p{L}\p{N}]/u.test(pre) ? "(?<![\\p{L}\\p{N}])" : "";
  return { re: new RegExp(`${lead}${escRe(pre)}(\\d+)${escRe(post)}`, "iu"), n: Number(m[1]) };
}

/** The numbered rows rendered in c: their number and their offset from the top of c's content. */
function numbered(c: Element, page: boolean, re: RegExp): { n: number; y: number }[] {
  const base = page ? 0 : c.getBoundingClientRect().top + c.clientTop;
  const root = page ? (document.body ?? document.documentElement) : c;
  const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const out: { n: number; y: number }[] = [];
  let seen = 0;
  for (let n = w.nextNode(); n && seen < 5000; n = w.nextNode(), seen++) {
    const m = re.exec(norm((n as Text).data));
    const el = n.parentElement;
    if (!m || !el || !el.checkVisibility({ visibilityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.height <= 0) continue;
    out.push({ n: Number(m[1]), y: r.top - base + c.scrollTop });
  }
  return out;
}

/** DOM changes under root from now on: whether any came, and a wait for the first. */
function watchChanges(root: Element): { seen(): boolean; next(ms: number): Promise<void>; stop(): void } {
  let seen = false;
  let wake: (() => void) | undefined;
  const mo = new MutationObserver(() => {
    seen = true;
    wake?.();
  });
  mo.observe(root, { childList: true, subtree: true, characterData: true, attributes: true });
  return {
    seen: () => {
      if (!seen && mo.takeRecords().length > 0) seen = true;
      return seen;
    },
    next: (ms) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      }),
    stop: () => mo.disconnect(),
  };
}

/** [from, to] windows merged into the ranges of the list's content that were rendered and searched. */
function mergeRanges(w: [number, number][]): { from: number; to: number }[] {
  const s = [...w].sort((a, b) => a[0] - b[0]);
  const out: { from: number; to: number }[] = [];
  for (const [a, b] of s) {
    const last = out[out.length - 1];
    if (last && a <= last.to + 1) last.to = Math.max(last.to, b);
    else out.push({ from: a, to: b });
  }
  return out.map((r) => ({ from: Math.round(r.from), to: Math.round(r.to) }));
}

/**
 * Looks in the current view, then (when the target names a row number) jumps to where that row
 * should be from the rows in view, then scans from the current position down to the end and from
 * the top back to it, a little less than a viewport per step, until the target is rendered, every
 * place was searched, or maxScrolls steps or the time budget are spent. Substring matches seen on
 * the way are remembered; with no exact match anywhere, reveal goes back to the first of them.
 */
export async function reveal(engine: EngineContext, a: RevealArgs): Promise<RevealResult> {
  const t0 = performance.now();
  const sel = typeof a.selector === "string" && a.selector !== "" ? a.selector : undefined;
  if (sel !== undefined && (a.role || a.name || a.text)) fail("invalid_argument", "reveal: give role/name/text or selector, not both");
  const q: Query | undefined = sel === undefined ? queryOf(a, "reveal") : undefined;
  const max = intArg(a.maxScrolls, DEFAULT_STEPS, 1, MAX_STEPS);
  const budget = intArg(a.budgetMs, DEFAULT_BUDGET_MS, 200, 120_000);
  const limit = intArg(a.limit, 20, 1, 500);
  const c = a.container !== undefined ? containerOf(engine, a.container) : mainScroller();
  const page = c === c.ownerDocument.scrollingElement;
  const scope = page ? engine.rootOf(undefined) : c;
  if (sel !== undefined) {
    try {
      scope.querySelector(sel);
    } catch {
      fail("invalid_argument", `selector: invalid CSS selector: ${sel}`);
    }
  }
  const probe = (): Hit[] => {
    if (q) return collect(engine, q, scope);
    const out: Hit[] = [];
    for (const el of Array.from(scope.querySelectorAll(sel as string))) {
      if (el.checkVisibility({ visibilityProperty: true })) out.push({ el, exact: true });
    }
    return out;
  };

  let scrolls = 0;
  let jumps = 0;
  let partialAt: number | undefined;
  const windows: [number, number][] = [];
  const look = (): Hit[] | null => {
    const h = probe();
    windows.push([c.scrollTop, c.scrollTop + c.clientHeight]);
    if (h[0]?.exact) return h;
    if (h.length && partialAt === undefined) partialAt = c.scrollTop;
    return null;
  };
  // Whether the list re-renders when scrolled: unknown until the first move shows it.
  let rerenders: boolean | undefined;
  const moveTo = (y: number) => {
    scrolls++;
    return scrolled(() => {
      c.scrollTop = y;
    });
  };
  const scrolled = async (move: () => void) => {
    const changed = watchChanges(page ? scope : c);
    move();
    await nextFrames();
    // A list that renders a moment after the scroll (debounced, or in a later task) is waited
    // for, up to RENDER_WAIT_MS; one that never re-renders is waited for once.
    if (rerenders !== false && !changed.seen()) {
      await changed.next(RENDER_WAIT_MS);
      if (changed.seen()) await nextFrames();
    }
    if (rerenders === undefined || changed.seen()) rerenders = changed.seen();
    changed.stop();
  };
  // SECURITY I-62: the page's list may never end; steps and time both bound the search.
  const overTime = () => performance.now() - t0 > budget;
  const atEnd = () => c.scrollTop + c.clientHeight >= c.scrollHeight - 2;
  const result = (stop: RevealStop): Omit<RevealResult, "matches" | "total" | "docId"> => ({
    found: stop === "found",
    stop,
    scrolls,
    jumps,
    scrollY: Math.round(c.scrollTop),
    scrollHeight: Math.round(c.scrollHeight),
    clientHeight: Math.round(c.clientHeight),
    capped: stop === "maxScrolls" || stop === "time",
    searched: mergeRanges(windows),
    ms: round(performance.now() - t0),
    container: page ? "page" : engine.refs.refFor(c),
  });
  const done = async (hits: Hit[]): Promise<RevealResult> => {
    let h = hits;
    const el = (h[0] as Hit).el;
    const cr = c.getBoundingClientRect();
    const er = el.getBoundingClientRect();
    const inside = page ? er.top >= 0 && er.bottom <= innerHeight : er.top >= cr.top && er.bottom <= cr.bottom;
    if (!inside) {
      // Bring it fully into view; a virtual list may re-render (recycled nodes), so look again after.
      await scrolled(() => el.scrollIntoView({ block: "center", behavior: "instant" }));
      const again = probe();
      if (again.length && (again[0]?.exact || !h[0]?.exact)) h = again;
    }
    const best = h.filter((x) => x.exact).length ? h.filter((x) => x.exact) : h;
    const shown = best.slice(0, limit).map((x) => described(engine, x));
    return { docId: engine.docId, matches: present(engine, shown, limit), total: best.length, ...result("found") };
  };

  const s0 = c.scrollTop;
  let hit = look();
  if (hit) return done(hit);
  if (c.scrollHeight <= c.clientHeight + 1) {
    return { docId: engine.docId, matches: [], total: 0, ...result("static") };
  }
  const num = q ? numberPattern(q.text ?? q.name ?? "") : null;
  if (num) {
    for (let i = 0; i < MAX_JUMPS && scrolls < max && !overTime(); i++) {
      const pts = numbered(c, page, num.re).sort((x, y) => x.n - y.n);
      const lo = pts[0];
      const hi = pts[pts.length - 1];
      // Two rows with numbers and offsets to measure the pitch, and a target outside them.
      if (!lo || !hi || hi.n === lo.n || Math.abs(hi.y - lo.y) < 1 || (num.n >= lo.n && num.n <= hi.n)) break;
      const from = num.n > hi.n ? hi : lo;
      const y = from.y + ((num.n - from.n) * (hi.y - lo.y)) / (hi.n - lo.n);
      const top = Math.max(0, Math.min(y - c.clientHeight / 2, c.scrollHeight - c.clientHeight));
      if (Math.abs(top - c.scrollTop) < 1) break;
      jumps++;
      await moveTo(top);
      hit = look();
      if (hit) return done(hit);
    }
    if (jumps && Math.abs(c.scrollTop - s0) >= 1 && scrolls < max) await moveTo(s0);
  }

  // Down from where the list was to its end, then from the top back to there.
  const step = Math.max(40, Math.floor(c.clientHeight * 0.9));
  let wrapped = false;
  let stuck = false;
  let stop: RevealStop;
  for (;;) {
    let next: number;
    if (!wrapped) {
      if (stuck || atEnd()) {
        if (s0 <= 1) {
          stop = "end";
          break;
        }
        wrapped = true;
        next = 0;
      } else next = c.scrollTop + step;
    } else {
      if (stuck || c.scrollTop + c.clientHeight >= s0) {
        stop = "end";
        break;
      }
      next = c.scrollTop + step;
    }
    if (scrolls >= max) {
      stop = "maxScrolls";
      break;
    }
    if (overTime()) {
      stop = "time";
      break;
    }
    const before = c.scrollTop;
    await moveTo(next);
    // A scroller that no longer moves down is at its end, whatever its scrollHeight says.
    stuck = next > before && c.scrollTop <= before;
    hit = look();
    if (hit) return done(hit);
  }
  const res = result(stop);
  if (partialAt !== undefined) {
    const y = partialAt;
    await scrolled(() => {
      c.scrollTop = y;
    });
    const h = probe();
    if (h.length) {
      const shown = h.slice(0, limit).map((x) => described(engine, x));
      return { docId: engine.docId, matches: present(engine, shown, limit), total: h.length, ...res, found: true, scrollY: Math.round(c.scrollTop) };
    }
  }
  return { docId: engine.docId, matches: [], total: 0, ...res };
}

/** A selector's element, with the outline node or the text its line shows. */
function described(engine: EngineContext, h: Hit): Hit {
  if (h.node || h.text !== undefined) return h;
  const { items } = engine.tree(h.el);
  const first = items.find((it) => it !== BREAK);
  if (first && !isText(first) && first.el === h.el) return { ...h, node: first };
  return { ...h, text: norm(visibleText(h.el)) };
}

// The engine behind globalThis.__torii: one instance per document (per frame), holding the
// document's identity (docId), its refs and its previous snapshot (for diff).
import { isInteractive, nameOf, roleOf, SKIP } from "./aria";
import { boxOf, composedContains, deepActiveElement, deepQuery, frameOffset, round } from "./dom";
import { EngineError, fail } from "./errors";
import { diffOutlines, paginate } from "./outline";
import { isRef, RefTable } from "./refs";
import { collect, present, queryOf } from "./find";
import { render } from "./render";
import { pageText, visibleText } from "./text";
import { TreeBuilder, type Item } from "./tree";
import { PROTOCOL } from "./types";
import type {
  ElementState, FindArgs, FindResult, FramePlaceholder, PointResult, ReadTextArgs, ReadTextResult,
  Reply, SnapshotArgs, SnapshotResult,
} from "./types";
import * as actions from "./actions";
import { reveal } from "./reveal";
import { fillForm } from "./form";
import { clickEffects, elementAt, isPasswordField, keyEffects, shadowOf, type TargetRisk } from "./risk";
import * as wait from "./wait";
import { maskHere, maskReply, takeMask } from "./secrets";
import { typeSecret } from "./type-secret";
import { ResourceLog } from "./timing";
import type { EngineContext } from "./context";

export { PROTOCOL } from "./types";

interface Prev {
  lines: string[];
  full: Map<number, string>;
}

interface Paged {
  id: string;
  lines: string[];
  full?: Map<number, string>;
  base: Omit<SnapshotResult, "text" | "nextCursor" | "stats" | "refTag">;
}

function randomId(): string {
  const b = new Uint8Array(9);
  crypto.getRandomValues(b);
  let s = "";
  for (const x of b) s += x.toString(36).padStart(2, "0");
  return s.slice(0, 12);
}

export class Engine implements EngineContext {
  readonly protocol = PROTOCOL;
  readonly docId = randomId();
  readonly refs = new RefTable();
  private readonly resources = new ResourceLog();
  private prev = new Map<string, Prev>();
  private paged: Paged | null = null;
  private snapSeq = 0;

  /**
   * Entry point for the worker: plain JSON in, plain JSON out, errors typed. SECURITY I-40: no
   * method runs unless this document's own origin is the one the worker allowed (`origin`); an
   * opaque origin never runs. In the isolated world the page cannot redefine self.origin or
   * location, so the reply's origin and url are the document's real ones.
   */
  async call(name: string, args: unknown): Promise<Reply> {
    const a = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
    const origin = self.origin;
    const url = location.href;
    try {
      if (origin === "null" || typeof a.origin !== "string" || a.origin !== origin) {
        fail("origin_not_allowed", "this document's origin is not the one the allowlist allowed; nothing was read or done");
      }
      this.refs.offered(a.refTag);
      takeMask(a.mask);
      if (typeof a.docId === "string" && a.docId !== this.docId) {
        fail("stale_ref", "the page navigated: this is a different document than the one the ref came from");
      }
      // SECURITY I-69: a secret substituted in this document never comes back in a reply.
      const value = maskReply(await this.dispatch(name, a));
      return { ok: true, docId: this.docId, refTag: this.refs.tag, origin: self.origin, url: location.href, value };
    } catch (e) {
      const err = e instanceof EngineError
        ? e.toJSON()
        : { code: "invalid_argument" as const, message: String((e as Error)?.message ?? e), hint: "Check the arguments; if it persists, take a new snapshot." };
      // An error may quote a field's value (a number field refusing it): no secret in it either.
      return { ok: false, docId: this.docId, refTag: this.refs.tag, origin, url, error: maskReply(err) };
    }
  }

  private dispatch(name: string, a: Record<string, unknown>): unknown {
    switch (name) {
      case "ping":
        return { docId: this.docId, url: location.href, refs: this.refs.size };
      case "snapshot":
        return this.snapshot(a as SnapshotArgs);
      case "find":
        return this.find(a as FindArgs);
      case "readText":
        return this.readText(a as ReadTextArgs);
      case "getState":
        return this.getState(a as { ref?: string; selector?: string });
      case "point":
        return this.point(a as { ref?: string; selector?: string });
      case "domClick":
        return actions.domClick(this, a as { ref?: string; selector?: string });
      case "fill":
        return actions.fill(this, a as never);
      case "selectOption":
        return actions.selectOption(this, a as never);
      case "fillForm":
        return fillForm(this, a as never);
      case "scroll":
        return actions.scroll(this, a as never);
      case "reveal":
        return reveal(this, a as never);
      case "waitFor":
        return wait.waitFor(this, a as never);
      case "settle":
        return wait.settle(a as never);
      case "risk":
        return this.risk(a as { ref?: string; selector?: string });
      case "markFile":
        return this.markFile(a as { ref?: string; selector?: string; mark?: string });
      case "frameRect":
        return this.frameRect(a as { frame?: number; frameId?: number });
      case "typeSecret":
        return typeSecret(this, a as never);
      case "resourceTimes":
        return this.resources.times(a);
      default:
        fail("unknown_method", `unknown page method ${name}`);
    }
  }

  /** ref or selector → element; stale_ref / not_found otherwise. */
  target(a: { ref?: string; selector?: string }, what = "target"): Element {
    if (typeof a.ref === "string" && a.ref) return this.refs.resolve(a.ref);
    if (typeof a.selector === "string" && a.selector) {
      const el = deepQuery(a.selector);
      if (!el) fail("not_found", `no element matches ${a.selector}`);
      return el;
    }
    fail("invalid_argument", `${what}: give a ref (e.g. b12) or a CSS selector`);
  }

  /** `root` option: "b12" is a ref, anything else a CSS selector. */
  rootOf(root: unknown): Element {
    if (root === undefined || root === null || root === "") return document.body ?? document.documentElement;
    if (typeof root !== "string") fail("invalid_argument", "root must be a ref or a CSS selector");
    return isRef(root) ? this.refs.resolve(root) : this.target({ selector: root }, "root");
  }

  /** Builds the outline tree of `root` (assigning refs to its interactive elements). */
  tree(root: Element): { items: Item[]; builder: TreeBuilder } {
    const b = new TreeBuilder(this.refs);
    const items: Item[] = [];
    if (root === document.body || root === document.documentElement) b.children(root, items, false);
    else b.element(root, items);
    return { items, builder: b };
  }

  snapshot(a: SnapshotArgs): SnapshotResult {
    const t0 = performance.now();
    const maxChars = a.maxChars === undefined ? undefined : Number(a.maxChars);
    if (maxChars !== undefined && !(maxChars > 0)) fail("invalid_argument", "maxChars must be a positive number");
    if (a.cursor !== undefined) {
      const m = /^([a-z0-9]+)\.([0-9]+)$/.exec(String(a.cursor));
      const p = this.paged;
      if (!m || !p || p.id !== m[1]) {
        fail("invalid_argument", "cursor is not from this document's latest snapshot", "Call snapshot again without cursor.");
      }
      const pg = paginate(p.lines, Number(m[2]), maxChars, p.full);
      return this.pageResult(p, pg, t0, 0);
    }
    const root = this.rootOf(a.root);
    const { items, builder } = this.tree(root);
    const r = render(items, !!a.interactive);
    const frames: FramePlaceholder[] = builder.frames.map((f, i) => {
      const [line, depth] = r.frameLines.get(i) ?? [-1, 0];
      const fp: FramePlaceholder = { frame: i, src: f.src, origin: f.origin, title: f.title, line, depth };
      const rt = (globalThis as { chrome?: { runtime?: { getFrameId?: (t: unknown) => number } } }).chrome?.runtime;
      try {
        const id = rt?.getFrameId?.(f.el);
        if (typeof id === "number" && id >= 0) fp.frameId = id;
      } catch {
        /* not an extension context */
      }
      if (f.el.ownerDocument === document) {
        const idx = Array.prototype.indexOf.call(window.frames, f.el.contentWindow) as number;
        if (idx >= 0) fp.windowIndex = idx;
      }
      return fp;
    });
    const key = (a.root ?? "") + "|" + (a.interactive ? "i" : "");
    const prev = this.prev.get(key);
    this.prev.set(key, { lines: r.lines, full: r.full });
    const base: Paged["base"] = { docId: this.docId, url: location.href, title: document.title, frames };
    let lines = r.lines;
    let full: Map<number, string> | undefined = r.full;
    if (a.diff) {
      if (prev) {
        const d = diffOutlines(prev.lines, r.lines, prev.full, r.full);
        lines = d.lines;
        full = undefined;
        base.diff = { added: d.added, removed: d.removed };
        base.note = d.lines.length ? `changes since the previous snapshot: +${d.added} -${d.removed} lines` : "no changes since the previous snapshot";
      } else {
        base.note = "no previous snapshot of this document: full outline returned";
      }
    }
    const p: Paged = { id: (++this.snapSeq).toString(36) + this.docId.slice(0, 4), lines, full, base };
    this.paged = p;
    const pg = paginate(lines, 0, maxChars, full);
    return this.pageResult(p, pg, t0, builder.nodes);
  }

  private pageResult(p: Paged, pg: { text: string; next?: number }, t0: number, nodes: number): SnapshotResult {
    const res: SnapshotResult = {
      ...p.base,
      text: pg.text,
      refTag: this.refs.tag,
      stats: { nodes, lines: pg.text ? pg.text.split("\n").length : 0, chars: pg.text.length, ms: round(performance.now() - t0) },
    };
    if (pg.next !== undefined) res.nextCursor = `${p.id}.${pg.next}`;
    return res;
  }

  find(a: FindArgs): FindResult {
    const q = queryOf(a);
    const limit = Math.max(1, Math.min(Number(a.limit ?? 20) || 20, 500));
    const hits = collect(this, q, this.rootOf(a.root));
    return { docId: this.docId, matches: present(this, hits, limit), total: hits.length };
  }

  readText(a: ReadTextArgs): ReadTextResult {
    const offset = Math.max(0, Math.floor(Number(a.offset ?? 0) || 0));
    const max = a.maxChars === undefined ? undefined : Math.floor(Number(a.maxChars));
    if (max !== undefined && !(max > 0)) fail("invalid_argument", "maxChars must be a positive number");
    // SECURITY I-77: masked whole, then paged: an offset never cuts a secret into pieces the mask misses.
    return pageText(maskHere(visibleText(this.rootOf(a.root))), offset, max);
  }

  getState(a: { ref?: string; selector?: string }): ElementState {
    let el: Element;
    try {
      el = this.target(a);
    } catch (e) {
      if (e instanceof EngineError && e.code === "not_found") {
        return { exists: false, visible: false, enabled: false, box: { x: 0, y: 0, w: 0, h: 0 }, inViewport: false, focused: false, role: "", name: "", tag: "", editable: false, isPassword: false };
      }
      throw e;
    }
    return describe(this, el);
  }

  /**
   * What the policy needs to know about an action's target: a label for the person, whether it is
   * a password field (itself, or the field its point lands on inside a closed shadow root), and
   * what clicking it or pressing Enter / Space on it causes, by the same rule the effect guard
   * applies at the moment of the event (page/risk.ts; SECURITY I-18, I-37). Never a value.
   */
  risk(a: { ref?: string; selector?: string }): TargetRisk {
    const el = this.target(a);
    const d = describe(this, el);
    const fx = clickEffects(el);
    let isPassword = d.isPassword;
    if (!isPassword && shadowOf(el)) {
      // A host whose (closed) shadow root holds a password field under the click point.
      const r = el.getBoundingClientRect();
      isPassword = isPasswordField(elementAt(el.ownerDocument, r.left + r.width / 2, r.top + r.height / 2));
    }
    const out: TargetRisk = {
      label: `${d.role || d.tag} "${(d.name ?? "").slice(0, 80)}"`,
      isPassword,
      submit: fx.submit,
      destructive: fx.destructive,
      enter: keyEffects(el, "Enter"),
      space: keyEffects(el, " "),
    };
    if (fx.href) out.href = fx.href;
    return out;
  }

  /**
   * upload: the target must be an <input type=file>; tags it with `data-torii-file=<mark>` so the
   * worker can find the node through CDP (DOM.setFileInputFiles), which removes the tag after.
   */
  markFile(a: { ref?: string; selector?: string; mark?: string }): { label: string; multiple: boolean } {
    const el = this.target(a);
    const inp = el as HTMLInputElement;
    if (inp.localName !== "input" || String(inp.type).toLowerCase() !== "file") fail("not_editable", `${a.ref ?? a.selector} is not an <input type=file>`, "Target the page's file input (snapshot shows it as a button).");
    if (inp.disabled) fail("disabled", "the file input is disabled");
    inp.setAttribute("data-torii-file", String(a.mark ?? ""));
    return { label: this.risk(a).label, multiple: inp.multiple };
  }

  point(a: { ref?: string; selector?: string }): PointResult {
    const el = this.target(a);
    const doc = el.ownerDocument;
    const win = doc.defaultView ?? window;
    const best = () => {
      let bx: { x: number; y: number; w: number; h: number } | null = null;
      for (const r of Array.from(el.getClientRects())) {
        const x1 = Math.max(r.left, 0);
        const y1 = Math.max(r.top, 0);
        const x2 = Math.min(r.right, win.innerWidth);
        const y2 = Math.min(r.bottom, win.innerHeight);
        const w = x2 - x1;
        const h = y2 - y1;
        if (w > 0 && h > 0 && (!bx || w * h > bx.w * bx.h)) bx = { x: x1, y: y1, w, h };
      }
      return bx;
    };
    if (!el.checkVisibility({ visibilityProperty: true })) fail("not_visible", "the element is hidden (display, visibility or no box)");
    let scrolled = false;
    let b = best();
    if (!b) {
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      scrolled = true;
      b = best();
      if (!b) fail("not_visible", "the element has no visible area, even after scrolling it into view");
    }
    const off = frameOffset(el);
    const cands: [number, number][] = [
      [b.x + b.w / 2, b.y + b.h / 2],
      [b.x + b.w / 4, b.y + b.h / 2],
      [b.x + (3 * b.w) / 4, b.y + b.h / 2],
      [b.x + b.w / 2, b.y + b.h / 4],
      [b.x + b.w / 2, b.y + (3 * b.h) / 4],
    ];
    const box = boxOf(el);
    let firstHit: Element | null = null;
    for (const [x, y] of cands) {
      const hit = hitTest(doc, x, y);
      if (!firstHit) firstHit = hit;
      if (hit && (composedContains(el, hit) || labelFor(hit, el))) {
        return { x: round(x + off.x), y: round(y + off.y), box, scrolled };
      }
    }
    const [cx, cy] = cands[0] as [number, number];
    const res: PointResult = { x: round(cx + off.x), y: round(cy + off.y), box, scrolled };
    if (firstHit) {
      let cover: Element = firstHit;
      // Prefer the interactive element the agent would act on (the overlay's button), else the hit.
      for (let p: Element | null = firstHit, i = 0; p && i < 4; p = p.parentElement, i++) {
        const t = p.localName;
        const r = roleOf(p, t);
        if (r !== SKIP && isInteractive(p, t, r)) {
          cover = p;
          break;
        }
      }
      const t = cover.localName;
      const role = roleOf(cover, t);
      res.covered = { ref: this.refs.refFor(cover), role: role && role !== SKIP ? role : "generic", name: nameOf(cover, t, role), tag: t };
    }
    return res;
  }

  frameRect(a: { frame?: number; frameId?: number }): { x: number; y: number; w: number; h: number } {
    const frames = Array.from(document.querySelectorAll("iframe,frame"));
    let el: Element | undefined;
    if (typeof a.frameId === "number") {
      const rt = (globalThis as { chrome?: { runtime?: { getFrameId?: (t: unknown) => number } } }).chrome?.runtime;
      el = frames.find((f) => {
        try {
          return rt?.getFrameId?.(f) === a.frameId;
        } catch {
          return false;
        }
      });
    } else if (typeof a.frame === "number") {
      const b = new TreeBuilder(this.refs);
      b.children(document.body ?? document.documentElement, [], false);
      el = b.frames[a.frame]?.el;
    }
    if (!el) fail("not_found", "no such iframe in this document");
    // Content box: where the child's viewport (0,0) sits in this document's viewport.
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const o = frameOffset(el);
    const bl = (parseFloat(cs.borderLeftWidth) || 0) + (parseFloat(cs.paddingLeft) || 0);
    const bt = (parseFloat(cs.borderTopWidth) || 0) + (parseFloat(cs.paddingTop) || 0);
    return { x: round(r.left + o.x + bl), y: round(r.top + o.y + bt), w: round((el as HTMLElement).clientWidth), h: round((el as HTMLElement).clientHeight) };
  }
}

/** Element under a point, looking into open shadow roots. */
function hitTest(doc: Document, x: number, y: number): Element | null {
  let e = doc.elementFromPoint(x, y);
  while (e?.shadowRoot) {
    const inner = e.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === e) break;
    e = inner;
  }
  return e;
}

function labelFor(hit: Element, el: Element): boolean {
  const l = hit.closest("label");
  return !!l && (l as HTMLLabelElement).control === el;
}

function describe(engine: Engine, el: Element): ElementState {
  const tag = el.localName;
  let role = roleOf(el, tag);
  if (role === SKIP) role = "";
  const r = el.getBoundingClientRect();
  const win = el.ownerDocument.defaultView ?? window;
  const visible = el.checkVisibility({ visibilityProperty: true }) && r.width > 0 && r.height > 0;
  const disabled = (el.matches(":disabled") || el.getAttribute("aria-disabled") === "true");
  const inp = el as HTMLInputElement;
  const textual = (tag === "input" && !["checkbox", "radio", "button", "submit", "reset", "image", "file", "range", "color", "hidden"].includes(inp.type)) || tag === "textarea";
  const editable = !disabled && ((textual && !inp.readOnly) || (el as HTMLElement).isContentEditable);
  const st: ElementState = {
    exists: true,
    visible,
    enabled: !disabled,
    box: boxOf(el),
    inViewport: visible && r.bottom > 0 && r.right > 0 && r.top < win.innerHeight && r.left < win.innerWidth,
    focused: deepActiveElement() === el,
    role: role || "generic",
    name: nameOf(el, tag, role),
    tag,
    editable,
    isPassword: tag === "input" && inp.type === "password",
  };
  if (tag === "input" && (inp.type === "checkbox" || inp.type === "radio")) st.checked = inp.indeterminate ? "mixed" : inp.checked;
  else {
    const ac = el.getAttribute("aria-checked");
    if (ac === "true" || ac === "false") st.checked = ac === "true";
    else if (ac === "mixed") st.checked = "mixed";
  }
  const ref = engine.refs.peek(el);
  if (ref) st.ref = ref;
  if ((tag === "a" || tag === "area") && (el as HTMLAnchorElement).href) st.href = (el as HTMLAnchorElement).href;
  return st;
}

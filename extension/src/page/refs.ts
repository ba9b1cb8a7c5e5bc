// Refs: short names ("e12") for elements, bound to this document. The worker owns the per-tab
// counter and passes refBase; the engine never hands out a number below it, nor one it issued
// before, so a ref is never reissued on a live tab (brief: "Refs fail closed").
import { fail } from "./errors";

const REF_RE = /^e[0-9]+$/;

export class RefTable {
  private byRef = new Map<string, WeakRef<Element>>();
  private byEl = new WeakMap<Element, string>();
  /** Next number this engine may issue: max(refBase seen, last issued + 1). */
  next = 1;

  /** Raise the floor to the worker's counter (never lowers it). */
  base(refBase: number | undefined): void {
    if (typeof refBase === "number" && Number.isFinite(refBase) && refBase > this.next) {
      this.next = Math.floor(refBase);
    }
  }

  /** The element's ref, assigning the next free one if it has none in this document. */
  refFor(el: Element): string {
    let ref = this.byEl.get(el);
    if (ref === undefined) {
      ref = "e" + this.next++;
      this.byEl.set(el, ref);
      this.byRef.set(ref, new WeakRef(el));
    }
    return ref;
  }

  peek(el: Element): string | undefined {
    return this.byEl.get(el);
  }

  /** The element behind ref, or stale_ref: never another element. */
  resolve(ref: string): Element {
    if (typeof ref !== "string" || !REF_RE.test(ref)) {
      fail("invalid_argument", `"${String(ref)}" is not a ref (expected e<number>, e.g. e12)`);
    }
    const el = this.byRef.get(ref)?.deref();
    if (!el) {
      this.byRef.delete(ref);
      fail("stale_ref", `ref ${ref} does not belong to the current document`);
    }
    if (!isLive(el)) {
      fail("stale_ref", `ref ${ref} points to an element that was removed from the page`);
    }
    return el;
  }

  /** Drops entries whose element was collected or detached (keeps the map small on long-lived SPAs). */
  sweep(): void {
    for (const [ref, w] of this.byRef) {
      const el = w.deref();
      if (!el || !el.isConnected) this.byRef.delete(ref);
    }
  }

  get size(): number {
    return this.byRef.size;
  }
}

/**
 * Connected to this engine's document: either directly, or through a chain of same-origin iframes
 * that are still attached and still show the document the element belongs to (an iframe that
 * navigated leaves its old document "connected" to itself, so isConnected alone is not enough).
 */
export function isLive(el: Element): boolean {
  if (!el.isConnected) return false;
  let doc: Document = el.ownerDocument;
  while (doc !== document) {
    const win = doc.defaultView;
    if (!win) return false;
    let fe: Element | null = null;
    try {
      fe = win.frameElement;
    } catch {
      return false;
    }
    if (!fe || !fe.isConnected || (fe as HTMLIFrameElement).contentDocument !== doc) return false;
    doc = fe.ownerDocument;
  }
  return true;
}

// Refs: short names ("b12") for elements, bound to this document. SECURITY I-63: a ref is the
// document's tag (letters, handed out once by the worker, never to another document of any tab)
// followed by a number this document issues from 1 and never reissues, so a ref is never reissued
// on a live tab and one from another document, frame or tab never names an element here.
import { fail } from "./errors";
import { isRef } from "../shared/refname";

export { isRef } from "../shared/refname";

export class RefTable {
  private byRef = new Map<string, WeakRef<Element>>();
  private byEl = new WeakMap<Element, string>();
  /** This document's tag, taken from the worker's offer when the first ref is issued. */
  tag: string | undefined;
  /** Next number this document issues. */
  next = 1;
  private offer: string | undefined;

  /** The tag the worker offers for this call; used only if this document has none yet. */
  offered(tag: unknown): void {
    this.offer = typeof tag === "string" && isRef(tag + "1") ? tag : undefined;
  }

  /** The element's ref, assigning the next free one if it has none in this document. */
  refFor(el: Element): string {
    let ref = this.byEl.get(el);
    if (ref === undefined) {
      if (this.tag === undefined) {
        // Without the worker's tag no ref can be unique to this document: fail rather than guess.
        if (this.offer === undefined) fail("invalid_argument", "no ref tag was offered for this document");
        this.tag = this.offer;
      }
      ref = this.tag + this.next++;
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
    if (typeof ref !== "string" || !isRef(ref)) {
      fail("invalid_argument", `"${String(ref)}" is not a ref (letters then a number, e.g. b12)`);
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
function isLive(el: Element): boolean {
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

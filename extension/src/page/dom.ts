// Small DOM helpers shared by the engine's modules.
import { fail } from "./errors";
import type { Box } from "./types";
import { maskHere } from "./secrets";

/** querySelector through open shadow roots (light DOM first, then each shadow root in order). */
export function deepQuery(selector: string, root: ParentNode = document): Element | null {
  let found: Element | null;
  try {
    found = root.querySelector(selector);
  } catch {
    fail("invalid_argument", `invalid CSS selector: ${selector}`);
  }
  if (found) return found;
  const hosts: Element[] = [];
  collectHosts(root, hosts);
  for (const h of hosts) {
    const f = deepQuery(selector, h.shadowRoot as ShadowRoot);
    if (f) return f;
  }
  return null;
}

function collectHosts(root: ParentNode, out: Element[]): void {
  const it = (root instanceof Document ? root : (root as Node).ownerDocument ?? document).createTreeWalker(
    root as Node,
    NodeFilter.SHOW_ELEMENT,
  );
  for (let n = it.nextNode(); n; n = it.nextNode()) {
    if ((n as Element).shadowRoot) out.push(n as Element);
  }
}

/** Parent in the flat tree sense: parentElement, or the shadow host when at a shadow root. */
export function composedParent(n: Node): Element | null {
  const slot = (n as Element).assignedSlot;
  if (slot) return slot;
  if (n.parentElement) return n.parentElement;
  const p = n.parentNode;
  if (p && p instanceof ShadowRoot) return p.host;
  return null;
}

/** True when `inner` is `outer` or inside it, crossing shadow boundaries and slots. */
export function composedContains(outer: Element, inner: Node | null): boolean {
  for (let n: Node | null = inner; n; n = composedParent(n)) {
    if (n === outer) return true;
  }
  return false;
}

/** Offset of a (same-origin) element's document viewport inside this engine's top viewport. */
export function frameOffset(el: Element): { x: number; y: number } {
  let x = 0;
  let y = 0;
  let doc: Document = el.ownerDocument;
  while (doc !== document) {
    const fe = doc.defaultView?.frameElement;
    if (!fe) break;
    const r = fe.getBoundingClientRect();
    const cs = getComputedStyle(fe);
    x += r.left + (parseFloat(cs.borderLeftWidth) || 0) + (parseFloat(cs.paddingLeft) || 0);
    y += r.top + (parseFloat(cs.borderTopWidth) || 0) + (parseFloat(cs.paddingTop) || 0);
    doc = fe.ownerDocument;
  }
  return { x, y };
}

export function boxOf(el: Element): Box {
  const r = el.getBoundingClientRect();
  const o = frameOffset(el);
  return { x: round(r.left + o.x), y: round(r.top + o.y), w: round(r.width), h: round(r.height) };
}

export function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** The focused element, looking into open shadow roots and same-origin iframes. */
export function deepActiveElement(): Element | null {
  let a: Element | null = document.activeElement;
  for (;;) {
    if (!a) return null;
    if (a.shadowRoot?.activeElement) {
      a = a.shadowRoot.activeElement;
      continue;
    }
    if (a instanceof HTMLIFrameElement) {
      let d: Document | null = null;
      try {
        d = a.contentDocument;
      } catch {
        d = null;
      }
      if (d?.activeElement && d.activeElement !== d.body) {
        a = d.activeElement;
        continue;
      }
    }
    return a;
  }
}

/** Whitespace collapsed to single spaces and trimmed. */
export function norm(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

/**
 * First `max` code points of s, never splitting a surrogate pair; "…" marks a cut. SECURITY I-77:
 * a text that is cut is masked first, so no piece of a secret survives the cut unrecognised.
 */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  s = maskHere(s);
  if (s.length <= max) return s;
  let end = max;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end) + "…";
}

/** Resolves after the next two animation frames (or 50 ms when rAF is throttled). */
export function nextFrames(): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const fin = () => {
      if (!done) {
        done = true;
        resolve();
      }
    };
    requestAnimationFrame(() => requestAnimationFrame(fin));
    setTimeout(fin, 50);
  });
}

// What an input can cause, read from the page's own markup: a form submission, a click on something
// the page marks destructive, a link to another origin, a password field under the focus. One rule,
// shared by the engine's `risk` (the worker's prediction before acting) and the effect guard (the
// check at the moment each event arrives), so the two never disagree (SECURITY I-18, I-37, I-38).
// Walks open and closed shadow roots: an extension's isolated world sees closed ones through
// chrome.dom.openOrClosedShadowRoot.

import { composedParent } from "./dom";

/** The element's shadow root, open or closed (closed ones only from an extension context). */
export function shadowOf(el: Element): ShadowRoot | null {
  const dom = (globalThis as { chrome?: { dom?: { openOrClosedShadowRoot?(e: Element): ShadowRoot | null } } }).chrome?.dom;
  if (dom?.openOrClosedShadowRoot) {
    try {
      return dom.openOrClosedShadowRoot(el) ?? null;
    } catch {
      return el.shadowRoot;
    }
  }
  return el.shadowRoot;
}

/** The focused element of `doc`, through open and closed shadow roots (not into frames). */
export function focusedIn(doc: Document): Element | null {
  let a: Element | null = doc.activeElement;
  for (let i = 0; a && i < 64; i++) {
    const inner = shadowOf(a)?.activeElement ?? null;
    if (!inner || inner === a) break;
    a = inner;
  }
  return a;
}

/** The focused element through shadow roots and same-origin frames; null when focus is in a cross-origin frame's. */
export function deepFocused(doc: Document = document): { el: Element | null; crossFrame: boolean } {
  let d = doc;
  for (let i = 0; i < 16; i++) {
    const el = focusedIn(d);
    if (!el || !(el.localName === "iframe" || el.localName === "frame")) return { el, crossFrame: false };
    let inner: Document | null = null;
    try {
      inner = (el as HTMLIFrameElement).contentDocument;
    } catch {
      inner = null;
    }
    if (!inner) return { el, crossFrame: true };
    d = inner;
  }
  return { el: null, crossFrame: false };
}

/** The innermost element at a point of `doc`'s viewport, through open and closed shadow roots. */
export function elementAt(doc: Document, x: number, y: number): Element | null {
  let e = doc.elementFromPoint(x, y);
  for (let i = 0; e && i < 64; i++) {
    const root = shadowOf(e);
    const inner = root?.elementFromPoint(x, y) ?? null;
    if (!inner || inner === e) break;
    e = inner;
  }
  return e;
}

export function isPasswordField(el: Element | null): boolean {
  return !!el && el.localName === "input" && String((el as HTMLInputElement).type).toLowerCase() === "password";
}

/** Nearest ancestor (itself included) matching `sel`, crossing shadow boundaries. */
export function composedClosest(el: Element, sel: string): Element | null {
  for (let n: Element | null = el, i = 0; n && i < 512; n = composedParent(n), i++) {
    if (n.matches(sel)) return n;
  }
  return null;
}

export interface ClickEffects {
  /** Activating it submits a form. */
  submit: boolean;
  /** The page marks it (or an ancestor) `data-destructive`. */
  destructive: boolean;
  /** The http(s) URL a link it sits in leads to. */
  href?: string;
}

/** What clicking (or keyboard-activating) `el` causes by the page's markup. */
export function clickEffects(el: Element): ClickEffects {
  const btn = composedClosest(el, "button, input[type=submit i], input[type=image i]") as HTMLButtonElement | HTMLInputElement | null;
  const submit = !!btn && !!btn.form && !btn.matches(":disabled") && (btn.localName === "input" || (btn as HTMLButtonElement).type === "submit");
  const mark = composedClosest(el, "[data-destructive]");
  const destructive = !!mark && mark.getAttribute("data-destructive") !== "false";
  const out: ClickEffects = { submit, destructive };
  const link = composedClosest(el, "a[href], area[href]") as HTMLAnchorElement | null;
  if (link && /^https?:/i.test(link.href)) out.href = link.href;
  return out;
}

const SINGLE_LINE = new Set(["text", "search", "email", "url", "tel", "password", "number", "date", "datetime-local", "month", "week", "time"]);

/** The field is a single-line input inside a form: Enter in it submits the form. */
function enterSubmits(el: Element | null): boolean {
  if (!el || el.localName !== "input") return false;
  const inp = el as HTMLInputElement;
  return !!inp.form && SINGLE_LINE.has(inp.type);
}

/** What pressing `key` ("Enter", " ") on the focused element causes, by its markup. */
export function keyEffects(el: Element | null, key: string): ClickEffects {
  const none: ClickEffects = { submit: false, destructive: false };
  if (!el) return none;
  const tag = el.localName;
  const type = tag === "input" ? String((el as HTMLInputElement).type).toLowerCase() : "";
  const activates = tag === "button" || (tag === "input" && ["submit", "image", "button", "reset", "checkbox", "radio"].includes(type)) || el.getAttribute("role") === "button";
  if (key === "Enter") {
    if (enterSubmits(el)) return { submit: true, destructive: !!composedClosest(el, "[data-destructive]:not([data-destructive=false])") };
    if (activates || tag === "a" || tag === "area") return clickEffects(el);
    return none;
  }
  if (key === " " && activates) return clickEffects(el);
  return none;
}

/** The engine's `risk` answer about an action's target (the worker predicts from it). */
export interface TargetRisk {
  label: string;
  isPassword: boolean;
  submit: boolean;
  destructive: boolean;
  href?: string;
  enter: ClickEffects;
  space: ClickEffects;
}

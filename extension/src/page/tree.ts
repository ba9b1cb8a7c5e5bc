// The outline tree: one cheap walk over the flat tree (open shadow roots, slots, same-origin
// iframes) that keeps only what an agent needs. Generic containers are flattened, invisible
// subtrees skipped, interactive elements get refs. Rendering to text lives in render.ts.
import {
  GENERIC, INLINE_TAGS, LEAF_ROLES, SKIP, isInteractive, nameOf, roleOf,
} from "./aria";
import { deepActiveElement, norm } from "./dom";
import type { RefTable } from "./refs";

export interface TText {
  t: string;
  el: Element;
}

export interface TNode {
  role: string;
  name: string;
  ref?: string;
  /** Printed states, e.g. " [checked] [required]". */
  attrs: string;
  /** Printed after ": " (a select's chosen option, a frame's origin). Never a typed value. */
  value?: string;
  kids: Item[];
  el: Element;
  /** Cross-origin iframe placeholder ordinal. */
  frame?: number;
  level?: number;
}

/** Marks a block boundary between text runs. */
export const BREAK = 0 as const;
export type Item = TNode | TText | typeof BREAK;

export interface FrameRef {
  el: HTMLIFrameElement;
  src: string;
  origin: string;
  title: string;
}

export function isText(i: Item): i is TText {
  return i !== BREAK && (i as TText).t !== undefined;
}

const NATIVE_LEAF = new Set(["input", "select", "textarea", "button"]);
const KEEP_EMPTY = new Set(["cell", "columnheader", "rowheader", "gridcell", "separator", "row", "iframe", "img", "textbox"]);
const FORM_TAGS = new Set(["button", "input", "select", "textarea", "option", "optgroup", "fieldset"]);
const VIS = { visibilityProperty: true } as const;
/** Structural roles: no states, and a name only from aria-label / aria-labelledby. */
const PLAIN = new Set(["cell", "row", "listitem", "paragraph", "list", "rowheader", "columnheader", "generic", "blockquote", "article", "figure", "status", "code"]);
const INTERACTIVE_SEL =
  "a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,[role],[tabindex],[contenteditable],[onclick]";

export class TreeBuilder {
  nodes = 0;
  frames: FrameRef[] = [];
  private active: Element | null = deepActiveElement();

  constructor(private refs: RefTable) {}

  /** Walks the children of `parent` (its shadow root when it has one; a slot's assigned nodes). */
  children(parent: Element, out: Item[], textHidden: boolean): void {
    const sr = parent.shadowRoot;
    const first: Node | null = sr ? sr.firstChild : parent.firstChild;
    if (!sr && parent.localName === "slot") {
      const a = (parent as HTMLSlotElement).assignedNodes();
      if (a.length) {
        for (const c of a) this.child(c, parent, out, textHidden);
        return;
      }
    }
    for (let c = first; c; c = c.nextSibling) this.child(c, parent, out, textHidden);
  }

  private child(c: Node, parent: Element, out: Item[], textHidden: boolean): void {
    const t = c.nodeType;
    if (t === 1) this.element(c as Element, out);
    else if (t === 3 && !textHidden) pushText(out, (c as Text).data, parent);
  }

  element(el: Element, out: Item[]): void {
    this.nodes++;
    const tag = el.localName;
    if (tag === "slot") {
      this.children(el, out, false);
      return;
    }
    const hasAttrs = el.hasAttributes();
    const role = roleOf(el, tag, hasAttrs);
    if (role === SKIP) return;
    if (hasAttrs && (el.getAttribute("aria-hidden") === "true" || el.hasAttribute("inert"))) return;
    if (!el.checkVisibility(VIS)) {
      if (el.checkVisibility()) {
        // visibility:hidden — its own text and line go, visible descendants stay.
        this.children(el, out, true);
        return;
      }
      if (getComputedStyle(el).display !== "contents") return;
    }
    const interactive = isInteractive(el, tag, role, hasAttrs);
    if (role === GENERIC && !interactive) {
      if (tag === "label" && (el as HTMLLabelElement).control) {
        // The label's text already names its control; keep only the structure inside.
        const tmp: Item[] = [];
        this.children(el, tmp, false);
        for (const it of tmp) if (it !== BREAK && !isText(it)) out.push(it);
        return;
      }
      const block = !INLINE_TAGS.has(tag);
      if (block) markBreak(out);
      this.children(el, out, false);
      if (block) markBreak(out);
      return;
    }
    const n = this.node(el, tag, role || "generic", interactive);
    if (role === "iframe") {
      this.frame(el as HTMLIFrameElement, n);
    } else if (LEAF_ROLES.has(role) || NATIVE_LEAF.has(tag)) {
      if (el.firstElementChild && tag !== "select") this.leafKids(el, n.kids);
    } else {
      this.children(el, n.kids, false);
      trimBreaks(n.kids);
    }
    if (!n.ref && !n.name && n.kids.length === 0 && n.value === undefined && !KEEP_EMPTY.has(n.role)) return;
    out.push(n);
  }

  private node(el: Element, tag: string, role: string, interactive: boolean): TNode {
    if (!interactive && PLAIN.has(role)) {
      const plain: TNode = { role, name: "", attrs: "", kids: [], el };
      if (el.hasAttributes() && (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby"))) plain.name = nameOf(el, tag, role);
      return plain;
    }
    const n: TNode = { role, name: nameOf(el, tag, role), attrs: "", kids: [], el };
    if (interactive) n.ref = this.refs.refFor(el);
    n.attrs = this.states(el, tag, role, n);
    if (tag === "select") {
      const opts = (el as HTMLSelectElement).selectedOptions;
      const parts: string[] = [];
      for (let i = 0; i < opts.length && i < 5; i++) parts.push(norm((opts[i] as HTMLOptionElement).label));
      if (opts.length > 5) parts.push(`+${opts.length - 5} more`);
      if (parts.length) n.value = parts.join(", ");
    }
    return n;
  }

  /** Interactive descendants of a leaf (a link inside a heading, a button inside a button-like row). */
  private leafKids(el: Element, out: Item[]): void {
    const list = el.querySelectorAll(INTERACTIVE_SEL);
    for (let i = 0; i < list.length; i++) {
      const d = list[i] as Element;
      const tag = d.localName;
      const role = roleOf(d, tag);
      if (role === SKIP || !isInteractive(d, tag, role)) continue;
      if (d.closest("[aria-hidden=true]") || !d.checkVisibility(VIS)) continue;
      this.nodes++;
      out.push(this.node(d, tag, role || "generic", true));
    }
  }

  private frame(el: HTMLIFrameElement, n: TNode): void {
    let doc: Document | null = null;
    try {
      doc = el.contentDocument;
    } catch {
      doc = null;
    }
    if (doc) {
      if (doc.body) this.children(doc.body, n.kids, false);
      trimBreaks(n.kids);
      return;
    }
    const src = el.src || "";
    let origin = "";
    try {
      origin = new URL(src, location.href).origin;
    } catch {
      origin = "";
    }
    n.frame = this.frames.length;
    this.frames.push({ el, src, origin, title: n.name });
    n.attrs += ` [frame=${n.frame}]`;
    if (origin && origin !== "null") n.attrs += ` (${origin})`;
  }

  private states(el: Element, tag: string, role: string, n: TNode): string {
    let s = "";
    if (role === "heading") {
      const lv = parseInt(el.getAttribute("aria-level") || "", 10) || (tag.length === 2 && tag[0] === "h" ? parseInt(tag.slice(1), 10) : 2);
      n.level = lv;
      s += ` [level=${lv}]`;
    }
    const ac = el.getAttribute("aria-checked");
    if (tag === "input" && (role === "checkbox" || role === "radio" || role === "switch")) {
      const inp = el as HTMLInputElement;
      if (inp.indeterminate) s += " [checked=mixed]";
      else if (inp.checked) s += " [checked]";
    } else if (ac === "true") s += " [checked]";
    else if (ac === "mixed") s += " [checked=mixed]";
    const ap = el.getAttribute("aria-pressed");
    if (ap === "true") s += " [pressed]";
    else if (ap === "mixed") s += " [pressed=mixed]";
    if (el.getAttribute("aria-selected") === "true" || (tag === "option" && (el as HTMLOptionElement).selected)) s += " [selected]";
    const ae = el.getAttribute("aria-expanded");
    if (ae === "true") s += " [expanded]";
    else if (ae === "false") s += " [collapsed]";
    else if (tag === "summary" && el.parentElement?.localName === "details") {
      s += (el.parentElement as HTMLDetailsElement).open ? " [expanded]" : " [collapsed]";
    }
    if ((FORM_TAGS.has(tag) && el.matches(":disabled")) || el.getAttribute("aria-disabled") === "true") s += " [disabled]";
    if (tag === "input" || tag === "select" || tag === "textarea") {
      const f = el as HTMLInputElement;
      if (f.required) s += " [required]";
      if ((tag === "input" || tag === "textarea") && f.readOnly) s += " [readonly]";
      if (tag === "input" && f.type === "password") s += " [password]";
      if (tag === "select" && (el as HTMLSelectElement).multiple) s += " [multiple]";
    } else if (el.getAttribute("aria-required") === "true") s += " [required]";
    if (el.getAttribute("aria-invalid") === "true") s += " [invalid]";
    if (this.active === el && tag !== "body") s += " [focused]";
    return s;
  }
}

/** Appends a text run, merging with the previous run (inline flow) within a size bound. */
function pushText(out: Item[], raw: string, el: Element): void {
  let t = raw;
  if (t.length === 0) return;
  if (/[\s]/.test(t)) t = t.replace(/\s+/g, " ");
  const last = out[out.length - 1];
  if (last !== undefined && isText(last)) {
    if (t === " ") {
      if (!last.t.endsWith(" ")) last.t += " ";
      return;
    }
    last.t += last.t.endsWith(" ") && t.startsWith(" ") ? t.slice(1) : t;
    return;
  }
  if (t === " ") return;
  if (last === BREAK) {
    out.pop();
    const prev = out[out.length - 1];
    if (prev !== undefined && isText(prev) && prev.t.length < 120) {
      prev.t = prev.t.trimEnd() + " " + t.trimStart();
      return;
    }
  }
  out.push({ t, el });
}

function markBreak(out: Item[]): void {
  const last = out[out.length - 1];
  if (last !== undefined && isText(last)) out.push(BREAK);
}

function trimBreaks(items: Item[]): void {
  if (items.length && items[items.length - 1] === BREAK) items.pop();
}

// Roles and accessible names, computed in-page: a pragmatic subset of HTML-AAM and accname-1.2
// that covers what agents act on. Cheap by design: attribute reads, no getComputedStyle.
import { norm } from "./dom";

/** Roles whose elements get a ref (besides native controls, tabindex>=0, onclick, contenteditable). */
const INTERACTIVE_ROLES = new Set([
  "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
  "menuitemradio", "option", "treeitem", "textbox", "searchbox", "combobox", "listbox", "slider",
  "spinbutton", "gridcell", "scrollbar",
]);

const KNOWN_ROLES = new Set([
  ...INTERACTIVE_ROLES, "alert", "alertdialog", "application", "article", "banner", "blockquote",
  "caption", "cell", "code", "columnheader", "complementary", "contentinfo", "definition", "dialog",
  "document", "feed", "figure", "form", "generic", "grid", "group", "heading", "img", "image", "list",
  "listitem", "log", "main", "marquee", "math", "menu", "menubar", "meter", "navigation", "none",
  "note", "paragraph", "presentation", "progressbar", "radiogroup", "region", "row", "rowgroup",
  "rowheader", "search", "separator", "status", "table", "tablist", "tabpanel", "term", "timer",
  "toolbar", "tooltip", "tree", "treegrid",
]);

/** Roles whose name comes from their content; the outline does not descend into them for text. */
const NAME_FROM_CONTENT = new Set([
  "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
  "menuitemradio", "option", "treeitem", "heading", "tooltip",
]);

/** Roles printed as one line with no text children (interactive descendants still get lines). */
export const LEAF_ROLES = new Set([
  "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
  "menuitemradio", "option", "treeitem", "heading", "img", "separator", "progressbar", "meter",
  "slider", "spinbutton", "searchbox", "tooltip",
]);

/** Sentinel roles: "" = generic (flattened), "skip" = drop element and subtree. */
export const GENERIC = "";
export const SKIP = "skip";

const INPUT_ROLES: Record<string, string> = {
  button: "button", submit: "button", reset: "button", image: "button", file: "button",
  color: "button", checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton",
  hidden: SKIP,
};

const TAG_ROLES: Record<string, string> = {
  button: "button", select: "combobox", textarea: "textbox", option: "option", optgroup: "group",
  h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading",
  ul: "list", ol: "list", menu: "list", li: "listitem", table: "table", tr: "row", td: "cell",
  thead: GENERIC, tbody: GENERIC, tfoot: GENERIC, caption: SKIP, nav: "navigation", main: "main",
  aside: "complementary", article: "article", dialog: "dialog", p: "paragraph",
  blockquote: "blockquote", hr: "separator", fieldset: "group", legend: SKIP, figure: "figure",
  details: "group", summary: "button", progress: "progressbar", meter: "meter", output: "status",
  iframe: "iframe", frame: "iframe", math: "math", search: "search",
  video: SKIP, audio: SKIP, canvas: SKIP, object: SKIP, embed: SKIP, datalist: SKIP,
};

function explicitRole(el: Element): string | null {
  const r = el.getAttribute("role");
  if (!r) return null;
  for (const tok of r.trim().toLowerCase().split(/\s+/)) {
    if (KNOWN_ROLES.has(tok)) return tok === "image" ? "img" : tok;
  }
  return null;
}

function isFocusableAttr(el: Element): boolean {
  return el.hasAttribute("tabindex") && (el as HTMLElement).tabIndex >= 0;
}

/** The element's role, GENERIC for plain containers, SKIP for things never shown. */
export function roleOf(el: Element, tag: string, hasAttrs = true): string {
  const ex = hasAttrs ? explicitRole(el) : null;
  if (ex) {
    if (ex === "none" || ex === "presentation") return isFocusableAttr(el) ? GENERIC : GENERIC;
    if (ex === "generic") return GENERIC;
    return ex;
  }
  switch (tag) {
    case "a":
    case "area":
      return el.hasAttribute("href") ? "link" : GENERIC;
    case "input": {
      const t = ((el as HTMLInputElement).type || "text").toLowerCase();
      const r = INPUT_ROLES[t];
      if (r) return r;
      if (el.hasAttribute("list")) return "combobox";
      return t === "search" ? "searchbox" : "textbox";
    }
    case "select": {
      const s = el as HTMLSelectElement;
      return s.multiple || s.size > 1 ? "listbox" : "combobox";
    }
    case "img":
      return el.getAttribute("alt") === "" ? SKIP : "img";
    case "svg":
      return el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") || hasSvgTitle(el) ? "img" : SKIP;
    case "th": {
      const scope = el.getAttribute("scope");
      return scope === "row" || scope === "rowgroup" ? "rowheader" : "columnheader";
    }
    case "header":
      return el.closest("article,aside,main,nav,section") ? GENERIC : "banner";
    case "footer":
      return el.closest("article,aside,main,nav,section") ? GENERIC : "contentinfo";
    case "section":
    case "form":
      return el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") || el.hasAttribute("title")
        ? tag === "form" ? "form" : "region"
        : GENERIC;
    case "script": case "style": case "noscript": case "template": case "head": case "meta":
    case "link": case "title": case "base":
      return SKIP;
  }
  const r = TAG_ROLES[tag];
  if (r !== undefined) return r;
  if (hasAttrs && el.hasAttribute("contenteditable") && isEditingHost(el)) return "textbox";
  return GENERIC;
}

function hasSvgTitle(el: Element): boolean {
  const f = el.firstElementChild;
  return !!f && f.localName === "title";
}

function isEditingHost(el: Element): boolean {
  const h = el as HTMLElement;
  if (!h.isContentEditable) return false;
  const p = h.parentElement;
  return !p || !p.isContentEditable;
}

/** Gets a ref: native controls, interactive roles, editing hosts, tabindex>=0, onclick. */
export function isInteractive(el: Element, tag: string, role: string, hasAttrs = true): boolean {
  switch (tag) {
    case "a":
    case "area":
      if (el.hasAttribute("href")) return true;
      break;
    case "button":
    case "select":
    case "textarea":
    case "summary":
      return true;
    case "input":
      return (el as HTMLInputElement).type !== "hidden";
  }
  if (INTERACTIVE_ROLES.has(role) && role !== "gridcell") return true;
  if (!hasAttrs) return false;
  if (el.hasAttribute("contenteditable") && isEditingHost(el)) return true;
  if (isFocusableAttr(el)) return true;
  // Only the attribute: a handler set from page script is invisible from the isolated world.
  if (el.hasAttribute("onclick")) return true;
  return false;
}

/** Accessible name (never an input's value). `role` decides whether content names it. */
export function nameOf(el: Element, tag: string, role: string): string {
  const lb = el.getAttribute("aria-labelledby");
  if (lb) {
    const root = el.getRootNode() as Document | ShadowRoot;
    const parts: string[] = [];
    for (const id of lb.split(/\s+/)) {
      const t = id ? root.getElementById(id) : null;
      if (t) parts.push(textFrom(t, el));
    }
    const s = norm(parts.join(" "));
    if (s) return s;
  }
  const al = el.getAttribute("aria-label");
  if (al && al.trim()) return norm(al);

  switch (tag) {
    case "input": {
      const inp = el as HTMLInputElement;
      const t = inp.type;
      if (t === "button" || t === "submit" || t === "reset") {
        // The label of a button input is its value attribute: page text, not user input.
        const v = inp.getAttribute("value");
        return norm(v ?? (t === "submit" ? "Submit" : t === "reset" ? "Reset" : ""));
      }
      if (t === "image") return norm(inp.alt || inp.getAttribute("value") || "Submit");
      const l = labelsText(inp);
      if (l) return l;
      break;
    }
    case "select":
    case "textarea":
    case "meter":
    case "progress":
    case "output": {
      const l = labelsText(el as HTMLSelectElement);
      if (l) return l;
      break;
    }
    case "img":
    case "area": {
      const alt = el.getAttribute("alt");
      if (alt) return norm(alt);
      break;
    }
    case "fieldset": {
      const lg = el.querySelector(":scope > legend");
      if (lg) return norm(textFrom(lg, null));
      break;
    }
    case "table": {
      const cap = (el as HTMLTableElement).caption;
      if (cap) return norm(textFrom(cap, null));
      break;
    }
    case "figure": {
      const fc = el.querySelector(":scope > figcaption");
      if (fc) return norm(textFrom(fc, null));
      break;
    }
    case "svg": {
      const f = el.firstElementChild;
      if (f && f.localName === "title") return norm(f.textContent ?? "");
      break;
    }
    case "summary":
      return norm(textFrom(el, null));
  }
  if (NAME_FROM_CONTENT.has(role)) {
    const s = norm(textFrom(el, null));
    if (s) return s;
  }
  const title = el.getAttribute("title");
  if (title && title.trim()) return norm(title);
  if (role === "textbox" || role === "searchbox" || role === "combobox") {
    const ph = el.getAttribute("placeholder") || el.getAttribute("aria-placeholder");
    if (ph) return norm(ph);
  }
  return "";
}

function labelsText(el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement): string {
  const labels = el.labels;
  if (!labels || labels.length === 0) return "";
  const parts: string[] = [];
  for (const l of Array.from(labels)) parts.push(textFrom(l, el));
  return norm(parts.join(" "));
}

/**
 * Text content for naming: flat tree (shadow roots, slots), skipping aria-hidden and hidden
 * subtrees, the element being named, and form controls (whose values are never exposed).
 */
function textFrom(root: Element, exclude: Element | null): string {
  if (!root.firstElementChild && !root.shadowRoot && root.localName !== "slot") return root.textContent ?? "";
  const out: string[] = [];
  collect(root, exclude, out, true);
  return out.join("");
}

function collect(n: Node, exclude: Element | null, out: string[], isRoot: boolean): void {
  if (n.nodeType === 3) {
    out.push((n as Text).data);
    return;
  }
  if (n.nodeType !== 1) {
    if (n.nodeType === 11) for (let c = n.firstChild; c; c = c.nextSibling) collect(c, exclude, out, false);
    return;
  }
  const el = n as Element;
  if (el === exclude) return;
  const tag = el.localName;
  if (!isRoot) {
    if (el.getAttribute("aria-hidden") === "true") return;
    switch (tag) {
      case "input": case "select": case "textarea": case "script": case "style": case "template":
      case "noscript":
        return;
      case "img": {
        const alt = el.getAttribute("alt");
        if (alt) out.push(" " + alt + " ");
        return;
      }
    }
    if (!el.checkVisibility()) {
      if (tag !== "slot" && getComputedStyle(el).display !== "contents") return;
    }
  }
  const isBlock = !INLINE_TAGS.has(tag);
  if (isBlock) out.push(" ");
  if (el.shadowRoot) {
    collect(el.shadowRoot, exclude, out, false);
  } else if (tag === "slot") {
    const assigned = (el as HTMLSlotElement).assignedNodes();
    if (assigned.length) for (const a of assigned) collect(a, exclude, out, false);
    else for (let c = el.firstChild; c; c = c.nextSibling) collect(c, exclude, out, false);
  } else {
    for (let c = el.firstChild; c; c = c.nextSibling) collect(c, exclude, out, false);
  }
  if (isBlock) out.push(" ");
}

export const INLINE_TAGS = new Set([
  "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd", "label",
  "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "slot",
  "big", "tt", "wbr", "nobr", "button", "img", "svg",
]);

// find's matching (reveal uses it too): the outline's elements that match role / name / text, one
// match per element, each with a ref and a line that tells it apart from the other matches — an
// unnamed element (three plain <li>s) carries its text, not just its role.
import { INLINE_TAGS } from "./aria";
import { clip, norm } from "./dom";
import { maskHere } from "./secrets";
import { fail } from "./errors";
import type { EngineContext } from "./context";
import { head, render } from "./render";
import { visibleText } from "./text";
import { BREAK, isText, type Item, type TNode, type TText } from "./tree";
import type { FindArgs, FindResult } from "./types";

/** A find predicate, lower-cased. */
export interface Query {
  role?: string;
  name?: string;
  text?: string;
}

/** One matching element; its ref and line are made only for the matches returned. */
export interface Hit {
  el: Element;
  exact: boolean;
  /** The outline node of `el`, when the match is one (else a text match inside a plain container). */
  node?: TNode;
  /** The element's visible text, for a text match. */
  text?: string;
}

const SUMMARY_MAX = 100;

export function queryOf(a: FindArgs, what = "find"): Query {
  const q: Query = {};
  if (a.role) q.role = String(a.role).toLowerCase();
  if (a.name) q.name = String(a.name).toLowerCase();
  if (a.text) q.text = norm(String(a.text)).toLowerCase();
  if (!q.role && q.name === undefined && q.text === undefined) fail("invalid_argument", `${what} needs role, name or text`);
  return q;
}

/** SECURITY I-77: a query is compared with the masked text, so it can never test a secret's characters. */
function cmp(hay: string, needle: string): 0 | 1 | 2 {
  const h = maskHere(hay).toLowerCase();
  return h === needle ? 2 : h.includes(needle) ? 1 : 0;
}

/** Every element under `root` matching q: exact matches first, each in document order. */
export function collect(engine: EngineContext, q: Query, root: Element): Hit[] {
  const { items } = engine.tree(root);
  const exact: Hit[] = [];
  const partial: Hit[] = [];
  // One match per element: two matches never share a line or a ref, and the count is of elements.
  const seen = new Set<Element>();
  const add = (h: Hit) => {
    if (seen.has(h.el)) return;
    seen.add(h.el);
    (h.exact ? exact : partial).push(h);
  };
  const textOnly = q.text !== undefined && !q.role && q.name === undefined;
  let nodes: Set<Element> | undefined;
  // A node's own text, once per node however many of its runs match.
  const texts = new Map<Element, string>();
  const textOf = (el: Element): string => {
    let t = texts.get(el);
    if (t === undefined) texts.set(el, (t = maskHere(norm(visibleText(el)))));
    return t;
  };
  const visit = (list: Item[], row: TNode | null, parent: TNode | null) => {
    for (const it of list) {
      if (it === BREAK) continue;
      if (isText(it)) {
        if (!textOnly) continue;
        const needle = q.text as string;
        const c = cmp(norm(it.t), needle);
        if (!c) continue;
        if (row) {
          add({ el: row.el, exact: c === 2, node: row });
          continue;
        }
        nodes ??= nodeSet(items);
        for (const loc of locate(it, needle, parent?.el ?? root, nodes, textOf)) {
          if (parent && (loc.el === parent.el || textOf(parent.el) === loc.text)) {
            add({ el: parent.el, exact: loc.text.toLowerCase() === needle, node: parent });
          } else {
            add({ el: loc.el, exact: loc.text.toLowerCase() === needle, text: loc.text });
          }
        }
        continue;
      }
      let ok = true;
      let ex = true;
      if (q.role && it.role !== q.role) ok = false;
      if (ok && q.name !== undefined) {
        const c = cmp(it.name, q.name);
        if (!c) ok = false;
        else ex = c === 2;
      }
      if (ok && q.text !== undefined) {
        const own = it.name || norm(it.kids.filter(isText).map((k) => k.t).join(" "));
        const c = cmp(own, q.text);
        if (!c) ok = false;
        else ex = ex && c === 2;
      }
      // Text alone matches a named node by its name; an unnamed one through its text runs below.
      if (ok && (!textOnly || it.name)) add({ el: it.el, exact: ex, node: it });
      visit(it.kids, it.role === "row" ? it : row, it);
    }
  };
  visit(items, null, null);
  return exact.concat(partial);
}

/** The elements the outline keeps as nodes of their own (their text is not a plain run's). */
function nodeSet(items: Item[]): Set<Element> {
  const s = new Set<Element>();
  const walk = (list: Item[]) => {
    for (const it of list) {
      if (it === BREAK || isText(it)) continue;
      s.add(it.el);
      walk(it.kids);
    }
  };
  walk(items);
  return s;
}

/** The first `limit` hits as find's matches: each with its own ref and a line that says what it is. */
export function present(engine: EngineContext, hits: Hit[], limit: number): FindResult["matches"] {
  return hits.slice(0, limit).map((h) => {
    const ref = engine.refs.refFor(h.el);
    return { line: lineOf(h, ref), ref, exact: h.exact };
  });
}

function lineOf(h: Hit, ref: string): string {
  if (h.node) return nodeLine(h.node, ref);
  return `text [${ref}]: ${clip(h.text ?? norm(visibleText(h.el)), SUMMARY_MAX)}`;
}

/** The snapshot's line for the node with `ref` printed, plus the text of an unnamed one. */
function nodeLine(n: TNode, ref: string): string {
  const withRef: TNode = { ...n, ref };
  if (n.role === "row") {
    const r = render([withRef], false);
    const l = r.full.get(0) ?? r.lines[0] ?? `row [${ref}]:`;
    // A row too structured for one line opens a block: its text says which row it is.
    if (!l.endsWith(":")) return l;
    const s = summary(n.kids);
    return s ? `${l} ${s}` : l.slice(0, -1);
  }
  let line = `${head(withRef)}${n.value !== undefined ? `: ${n.value}` : ""}`;
  if (!n.name && n.value === undefined) {
    const s = summary(n.kids);
    if (s) line += `: ${s}`;
  }
  return line;
}

/** A subtree's text and named descendants on one line, cut at SUMMARY_MAX. */
function summary(items: Item[]): string {
  const out: string[] = [];
  let len = 0;
  const walk = (list: Item[]) => {
    for (const it of list) {
      if (len > SUMMARY_MAX) return;
      if (it === BREAK) continue;
      let s = "";
      if (isText(it)) s = norm(it.t);
      else if (it.name) s = `${it.role} "${clip(it.name, 60)}"`;
      else walk(it.kids);
      if (s) {
        out.push(s);
        len += s.length + 1;
      }
    }
  };
  walk(items);
  return clip(out.join(" "), SUMMARY_MAX);
}

/**
 * The elements a matching text run's occurrences of `needle` are in. A run flows through plain
 * containers (rows of a virtual list made of <div>s merge into one run, tree.ts pushText), and its
 * node is only the element of its first piece: the run's text nodes are walked again, in order,
 * and each occurrence goes to the smallest element holding it, so a ref never names a neighbour.
 */
function locate(run: TText, needle: string, scope: Element, nodes: Set<Element>, textOf: (el: Element) => string): { el: Element; text: string }[] {
  const runText = norm(run.t);
  const start: Node = run.el.shadowRoot ?? run.el;
  const rootNode = start instanceof ShadowRoot ? start : run.el.getRootNode();
  const wroot: Node = scope.getRootNode() === rootNode && scope.contains(run.el) ? scope : rootNode;
  const doc = run.el.ownerDocument;
  const w = doc.createTreeWalker(wroot, NodeFilter.SHOW_TEXT);
  // Begin at the run's own first text node: earlier text of the same element belongs to other runs.
  let first: Node | null = null;
  for (let c = start.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3 && norm((c as Text).data) && runText.startsWith(norm((c as Text).data))) {
      first = c;
      break;
    }
  }
  w.currentNode = first ?? start;
  let n: Node | null = first ?? w.nextNode();
  const shown = new Map<Element, boolean>();
  const visible = (el: Element): boolean => {
    let v = shown.get(el);
    if (v === undefined) {
      v = el.checkVisibility({ visibilityProperty: true }) && !el.closest("[aria-hidden=true],[inert]");
      shown.set(el, v);
    }
    return v;
  };
  const pieces: { s: number; e: number; el: Element }[] = [];
  let acc = "";
  let prevEl: Element | null = null;
  for (let steps = 0; n && acc.length < runText.length + 1 && steps < 5000; n = w.nextNode(), steps++) {
    const p = n.parentNode;
    const el = p instanceof ShadowRoot ? p.host : (p as Element | null);
    if (!el || !visible(el) || insideOther(el, run.el, nodes)) continue;
    let t = (n as Text).data.replace(/\s+/g, " ");
    if (!t.trim()) continue;
    if (acc === "") t = t.trimStart();
    else if (prevEl && blockBetween(prevEl, el)) {
      if (!acc.endsWith(" ")) acc += " ";
      t = t.trimStart();
    } else if (acc.endsWith(" ") && t.startsWith(" ")) t = t.slice(1);
    pieces.push({ s: acc.length, e: acc.length + t.length, el });
    acc += t;
    prevEl = el;
  }
  const out: { el: Element; text: string }[] = [];
  const lower = acc.toLowerCase();
  for (let i = lower.indexOf(needle); i >= 0 && needle.length > 0; i = lower.indexOf(needle, i + needle.length)) {
    const a = pieces.find((p) => p.e > i);
    const b = [...pieces].reverse().find((p) => p.s < i + needle.length);
    if (!a || !b) break;
    const el = commonAncestor(a.el, b.el);
    // SECURITY I-77: an occurrence the masked text does not show (inside a secret) is no match.
    if (!textOf(el).toLowerCase().includes(needle)) continue;
    if (!out.some((o) => o.el === el)) out.push({ el, text: textOf(el) });
  }
  // Text the walk could not follow (slotted or cross-shadow flow): the run's own element.
  if (!out.length) out.push({ el: run.el, text: runText });
  return out;
}

/** el is inside an outline node other than the run's own element and its ancestors. */
function insideOther(el: Element, runEl: Element, nodes: Set<Element>): boolean {
  for (let p: Element | null = el; p && !p.contains(runEl); p = p.parentElement) if (nodes.has(p)) return true;
  return false;
}

/** A block element separates a and b (the outline puts a space between their texts). */
function blockBetween(a: Element, b: Element): boolean {
  const c = commonAncestor(a, b);
  for (const x of [a, b]) {
    for (let p: Element | null = x; p && p !== c; p = p.parentElement) if (!INLINE_TAGS.has(p.localName)) return true;
  }
  return false;
}

function commonAncestor(a: Element, b: Element): Element {
  for (let p: Element | null = a; p; p = p.parentElement) if (p.contains(b)) return p;
  return a;
}

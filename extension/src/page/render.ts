// Outline text from the tree: 'role "name" [ref] [states]: value', two spaces per level (the
// indent alone carries the nesting; a ref is the bracket holding letters then a number, "[b12]",
// which no state looks like). Table rows made of text and simple controls print on one line
// ('row: Alice | 42 | button "Edit" [b13]'); in a run of such rows, a control identical (role and
// name) to the one in the same column of the row above prints as just "[b13]" — the first row of the run, and any
// row that opens a page or a diff hunk, print it in full. That is what keeps a 1,000-row table
// with two controls per row under 60 k characters. Nothing is said twice: a text beside a control
// whose name already holds it (its visible label) is left out, and a list item that is one
// control prints as that control.
import { clip, norm } from "./dom";
import { BREAK, isText, type Item, type TNode } from "./tree";

const TEXT_MAX = 200;
const NAME_MAX = 120;
const CELL_ROLES = new Set(["cell", "columnheader", "rowheader", "gridcell"]);
const TABLE_ROLES = new Set(["table", "grid", "treegrid"]);
const WORD = /[\p{L}\p{N}]/u;

export interface Rendered {
  lines: string[];
  /** Self-contained form of compact rows that use "same as above" controls. */
  full: Map<number, string>;
  /** Placeholder ordinal → [line index, depth]. */
  frameLines: Map<number, [number, number]>;
}

const REF_IN = /\[[a-gi-z]{1,8}[1-9][0-9]*\]/;

/** Whether a rendered line holds a ref. */
function hasRef(line: string): boolean {
  return REF_IN.test(line);
}

function esc(s: string): string {
  return s.includes('"') ? s.replace(/"/g, '\\"') : s;
}

export function head(n: TNode): string {
  let s = n.role;
  if (n.name) s += ` "${esc(clip(n.name, NAME_MAX))}"`;
  if (n.ref) s += ` [${n.ref}]`;
  return s + n.attrs;
}

/** Long text keeps its start, then "…" and its full length so the agent knows to read_text. */
function textRun(s: string): string {
  if (s.length <= TEXT_MAX) return s;
  return clip(s, 160) + ` (${s.length} chars)`;
}

function isLeaf(n: TNode): boolean {
  return n.kids.every((k) => k === BREAK);
}

function inline(n: TNode): string {
  return head(n) + (n.value !== undefined ? `: ${n.value}` : "");
}

interface Ditto {
  prev: (string | undefined)[];
}

/** One cell's compact text and, when it is a single control, its ditto key. */
function cellText(cell: Item): { s: string; key?: string; short?: string } | null {
  if (cell === BREAK) return { s: "" };
  if (isText(cell)) return { s: norm(cell.t) };
  if (!CELL_ROLES.has(cell.role) || cell.ref) {
    // A control directly in a row (no cell) is fine; other structures are not compact.
    if (isLeaf(cell)) return { s: inline(cell) };
    return null;
  }
  const parts: string[] = [];
  let single: TNode | undefined;
  let count = 0;
  for (const k of cell.kids) {
    if (k === BREAK) continue;
    count++;
    if (isText(k)) {
      const t = norm(k.t);
      if (t) parts.push(clip(t, 80));
      continue;
    }
    if (!isLeaf(k)) return null;
    single = k;
    parts.push(inline(k));
  }
  if (count === 1 && single?.ref) {
    return {
      s: parts[0] as string,
      key: single.role + "\u0000" + single.name + "\u0000" + (single.value ?? ""),
      short: `[${single.ref}]${single.attrs}`,
    };
  }
  return { s: parts.join(" ") };
}

export function render(items: Item[], interactiveOnly: boolean): Rendered {
  const r: Rendered = { lines: [], full: new Map(), frameLines: new Map() };
  if (interactiveOnly) {
    const levels: number[] = [];
    renderInteractive(items, 0, r, levels);
    pruneHeadings(r, levels);
  } else {
    renderItems(items, 0, r, null);
  }
  return r;
}

function renderItems(items: Item[], depth: number, r: Rendered, ditto: Ditto | null): void {
  const ind = "  ".repeat(depth);
  items.forEach((it, i) => {
    if (it === BREAK) return;
    if (isText(it)) {
      const s = norm(it.t);
      if (s && !namedBeside(items, i, s)) r.lines.push(`${ind}text: ${textRun(s)}`);
      if (ditto) ditto.prev = [];
      return;
    }
    renderNode(it, depth, ind, r, ditto);
  });
}

/**
 * Whether the control right before or after a text already says it in its name: a checkbox named
 * "Done: Book venue" beside its visible "Book venue", a button "Remove jacket" after "jacket".
 * Such text is the control's label and would only repeat it.
 */
function namedBeside(items: Item[], i: number, text: string): boolean {
  if (text.length > NAME_MAX) return false;
  const t = text.toLowerCase();
  for (const step of [-1, 1]) {
    let j = i + step;
    while (items[j] === BREAK) j += step;
    const k = items[j];
    if (!k || isText(k) || !k.ref || !isLeaf(k)) continue;
    const name = k.name.toLowerCase();
    const at = name.indexOf(t);
    // Whole words only: the "1" of a current page is not in a link "Go to page 10".
    if (at >= 0 && !WORD.test(name[at - 1] ?? " ") && !WORD.test(name[at + t.length] ?? " ")) return true;
  }
  return false;
}

function renderNode(n: TNode, depth: number, ind: string, r: Rendered, ditto: Ditto | null): void {
  if (n.role === "row") {
    const line = compactRow(n, ditto);
    if (line) {
      if (line.full !== line.text) r.full.set(r.lines.length, ind + line.full);
      r.lines.push(ind + line.text);
      return;
    }
    if (ditto) ditto.prev = [];
  }
  const h = head(n);
  if (n.frame !== undefined) r.frameLines.set(n.frame, [r.lines.length, depth]);
  const kids = n.kids;
  let onlyText: string | null = null;
  let nonBreak = 0;
  for (const k of kids) {
    if (k === BREAK) continue;
    nonBreak++;
    onlyText = nonBreak === 1 && isText(k) ? norm(k.t) : null;
  }
  if (nonBreak === 0) {
    r.lines.push(`${ind}${h}${n.value !== undefined ? `: ${n.value}` : ""}`);
    return;
  }
  if (onlyText !== null && n.value === undefined) {
    r.lines.push(`${ind}${h}: ${textRun(onlyText)}`);
    return;
  }
  if (nonBreak === 1 && n.role === "listitem" && !n.ref) {
    const only = kids.find((k) => k !== BREAK) as TNode;
    if (isLeaf(only)) {
      // An item that is just one control is that control: the list above it says it is an item.
      r.lines.push(h === "listitem" ? `${ind}${inline(only)}` : `${ind}${h}: ${inline(only)}`);
      return;
    }
  }
  r.lines.push(`${ind}${h}${n.value !== undefined ? `: ${n.value}` : ""}:`);
  renderItems(kids, depth + 1, r, TABLE_ROLES.has(n.role) ? { prev: [] } : null);
}

function compactRow(n: TNode, ditto: Ditto | null): { text: string; full: string } | null {
  const cells: string[] = [];
  const fulls: string[] = [];
  const keys: (string | undefined)[] = [];
  let col = 0;
  for (const c of n.kids) {
    if (c === BREAK) continue;
    const ct = cellText(c);
    if (!ct) return null;
    fulls.push(ct.s);
    if (ct.key !== undefined && ditto && ditto.prev[col] === ct.key) cells.push(ct.short as string);
    else cells.push(ct.s);
    keys.push(ct.key);
    col++;
  }
  if (ditto) ditto.prev = keys;
  const h = head(n);
  return { text: `${h}: ${cells.join(" | ")}`, full: `${h}: ${fulls.join(" | ")}` };
}

/** Only lines with refs (and compact rows holding refs), frames and headings for context. */
function renderInteractive(items: Item[], depth: number, r: Rendered, levels: number[]): void {
  const ind = "  ".repeat(depth);
  for (const it of items) {
    if (it === BREAK || isText(it)) continue;
    if (it.role === "row") {
      const line = compactRow(it, null);
      if (line) {
        if (hasRef(line.text)) {
          r.lines.push(ind + line.text);
          levels.push(0);
        }
        continue;
      }
    }
    const isHeading = it.role === "heading";
    if (it.ref || isHeading || it.frame !== undefined || it.role === "iframe") {
      if (it.frame !== undefined) r.frameLines.set(it.frame, [r.lines.length, depth]);
      r.lines.push(`${ind}${head(it)}${it.value !== undefined ? `: ${it.value}` : ""}`);
      levels.push(isHeading ? (it.level ?? 2) : it.ref ? 0 : -1);
      renderInteractive(it.kids, depth + 1, r, levels);
    } else {
      renderInteractive(it.kids, depth, r, levels);
    }
  }
}

/** Drops headings with no ref line before the next heading of the same or a higher level. */
function pruneHeadings(r: Rendered, levels: number[]): void {
  const keep: boolean[] = levels.map((l) => l <= 0);
  for (let i = 0; i < levels.length; i++) {
    const lv = levels[i] as number;
    if (lv <= 0) continue;
    for (let j = i + 1; j < levels.length; j++) {
      const l2 = levels[j] as number;
      if (l2 > 0 && l2 <= lv) break;
      if (l2 === 0) {
        keep[i] = true;
        break;
      }
    }
  }
  const lines: string[] = [];
  const remap = new Map<number, number>();
  r.lines.forEach((l, i) => {
    if (keep[i]) {
      remap.set(i, lines.length);
      lines.push(l);
    }
  });
  for (const [f, [line, depth]] of r.frameLines) r.frameLines.set(f, [remap.get(line) ?? 0, depth]);
  r.lines = lines;
}

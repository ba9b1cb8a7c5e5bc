// read_text: the page's visible text in reading order (innerText-like, but through open shadow
// roots, slots and same-origin iframes), paginated in code points.
import { INLINE_TAGS } from "./aria";

const SKIP_TAGS = new Set([
  "script", "style", "noscript", "template", "head", "input", "select", "textarea", "option",
  "datalist", "video", "audio", "canvas", "object", "embed", "svg",
]);
const CELL = new Set(["td", "th"]);

export function visibleText(root: Element): string {
  const out: string[] = [];
  walk(root, out, false, false);
  // Normalise: trim each line, collapse runs of blank lines, keep tabs between cells.
  const lines = out.join("").split("\n");
  const res: string[] = [];
  for (const l of lines) {
    const t = l.replace(/[ \u00a0]*\t[ \u00a0]*/g, "\t").replace(/^[ \t]+|[ \t]+$/g, "");
    if (t === "" && (res.length === 0 || res[res.length - 1] === "")) continue;
    res.push(t);
  }
  while (res.length && res[res.length - 1] === "") res.pop();
  return res.join("\n");
}

function walk(el: Element, out: string[], textHidden: boolean, pre: boolean): void {
  let list: ArrayLike<Node>;
  if (el.shadowRoot) list = el.shadowRoot.childNodes;
  else if (el.localName === "slot") {
    const a = (el as HTMLSlotElement).assignedNodes();
    list = a.length ? a : el.childNodes;
  } else if (el.localName === "iframe") {
    let d: Document | null = null;
    try {
      d = (el as HTMLIFrameElement).contentDocument;
    } catch {
      d = null;
    }
    if (d?.body) {
      out.push("\n");
      walk(d.body, out, false, false);
      out.push("\n");
    }
    return;
  } else list = el.childNodes;
  for (let i = 0; i < list.length; i++) {
    const c = list[i] as Node;
    if (c.nodeType === 3) {
      if (textHidden) continue;
      const d = (c as Text).data;
      out.push(pre ? d : d.replace(/[ \t\n\r\f]+/g, " "));
    } else if (c.nodeType === 1) {
      const e = c as Element;
      const tag = e.localName;
      if (SKIP_TAGS.has(tag)) continue;
      if (tag === "br") {
        out.push("\n");
        continue;
      }
      let hid = false;
      if (tag !== "slot" && !e.checkVisibility({ visibilityProperty: true })) {
        if (e.checkVisibility()) hid = true;
        else if (getComputedStyle(e).display !== "contents") continue;
      }
      const cell = CELL.has(tag);
      const block = !cell && !INLINE_TAGS.has(tag);
      if (block) out.push("\n");
      walk(e, out, hid, pre || tag === "pre");
      if (cell) out.push("\t");
      else if (block) out.push("\n");
    }
  }
}

/**
 * Slice of `text` from code point `offset`, at most `maxChars` code points; never splits a
 * surrogate pair. Returns total in code points.
 */
export function pageText(text: string, offset: number, maxChars: number | undefined): { text: string; offset: number; nextOffset?: number; total: number } {
  let cp = 0;
  let startIdx = -1;
  let endIdx = -1;
  const stop = maxChars === undefined ? Infinity : offset + maxChars;
  let i = 0;
  for (; i < text.length; ) {
    if (cp === offset) startIdx = i;
    if (cp === stop) endIdx = i;
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    cp++;
  }
  const total = cp;
  if (startIdx < 0) startIdx = offset >= total ? text.length : 0;
  if (endIdx < 0) endIdx = text.length;
  const res: { text: string; offset: number; nextOffset?: number; total: number } = {
    text: text.slice(startIdx, endIdx),
    offset: Math.min(offset, total),
    total,
  };
  if (stop < total) res.nextOffset = stop;
  return res;
}

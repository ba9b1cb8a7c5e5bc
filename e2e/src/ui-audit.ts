// What a person would check on an extension page, measured in the real browser: every visible text
// meets WCAG AA contrast against the background it is actually drawn on, nothing sticks out
// sideways (no horizontal scrolling, nothing cut off at the edge) and no word is broken across
// lines ("Pass/word/s") at the current viewport.
import type { Page } from "playwright-core";

export interface ContrastFailure {
  text: string;
  ratio: number;
  need: number;
  fg: string;
  bg: string;
  where: string;
}

export interface OverflowFailure {
  where: string;
  detail: string;
}

/** A run of letters or digits the layout split across lines, though it would fit on one. */
export interface BrokenWord {
  word: string;
  lines: number;
  where: string;
}

export interface Audit {
  contrast: ContrastFailure[];
  overflow: OverflowFailure[];
  broken: BrokenWord[];
  /** Text nodes measured (a page that measured nothing proves nothing). */
  checked: number;
}

/** Measures the page as it is now (theme and viewport already set). */
export function auditPage(page: Page): Promise<Audit> {
  return page.evaluate(() => {
    type RGBA = [number, number, number, number];
    const parse = (c: string): RGBA | undefined => {
      let m = /^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/.exec(c);
      if (m) return [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])];
      m = /^color\(srgb ([\d.]+) ([\d.]+) ([\d.]+)(?: \/ ([\d.]+))?\)$/.exec(c);
      if (m) return [Number(m[1]) * 255, Number(m[2]) * 255, Number(m[3]) * 255, m[4] === undefined ? 1 : Number(m[4])];
      return undefined;
    };
    const over = (top: RGBA, under: RGBA): RGBA => {
      const a = top[3];
      return [top[0] * a + under[0] * (1 - a), top[1] * a + under[1] * (1 - a), top[2] * a + under[2] * (1 - a), 1];
    };
    const lum = (c: RGBA): number => {
      const ch = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2]);
    };
    const ratio = (a: RGBA, b: RGBA): number => {
      const x = lum(a);
      const y = lum(b);
      return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
    };
    const dark = matchMedia("(prefers-color-scheme: dark)").matches;
    const canvas: RGBA = dark ? [18, 18, 18, 1] : [255, 255, 255, 1];
    const hex = (c: RGBA) => `#${c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, "0")).join("")}`;
    const where = (e: Element): string => {
      const parts: string[] = [];
      for (let x: Element | null = e; x && parts.length < 4; x = x.parentElement) {
        parts.unshift(x.tagName.toLowerCase() + (x.id ? `#${x.id}` : "") + (x.classList.length ? `.${[...x.classList].join(".")}` : ""));
      }
      return parts.join(" > ");
    };
    /** The colour behind an element: its own and its ancestors' backgrounds, composited. */
    const background = (e: Element): RGBA | undefined => {
      const layers: RGBA[] = [];
      for (let x: Element | null = e; x; x = x.parentElement) {
        const cs = getComputedStyle(x);
        if (cs.backgroundImage !== "none") return undefined; // a gradient or image: not measurable this way
        const bg = parse(cs.backgroundColor);
        if (bg && bg[3] > 0) {
          layers.push(bg);
          if (bg[3] >= 1) break;
        }
      }
      let c = canvas;
      for (const l of layers.reverse()) c = over(l, c);
      return c;
    };
    const opacity = (e: Element): number => {
      let o = 1;
      for (let x: Element | null = e; x; x = x.parentElement) o *= Number(getComputedStyle(x).opacity);
      return o;
    };

    const contrast: ContrastFailure[] = [];
    let checked = 0;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const seen = new Set<Element>();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = (n.textContent ?? "").trim();
      const el = n.parentElement;
      if (!text || !el || seen.has(el)) continue;
      seen.add(el);
      if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const r = range.getBoundingClientRect();
      if (r.width < 2 || r.height < 2) continue; // screen-reader-only text is clipped to a pixel
      // WCAG exempts inactive controls.
      if (el.closest("button:disabled, input:disabled, select:disabled, [aria-disabled='true']")) continue;
      const cs = getComputedStyle(el);
      const fg0 = parse(cs.color);
      const bg = background(el);
      if (!fg0 || !bg) continue;
      const fg = over([fg0[0], fg0[1], fg0[2], fg0[3] * opacity(el)], bg);
      const size = parseFloat(cs.fontSize);
      const bold = Number(cs.fontWeight) >= 700;
      const need = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      const got = ratio(fg, bg);
      checked++;
      if (got + 0.005 < need) contrast.push({ text: text.slice(0, 50), ratio: Math.round(got * 100) / 100, need, fg: hex(fg), bg: hex(bg), where: where(el) });
    }

    const overflow: OverflowFailure[] = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw + 1) {
      overflow.push({ where: "html", detail: `the page scrolls sideways: ${document.documentElement.scrollWidth} px wide in a ${vw} px viewport` });
    }
    const scrollsX = (e: Element) => {
      const o = getComputedStyle(e).overflowX;
      return o === "auto" || o === "scroll";
    };
    for (const e of Array.from(document.body.querySelectorAll("*"))) {
      if (!e.checkVisibility({ checkVisibilityCSS: true })) continue;
      const cs = getComputedStyle(e);
      if (cs.position === "fixed" && cs.visibility === "hidden") continue;
      const r = e.getBoundingClientRect();
      // Nothing drawn, or screen-reader-only text (clipped to a pixel on purpose).
      if (r.width <= 1 || r.height <= 1 || cs.clip !== "auto") continue;
      // Inside a box that scrolls sideways (code, wide tables), running past its edge is the design.
      let inScroller = false;
      for (let x = e.parentElement; x && x !== document.body; x = x.parentElement) if (scrollsX(x)) inScroller = true;
      if (inScroller) continue;
      if (r.right > vw + 1 || r.left < -1) {
        overflow.push({ where: where(e), detail: `spans ${Math.round(r.left)}…${Math.round(r.right)} px in a ${vw} px viewport` });
        continue;
      }
      // Content cut off inside a box that hides it (ellipsis is a deliberate, readable cut).
      if ((cs.overflowX === "hidden" || cs.overflowX === "clip") && cs.textOverflow !== "ellipsis" && cs.display !== "inline" && e.scrollWidth > e.clientWidth + 1) {
        overflow.push({ where: where(e), detail: `content ${e.scrollWidth} px wide is cut to ${e.clientWidth} px` });
      }
    }

    // A word is broken when one run of letters/digits of a text node has boxes on more than one
    // line. A token too long for half the page (a hash, a long URL part) may wrap by design;
    // anything shorter wrapped only because its box was squeezed.
    const broken: BrokenWord[] = [];
    // Screen-reader-only text (clipped to a pixel) is laid out in a 1 px box on purpose.
    const clipped = (e: Element): boolean => {
      for (let x: Element | null = e; x; x = x.parentElement) if (getComputedStyle(x).clip !== "auto") return true;
      return false;
    };
    const runRe = /[\p{L}\p{N}]{2,}/gu;
    const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = texts.nextNode(); n; n = texts.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent ?? "";
      if (!el || !/[\p{L}\p{N}]{2}/u.test(text) || el.closest("script, style, textarea, noscript")) continue;
      if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) || clipped(el)) continue;
      const whole = document.createRange();
      whole.selectNodeContents(n);
      const all = Array.from(whole.getClientRects()).filter((r) => r.width > 0.5);
      if (all.length < 2) continue; // on one line: nothing can be split
      for (const m of text.matchAll(runRe)) {
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0.5 && r.height > 0.5);
        if (rects.length < 2) continue;
        const tops: number[] = [];
        for (const r of rects) if (!tops.some((t) => Math.abs(t - r.top) < r.height / 2)) tops.push(r.top);
        if (tops.length < 2) continue;
        const width = rects.reduce((w, r) => w + r.width, 0);
        if (width > vw / 2) continue;
        if (broken.length < 20) broken.push({ word: m[0].slice(0, 40), lines: tops.length, where: where(el) });
      }
    }
    return { contrast, overflow: overflow.slice(0, 20), broken, checked };
  });
}

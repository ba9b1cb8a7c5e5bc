// THE sanitizing sink: every piece of agent- or person-written text that becomes HTML in the panel
// goes through renderMarkdown, and nothing else in the panel assigns HTML. markdown-it runs with
// html:false (raw HTML is shown as text), highlight.js colours code, then DOMPurify keeps only a
// strict allowlist of tags and attributes. Links keep only http:, https: and mailto: and open in a
// new tab with rel="noopener noreferrer"; images are not rendered (no data: URLs, no tracking).

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt, { type RendererRule, type Token } from "markdown-it";
import { precut } from "./limits.js";

hljs.registerLanguage("bash", bash);
hljs.registerLanguage("css", css);
hljs.registerLanguage("diff", diff);
hljs.registerLanguage("go", go);
hljs.registerLanguage("javascript", javascript);
hljs.registerLanguage("json", json);
hljs.registerLanguage("python", python);
hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("xml", xml);
hljs.registerLanguage("yaml", yaml);
hljs.registerAliases(["sh", "shell", "zsh"], { languageName: "bash" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

const ALLOWED_TAGS = [
  "p", "br", "hr", "strong", "em", "s", "del", "code", "pre", "blockquote",
  "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
  "table", "thead", "tbody", "tr", "th", "td", "span",
];
const ALLOWED_ATTR = ["href", "title", "class", "start"];
const SAFE_URL = /^(?:https?:|mailto:)/i;
// Only the classes markdown-it and highlight.js emit; an author cannot borrow the panel's own classes.
const SAFE_CLASS = /^(?:hljs(?:-[\w-]+)?|language-[\w+#.-]{1,40}|[\w]+_)$/;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: true,
  typographer: false,
  highlight(code: string, lang: string): string {
    const name = lang.trim().toLowerCase();
    if (name && hljs.getLanguage(name)) {
      try {
        return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
      } catch {
        // fall through to plain
      }
    }
    return escapeHtml(code);
  },
});
md.disable(["image"]);
// markdown-it refuses javascript:/vbscript:/file:/data: itself; the sink narrows further below.
md.validateLink = (url: string): boolean => SAFE_URL.test(url.trim()) || !/^[a-z][a-z0-9+.-]*:/i.test(url.trim());
// Table alignment comes as style=""; the sink drops style, so carry it as a class instead.
for (const rule of ["th_open", "td_open"] as const) {
  const align: RendererRule = (tokens, idx, options, _env, self) => {
    const t = tokens[idx];
    const style = String(t?.attrGet("style") ?? "");
    const m = /text-align:(left|right|center)/.exec(style);
    if (t) {
      t.attrs = null;
      if (m) t.attrSet("class", `${m[1]}_`);
    }
    return self.renderToken(tokens, idx, options);
  };
  md.renderer.rules[rule] = align;
}

let purify: ReturnType<typeof DOMPurify> | undefined;

function sanitizer(): ReturnType<typeof DOMPurify> {
  if (purify) return purify;
  const p = DOMPurify(globalThis.window);
  p.addHook("uponSanitizeAttribute", (_node, data) => {
    if (data.attrName === "class") {
      const kept = data.attrValue.split(/\s+/).filter((c) => SAFE_CLASS.test(c));
      data.attrValue = kept.join(" ");
      if (kept.length === 0) data.keepAttr = false;
    }
  });
  p.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      const href = node.getAttribute("href") ?? "";
      if (!SAFE_URL.test(href.trim())) {
        // Relative or unknown-scheme links lead nowhere useful from an extension page.
        node.removeAttribute("href");
      } else {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    }
  });
  purify = p;
  return p;
}

const PURIFY_CONFIG = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  KEEP_CONTENT: true,
};

/**
 * Markdown → a sanitized fragment, with a copy button on every code block. DOMPurify hands back
 * nodes, never a string to re-parse; the buttons are built with DOM calls after sanitizing, so no
 * author text ever becomes markup.
 */
export function renderMarkdown(src: string): DocumentFragment {
  const { first, rest } = renderMarkdownParts(src);
  for (const r of rest) first.append(r());
  return first;
}

/**
 * The same, in parts for a huge message (src/sidepanel/limits.ts): the first part now, the others
 * for the caller to render one task at a time so the panel keeps answering.
 */
export function renderMarkdownParts(src: string): { first: DocumentFragment; rest: (() => DocumentFragment)[] } {
  const p = precut(src);
  const sentinel = new RegExp(`^${p.nonce}:(rows|code):(\\d+)(?::(\\d+))?$`);
  const part = (chunk: string) => () => renderChunk(chunk, sentinel, p.codes);
  const [head = "", ...tail] = p.chunks;
  return { first: renderChunk(head, sentinel, p.codes), rest: tail.map(part) };
}

function renderChunk(src: string, sentinel: RegExp, codes: string[]): DocumentFragment {
  const tokens = md.parse(src, {});
  notes(tokens, sentinel);
  const frag = sanitizer().sanitize(md.renderer.render(tokens, md.options, {}), { ...PURIFY_CONFIG, RETURN_DOM_FRAGMENT: true });
  const doc = frag.ownerDocument;
  for (const pre of Array.from(frag.querySelectorAll("pre"))) {
    // The button sits in a bar above the code, never over it.
    const wrap = doc.createElement("div");
    wrap.className = "codeblock";
    pre.replaceWith(wrap);
    const head = doc.createElement("div");
    head.className = "code-head";
    const lang = doc.createElement("span");
    lang.className = "code-lang";
    const cls = /(?:^|\s)language-([\w+#.-]+)/.exec(pre.querySelector("code")?.className ?? "");
    lang.textContent = cls?.[1] ?? "code";
    const btn = doc.createElement("button");
    btn.type = "button";
    btn.className = "copy";
    btn.textContent = "Copy";
    btn.setAttribute("aria-label", `Copy ${lang.textContent === "code" ? "" : `${lang.textContent} `}code`);
    btn.dataset.testid = "copy-code";
    head.append(lang, btn);
    wrap.append(head, pre);
  }
  for (const m of Array.from(frag.querySelectorAll(".truncated_"))) {
    (m as HTMLElement).dataset.testid = "md-truncated";
    const id = /(?:^|\s)code(\d+)_/.exec(m.className)?.[1];
    const wrap = m.previousElementSibling;
    if (id !== undefined && wrap?.classList.contains("codeblock")) fullCode.set(wrap, codes[Number(id)] ?? "");
  }
  return frag;
}

/** The whole text of each shortened code block, by its rendered wrapper (for Copy). */
const fullCode = new WeakMap<Element, string>();

type TokenClass = new (type: string, tag: string, nesting: -1 | 0 | 1) => Token;

/** Turns precut()'s sentinel paragraphs into notes saying what is not shown. */
function notes(tokens: Token[], sentinel: RegExp): void {
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.type !== "inline" || tokens[i - 1]?.type !== "paragraph_open") continue;
    const m = sentinel.exec(t.content);
    if (!m) continue;
    const n = Number(m[m[1] === "code" ? 3 : 2]).toLocaleString("en");
    const text = m[1] === "code" ? `… ${n} more characters not shown (Copy copies the whole block).` : `… ${n} more rows not shown.`;
    tokens[i - 1]?.attrSet("class", m[1] === "code" ? `truncated_ code${m[2]}_` : "truncated_");
    const leaf = new (t.constructor as TokenClass)("text", "", 0);
    leaf.content = text;
    t.content = text;
    t.children = [leaf];
  }
}

/** The sanitized HTML as a string (for tests and diagnostics; the panel inserts the fragment). */
export function renderMarkdownHTML(src: string): string {
  const div = document.createElement("div");
  div.append(renderMarkdown(src));
  return div.innerHTML;
}

/** The copy buttons' one delegated handler (installed once on the transcript). */
export function onCopyClick(ev: Event): void {
  const t = ev.target;
  if (!(t instanceof HTMLElement) || !t.classList.contains("copy")) return;
  const block = t.closest(".codeblock");
  const code = (block && fullCode.get(block)) ?? block?.querySelector("pre")?.textContent ?? "";
  void navigator.clipboard.writeText(code).then(
    () => {
      t.textContent = "Copied";
      setTimeout(() => (t.textContent = "Copy"), 1200);
    },
    () => {
      t.textContent = "Copy failed";
      setTimeout(() => (t.textContent = "Copy"), 1200);
    },
  );
}

// @vitest-environment jsdom
// The one sanitizing sink, fed hostile input: nothing it returns may run code, load anything, or
// carry a link to a scheme other than http, https or mailto.
import { describe, expect, test } from "vitest";
import { renderMarkdown, renderMarkdownHTML } from "../../src/sidepanel/markdown.js";

function dom(src: string): HTMLDivElement {
  const d = document.createElement("div");
  d.append(renderMarkdown(src));
  return d;
}

/** Every attribute in the output, as name=value. */
function attrs(d: Element): string[] {
  const out: string[] = [];
  for (const el of Array.from(d.querySelectorAll("*"))) {
    for (const a of Array.from(el.attributes)) out.push(`${el.tagName.toLowerCase()} ${a.name}=${a.value}`);
  }
  return out;
}

function assertInert(d: Element): void {
  for (const el of Array.from(d.querySelectorAll("*"))) {
    expect(["script", "iframe", "object", "embed", "svg", "math", "img", "style", "form", "input", "link", "meta", "base", "video", "audio", "source"]).not.toContain(el.tagName.toLowerCase());
    for (const a of Array.from(el.attributes)) {
      expect(a.name.startsWith("on"), `${el.tagName} ${a.name}`).toBe(false);
      expect(["style", "src", "srcset", "action", "formaction", "xlink:href", "background", "id", "name"]).not.toContain(a.name);
    }
  }
  for (const a of Array.from(d.querySelectorAll("a[href]"))) {
    expect(a.getAttribute("href")).toMatch(/^(https?:|mailto:)/i);
    expect(a.getAttribute("target")).toBe("_blank");
    expect(a.getAttribute("rel")).toBe("noopener noreferrer");
  }
}

describe("renderMarkdown: ordinary markdown", () => {
  test("emphasis, lists, code, GFM table", () => {
    const d = dom("**bold** _it_ `x`\n\n- a\n- b\n\n| h1 | h2 |\n|:--|--:|\n| 1 | 2 |\n");
    expect(d.querySelector("strong")?.textContent).toBe("bold");
    expect(d.querySelectorAll("li")).toHaveLength(2);
    expect(d.querySelector("table th")?.textContent).toBe("h1");
    expect(d.querySelector("td")?.className).toBe("left_");
    expect(d.querySelectorAll("td")[1]?.className).toBe("right_");
    assertInert(d);
  });

  test("fenced code is highlighted and gets a copy button", () => {
    const d = dom("```js\nconst a = 1; // <b>x</b>\n```\n");
    const block = d.querySelector(".codeblock");
    expect(block?.querySelector("button.copy")?.textContent).toBe("Copy");
    expect(block?.querySelector("pre code")?.className).toContain("language-js");
    expect(block?.querySelector(".hljs-keyword")?.textContent).toBe("const");
    expect(block?.querySelector("pre")?.textContent).toBe("const a = 1; // <b>x</b>\n");
    expect(block?.querySelector("b")).toBeNull();
    assertInert(d);
  });

  test("safe links open in a new tab without opener or referrer", () => {
    const d = dom("[site](https://example.com/a?b=1) <mailto:x@example.com> and http://example.org");
    const as = Array.from(d.querySelectorAll("a"));
    expect(as.map((a) => a.getAttribute("href"))).toEqual(["https://example.com/a?b=1", "mailto:x@example.com", "http://example.org"]);
    assertInert(d);
  });
});

describe("renderMarkdown: hostile input renders inert", () => {
  const cases: [string, string][] = [
    ["script tag", "<script>alert(1)</script>"],
    ["img onerror", '<img src=x onerror="alert(1)">'],
    ["event handler on div", '<div onclick="alert(1)">click</div>'],
    ["javascript: link", "[click](javascript:alert(1))"],
    ["javascript: link, encoded", "[click](jav&#x61;script:alert(1))"],
    ["javascript: link, spaced", "[click]( javascript:alert(1) )"],
    ["vbscript link", "[x](vbscript:msgbox(1))"],
    ["data: link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"],
    ["data: image", "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)"],
    ["image tracking pixel", "![x](https://tracker.example/p.gif)"],
    ["hostile svg", '<svg><script>alert(1)</script><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>'],
    ["svg onload", "<svg onload=alert(1)>"],
    ["math mxss", "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>"],
    ["iframe", '<iframe src="https://evil.example"></iframe>'],
    ["style tag", "<style>body{display:none}</style>"],
    ["form", '<form action="https://evil.example"><button>go</button></form>'],
    ["autolink javascript", "<javascript:alert(1)>"],
    ["reference link javascript", "[a][r]\n\n[r]: javascript:alert(1)"],
    ["file link", "[a](file:///etc/passwd)"],
    ["html in code fence info", '```"><img src=x onerror=alert(1)>\ncode\n```'],
    ["html inside table", "| a |\n|---|\n| <img src=x onerror=alert(1)> |"],
    ["link title injection", '[a](https://x.example "t\\" onmouseover=\\"alert(1)")'],
  ];
  for (const [name, src] of cases) {
    test(name, () => {
      const d = dom(src);
      assertInert(d);
      const html = renderMarkdownHTML(src);
      expect(html).not.toMatch(/<(script|img|svg|iframe|style|form|math)\b/i);
      // Hostile text may remain visible as text (escaped); no tag may carry it.
      expect(html).not.toMatch(/<[a-z][^<>]*\son\w+\s*=\s*["']?alert/i);
      expect(html).not.toMatch(/<a\s[^<>]*href="\s*(javascript|vbscript|data|file):/i);
    });
  }

  test("raw HTML shows as text, not markup", () => {
    const d = dom("<b>not bold</b>");
    expect(d.querySelector("b")).toBeNull();
    expect(d.textContent).toContain("<b>not bold</b>");
  });

  test("an author cannot borrow the panel's own classes", () => {
    const d = dom("```x jump-pill\ncode\n```");
    for (const a of attrs(d)) expect(a).not.toMatch(/jump-pill/);
  });
});

describe("huge input is cut for display, never for Copy", () => {
  test("a 5,000-row table shows 100 rows and says how many are not shown", () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `| ${i} | r |`).join("\n");
    const d = dom(`| n | r |\n|--|--|\n${rows}\n\nafter`);
    expect(d.querySelectorAll("tbody tr")).toHaveLength(100);
    expect(d.querySelector('[data-testid="md-truncated"]')?.textContent).toBe("… 4,900 more rows not shown.");
    expect(d.textContent).toContain("after");
  });
  test("a 1 MB code block shows its start; the note names what is left", () => {
    const code = "a".repeat(1_000_000);
    const d = dom("```\n" + code + "\n```");
    expect(d.querySelector("pre")?.textContent?.length).toBeLessThanOrEqual(20_001); // the shown start and its newline
    expect(d.querySelector('[data-testid="md-truncated"]')?.textContent).toContain("980,001 more characters");
  });
});

test("an author cannot write the truncation note", () => {
  const rows = Array.from({ length: 300 }, (_, i) => `| ${i} | ${"y".repeat(20)} |`).join("\n");
  const d = dom(`torii-cut-abc:7\n\n| n | y |\n|--|--|\n${rows}`);
  expect(d.querySelectorAll('[data-testid="md-truncated"]')).toHaveLength(1);
  expect(d.textContent).toContain("torii-cut-abc:7");
});

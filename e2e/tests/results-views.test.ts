// What reaches the model is the page, once, whichever part of a tool result the client hands it.
// Some clients give the model the text blocks, others structuredContent alone (falling back to the
// content blocks when it is absent). Through the official TS SDK client and `torii mcp`, every read
// tool (and an action's observe) is read both ways: each view holds the whole outline / text /
// answer, and no line of it twice. Each view also says the result is page data (SECURITY I-78): the
// text's first line, structuredContent's `untrusted` field.
import { expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { PAGE_DATA_MARK, refOf } from "../src/mcp.ts";
import { useToolsRig } from "../src/tools-rig.ts";

interface Raw {
  isError?: boolean;
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
}

/** A JSON value as a model reading it sees it: every leaf as `path: value`, strings decoded. */
function leaves(v: unknown, path = "", out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x, i) => leaves(x, `${path}[${i}]`, out));
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) leaves(x, path ? `${path}.${k}` : k, out);
  else out.push(`${path}: ${String(v)}`);
  return out;
}

/** The two readers: text blocks only; structuredContent only (its content blocks when absent). */
function views(r: Raw): { text: string; structured: string; images: { text: number; structured: number } } {
  const blocks = r.content ?? [];
  const text = blocks.filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n");
  const images = blocks.filter((c) => c.type === "image").length;
  if (r.structuredContent === undefined) return { text, structured: text, images: { text: images, structured: images } };
  return { text, structured: leaves(r.structuredContent).join("\n"), images: { text: images, structured: 0 } };
}

function count(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** Each line (trimmed, non-empty) once in each view. */
function expectEachOnce(v: { text: string; structured: string }, lines: string[], what: string): void {
  expect(lines.length, what).toBeGreaterThan(0);
  for (const l of lines) {
    expect(count(v.text, l), `${what}: text view, ${JSON.stringify(l)}`).toBe(1);
    expect(count(v.structured, l), `${what}: structured view, ${JSON.stringify(l)}`).toBe(1);
  }
}

/** Both readers are told the result is page data: the text's first line, the structured field. */
function expectPageData(r: Raw, what: string): void {
  const v = views(r);
  expect(v.text.startsWith(`${PAGE_DATA_MARK}\n`), `${what}: text view`).toBe(true);
  if (r.structuredContent) expect(r.structuredContent.untrusted, `${what}: structured view`).toBe("page");
  else expect(v.structured.startsWith(`${PAGE_DATA_MARK}\n`), `${what}: structured view (the content blocks)`).toBe(true);
}

const refLines = (s: string) => s.split("\n").filter((l) => /\[[a-gi-z]+\d+\]/.test(l)).map((l) => l.trim());
const refsIn = (s: string) => [...s.matchAll(/\[([a-gi-z]+\d+)\]/g)].map((m) => m[1] as string);

describeBrowser("results: the structured and the text form carry the same result, once", () => {
  const rig = useToolsRig();
  const raw = async (name: string, args: Record<string, unknown>): Promise<Raw> =>
    (await rig().mcp.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as Raw;

  test("no tool declares an outputSchema (the client has nothing to validate structuredContent against)", async () => {
    for (const t of await rig().mcp.listTools()) expect((t as { outputSchema?: unknown }).outputSchema, t.name).toBeUndefined();
  });

  test("snapshot: the whole outline in each view, every ref line once; the page's controls all there", async () => {
    const { tabId, page } = await rig().open("form.html");
    const r = await raw("snapshot", { tabId });
    expectPageData(r, "snapshot");
    const v = views(r);
    const lines = refLines(v.text);
    const controls = await page.locator("input, select, textarea, button, a[href]").count();
    expect(lines.length).toBeGreaterThanOrEqual(controls);
    expectEachOnce(v, lines, "snapshot");
    // The outline's other lines (headings, text) too: the text view's body, line for line.
    const body = v.text.split("\n").slice(1).map((l) => l.trim()).filter(Boolean);
    for (const l of body) expect(v.structured, l).toContain(l);
    expect(r.structuredContent?.tabId).toBe(tabId);
    expect(new Set(refsIn(v.structured))).toEqual(new Set(refsIn(v.text)));
  });

  test("snapshot pages: the cursor and each page's lines in both views, once", async () => {
    const { tabId } = await rig().open("table.html?rows=300");
    const seen = { text: [] as string[], structured: [] as string[] };
    let cursor: string | undefined;
    for (let i = 0; i < 20; i++) {
      const r = await raw("snapshot", { tabId, maxChars: 4000, ...(cursor ? { cursor } : {}) });
      const v = views(r);
      expectEachOnce(v, refLines(v.text), `page ${i}`);
      seen.text.push(...refsIn(v.text));
      seen.structured.push(...refsIn(v.structured));
      cursor = r.structuredContent?.nextCursor as string | undefined;
      if (!cursor) break;
      expect(v.text).toContain(`cursor=${cursor}`);
    }
    expect(cursor).toBeUndefined();
    expect(seen.structured).toEqual(seen.text);
    expect(new Set(seen.text).size).toBe(seen.text.length);
    expect(seen.text.length).toBeGreaterThan(300);
  });

  test("snapshot diff: the changed lines in each view, once", async () => {
    const { tabId, page } = await rig().open("form.html");
    await raw("snapshot", { tabId });
    await page.evaluate(() => {
      const b = document.createElement("button");
      b.textContent = "Freshly added";
      document.body.append(b);
    });
    const v = views(await raw("snapshot", { tabId, diff: true }));
    const added = v.text.split("\n").filter((l) => l.includes("Freshly added")).map((l) => l.trim());
    expect(added).toHaveLength(1);
    expectEachOnce(v, added, "diff");
  });

  test("read_text: every paragraph of the article in each view, once; paging the same", async () => {
    const { tabId, page } = await rig().open("article.html");
    const paras = (await page.locator("p:visible").allInnerTexts()).map((p) => p.trim().slice(0, 60)).filter((p) => p.length > 20);
    expect(paras.length).toBeGreaterThan(2);
    const v = views(await raw("read_text", { tabId }));
    expectEachOnce(v, paras, "read_text");
    const first = await raw("read_text", { tabId, maxChars: 100 });
    const next = first.structuredContent?.nextOffset;
    expect(typeof next).toBe("number");
    expect(views(first).text).toContain(`offset=${String(next)}`);
  });

  test("find, get_state, wait_for, settle, tabs: the same answer in each view, once", async () => {
    const { tabId, url } = await rig().open("form.html");
    const fv = views(await raw("find", { tabId, role: "textbox" }));
    expectEachOnce(fv, refLines(fv.text), "find");
    const snap = await rig().mcp.ok("snapshot", { tabId });
    const ref = refOf(snap.text, "textbox", "Email");
    const sv = views(await raw("get_state", { tabId, ref }));
    expect(sv.text).toMatch(new RegExp(`textbox "Email" \\[${ref}\\]: exists, visible, enabled`));
    for (const l of ["role: textbox", "name: Email", `ref: ${ref}`, "exists: true", "visible: true", "enabled: true"]) expect(count(sv.structured, l), l).toBe(1);
    const w = await raw("wait_for", { tabId, text: "Create account", timeoutMs: 2000 });
    expect(views(w).text).toContain("ok");
    expect(w.structuredContent).toMatchObject({ found: true });
    const s = await raw("settle", { tabId, quietMs: 100 });
    expect(views(s).text).toBe(`${PAGE_DATA_MARK}\nsettled`);
    expect(s.structuredContent).toMatchObject({ tabId });
    const tr = await raw("tabs", {});
    expectPageData(tr, "tabs");
    const tv = views(tr);
    expectEachOnce(tv, [url], "tabs");
  });

  test("scroll and reveal: the position and the revealed line in each view, once", async () => {
    const { tabId } = await rig().open("virtual-list.html");
    const rv = views(await raw("reveal", { tabId, role: "button", name: "Message 3000" }));
    // Which row it lands on is reveal's own test; here: the lines it returned, once in each view.
    expectEachOnce(rv, refLines(rv.text), "reveal");
    const sc = await raw("scroll", { tabId, to: "top" });
    const sv = views(sc);
    expect(sv.text).toMatch(/^\[page data\]\nscrolled \S+: y=0/);
    expect(sv.structured).toContain(sv.text);
    expect(sc.structuredContent).toMatchObject({ scrollY: 0, atTop: true });
  });

  test("screenshot: the image reaches both readers (no structuredContent beside it)", async () => {
    const { tabId } = await rig().open("form.html");
    const r = await raw("screenshot", { tabId, quality: 20 });
    expect(r.structuredContent).toBeUndefined();
    expectPageData(r, "screenshot");
    const v = views(r);
    expect(v.images).toEqual({ text: 1, structured: 1 });
    expect(v.structured).toMatch(/screenshot of tab \d+: \d+x\d+ jpeg/);
  });

  test("an action's observe: the outline after it in each view, once", async () => {
    const { tabId } = await rig().open("form.html");
    const snap = await rig().mcp.ok("snapshot", { tabId });
    const ref = refOf(snap.text, "textbox", "Email");
    const f = await raw("fill", { tabId, ref, value: "ada@example.test", observe: "snapshot" });
    expectPageData(f, "fill with observe");
    const v = views(f);
    expect(v.text).toContain(`filled ${ref}`);
    expect(v.structured).toContain(`filled ${ref}`);
    expectEachOnce(v, refLines(v.text), "observe");
  });

  test("an error: the code, message and hint in each view", async () => {
    const { tabId } = await rig().open("form.html");
    const r = await raw("get_state", { tabId, ref: "e999999" });
    expect(r.isError).toBe(true);
    // A failure of a tool that reads the page may quote it: marked too.
    expectPageData(r, "stale_ref");
    const v = views(r);
    expect(v.text).toMatch(/^\[page data\]\nstale_ref: /);
    const e = r.structuredContent?.error as { code: string; message: string; hint: string };
    expect(e.code).toBe("stale_ref");
    expect(v.text).toContain(e.message);
    expect(v.text).toContain(e.hint);
  });
});

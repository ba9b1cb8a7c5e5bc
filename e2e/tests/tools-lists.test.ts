// find and reveal on lists through the real path — MCP client → `torii mcp` → the daemon → the
// extension in headless Chromium → lists.html (unnamed <li>s; a 10,000-row virtual list of plain
// <div>s whose nodes are recycled on scroll) — checking each ref against the page through
// Playwright; and the catalogue's schemas and hints as agents get them.
import { expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import type { ListedTool } from "../src/mcp.ts";
import { useToolsRig } from "../src/tools-rig.ts";

/** The match lines of a find/reveal text (after its header, when it has one) and their refs. */
function refLines(text: string): { line: string; ref: string }[] {
  return text
    .split("\n")
    .map((line) => ({ line, ref: /\[([a-gi-z]+\d+)\]/.exec(line)?.[1] ?? "" }))
    .filter((l) => l.ref !== "");
}

/** Every place in a JSON schema where a client's converter would trip: an enum without a type, an object without properties. */
function schemaProblems(s: unknown, at: string, out: string[]): string[] {
  if (!s || typeof s !== "object") return out;
  const o = s as Record<string, unknown>;
  if (o.enum !== undefined && o.type === undefined) out.push(`${at}: enum without type`);
  if (o.type === "object" && (typeof o.properties !== "object" || o.properties === null)) out.push(`${at}: object without properties`);
  for (const [k, v] of Object.entries((o.properties as Record<string, unknown> | undefined) ?? {})) schemaProblems(v, `${at}.${k}`, out);
  if (o.items) schemaProblems(o.items, `${at}[]`, out);
  if (o.additionalProperties && typeof o.additionalProperties === "object") schemaProblems(o.additionalProperties, `${at}{}`, out);
  for (const [i, v] of ((o.anyOf as unknown[] | undefined) ?? []).entries()) schemaProblems(v, `${at}|${i}`, out);
  return out;
}

describeBrowser("browser tools: lists (find, reveal)", () => {
  const rig = useToolsRig();

  test("find: three unnamed <li>s are three lines with three refs; each reads and clicks its own item", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("lists.html");
    const f = await mcp.ok("find", { tabId, role: "listitem" });
    expect(f.text.split("\n")[0]).toBe("3 matches");
    const lines = refLines(f.text);
    expect(lines.map((l) => l.line.replace(/\[[a-gi-z]+\d+\]/, "[ref]"))).toEqual([
      "listitem [ref]: Apples from the orchard",
      "listitem [ref]: Bananas, ripe",
      "listitem [ref]: Cherries in a bowl",
    ]);
    expect(new Set(lines.map((l) => l.ref)).size).toBe(3);
    expect(f.data.total).toBe(3);
    for (const [i, want] of ["Apples from the orchard", "Bananas, ripe", "Cherries in a bowl"].entries()) {
      const ref = (lines[i] as { ref: string }).ref;
      const r = await mcp.ok("read_text", { tabId, root: ref });
      expect(r.text).toBe(want);
      await mcp.ok("click", { tabId, ref });
      expect(await page.locator("#picked").textContent()).toBe(`picked ${want}`);
    }
  });

  test("find by text in a list of plain <div>s: each row its own line and ref, the count the rows'", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("lists.html");
    const shown = await page.locator("#rows .row:visible").allTextContents();
    const want = shown.filter((t) => t.includes("Row 1"));
    const f = await mcp.ok("find", { tabId, text: "Row 1" });
    expect(f.data.total).toBe(want.length);
    const lines = refLines(f.text);
    expect(lines.map((l) => l.line.replace(/\[[a-gi-z]+\d+\]/, "[ref]"))).toEqual(["Row 1", ...want.filter((t) => t !== "Row 1")].map((t) => `text [ref]: ${t}`));
    expect(new Set(lines.map((l) => l.ref)).size).toBe(lines.length);
    const row12 = refLines((await mcp.ok("find", { tabId, text: "Row 12" })).text);
    expect(row12).toHaveLength(1);
    await mcp.ok("click", { tabId, ref: row12[0]!.ref });
    expect(await page.locator("#picked").textContent()).toBe("picked Row 12");
  });

  test("reveal reaches row 7,777 of 10,000 (recycled nodes): its ref reads 'Row 7777', is in view and clicks that row", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("lists.html");
    expect(await page.getByText("Row 7777", { exact: true }).count()).toBe(0);
    const r = await mcp.ok("reveal", { tabId, text: "Row 7777" });
    console.log(`reveal "Row 7777" through torii mcp: ${Math.round(r.ms)} ms, ${String(r.data.scrolls)} scrolls`);
    const lines = refLines(r.text);
    expect(lines).toHaveLength(1);
    const { line, ref } = lines[0]!;
    expect(line).toBe(`text [${ref}]: Row 7777`);
    expect((await mcp.ok("read_text", { tabId, root: ref })).text).toBe("Row 7777");
    await expect.poll(() => page.getByText("Row 7777", { exact: true }).isVisible()).toBe(true);
    await mcp.ok("click", { tabId, ref });
    expect(await page.locator("#picked").textContent()).toBe("picked Row 7777");

    // The container by CSS selector, and a target by selector (no row number to jump by: it scans).
    const s = await mcp.ok("reveal", { tabId, selector: '[data-row="7900"]', container: "#rows" });
    const sref = refLines(s.text)[0]!.ref;
    expect((await mcp.ok("read_text", { tabId, root: sref })).text).toBe("Row 7900");
  });

  test("reveal at its cap says where it searched and stopped, not that it reached the end; a whole search says so", async () => {
    const { mcp } = rig();
    const { tabId } = await rig().open("lists.html");
    const capped = await mcp.call("reveal", { tabId, text: "Nowhere row", maxScrolls: 5 });
    expect(capped.error?.code).toBe("not_found");
    const msg = capped.error?.message ?? "";
    expect(msg).toMatch(/^no match in 5 scrolls \(the maxScrolls cap\): stopped at y=\d+ of 300000 after [\d.]+ s, before the end of the list; searched y=0–\d+ of 300,000 px \(\d%\) of the scroller [a-gi-z]+\d+$/);
    expect(msg).not.toMatch(/whole list|to its end/);
    expect(capped.error?.hint).toMatch(/^Call reveal again: it goes on from y=\d+\. Or raise maxScrolls/);
    // Called again, it goes on from there.
    const y = Number(/stopped at y=(\d+)/.exec(msg)?.[1]);
    const again = await mcp.call("reveal", { tabId, text: "Nowhere row", maxScrolls: 5 });
    expect(again.error?.message).toMatch(new RegExp(`searched y=${y}–\\d+ of 300,000 px`));

    const small = await rig().open("lists.html?n=200");
    const whole = await mcp.call("reveal", { tabId: small.tabId, text: "Nowhere row" });
    expect(whole.error?.code).toBe("not_found");
    expect(whole.error?.message).toMatch(/^no match: searched y=0–6000 of 6,000 px \(100%\) of the scroller [a-gi-z]+\d+ in \d+ scrolls, [\d.]+ s: the whole list/);

    // Bad targets: typed, naming what to do instead.
    const both = await mcp.call("reveal", { tabId, selector: ".row", text: "Row 1" });
    expect([both.error?.code, both.error?.hint]).toEqual(["invalid_argument", expect.stringMatching(/selector alone, or role\/name\/text/)]);
    const neither = await mcp.call("reveal", { tabId, container: "#rows" });
    expect([neither.error?.code, neither.error?.hint]).toEqual(["invalid_argument", expect.stringMatching(/^Say what to reveal/)]);
    const broken = await mcp.call("reveal", { tabId, selector: "[data-row=" });
    expect([broken.error?.code, broken.error?.message]).toEqual(["invalid_argument", expect.stringMatching(/^selector: invalid CSS selector/)]);
  });

  test("the catalogue as agents get it: every enum has a type, every object properties; code and other destructive writes say so (by MCP's defaults)", async () => {
    const listed: ListedTool[] = await rig().mcp.listTools();
    const problems = listed.flatMap((t) => schemaProblems(t.inputSchema, t.name, []));
    expect(problems).toEqual([]);
    const hint = (n: string) => listed.find((t) => t.name === n)?.annotations;
    // No annotations: MCP's defaults, not read-only and destructive.
    for (const n of ["evaluate", "fetch_in_page", "close_tab", "click", "navigate", "handle_dialog", "upload", "type", "press_key"]) {
      expect(listed.some((t) => t.name === n), n).toBe(true);
      expect(hint(n), n).toBeUndefined();
    }
    expect(hint("fill")).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    for (const n of ["find", "reveal", "snapshot", "read_text"]) expect(hint(n), n).toMatchObject({ readOnlyHint: true });
  });
});

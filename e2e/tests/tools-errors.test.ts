// Bad input to the browser tools: each gets its typed error code within its timeout — never a hang, never an
// action on the wrong element. Through the real path (MCP client → torii mcp → daemon → extension).
import { expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { Mcp, refOf } from "../src/mcp.ts";
import { Torii } from "../src/torii.ts";
import { useToolsRig } from "../src/tools-rig.ts";
import { pollUntil } from "../src/util.ts";

const text = async (p: import("playwright-core").Page, sel: string) => ((await p.locator(sel).textContent()) ?? "").trim();

/** Runs a call and checks how long it took. */
async function within<T extends { ms: number }>(ms: number, p: Promise<T>): Promise<T> {
  const r = await p;
  expect(r.ms, `answered in ${Math.round(r.ms)} ms (limit ${ms})`).toBeLessThan(ms);
  return r;
}

describeBrowser("browser tools: bad input", () => {
  const rig = useToolsRig();

  test("unknown tool → tool_not_found", async () => {
    const r = await within(5_000, rig().mcp.call("no_such_tool", { x: 1 }));
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe("tool_not_found");
    expect(r.text).toMatch(/^tool_not_found: .*\nhint: /);
  });

  test("arguments failing the schema → invalid_argument naming the field; nothing runs", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("form.html");
    const cases: [string, Record<string, unknown>, string][] = [
      ["snapshot", { tabId, maxChars: 10 }, "maxChars"],
      ["navigate", { url: 5 }, "url"],
      ["navigate", {}, "url"],
      ["click", { tabId, selector: "#clicky", bogus: true }, "bogus"],
      ["screenshot", { tabId, format: "gif" }, "format"],
      ["wait_for", { tabId, selector: "#x", timeoutMs: 60_000 }, "timeoutMs"],
      ["close_tab", { tabId: -1 }, "tabId"],
      ["fill", { tabId, selector: "#email" }, "value"],
    ];
    for (const [tool, args, field] of cases) {
      const r = await within(5_000, mcp.call(tool, args));
      expect(r.error?.code, `${tool} ${JSON.stringify(args)}: ${r.text}`).toBe("invalid_argument");
      expect(String(r.error?.field ?? r.error?.message), `${tool} names ${field}`).toContain(field);
    }
    // An action with a bad waitFor is refused before it acts.
    const w = await mcp.call("click", { tabId, selector: "#clicky", waitFor: { selector: "#out", state: "gone" } });
    expect(w.error?.code).toBe("invalid_argument");
    expect(String(w.error?.field)).toMatch(/waitFor/);
    expect(await text(page, "#clicky")).toBe("Click div");
    expect(await page.evaluate(() => document.querySelectorAll("[data-x]").length)).toBe(0);
  });

  test("a URL that is not one → invalid_argument naming url, audited as such (never a blocked origin)", async () => {
    const { mcp, torii } = rig();
    const { tabId } = await rig().open("form.html");
    const since = new Date().toISOString();
    const cases: [string, Record<string, unknown>][] = [
      ["navigate", { url: "notaurl" }],
      ["navigate", { tabId, url: "notaurl" }],
      // Parses as the scheme localhost:, which nothing can fetch: the agent's mistake, not a blocked origin.
      ["fetch_in_page", { tabId, url: "localhost:8080/x" }],
    ];
    for (const [tool, args] of cases) {
      const r = await within(5_000, mcp.call(tool, args));
      expect(r.error?.code, `${tool} ${JSON.stringify(args)}: ${r.text}`).toBe("invalid_argument");
      expect(r.error?.field, `${tool} names url`).toBe("url");
      expect(String(r.error?.hint)).toMatch(/URL/);
    }
    type Rec = { tool: string; origin: string; outcome: string; code: string };
    const recs = await pollUntil("the daemon's audit of the three calls", async () => {
      // The JSON export is one object: the chain's head and checkpoint, then its records.
      const all = (await torii.cliJSON<{ records: Rec[] }>(["audit", "--since", since, "--outcome", "error", "--format", "json"])).records;
      const mine = all.filter((x) => x.tool === "navigate" || x.tool === "fetch_in_page");
      return mine.length >= cases.length ? mine : undefined;
    }, { timeoutMs: 5_000 });
    for (const x of recs) {
      expect(x.code, JSON.stringify(x)).toBe("invalid_argument");
      expect(x.origin, JSON.stringify(x)).not.toBe("blocked");
    }
  });

  test("a tab that does not exist → no_tab", async () => {
    const { mcp } = rig();
    for (const [tool, args] of [
      ["snapshot", {}],
      ["click", { selector: "body" }],
      ["navigate", { url: "about:blank" }],
      ["close_tab", {}],
      ["screenshot", {}],
    ] as [string, Record<string, unknown>][]) {
      const r = await within(5_000, mcp.call(tool, { ...args, tabId: 999_999_999 }));
      // With tab ownership on, a tab the session does not own — existing or not — gets
      // tab_not_owned, the same words either way; without it, no_tab.
      expect(["no_tab", "tab_not_owned"], `${tool}: ${r.text}`).toContain(r.error?.code);
    }
  });

  test("a tab closed mid-call → no_tab, promptly", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("actions.html");
    const pending = mcp.call("wait_for", { tabId, selector: "#never", timeoutMs: 20_000 });
    // Close once the call is surely in the page: after a settle round trip on another tab would be
    // indirect; the page itself says when the engine has been injected (the wait's observer runs).
    await new Promise((r) => setTimeout(r, 300));
    await page.close();
    const r = await within(5_000, pending);
    expect(r.error?.code).toBe("no_tab");
  });

  test("a navigation in the middle of an action → navigation_failed, and no key lands on the new page", async () => {
    const { mcp, site } = rig();
    // wait_for runs in the page; the page leaves 300 ms after the click.
    const a = await rig().open("navself.html?delay=300");
    await a.page.locator("#go").click();
    const r = await within(5_000, mcp.call("wait_for", { tabId: a.tabId, selector: "#never", timeoutMs: 20_000 }));
    expect(r.error?.code).toBe("navigation_failed");
    await expect.poll(() => a.page.url()).toBe(site.url("landing.html?from=navself"));

    // Typing key by key while the page navigates away: the typing stops at the navigation.
    const b = await rig().open("navself.html?delay=150");
    await b.page.locator("#go").click();
    const long = "x".repeat(400);
    const t = await within(20_000, mcp.call("type", { tabId: b.tabId, selector: "#name", text: long, keys: true }));
    await expect.poll(() => b.page.url()).toBe(site.url("landing.html?from=navself"));
    // Either the typing finished before the navigation, or it is reported; never typed onward.
    if (t.isError) expect(t.error?.code).toBe("navigation_failed");
    expect(await b.page.locator("#search").inputValue()).toBe("");
  });

  test("a ref from another tab → stale_ref, and nothing happens on either page", async () => {
    const { mcp } = rig();
    const a = await rig().open("overlay.html");
    const b = await rig().open("form.html");
    const sa = await mcp.ok("snapshot", { tabId: a.tabId });
    const sb = await mcp.ok("snapshot", { tabId: b.tabId });
    const refsB = new Set([...sb.text.matchAll(/\[([a-gi-z]+\d+)\]/g)].map((m) => m[1]));
    for (const ref of [refOf(sa.text, "button", "Accept"), refOf(sa.text, "button", "Buy")]) {
      expect(refsB.has(ref), `ref ${ref} of tab ${a.tabId} is not one of tab ${b.tabId}'s`).toBe(false);
      const r = await within(5_000, mcp.call("click", { tabId: b.tabId, ref }));
      expect(r.error?.code, r.text).toBe("stale_ref");
      const m = await within(5_000, mcp.call("mouse_click", { tabId: b.tabId, ref }));
      expect(m.error?.code).toBe("stale_ref");
    }
    expect(await text(b.page, "#out")).toBe("");
    expect(await text(b.page, "#clicky")).toBe("Click div");
    expect(await a.page.locator("#overlay").count()).toBe(1);
    expect(await text(a.page, "#r")).toBe("");
  });

  test("a ref from a previous document → stale_ref, and nothing happens", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("table.html?rows=20");
    const s = await mcp.ok("snapshot", { tabId });
    const edit = refOf(s.text, "button", "Edit");
    await mcp.ok("reload", { tabId });
    for (const tool of ["click", "mouse_click", "hover", "get_state"]) {
      const r = await within(5_000, mcp.call(tool, { tabId, ref: edit }));
      expect(r.error?.code, `${tool}: ${r.text}`).toBe("stale_ref");
    }
    const f = await mcp.call("fill", { tabId, ref: edit, value: "x" });
    expect(f.error?.code).toBe("stale_ref");
    expect(await text(page, "#status")).toBe("idle");
    // After a new snapshot the same element has a new ref that works.
    const s2 = await mcp.ok("snapshot", { tabId });
    const fresh = refOf(s2.text, "button", "Edit");
    expect(fresh).not.toBe(edit);
    await mcp.ok("click", { tabId, ref: fresh });
    expect(await text(page, "#status")).toBe("editing row 0");
  });

  test("refs are short and per document, yet never reissued on the tab: each document's tag is new, its numbers count from 1", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("form.html");
    const seen = new Set<string>();
    const tags = new Set<string>();
    for (let i = 0; i < 3; i++) {
      if (i > 0) await mcp.ok("reload", { tabId });
      const s = await mcp.ok("snapshot", { tabId });
      const refs = [...s.text.matchAll(/\[([a-gi-z]+)(\d+)\]/g)].map((m) => ({ ref: `${m[1]}${m[2]}`, tag: m[1] as string, n: Number(m[2]) }));
      expect(refs.length).toBeGreaterThan(5);
      // One tag for the document; numbers 1, 2, 3, … in document order.
      expect(new Set(refs.map((r) => r.tag)).size).toBe(1);
      expect(refs.map((r) => r.n)).toEqual(refs.map((_, k) => k + 1));
      const tag = (refs[0] as { tag: string }).tag;
      expect(tags.has(tag), `tag ${tag} of document ${i} was an earlier document's`).toBe(false);
      tags.add(tag);
      for (const r of refs) {
        expect(seen.has(r.ref), `${r.ref} reissued`).toBe(false);
        seen.add(r.ref);
      }
    }
    // Every earlier document's ref fails closed on the current one; nothing is clicked.
    const old = [...seen].filter((r) => !r.startsWith([...tags].at(-1) as string));
    for (const ref of old.slice(0, 6)) {
      const r = await within(5_000, mcp.call("click", { tabId, ref }));
      expect(r.error?.code, `${ref}: ${r.text}`).toBe("stale_ref");
    }
    expect(await text(page, "#out")).toBe("");
  });

  test("a cross-origin frame's ref acts only in that frame's document: after the frame navigates it is stale_ref", async () => {
    const { mcp, site } = rig();
    const { tabId, page } = await rig().open(`iframes.html?x=${site.crossPort}`);
    await page.frameLocator("#cross").locator("#pay").waitFor({ timeout: 10_000 });
    const s = await mcp.ok("snapshot", { tabId });
    const pays = [...s.text.matchAll(/button "Pay now" \[([a-gi-z]+)(\d+)\]/g)].map((m) => ({ ref: `${m[1]}${m[2]}`, tag: m[1] as string }));
    expect(pays).toHaveLength(2);
    // The top document (with its same-origin frame) and the cross-origin frame have their own tags.
    expect(pays[0]?.tag).not.toBe(pays[1]?.tag);
    const crossPay = (pays[1] as { ref: string }).ref;
    // The cross-origin frame gets a new document: its old ref names nothing, in it or elsewhere.
    await page.evaluate(() => {
      const f = document.getElementById("cross") as HTMLIFrameElement;
      f.src = f.src + "?again=1";
    });
    await expect.poll(() => page.frames().some((f) => f.url().includes("again=1"))).toBe(true);
    await page.frameLocator("#cross").locator("#pay").waitFor({ timeout: 10_000 });
    const r = await within(5_000, mcp.call("click", { tabId, ref: crossPay }));
    expect(r.error?.code, r.text).toBe("stale_ref");
    expect(await page.frameLocator("#cross").locator("#paid").textContent()).toBe("");
    expect(await page.frameLocator("#same").locator("#paid").textContent()).toBe("");
    // A fresh snapshot gives the new frame document a tag of its own.
    const s2 = await mcp.ok("snapshot", { tabId });
    const pays2 = [...s2.text.matchAll(/button "Pay now" \[([a-gi-z]+)(\d+)\]/g)].map((m) => m[1] as string);
    expect(pays2).toHaveLength(2);
    expect(pays2[1]).not.toBe(pays[1]?.tag);
  });

  test("a selector matching nothing → not_found", async () => {
    const { mcp } = rig();
    const { tabId } = await rig().open("actions.html");
    for (const tool of ["click", "mouse_click", "hover", "get_state", "select_option", "fill", "type", "screenshot"]) {
      const extra = tool === "select_option" ? { values: ["x"] } : tool === "fill" ? { value: "x" } : tool === "type" ? { text: "x" } : {};
      const r = await within(5_000, rig().mcp.call(tool, { tabId, selector: "#does-not-exist", ...extra }));
      if (tool === "get_state" && !r.isError) expect(r.data.exists).toBe(false);
      else expect(r.error?.code, `${tool}: ${r.text}`).toBe("not_found");
    }
    const f = await within(5_000, rig().mcp.call("find", { tabId, role: "button", name: "Nope" }));
    expect(f.data.total).toBe(0);
  });

  test("a huge page (10,000 rows): snapshot paginates with maxChars, never hangs", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("table.html?rows=10000");
    expect(await page.locator("#rows tr").count()).toBe(10_000);
    const first = await within(30_000, mcp.call("snapshot", { tabId, maxChars: 20_000 }));
    expect(first.isError).toBe(false);
    expect(first.text.length).toBeLessThan(21_000);
    const cursor = first.data.nextCursor as string;
    expect(cursor).toMatch(/.+:\d+/);
    const second = await within(10_000, mcp.call("snapshot", { tabId, maxChars: 20_000, cursor }));
    expect(second.isError).toBe(false);
    expect(second.text.split("\n")[0]).not.toBe(first.text.split("\n")[1]);
    // The default page size bounds an unpaginated call too.
    const dflt = await within(30_000, mcp.call("snapshot", { tabId }));
    expect(dflt.text.length).toBeLessThanOrEqual(41_000);
    expect(dflt.data.nextCursor).toBeDefined();
    // read_text and find stay bounded as well.
    const rt = await within(30_000, mcp.call("read_text", { tabId, maxChars: 5_000 }));
    expect([...rt.text.replace(/\n\[more: .*\]$/, "")].length).toBeLessThanOrEqual(5_000);
    const fd = await within(30_000, mcp.call("find", { tabId, role: "button", name: "Edit", limit: 5 }));
    expect((fd.data.matches as unknown[]).length).toBe(5);
    expect(fd.data.total).toBe(10_000);
    // A stale cursor is refused, typed.
    const bad = await mcp.call("snapshot", { tabId, cursor: "zzzz:1" });
    expect(bad.error?.code).toBe("invalid_argument");
  });

  test("no extension connected → extension_not_connected, promptly", async () => {
    // A second daemon with no browser, and an agent's torii mcp on it.
    const lone = await Torii.create();
    try {
      await lone.start();
      const mcp = await Mcp.connect(lone, "lonely");
      try {
        const r = await within(3_000, mcp.call("tabs", {}));
        expect(r.error?.code).toBe("extension_not_connected");
        const n = await within(3_000, mcp.call("navigate", { url: "http://127.0.0.1:9/" }));
        expect(n.error?.code).toBe("extension_not_connected");
      } finally {
        await mcp.close();
      }
    } finally {
      await lone.dispose();
    }
  });
});

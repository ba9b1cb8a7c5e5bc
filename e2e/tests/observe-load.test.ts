// Console and network from the page's load, on the agent's own tabs (SECURITY I-84): real
// Chromium, the real extension and daemon, a real MCP client. A page logs an error and fetches a
// missing path while it loads; the first console_tail and network_tail after navigate already show
// them, and a reload's too. With the person's "Console & network" switch off when the page loads,
// nothing is kept: turned on afterwards, the first call starts the capture empty, as before.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { LOAD_ERROR, LOAD_MISSING, ObserveSite } from "../src/observe-site.ts";
import { setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

/** Chrome's own console line for the load's failed fetch. */
const FAILED_404 = "Failed to load resource: the server responded with a status of 404 (Not Found)";

interface Row {
  text?: string;
  url?: string;
  status?: number;
  level?: string;
  source?: string;
  origin?: string;
}

describeBrowser("console and network from the page's load", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: ObserveSite;
  let ext: Page;

  const rows = (r: ToolResult) => (r.data.entries ?? []) as Row[];
  const policy = (observe: boolean) => setPolicy(ext, { rules: [{ pattern: site.aPattern, act: true, observe }], actMode: true });
  /** navigate (a new tab, or tabId) to the load page; waits until the page has its fetch's answer. */
  async function load(q: string, tabId?: number): Promise<number> {
    const url = `${site.a}/load?${q}`;
    const r = await mcp.call("navigate", { url, ...(tabId !== undefined ? { tabId } : {}) });
    expect(r.isError, r.text).toBe(false);
    const page = await pollUntil("the load page", () => browser.context.pages().find((p) => p.url() === url), { timeoutMs: 10_000, intervalMs: 50 });
    await page.waitForFunction(() => document.getElementById("out")?.textContent === "fetched 404", undefined, { polling: 50 });
    return r.data.tabId as number;
  }

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.configure({ broker: { toolGroups: ["devtools"] } });
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await ObserveSite.start();
    mcp = await Mcp.connect(torii, "observe-load");
    await mcp.waitForCatalogue();
  });
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    await closeWebPages(browser);
  });

  it("switch on: the first console_tail shows the load's error, the first network_tail its request; a reload's too", async () => {
    await policy(true);
    const tabId = await load("q=first");

    const c = await mcp.call("console_tail", { tabId });
    expect(c.isError, c.text).toBe(false);
    expect(c.data.started, c.text).toBeUndefined();
    expect(c.text).not.toContain("capture started");
    expect(rows(c).map((e) => [e.level, e.source, e.origin, e.text])).toEqual([
      ["error", "console", site.a, `${LOAD_ERROR} ?q=first`],
      ["error", "browser", site.a, FAILED_404],
    ]);

    // The request's end reaches the worker through webRequest a moment after the page has its answer.
    const n = await mcp.call("network_tail", { tabId });
    expect(n.isError, n.text).toBe(false);
    expect(n.data.started, n.text).toBeUndefined();
    const missing = await pollUntil(
      "the load's 404",
      async () => {
        const x = rows(n).length ? n : await mcp.call("network_tail", { tabId });
        return rows(x).find((e) => e.url === `${site.a}${LOAD_MISSING}`);
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(missing).toMatchObject({ status: 404, origin: site.a });

    // A reload of the agent's tab: its load is kept in the same capture.
    const re = await mcp.call("reload", { tabId });
    expect(re.isError, re.text).toBe(false);
    const after = await pollUntil(
      "the reload's error",
      async () => {
        const x = await mcp.call("console_tail", { tabId });
        return rows(x).length >= 4 ? x : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(rows(after).map((e) => e.text)).toEqual([`${LOAD_ERROR} ?q=first`, FAILED_404, `${LOAD_ERROR} ?q=first`, FAILED_404]);
  });

  it("an agent's own tab navigated again keeps the capture; a new page's load is there at the first read", async () => {
    await policy(true);
    const tabId = await load("q=one");
    const tabAgain = await load("q=two", tabId);
    expect(tabAgain).toBe(tabId);
    const c = await mcp.call("console_tail", { tabId });
    expect(c.isError, c.text).toBe(false);
    expect(rows(c).map((e) => e.text)).toEqual([`${LOAD_ERROR} ?q=one`, FAILED_404, `${LOAD_ERROR} ?q=two`, FAILED_404]);
  });

  it("switch off while the page loads: nothing is kept; turned on later, the first call starts the capture empty", async () => {
    await policy(false);
    const tabId = await load("q=off");
    const refused = await mcp.call("console_tail", { tabId });
    expect(refused.error?.code, refused.text).toBe("observe_off");
    await policy(true);
    const c = await mcp.call("console_tail", { tabId });
    expect(c.isError, c.text).toBe(false);
    expect(c.data.started, c.text).toBe(true);
    expect(rows(c)).toEqual([]);
    expect(c.text).not.toContain(LOAD_ERROR);
    const again = await mcp.call("console_tail", { tabId });
    expect(`${again.text}\n${JSON.stringify(again.data)}`).not.toContain(LOAD_ERROR);
    const n = await mcp.call("network_tail", { tabId });
    expect(`${n.text}\n${JSON.stringify(n.data)}`).not.toContain(LOAD_MISSING);
  });
});

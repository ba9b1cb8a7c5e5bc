// Per-file rig for the browser-tool tests: one daemon, one headless Chromium with the extension
// (paired through the popup + `torii pair approve`), one `torii mcp` MCP client, and the fixture
// site. Each test opens its own tab through the `navigate` tool and gets the Playwright handle of
// that same tab to read the page's state back.
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { type Browser, pairBrowser } from "./browser.ts";
import { useRig } from "./harness.ts";
import { Mcp, type ToolResult } from "./mcp.ts";
import { Site } from "./site.ts";
import type { Torii } from "./torii.ts";
import { pollUntil } from "./util.ts";

export interface Tab {
  tabId: number;
  page: Page;
  url: string;
  /** The navigate result that opened it. */
  opened: ToolResult;
}

export interface ToolsRig {
  torii: Torii;
  browser: Browser;
  mcp: Mcp;
  site: Site;
  /** Opens testdata/pages/PATH (query allowed) in a new tab through `navigate`. */
  open(path: string, extra?: Record<string, unknown>): Promise<Tab>;
  /** The Playwright page of an extension tab id (by URL through `tabs`). */
  pageOf(tabId: number): Promise<Page>;
}

let seq = 0;

/**
 * The person's policy, set from an extension page as the options page would: every origin, act
 * mode on, approvals allowed — what `torii launch --permissive` gives a dedicated test profile.
 * Code execution and password fields stay off. A build without a policy ignores the message.
 */
export async function allowEverything(extPage: Page): Promise<void> {
  const reply = await extPage.evaluate(async () => {
    const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome;
    const kinds = ["submit", "destructive_click", "new_origin", "evaluate", "upload", "download"];
    const policy = {
      version: 1,
      rules: [],
      actMode: true,
      permissive: true,
      approvals: Object.fromEntries(kinds.map((k) => [k, "allow"])),
      approvalTimeoutMs: 60_000,
    };
    return (await c.runtime.sendMessage({ type: "torii.policy.set", policy })) as { ok?: boolean; error?: string } | undefined;
  });
  if (reply && reply.ok === false) throw new Error(`torii.policy.set: ${reply.error}`);
}

/** `config`: added to the daemon's config.json before it starts (e.g. `broker.toolGroups`). */
export function useToolsRig(opts: { config?: Record<string, unknown> } = {}): { (): ToolsRig } {
  const rig = useRig();
  let r: ToolsRig | undefined;
  const opened: Page[] = [];
  beforeAll(async () => {
    const torii = await rig.daemon();
    if (opts.config) await torii.configure(opts.config);
    await torii.start();
    const browser = await rig.browser();
    // Playwright dismisses a JavaScript dialog itself unless the page has a listener: a no-op one
    // leaves every dialog to the extension.
    browser.context.on("page", (p) => p.on("dialog", () => {}));
    for (const p of browser.context.pages()) p.on("dialog", () => {});
    const { popup } = await pairBrowser(browser, torii);
    await allowEverything(popup);
    const site = await Site.start();
    const mcp = await Mcp.connect(torii);
    await mcp.waitForCatalogue();

    const pageOf = async (tabId: number): Promise<Page> => {
      const t = await mcp.ok("tabs");
      const tab = (t.data.tabs as { tabId: number; url: string }[]).find((x) => x.tabId === tabId);
      if (!tab) throw new Error(`tab ${tabId} not listed: ${t.text}`);
      return pollUntil(`a Playwright page for tab ${tabId} (${tab.url})`, () =>
        browser.context.pages().find((p) => p.url() === tab.url),
      { timeoutMs: 5_000, intervalMs: 25 });
    };

    const open = async (path: string, extra: Record<string, unknown> = {}): Promise<Tab> => {
      const u = new URL(site.url(path));
      u.searchParams.set("t", String(++seq)); // one URL per tab: maps the tab to its Playwright page
      // Each test's own tab: a new one, not the session's current tab.
      const res = await mcp.ok("navigate", { url: u.href, ...(extra.tabId === undefined ? { newTab: true } : {}), ...extra });
      const tabId = res.data.tabId as number;
      const page = await pageOf(tabId);
      opened.push(page);
      return { tabId, page, url: u.href, opened: res };
    };
    r = { torii, browser, mcp, site, open, pageOf };
  });
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      if (r) console.error(`==== torii mcp stderr ====\n${r.mcp.log}`);
    });
  });
  afterEach(async () => {
    // Closing is cleanup, not the test: a tab still held by a dialog or a navigation the test
    // provoked may not close promptly, and must not stall the next test (the browser goes at afterAll).
    for (const p of opened.splice(0)) {
      await Promise.race([p.close({ runBeforeUnload: false }).catch(() => {}), new Promise((r) => setTimeout(r, 5_000))]);
    }
  });
  afterAll(async () => {
    await r?.mcp.close();
    await r?.site.close();
  });
  return () => {
    if (!r) throw new Error("tools rig not started (beforeAll failed?)");
    return r;
  };
}

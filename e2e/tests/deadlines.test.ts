// Every Torii-side wait ends before the common MCP clients' 60 s request timeout, with Torii's own
// typed error, and the call queued behind it still runs (SECURITY I-80). Through the official SDK
// client: a navigate to a server that never answers ends in its own timeoutMs with `timeout`; one
// to a page that never finishes loading reports the page still loading in its timeoutMs; the
// navigate queued behind each on the same tab lands; a timeoutMs past the cap is refused up front.
import { type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";
import type { Torii } from "../src/torii.ts";

/** A loopback server that takes every request and never answers it (not even headers). */
class Silent {
  private readonly held: ServerResponse[] = [];
  private constructor(private readonly server: Server) {}
  static async start(): Promise<Silent> {
    let self: Silent | undefined;
    const server = createServer((_req, res) => void self?.held.push(res));
    self = new Silent(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    return self;
  }
  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describeBrowser("deadlines: every wait ends before the client's 60 s, and the queue behind it runs", () => {
  const rig = useRig();
  let torii: Torii;
  let site: Site;
  let silent: Silent;
  let mcp: Mcp;
  let tabId: number;

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    const browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    await allowEverything(popup);
    site = await Site.start();
    silent = await Silent.start();
    mcp = await Mcp.connect(torii, "deadlines");
    await mcp.waitForCatalogue();
    const r = await mcp.call("navigate", { url: site.url("index.html") });
    expect(r.error, r.text).toBeUndefined();
    tabId = r.data.tabId as number;
    expect(typeof tabId).toBe("number");
  }, 90_000);
  afterAll(async () => {
    await mcp?.close();
    await silent?.close();
    await site?.close();
  });

  test("a server that never answers: Torii's timeout in timeoutMs; the navigate queued on the tab lands", async () => {
    // Sent together: the second waits in the daemon's queue for the tab, behind the first.
    const [hung, next] = await Promise.all([
      mcp.call("navigate", { tabId, url: silent.url("/never"), timeoutMs: 5_000 }),
      mcp.call("navigate", { tabId, url: site.url("index.html?after=hung") }),
    ]);
    expect(hung.error?.code, hung.text).toBe("timeout");
    expect(hung.error?.message).toContain("5000 ms");
    // Its own 5 s, not the 15 s of the start of a navigation plus 5 s more.
    expect(hung.ms).toBeGreaterThanOrEqual(4_500);
    expect(hung.ms).toBeLessThan(10_000);
    // Not cancelled, not busy, and not failed by the abandoned load's own abort (ERR_ABORTED).
    expect(next.error, next.text).toBeUndefined();
    expect(next.text).toContain("index.html?after=hung");
    expect(next.text).not.toContain("still loading");
  }, 40_000);

  test("a page that never finishes loading: reported still loading in timeoutMs; the navigate queued on the tab lands", async () => {
    const [slow, next] = await Promise.all([
      mcp.call("navigate", { tabId, url: site.url("slow"), timeoutMs: 5_000 }),
      mcp.call("navigate", { tabId, url: site.url("index.html?after=slow") }),
    ]);
    expect(slow.error, slow.text).toBeUndefined();
    expect(slow.text).toContain("(still loading)");
    expect(slow.ms).toBeLessThan(10_000);
    expect(next.error, next.text).toBeUndefined();
    expect(next.text).toContain("index.html?after=slow");
  }, 40_000);

  test("a timeoutMs past the cap is refused before anything runs, naming the cap", async () => {
    const r = await mcp.call("navigate", { tabId, url: site.url("index.html?never=1"), timeoutMs: 99_999 });
    expect(r.error?.code, r.text).toBe("invalid_argument");
    expect(r.error?.message).toContain("45000");
    expect(r.error?.field).toBe("timeoutMs");
    const tabs = await mcp.call("tabs");
    expect(tabs.text).not.toContain("never=1");
  }, 20_000);
});

// Adversarial: a page that takes the person's secret, once it is filled, and writes it back through
// every channel it has — its URL (a GET form, replaceState), its title, a button's label with quotes,
// web storage as JSON, a cookie URL-encoded, a request per key, the console in base64 — and an agent
// that searches the page for the secret character by character, asks for pixels and a PDF, and reads
// again after Chrome restarted the extension's worker (SECURITY I-77). Decided from what reached the
// agent: no form of the secret, and no five characters of it in a row, in any result.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

/** Spaces, @, &, ", +, / and a non-ASCII letter: every encoder writes it differently. */
const SECRET = 'Zq7 "k&m+t/ w@V9xé';

/** Every form in which the secret, or five of its characters in a row, could reach the agent. */
function leaks(text: string): string[] {
  const found: string[] = [];
  const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
  const forms: [string, string][] = [
    ["raw", SECRET],
    ["encodeURIComponent", encodeURIComponent(SECRET)],
    ["form", new URLSearchParams({ q: SECRET }).toString().slice(2)],
    ["JSON", JSON.stringify(SECRET).slice(1, -1)],
    ["HTML", SECRET.replace(/&/g, "&amp;").replace(/"/g, "&quot;")],
    ["base64", b64(SECRET).replace(/=+$/, "")],
  ];
  for (const [how, f] of forms) {
    for (let i = 0; i + 5 <= f.length; i++) {
      const piece = f.slice(i, i + 5);
      // Five characters of an encoding that are ordinary text on their own are not evidence.
      if (/^[A-Za-z]{5}$/.test(piece) && how !== "raw") continue;
      if (text.includes(piece)) {
        found.push(`${how}: ${JSON.stringify(piece)}`);
        break;
      }
    }
  }
  return found;
}

const PAGE = `<!doctype html><html><head><title>Leaky</title></head><body>
<h1>Leaky</h1>
<form id="f" method="get" action="/landing">
<label>Query <input id="q" name="q" aria-label="Query"></label>
<button id="go" type="submit">Go</button>
</form>
<button id="echo" type="button">Send</button>
<p id="status">idle</p>
<script>
const q = document.getElementById("q");
q.addEventListener("input", () => {
  const v = q.value;
  const b = document.getElementById("echo");
  b.textContent = 'Send "' + v + '"';
  b.title = v;
  localStorage.setItem("draft", JSON.stringify({ v }));
  // Cut by the read's 2,000-character limit three characters into the secret.
  localStorage.setItem("pad", "x".repeat(1997) + v);
  document.cookie = "draft=" + encodeURIComponent(v) + "; path=/";
  document.title = "Draft " + v;
  history.replaceState(null, "", "/leaky?d=" + encodeURIComponent(v));
  fetch("/check?pw=" + encodeURIComponent(v));
  console.error("draft " + btoa(unescape(encodeURIComponent(v))));
  document.getElementById("status").textContent = "saved";
});
</script></body></html>`;

function serve(req: IncomingMessage, res: ServerResponse): void {
  const u = new URL(req.url ?? "/", "http://x");
  if (u.pathname === "/check") {
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ ok: true, echo: u.searchParams.get("pw") }));
    return;
  }
  const html = u.pathname === "/landing" ? `<!doctype html><title>Landing</title><h1>Landing</h1><p>for ${(u.searchParams.get("q") ?? "").replace(/&/g, "&amp;").replace(/</g, "&lt;")}</p>` : PAGE;
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" }).end(html);
}

describeBrowser("adversarial: a secret written back through every channel", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let ext: Page;
  let server: Server;
  let origin = "";
  const seen: ToolResult[] = [];

  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await mcp.call(name, args);
    seen.push(r);
    return r;
  };
  const expectClean = () => {
    const bad = seen.map((r) => `${r.text}\n${JSON.stringify(r.data ?? {})}`).filter((t) => leaks(t).length);
    expect(bad.map((t) => `${leaks(t).join(", ")} in ${t.slice(0, 2000)}`), "a form of the secret reached the agent").toEqual([]);
  };

  /** Opens the leaky page and fills the secret; waits until the page wrote it everywhere. */
  async function filled(): Promise<{ tabId: number; page: Page }> {
    const nav = await call("navigate", { url: `${origin}/leaky`, newTab: true });
    expect(nav.isError, nav.text).toBe(false);
    const tabId = nav.data.tabId as number;
    const page = await pollUntil("the leaky page", () => browser.context.pages().find((p) => p.url().startsWith(`${origin}/leaky`)));
    const f = await call("fill", { tabId, selector: "#q", value: "{{secret:leaky}}" });
    expect(f.isError, f.text).toBe(false);
    await page.locator("#status", { hasText: "saved" }).waitFor({ timeout: 5_000 });
    return { tabId, page };
  }

  beforeAll(async () => {
    server = createServer(serve);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const ad = server.address();
    if (!ad || typeof ad === "string") throw new Error("no port");
    origin = `http://127.0.0.1:${ad.port}`;
    torii = await rig.daemon();
    await torii.configure({ broker: { toolGroups: ["devtools", "storage", "pdf"] } });
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    mcp = await Mcp.connect(torii, "secret-channels");
    await mcp.waitForCatalogue();
    const r = (await ext.evaluate(
      async (m) => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage(m),
      { type: "torii.secrets.add", name: "leaky", kind: "password", value: SECRET, origins: [origin] },
    )) as { ok: boolean };
    expect(r.ok).toBe(true);
  });
  afterAll(async () => {
    await mcp?.close();
    server?.closeAllConnections();
    await new Promise<void>((r) => server?.close(() => r()));
  });
  beforeEach(async () => {
    seen.length = 0;
    await setPolicy(ext, { rules: [{ pattern: origin.replace("http://", ""), act: true, storage: true, cookies: true, observe: true }], actMode: true });
    await closeWebPages(browser);
  });

  it("URL, title, labels, storage, cookies, requests and console: every read masks it, in every encoding", async () => {
    const nav = await call("navigate", { url: `${origin}/leaky`, newTab: true });
    const tabId = nav.data.tabId as number;
    // Capture starts at the first call on the tab: before the secret lands.
    await call("network_tail", { tabId });
    await call("console_tail", { tabId });
    const page = await pollUntil("the leaky page", () => browser.context.pages().find((p) => p.url().startsWith(`${origin}/leaky`)));
    const f = await call("fill", { tabId, selector: "#q", value: "{{secret:leaky}}" });
    expect(f.isError, f.text).toBe(false);
    await page.locator("#status", { hasText: "saved" }).waitFor({ timeout: 5_000 });
    // The page really holds it in every channel: the test would see a leak.
    expect(decodeURIComponent(new URL(page.url()).searchParams.get("d") ?? "")).toBe(SECRET);
    expect(await page.evaluate(() => localStorage.getItem("draft"))).toContain("Zq7");
    const net = await pollUntil("the check request", async () => {
      const r = await call("network_tail", { tabId });
      return r.text.includes("/check") ? r : undefined;
    });
    expect(net.text).toContain("{{secret:leaky}}");
    for (const [tool, args] of [
      ["tabs", {}],
      ["snapshot", { tabId }],
      ["read_text", { tabId }],
      ["get_state", { tabId, selector: "#echo" }],
      ["storage", { tabId }],
      ["cookies", { tabId }],
      ["console_tail", { tabId }],
      ["network_tail", { tabId, bodies: true }],
    ] as [string, Record<string, unknown>][]) {
      const r = await call(tool, args);
      expect(r.isError, `${tool}: ${r.text}`).toBe(false);
    }
    const storage = seen.find((r) => r.text.startsWith("storage of"));
    expect(storage?.text, "the value cut three characters into the secret shows none of them").not.toMatch(/xZ|xx Z/);
    expect(storage?.text).toContain("xxx{{s");
    const snap = seen.find((r) => r.text.includes("Send"));
    expect(snap?.text, "the label is there, masked").toContain("{{secret:leaky}}");
    expectClean();
  });

  it("a GET form carries it into the landing URL: tabs and the snapshot's header mask it", async () => {
    const { tabId, page } = await filled();
    const r = await call("click", { tabId, selector: "#go" });
    expect(r.isError, r.text).toBe(false);
    await pollUntil("the landing page", () => page.url().includes("/landing"));
    const tabs = await call("tabs");
    expect(tabs.text).toContain("/landing?q={{secret:leaky}}");
    await call("snapshot", { tabId });
    await call("read_text", { tabId });
    expectClean();
  });

  it("search cannot test the secret's characters: find, wait_for and network_tail's filter see the masked view", async () => {
    const { tabId } = await filled();
    await call("network_tail", { tabId });
    for (const prefix of ["Zq7", "Zq7 ", "k&m", "w@V"]) {
      const f = await call("find", { tabId, text: prefix });
      expect(f.text, `find ${prefix}`).toBe("no match");
      const w = await call("wait_for", { tabId, text: prefix, timeoutMs: 200 });
      expect(w.data.found, `wait_for ${prefix}`).toBe(false);
    }
    // The page sends its check request again: the filter sees it only as masked.
    await call("fill", { tabId, selector: "#q", value: "{{secret:leaky}}" });
    await pollUntil("the check request", async () => (await call("network_tail", { tabId, filter: "/check" })).text.includes("/check?pw="));
    for (const prefix of ["pw=Zq7", `pw=${encodeURIComponent("Zq7 ")}`, "pw=Zq7%20%22"]) {
      const n = await call("network_tail", { tabId, filter: prefix });
      expect(n.text, `network_tail filter ${prefix}`).not.toContain("/check");
    }
    expect((await call("find", { tabId, text: "Send" })).text).not.toBe("no match");
    expectClean();
  });

  it("a capture's HAR export, read back as a resource, carries the requests that held it, masked", async () => {
    const nav = await call("navigate", { url: `${origin}/leaky`, newTab: true });
    const tabId = nav.data.tabId as number;
    const start = await call("capture_start", { tabId });
    expect(start.isError, start.text).toBe(false);
    const id = start.data.captureId as string;
    const page = await pollUntil("the leaky page", () => browser.context.pages().find((p) => p.url().startsWith(`${origin}/leaky`)));
    await call("fill", { tabId, selector: "#q", value: "{{secret:leaky}}" });
    await page.locator("#status", { hasText: "saved" }).waitFor({ timeout: 5_000 });
    await pollUntil("the check request in the capture", async () => (await call("capture_list", { captureId: id })).text.includes("/check"));
    const har = await call("capture_export", { captureId: id, format: "har" });
    expect(har.isError, har.text).toBe(false);
    const uri = (har.data.file as { uri: string }).uri;
    const read = await mcp.client.readResource({ uri });
    const text = read.contents.map((c) => ("text" in c ? c.text : Buffer.from(String(c.blob), "base64").toString("utf8"))).join("");
    expect(text).toContain("/check?pw={{secret:leaky}}");
    expect(leaks(text), "a form of the secret in the HAR").toEqual([]);
    expectClean();
  });

  it("code does not run in a tab that received it (its answer could be any function of the value): secret_unmaskable", async () => {
    await setPolicy(ext, { rules: [{ pattern: origin.replace("http://", ""), act: true, evalExpression: true, evalProgram: true }], actMode: true });
    const { tabId, page } = await filled();
    const e = await call("evaluate", { tabId, expression: "[...document.querySelector('#q').value].reverse().join('')" });
    expect(e.error?.code, e.text).toBe("secret_unmaskable");
    expect(await page.evaluate(() => (window as unknown as { ran?: boolean }).ran)).toBeUndefined();
    const other = await call("navigate", { url: `${origin}/landing?q=plain`, newTab: true });
    const ok = await call("evaluate", { tabId: other.data.tabId, expression: "document.title" });
    expect(ok.text).toContain("Landing");
    expectClean();
  });

  it("pixels and a PDF of a tab that received it are refused with secret_unmaskable; another tab is not", async () => {
    const { tabId } = await filled();
    const shot = await call("screenshot", { tabId });
    expect(shot.error?.code, shot.text).toBe("secret_unmaskable");
    const pdf = await call("print_to_pdf", { tabId, name: "leak.pdf" });
    expect(pdf.error?.code, pdf.text).toBe("secret_unmaskable");
    const other = await call("navigate", { url: `${origin}/landing?q=plain`, newTab: true });
    const ok = await call("screenshot", { tabId: other.data.tabId });
    expect(ok.isError, ok.text).toBe(false);
    expectClean();
  });

  it("after Chrome restarts the extension's worker, every read masks it exactly as before", async () => {
    const { tabId } = await filled();
    await browser.stopServiceWorker();
    await torii.waitForLink(false, 10_000);
    const popup = await browser.openPopup();
    await browser.worker();
    await torii.waitForLink(true, 10_000);
    await popup.close();
    for (const [tool, args] of [
      ["storage", { tabId }],
      ["cookies", { tabId }],
      ["snapshot", { tabId }],
      ["tabs", {}],
    ] as [string, Record<string, unknown>][]) {
      const r = await pollUntil(`${tool} after the restart`, async () => {
        const x = await call(tool, args);
        return x.error?.code === "extension_not_connected" ? undefined : x;
      });
      expect(r.isError, `${tool}: ${r.text}`).toBe(false);
    }
    const shot = await call("screenshot", { tabId });
    expect(shot.error?.code, "the tab is remembered across the restart").toBe("secret_unmaskable");
    expectClean();
  });
});

// Proxy profiles and a per-tab user agent through the real path (MCP client → `torii mcp` → daemon
// → extension → Chromium): the person defines profiles in the options page (malformed ones refused
// there, naming the field), agents may switch only once the person allows it, a switch moves the
// whole browser's traffic through a recording proxy, the popup names the active profile, the audit
// records each switch; a user agent set on one tab reaches a test server from that tab only.
import { type IncomingMessage, type Server, createServer } from "node:http";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser } from "../src/harness.ts";
import { useToolsRig } from "../src/tools-rig.ts";
import { pollUntil } from "../src/util.ts";

/** A host no resolver knows: only a proxy can answer it. */
const PROXIED = "proxied.torii.test";
const WIN_CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.86 Safari/537.36";

interface Seen {
  url: string;
  ua: string;
  chPlatform?: string;
  chUa?: string;
}

/** An HTTP server on loopback that records what each request said and answers a small page. */
async function recorder(kind: "proxy" | "echo"): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const h = (k: string) => (typeof req.headers[k] === "string" ? (req.headers[k] as string) : undefined);
    // A forward proxy gets the absolute URL in the request line; an origin server gets the path.
    seen.push({ url: req.url ?? "", ua: h("user-agent") ?? "", chPlatform: h("sec-ch-ua-platform"), chUa: h("sec-ch-ua") });
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${kind}</title></head><body><h1 id="via">${kind} ${encodeURI(req.url ?? "")}</h1></body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const a = server.address();
  if (a === null || typeof a === "string") throw new Error("no port");
  return { server, port: a.port, seen };
}

describeBrowser("proxy profiles and a per-tab user agent", () => {
  // These tools are in groups the person turns on; the default catalogue leaves them out.
  const rig = useToolsRig({ config: { broker: { toolGroups: ["proxy", "emulation"] } } });
  let proxy: Awaited<ReturnType<typeof recorder>>;
  let echo: Awaited<ReturnType<typeof recorder>>;
  let options: Page;
  let popup: Page;

  beforeAll(async () => {
    proxy = await recorder("proxy");
    echo = await recorder("echo");
    options = await rig().browser.context.newPage();
    await options.goto(`${EXTENSION_ORIGIN}/options.html`);
    popup = await rig().browser.context.newPage();
    await popup.goto(`${EXTENSION_ORIGIN}/popup.html`);
  });
  afterAll(async () => {
    for (const s of [proxy?.server, echo?.server]) {
      s?.closeAllConnections();
      await new Promise<void>((r) => (s ? s.close(() => r()) : r()));
    }
  });

  /** What chrome.proxy reports to an extension page: the mode in force and who controls it. */
  const chromeProxy = () =>
    options.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { proxy: { settings: { get(d: object): Promise<{ value: { mode?: string }; levelOfControl: string }> } } } }).chrome;
      const d = await c.proxy.settings.get({ incognito: false });
      return { mode: d.value.mode, control: d.levelOfControl };
    });
  const popupActive = async () => {
    await popup.reload();
    return ((await popup.locator("#proxy-active").textContent()) ?? "").trim();
  };
  const saveError = () => options.locator("#proxy-error").textContent();

  async function submitProfile(p: { name: string; kind: string; host?: string; port?: string; bypass?: string; pac?: string }): Promise<void> {
    await options.fill("#proxy-name", p.name);
    await options.selectOption("#proxy-kind", p.kind);
    if (p.host !== undefined) await options.fill("#proxy-host", p.host);
    if (p.port !== undefined) await options.fill("#proxy-port", p.port);
    if (p.bypass !== undefined) await options.fill("#proxy-bypass", p.bypass);
    if (p.pac !== undefined) await options.fill("#proxy-pac", p.pac);
    await options.click("#proxy-save");
  }

  test("switching is off by default: proxy_switch is refused naming the switch and where it is; the popup shows the active profile", async () => {
    const { mcp } = rig();
    const list = await mcp.ok("proxy_profiles");
    expect(list.data).toMatchObject({ active: "system", switchAllowed: false });
    expect((list.data.profiles as { name: string }[]).map((p) => p.name)).toEqual(["system", "direct"]);
    const r = await mcp.call("proxy_switch", { name: "direct" });
    expect(r.error?.code, r.text).toBe("proxy_switch_off");
    expect(r.error?.message).toMatch(/"Let agents switch the proxy profile" in the Torii options \(Proxy profiles\)/);
    expect(await options.locator("#proxy-agent-switch").isChecked()).toBe(false);
    expect(await popupActive()).toBe("system");
    // Nothing changed: Torii does not hold the browser's proxy.
    expect((await chromeProxy()).control).toBe("controllable_by_this_extension");
  });

  test("the options page refuses malformed profiles with a message naming the field; the worker refuses them too", async () => {
    await submitProfile({ name: "bad-pac", kind: "pac", pac: "file:///etc/proxy.pac" });
    expect(await saveError()).toBe("PAC URL: a PAC URL must be http:, https: or data:, not file:");
    expect(await options.locator("#proxy-pac").getAttribute("aria-invalid")).toBe("true");
    await submitProfile({ name: "bad-pac", kind: "pac", pac: "javascript:alert(1)" });
    expect(await saveError()).toMatch(/^PAC URL: .*not javascript:/);
    await submitProfile({ name: "bad-host", kind: "fixed", host: "http://proxy.example.com", port: "8080", bypass: "" });
    expect(await saveError()).toMatch(/^Host: "http:\/\/proxy\.example\.com" is not a host/);
    await submitProfile({ name: "bad-port", kind: "fixed", host: "proxy.example.com", port: "70000", bypass: "" });
    expect(await saveError()).toBe("Port: the port must be a whole number from 1 to 65535");
    await submitProfile({ name: "bad-bypass", kind: "fixed", host: "proxy.example.com", port: "8080", bypass: "<local>, bad entry" });
    expect(await saveError()).toMatch(/^Bypass: bypass entry "bad entry" is not valid/);
    // The same profile sent to the worker past the page's checks: refused, naming profile and field.
    const direct = await options.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome;
      return c.runtime.sendMessage({ type: "torii.proxy.save", settings: { profiles: [{ name: "bad-pac", kind: "pac", pacUrl: "file:///etc/proxy.pac" }], active: "system", agentMaySwitch: false } });
    });
    expect(direct).toMatchObject({ ok: false, field: "pacUrl", error: 'profile "bad-pac": a PAC URL must be http:, https: or data:, not file:' });
    expect(await options.locator("#proxy-profiles tr").evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.profile))).toEqual(["system", "direct"]);

    // A good one: the recording proxy, loopback bypassed (Chrome's default) so the daemon's link is not proxied.
    await submitProfile({ name: "recorder", kind: "fixed", host: "127.0.0.1", port: String(proxy.port), bypass: "<local>" });
    await expect.poll(() => options.locator('#proxy-profiles tr[data-profile="recorder"]').textContent()).toContain(`http://127.0.0.1:${proxy.port}, bypass 1 entry`);
    expect(await saveError()).toBe("");
    const list = await rig().mcp.ok("proxy_profiles");
    expect(list.text).toMatch(new RegExp(`recorder \\(fixed\\): http://127\\.0\\.0\\.1:${proxy.port}`));
  });

  test("allowed: a switch sends the whole browser through the proxy (the person's tabs too), is audited and shown; reset to direct", async () => {
    const { mcp, browser } = rig();
    expect((await mcp.call("proxy_switch", { name: "recorder" })).error?.code).toBe("proxy_switch_off");
    await options.check("#proxy-agent-switch");
    await pollUntil("the person's switch to reach the worker", async () => ((await mcp.ok("proxy_profiles")).data.switchAllowed === true ? true : undefined));

    const sw = await mcp.ok("proxy_switch", { name: "recorder" });
    expect(sw.text).toMatch(/"recorder" .* is now active for the whole browser, every tab; it was "system"/);
    expect(await chromeProxy()).toEqual({ mode: "fixed_servers", control: "controlled_by_this_extension" });
    expect(await popupActive()).toBe("recorder");
    expect(await popup.locator("#proxy-desc").textContent()).toBe(`(http://127.0.0.1:${proxy.port}, bypass 1 entry)`);

    // The agent's request, observed at the proxy with its absolute URL.
    const nav = await mcp.ok("navigate", { url: `http://${PROXIED}/agent?n=1` });
    expect(nav.data.url).toBe(`http://${PROXIED}/agent?n=1`);
    const agentTab = await rig().pageOf(nav.data.tabId as number);
    expect(await agentTab.locator("#via").textContent()).toBe("proxy http://proxied.torii.test/agent?n=1");
    expect(proxy.seen.map((s) => s.url)).toContain(`http://${PROXIED}/agent?n=1`);
    // What the person was told: the switch is browser-wide. Their own tab goes through it as well.
    const person = await browser.context.newPage();
    await person.goto(`http://${PROXIED}/person`);
    expect(await person.locator("#via").textContent()).toBe("proxy http://proxied.torii.test/person");

    // The audit: the agent's switch with both names (never an address).
    const audit = await options.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<{ entries: { tool: string; outcome: string; code?: string; detail?: string; session?: string }[] }> } } }).chrome;
      return (await c.runtime.sendMessage({ type: "torii.audit.list" })).entries;
    });
    expect(audit.find((e) => e.tool === "proxy_switch" && e.outcome === "ok")).toMatchObject({ detail: "proxy system -> recorder", session: "e2e" });
    // The refused one (switch off) is there too, with its code and no profile.
    const refused = audit.find((e) => e.tool === "proxy_switch" && e.outcome === "error");
    expect(refused).toMatchObject({ code: "proxy_switch_off" });
    expect(refused?.detail).toBeUndefined();

    // Back to direct: the next request reaches no proxy (the made-up host cannot resolve).
    await mcp.ok("proxy_switch", { name: "direct" });
    expect(await chromeProxy()).toEqual({ mode: "direct", control: "controlled_by_this_extension" });
    expect(await popupActive()).toBe("direct");
    const before = proxy.seen.length;
    const after = await mcp.call("navigate", { tabId: nav.data.tabId, url: `http://${PROXIED}/after-reset` });
    expect(after.isError, after.text).toBe(true);
    expect(proxy.seen.slice(before).map((s) => s.url)).not.toContain(`http://${PROXIED}/after-reset`);

    // The person's own switch from the options page is audited as theirs.
    await options.click('#proxy-profiles tr[data-profile="system"] button.use');
    await expect.poll(() => chromeProxy()).toEqual({ mode: "system", control: "controllable_by_this_extension" });
    expect(await popupActive()).toBe("system");
    const mine = await options.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<{ entries: { tool: string; detail?: string; session?: string }[] }> } } }).chrome;
      return (await c.runtime.sendMessage({ type: "torii.audit.list" })).entries.find((e) => e.session === "person");
    });
    expect(mine).toMatchObject({ tool: "proxy_switch", outcome: "ok", detail: "proxy direct -> system" });
    await person.close();

    // The person turns switching off again: refused once more.
    await options.uncheck("#proxy-agent-switch");
    await pollUntil("the switch off to reach the worker", async () => ((await mcp.ok("proxy_profiles")).data.switchAllowed === false ? true : undefined));
    expect((await mcp.call("proxy_switch", { name: "recorder" })).error?.code).toBe("proxy_switch_off");
    expect((await chromeProxy()).mode).toBe("system");
  });

  test("a malformed profile stored somehow is refused by proxy_switch; an unknown name lists the profiles", async () => {
    const { mcp } = rig();
    await options.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { storage: { local: { get(k: string): Promise<Record<string, { profiles: unknown[] }>>; set(i: object): Promise<void> } } } }).chrome;
      const cur = (await c.storage.local.get("proxy")).proxy!;
      await c.storage.local.set({ proxy: { ...cur, agentMaySwitch: true, profiles: [...cur.profiles, { name: "sneaky", kind: "pac", pacUrl: "file:///etc/evil.pac" }] } });
    });
    await pollUntil("the stored change to reach the worker", async () => ((await mcp.ok("proxy_profiles")).data.switchAllowed === true ? true : undefined));
    const bad = await mcp.call("proxy_switch", { name: "sneaky" });
    expect(bad.error?.code, bad.text).toBe("profile_invalid");
    expect(bad.error?.message).toMatch(/"sneaky" is invalid \(pacUrl: a PAC URL must be http:, https: or data:, not file:\); nothing was changed/);
    expect((await chromeProxy()).mode).toBe("system");
    await options.reload();
    await expect.poll(() => options.locator('#proxy-profiles tr[data-profile="sneaky"]').textContent()).toContain("invalid: pacUrl");

    const unknown = await mcp.call("proxy_switch", { name: "nowhere" });
    expect(unknown.error?.code).toBe("invalid_argument");
    expect(unknown.error?.message).toMatch(/no proxy profile named "nowhere"; the person's profiles are: system, direct, recorder, sneaky/);
    expect((await chromeProxy()).mode).toBe("system");
    await options.uncheck("#proxy-agent-switch");
  });

  test("set_user_agent: one tab's User-Agent and client hints at a test server; other tabs and the person's untouched; reset restores", async () => {
    const { mcp, browser } = rig();
    const at = (tag: string) => `http://127.0.0.1:${echo.port}/ua?tab=${tag}`;
    const seenAt = (tag: string) => pollUntil(`the echo server to see ${tag}`, () => echo.seen.find((s) => s.url === `/ua?tab=${tag}`));
    const a = await mcp.ok("navigate", { url: at("A0"), newTab: true });
    const b = await mcp.ok("navigate", { url: at("B0"), newTab: true });
    const own = (await seenAt("A0")).ua;
    expect(own).not.toBe(WIN_CHROME);
    const pageA = await rig().pageOf(a.data.tabId as number);
    const pageB = await rig().pageOf(b.data.tabId as number);

    const set = await mcp.ok("set_user_agent", { tabId: a.data.tabId, userAgent: WIN_CHROME });
    expect(set.data).toMatchObject({ tabId: a.data.tabId, platform: "Win32", clientHints: { platform: "Windows", mobile: false } });
    await mcp.ok("navigate", { tabId: a.data.tabId, url: at("A1") });
    expect(await seenAt("A1")).toMatchObject({ ua: WIN_CHROME, chPlatform: '"Windows"', chUa: expect.stringContaining('"Google Chrome";v="131"') });
    expect(await pageA.evaluate(() => [navigator.userAgent, navigator.platform, (navigator as unknown as { userAgentData?: { platform: string } }).userAgentData?.platform])).toEqual([WIN_CHROME, "Win32", "Windows"]);
    // Another origin (another renderer process) in the same tab keeps it.
    await mcp.ok("navigate", { tabId: a.data.tabId, url: `http://localhost:${echo.port}/ua?tab=A2` });
    expect((await seenAt("A2")).ua).toBe(WIN_CHROME);

    // The agent's other tab and the person's tab: the browser's own, at the server and in the page.
    await mcp.ok("navigate", { tabId: b.data.tabId, url: at("B1") });
    expect((await seenAt("B1")).ua).toBe(own);
    expect((await seenAt("B1")).chPlatform).not.toBe('"Windows"');
    expect(await pageB.evaluate(() => navigator.userAgent)).toBe(own);
    const person = await browser.context.newPage();
    await person.goto(at("P1"));
    expect((await seenAt("P1")).ua).toBe(own);
    expect(await person.evaluate(() => navigator.userAgent)).toBe(own);

    // The person's tab is not the agent's to change.
    const personId = await pollUntil("the person's tab id", () =>
      options.evaluate(async (u) => {
        const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id?: number; url?: string }[]> } } }).chrome;
        return (await c.tabs.query({})).find((t) => t.url === u)?.id;
      }, at("P1")),
    );
    const notMine = await mcp.call("set_user_agent", { tabId: personId, userAgent: WIN_CHROME });
    expect(notMine.error?.code, notMine.text).toBe("tab_not_owned");
    await person.reload();
    expect(await person.evaluate(() => navigator.userAgent)).toBe(own);

    // Malformed strings: refused, naming the field, and the tab keeps what it had.
    const nl = await mcp.call("set_user_agent", { tabId: b.data.tabId, userAgent: "Agent/1.0\r\nX-Injected: 1" });
    expect(nl.error).toMatchObject({ code: "invalid_argument", field: "userAgent" });
    expect(nl.error?.message).toMatch(/line break/);
    const big = await mcp.call("set_user_agent", { tabId: b.data.tabId, userAgent: `Agent/${"x".repeat(1100)}` });
    expect(big.error).toMatchObject({ code: "invalid_argument", field: "userAgent" });
    expect(await pageB.evaluate(() => navigator.userAgent)).toBe(own);

    // reset: the browser's own user agent again.
    await mcp.ok("set_user_agent", { tabId: a.data.tabId, reset: true });
    await mcp.ok("navigate", { tabId: a.data.tabId, url: at("A3") });
    expect((await seenAt("A3")).ua).toBe(own);
    expect(await pageA.evaluate(() => navigator.userAgent)).toBe(own);
    await person.close();
  });
});

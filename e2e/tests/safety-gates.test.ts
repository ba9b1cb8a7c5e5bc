// End to end: the person's gates enforced in the extension, in real headless Chromium,
// through the real daemon and a real MCP client. Origin allowlist (redirects, popups, frames),
// act mode, code execution switches, password guard, approvals, handoff, pause, audit.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult, refOf } from "../src/mcp.ts";
import { BLOCKED_MARK, TwoOrigins, auditRows, downloadRows, rawAuditStorage, setPolicy, type RuleIn } from "../src/safety.ts";
import { Site } from "../src/site.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

const SENTINEL = "S3ntinel-Secret-94b1e";
/** A tab the agent did not open may be refused by ownership before the allowlist. */
const REFUSED_OTHER = ["origin_not_allowed", "tab_not_owned"];

describeBrowser("safety gates", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: TwoOrigins;
  let ext: Page; // an extension page (the popup as a tab): the person's UI
  const results: ToolResult[] = [];

  const call = async (name: string, args: Record<string, unknown> = {}, ms?: number) => {
    const r = await mcp.call(name, args, ms);
    results.push(r);
    return r;
  };
  const allowA = (extra: Partial<RuleIn> = {}, actMode = true) => setPolicy(ext, { rules: [{ pattern: site.aPattern, ...extra }], actMode });
  const pageAt = (url: string) =>
    pollUntil(`a page at ${url}`, () => browser.context.pages().find((p) => p.url().startsWith(url)), { timeoutMs: 10_000, intervalMs: 50 });
  const expectNoBlockedHost = (r: ToolResult) => {
    expect(r.text).not.toContain(site.bHost);
    expect(JSON.stringify(r.data)).not.toContain(site.bHost);
    expect(r.text).not.toContain(BLOCKED_MARK);
  };
  async function openA(path: string): Promise<{ tabId: number; page: Page }> {
    const r = await call("navigate", { url: `${site.a}${path}`, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const tabId = r.data.tabId as number;
    return { tabId, page: await pageAt(`${site.a}${path}`) };
  }

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await TwoOrigins.start();
    mcp = await Mcp.connect(torii, "safety");
    await mcp.waitForCatalogue();
  });
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    await setPolicy(ext, {});
    await closeWebPages(browser);
  });

  it("the tools are listed, write tools too, while everything is off", async () => {
    const names = (await mcp.listTools()).map((t) => t.name);
    for (const n of ["click", "type", "evaluate", "fetch_in_page", "handoff"]) expect(names).toContain(n);
  });

  it("an empty allowlist refuses everything, without naming the host", async () => {
    const nav = await call("navigate", { url: `${site.b}/secret` });
    expect(nav.error?.code).toBe("origin_not_allowed");
    expectNoBlockedHost(nav);
    // The person's own blocked tab: never listed with its host, never read.
    const p = await browser.context.newPage();
    await p.goto(`${site.b}/secret`);
    await p.bringToFront();
    const tabs = await call("tabs");
    expect(tabs.isError).toBe(false);
    expectNoBlockedHost(tabs);
    for (const tool of ["snapshot", "read_text", "screenshot"]) {
      const r = await call(tool);
      // Refused by the allowlist, or first by tab ownership: never read.
      expect([...REFUSED_OTHER, "no_tab"], `${tool}: ${r.text}`).toContain(r.error?.code);
      expectNoBlockedHost(r);
    }
  });

  it("an allowed origin works; a blocked one next to it does not", async () => {
    await allowA();
    const { tabId } = await openA("/");
    const snap = await call("snapshot", { tabId });
    expect(snap.isError, snap.text).toBe(false);
    expect(snap.text).toContain("Allowed page");
    const other = await call("navigate", { url: `${site.b}/` });
    expect(other.error?.code).toBe("origin_not_allowed");
    const inTab = await call("navigate", { tabId, url: `${site.b}/` });
    expect(inTab.error?.code).toBe("origin_not_allowed");
  });

  it("a redirect chain ending off the list → origin_not_allowed, nothing read", async () => {
    await allowA();
    const r = await call("navigate", { url: `${site.a}/redir?n=2`, newTab: true, observe: "snapshot" });
    expect(r.error?.code, r.text).toBe("origin_not_allowed");
    expectNoBlockedHost(r);
    expect(r.text).not.toContain("Secret page");
    // The tab stays unreadable.
    const landed = await pageAt(`${site.b}/secret`);
    expect(await landed.title()).toBe("Secret");
    const tabs = await call("tabs");
    const blocked = (tabs.data.tabs as { tabId: number; blocked?: boolean }[]).find((t) => t.blocked);
    expect(blocked).toBeTruthy();
    const s = await call("snapshot", { tabId: blocked?.tabId });
    expect(s.error?.code).toBe("origin_not_allowed");
  });

  it("a popup opened by an allowed page onto a blocked one is not readable", async () => {
    await allowA();
    const { tabId } = await openA("/popup");
    const snap = await call("snapshot", { tabId });
    const ref = refOf(snap.text, "button", "Open popup");
    const popupSeen = browser.context.waitForEvent("page", { timeout: 10_000 });
    const c = await call("click", { tabId, ref });
    expect(c.isError, c.text).toBe(false);
    const popup = await popupSeen;
    await popup.waitForLoadState();
    const tabs = await call("tabs");
    expectNoBlockedHost(tabs);
    const listed = tabs.data.tabs as { tabId: number; blocked?: boolean; url: string }[];
    const blocked = listed.filter((t) => t.blocked);
    expect(blocked.length).toBeGreaterThan(0);
    for (const t of blocked) {
      const r = await call("read_text", { tabId: t.tabId });
      expect(REFUSED_OTHER, r.text).toContain(r.error?.code);
      expectNoBlockedHost(r);
    }
  });

  it("a cross-origin iframe of a blocked origin inside an allowed page is not read", async () => {
    await allowA();
    const { tabId } = await openA("/frame");
    const snap = await call("snapshot", { tabId });
    expect(snap.isError, snap.text).toBe(false);
    expect(snap.text).toContain("Has a frame");
    expect(snap.text).toContain("origin_not_allowed");
    expect(snap.text).not.toContain(BLOCKED_MARK);
    expect(snap.text).not.toContain("Secret page");
    // Its pixels are refused too.
    const shot = await call("screenshot", { tabId });
    expect(shot.error?.code).toBe("origin_not_allowed");
  });

  it("act mode off refuses write tools (only the person can lift it); the toggle applies on the next call", async () => {
    await allowA({}, true);
    const { tabId } = await openA("/form");
    await allowA({}, false);
    const snap = await call("snapshot", { tabId });
    expect(snap.isError).toBe(false);
    const ref = refOf(snap.text, "button", "Plain");
    const refused = await call("click", { tabId, ref });
    expect(refused.error?.code).toBe("act_mode_off");
    expect(refused.text).toMatch(/only the person/i);
    expect((await call("navigate", { tabId, url: `${site.a}/` })).error?.code).toBe("act_mode_off");
    await allowA({}, true);
    const ok = await call("click", { tabId, ref });
    expect(ok.isError, ok.text).toBe(false);
    // Per-origin act mode works without the global switch.
    await allowA({ act: true }, false);
    expect((await call("click", { tabId, ref })).isError).toBe(false);
  });

  it("evaluate and fetch_in_page are refused unless the origin's own switch is on (expression ≠ program)", async () => {
    await allowA();
    const { tabId } = await openA("/");
    expect((await call("evaluate", { tabId, expression: "1 + 1" })).error?.code).toBe("eval_not_allowed");
    expect((await call("fetch_in_page", { tabId, url: "/secret" })).error?.code).toBe("eval_not_allowed");
    await allowA({ evalExpression: true });
    const e = await call("evaluate", { tabId, expression: "document.title + ':' + (20 + 22)" });
    expect(e.isError, e.text).toBe(false);
    expect(e.text).toContain("Allowed:42");
    expect((await call("evaluate", { tabId, program: "return 1" })).error?.code).toBe("eval_not_allowed");
    await allowA({ evalExpression: true, evalProgram: true, fetch: true });
    const p = await call("evaluate", { tabId, program: "const x = 40; return x + 2;" });
    expect(p.text).toBe("42");
    const f = await call("fetch_in_page", { tabId, url: "/secret" });
    expect(f.isError, f.text).toBe(false);
    expect(f.text).toContain("Secret page");
    // The request's destination is checked against the list too.
    const fb = await call("fetch_in_page", { tabId, url: `${site.b}/secret` });
    expect(fb.error?.code).toBe("origin_not_allowed");
    expectNoBlockedHost(fb);
  });

  it("password fields (plain, in a shadow root, in an iframe) are refused for fill/type/press_key unless allowPassword and the origin allow it", async () => {
    await allowA();
    const { tabId, page } = await openA("/pw");
    await page.frameLocator("#inner").locator("#frame-pw").waitFor();
    const snap = await call("snapshot", { tabId });
    expect(snap.isError, snap.text).toBe(false);
    const refs = ["Plain password", "Shadow password", "Frame password"].map((n) => refOf(snap.text, "textbox", n));
    for (const ref of refs) {
      for (const [tool, args] of [
        ["fill", { value: SENTINEL }],
        ["type", { text: SENTINEL }],
        ["press_key", { key: "a" }],
        ["fill", { value: SENTINEL, allowPassword: true }], // the origin does not allow it
      ] as const) {
        const r = await call(tool, { tabId, ref, ...args });
        expect(r.error?.code, `${tool} on ${ref}: ${r.text}`).toBe("password_field");
      }
    }
    // Focus already in a password field (shadow root), typing without a target: refused too.
    await page.locator("#host").locator("#shadow-pw").focus();
    expect((await call("type", { tabId, text: SENTINEL })).error?.code).toBe("password_field");
    expect((await call("press_key", { tabId, key: "x" })).error?.code).toBe("password_field");
    // ... and focus inside the iframe's password field.
    await page.frameLocator("#inner").locator("#frame-pw").focus();
    expect((await call("type", { tabId, text: SENTINEL })).error?.code).toBe("password_field");
    expect(await page.locator("#plain-pw").inputValue()).toBe("");
    expect(await page.locator("#host").locator("#shadow-pw").inputValue()).toBe("");
    expect(await page.frameLocator("#inner").locator("#frame-pw").inputValue()).toBe("");
    // A normal field takes the sentinel; no result ever echoes it.
    const user = refOf(snap.text, "textbox", "User name");
    const typed = await call("fill", { tabId, ref: user, value: SENTINEL, observe: "snapshot" });
    expect(typed.isError, typed.text).toBe(false);
    expect(await page.locator("#user").inputValue()).toBe(SENTINEL);
    // With the origin's switch and the call's flag, a password field can be filled.
    await allowA({ allowPassword: true });
    expect((await call("fill", { tabId, ref: refs[0], value: "pw" })).error?.code).toBe("password_field");
    const ok = await call("fill", { tabId, ref: refs[0], value: SENTINEL, allowPassword: true });
    expect(ok.isError, ok.text).toBe(false);
    expect(await page.locator("#plain-pw").inputValue()).toBe(SENTINEL);
    // The sentinel never appears in any tool result, the extension's audit, its storage or the logs.
    for (const r of results) expect(JSON.stringify(r)).not.toContain(SENTINEL);
    const snap2 = await call("snapshot", { tabId });
    expect(snap2.text).not.toContain(SENTINEL);
    expect(JSON.stringify(await auditRows(ext))).not.toContain(SENTINEL);
    expect(await rawAuditStorage(ext)).not.toContain(SENTINEL);
    expect(torii.log.toString()).not.toContain(SENTINEL);
    expect(browser.log.toString()).not.toContain(SENTINEL);
    expect(mcp.log.toString()).not.toContain(SENTINEL);
  });

  it("approvals: ask → approve, deny, timeout", async () => {
    await setPolicy(ext, { rules: [{ pattern: site.aPattern }], actMode: true, approvals: { submit: "ask", destructive_click: "ask" }, approvalTimeoutMs: 4_000 });
    const { tabId, page } = await openA("/form");
    const snap = await call("snapshot", { tabId });
    const danger = refOf(snap.text, "button", "Delete account");
    const answer = async (button: "#approve" | "#deny") => {
      const w = await pollUntil("the approval window", () => browser.context.pages().find((p) => p.url().includes("/approval.html")), { timeoutMs: 10_000, intervalMs: 50 });
      await w.locator("#details").getByText("Delete account", { exact: false }).waitFor({ timeout: 5_000 });
      // The window closes itself once answered: the click may outlive its page.
      await w.locator(button).click({ noWaitAfter: true }).catch((e: Error) => {
        if (!/closed/i.test(e.message)) throw e;
      });
    };
    // approve
    let pending = call("click", { tabId, ref: danger });
    await answer("#approve");
    let r = await pending;
    expect(r.isError, r.text).toBe(false);
    expect(await page.locator("#out").textContent()).toBe("deleted");
    await page.evaluate(() => (document.getElementById("out")!.textContent = ""));
    // deny
    pending = call("click", { tabId, ref: danger });
    await answer("#deny");
    r = await pending;
    expect(r.error?.code).toBe("approval_denied");
    expect(await page.locator("#out").textContent()).toBe("");
    // timeout
    const t0 = Date.now();
    r = await call("click", { tabId, ref: danger });
    expect(r.error?.code).toBe("approval_timeout");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3_500);
    expect(await page.locator("#out").textContent()).toBe("");
    // A plain click is not asked about; "deny" refuses without asking.
    expect((await call("click", { tabId, ref: refOf(snap.text, "button", "Plain") })).isError).toBe(false);
    await setPolicy(ext, { rules: [{ pattern: site.aPattern, approvals: { submit: "deny" } }], actMode: true });
    expect((await call("click", { tabId, ref: refOf(snap.text, "button", "Place order") })).error?.code).toBe("approval_denied");
    const audit = await auditRows(ext);
    expect(audit.some((e) => e.approval === "approved")).toBe(true);
    expect(audit.some((e) => e.approval === "denied")).toBe(true);
    expect(audit.some((e) => e.approval === "timeout")).toBe(true);
  });

  it("handoff waits for Done or Cancel and withholds the page meanwhile", async () => {
    await allowA();
    const { tabId, page } = await openA("/");
    let pending = call("handoff", { tabId, reason: "mfa", message: "Approve the sign-in on your phone" }, 90_000);
    const done = page.locator("torii-handoff button[data-torii-handoff=done]");
    await done.waitFor({ timeout: 10_000 });
    // The daemon runs one call per session and per tab at a time (the handoff holds both): another
    // session's call without tabId goes to the handed tab, which handoff made active, and the
    // extension refuses it.
    const other = await Mcp.connect(torii, "other");
    // With tab ownership the daemon refuses it before the extension does; either way
    // nothing of the page is read.
    const HELD = ["handoff_active", "no_tab", "tab_not_owned"];
    const meanwhile = await other.call("snapshot");
    expect(HELD, meanwhile.text).toContain(meanwhile.error?.code);
    expect(meanwhile.text).not.toContain("Allowed page");
    expect(HELD).toContain((await other.call("click", { selector: "#b" })).error?.code);
    // A page script cannot press Done for the person (untrusted click).
    await page.evaluate(() => (document.querySelector("torii-handoff")!.shadowRoot!.querySelector("button") as HTMLButtonElement).click());
    await new Promise((r) => setTimeout(r, 300));
    expect(HELD).toContain((await other.call("read_text")).error?.code);
    await other.close();
    await done.click();
    let r = await pending;
    expect(r.isError, r.text).toBe(false);
    expect((await call("read_text", { tabId })).isError).toBe(false);
    expect(await page.locator("torii-handoff").count()).toBe(0);
    pending = call("handoff", { tabId, reason: "captcha" }, 90_000);
    const cancel = page.locator("torii-handoff button[data-torii-handoff=cancelled]");
    await cancel.waitFor({ timeout: 10_000 });
    await cancel.click();
    r = await pending;
    expect(r.error?.code).toBe("handoff_cancelled");
  });

  it("pause refuses every call at once, shows it, and resume is explicit", async () => {
    await allowA();
    const { tabId } = await openA("/");
    const pause = ext.locator("#pause");
    await pause.check();
    await ext.locator("#paused-banner").waitFor({ state: "visible", timeout: 5_000 });
    for (const [tool, args] of [["tabs", {}], ["snapshot", { tabId }], ["click", { tabId, selector: "#b" }], ["navigate", { url: `${site.a}/` }]] as const) {
      const r = await call(tool, args);
      expect(r.error?.code, `${tool}: ${r.text}`).toBe("paused");
    }
    await pause.uncheck();
    await pollUntil("resume", async () => !(await call("tabs")).isError, { timeoutMs: 10_000 });
    expect(await ext.locator("#paused-banner").isHidden()).toBe(true);
  });

  it("upload and download approvals: ask → approve / deny, deny cancels the agent's download, allow completes it", async () => {
    const fx = await Site.start();
    const dir = await shortTempDir();
    try {
      const file = join(dir, "torii-upload-e2e.txt");
      await writeFile(file, "hello from the agent");
      const policy = (approvals: Record<string, "allow" | "ask" | "deny">) =>
        setPolicy(ext, { rules: [{ pattern: `127.0.0.1:${fx.port}` }], actMode: true, approvals, approvalTimeoutMs: 15_000 });
      await policy({ upload: "allow" });
      const nav = await call("navigate", { url: fx.url("upload.html") });
      expect(nav.isError, nav.text).toBe(false);
      const tabId = nav.data.tabId as number;
      const page = await pageAt(fx.url("upload.html"));
      const names = () => page.locator("#names").textContent();
      // SECURITY I-66: upload takes files from the session's download sandbox only, by name.
      const saved = await call("save_to_file", { name: "torii-upload-e2e.txt", text: "hello from the agent" });
      expect(saved.isError, saved.text).toBe(false);
      const up = ["torii-upload-e2e.txt"];
      // Validation: only a file input, only sandbox file names (a path is refused even for a real file).
      expect((await call("upload", { tabId, selector: "#plain", files: up })).error?.code).toBe("not_editable");
      expect((await call("upload", { tabId, selector: "#file", files: [file] })).error?.code).toBe("invalid_argument");
      expect((await call("upload", { tabId, selector: "#file", files: ["../torii-upload-e2e.txt"] })).error?.code).toBe("invalid_argument");
      const missing = await call("upload", { tabId, selector: "#file", files: ["not-saved.txt"] });
      expect(missing.error?.code, missing.text).toBe("not_found");
      expect(missing.text).toContain("save_to_file");
      expect(await names()).toBe("");
      const answer = async (button: "#approve" | "#deny", shows: string) => {
        const w = await pollUntil("the approval window", () => browser.context.pages().find((p) => p.url().includes("/approval.html")), { timeoutMs: 10_000, intervalMs: 50 });
        await w.locator("#details").getByText(shows, { exact: false }).first().waitFor({ timeout: 5_000 });
        await w.locator(button).click({ noWaitAfter: true }).catch((e: Error) => {
          if (!/closed/i.test(e.message)) throw e;
        });
      };
      await policy({ upload: "ask", download: "deny" });
      // ask → approve: the page sees the file's name and bytes; the window showed the name, not the path.
      let pending = call("upload", { tabId, selector: "#file", files: up });
      await answer("#approve", "torii-upload-e2e.txt");
      let r = await pending;
      expect(r.isError, r.text).toBe(false);
      expect(await names()).toBe("torii-upload-e2e.txt");
      // The bytes the page got are the sandbox file's.
      expect(await page.evaluate(() => (document.getElementById("file") as HTMLInputElement).files?.[0]?.text())).toBe("hello from the agent");
      await page.reload();
      // ask → deny: nothing set.
      pending = call("upload", { tabId, selector: "#file", files: up });
      await answer("#deny", "torii-upload-e2e.txt");
      r = await pending;
      expect(r.error?.code).toBe("approval_denied");
      expect(await page.evaluate(() => (document.getElementById("file") as HTMLInputElement).files?.length ?? 0)).toBe(0);
      expect(await names()).toBe("");
      // download: deny → the call reports approval_denied and no file is left.
      const fixture = (d: { url: string }) => d.url.endsWith("/upload.html");
      r = await call("click", { tabId, selector: "#dl" });
      expect(r.error?.code, r.text).toBe("approval_denied");
      // The refused download ends (interrupted) rather than completing: wait for it to end.
      let rows = await pollUntil("the refused download to end", async () => {
        const seen = (await downloadRows(ext)).filter(fixture);
        return seen.length > 0 && seen.every((d) => d.state !== "in_progress") ? seen : undefined;
      });
      expect(rows.filter((d) => d.state === "complete" && d.exists)).toHaveLength(0);
      // A click that starts no download is not taken for one.
      r = await call("click", { tabId, selector: "#plain" });
      expect(r.isError, r.text).toBe(false);
      // allow → the download completes.
      await policy({ download: "allow" });
      const seen = new Set(rows.map((d) => d.id));
      r = await call("click", { tabId, selector: "#dl" });
      expect(r.isError, r.text).toBe(false);
      rows = await pollUntil(
        "the allowed download to complete",
        async () => {
          const done = (await downloadRows(ext)).filter((d) => fixture(d) && !seen.has(d.id) && d.state === "complete");
          return done.length ? done : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      expect(rows[0]?.exists).toBe(true);
      const audit = await auditRows(ext);
      expect(audit.some((e) => e.tool === "upload" && e.approval === "approved")).toBe(true);
      expect(audit.some((e) => e.tool === "click" && e.code === "approval_denied")).toBe(true);
    } finally {
      await fx.close();
      await removeDir(dir);
    }
  });

  it("the extension's audit keeps metadata of every call, and the popup shows it", async () => {
    const rows = await auditRows(ext);
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.some((r) => r.tool === "navigate" && r.outcome === "error" && r.code === "origin_not_allowed")).toBe(true);
    expect(rows.some((r) => r.tool === "snapshot" && r.outcome === "ok" && r.origin === site.a)).toBe(true);
    for (const r of rows) expect(Object.keys(r).every((k) => ["ts", "tool", "session", "origin", "outcome", "code", "ms", "approval"].includes(k))).toBe(true);
    await ext.reload();
    await ext.locator("#audit summary").click();
    await pollUntil("audit rows in the popup", async () => (await ext.locator("#audit-list li").count()) > 0, { timeoutMs: 5_000 });
  });
});

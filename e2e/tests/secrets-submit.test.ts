// End to end: `type` of one `{{secret:NAME}}` with `submit: true` into a password field of the
// secret's own origin (SECURITY I-18, I-69), in real headless Chromium through the real daemon. The
// call's Enter reaches that field and no other: the form posts the value to its own origin, while
// pages built to carry it elsewhere (a form that posts to another origin, one that re-points itself
// from its submit handler, focus moved to another password field or into another origin's frame)
// get nothing, judged by what each server received. Literal passwords and every secret refusal
// keep their errors, and the value never comes back in a result, the audit or the logs.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult, refOf } from "../src/mcp.ts";
import { auditRows, rawAuditStorage, setPolicy, type RuleIn } from "../src/safety.ts";
import { SecretsSite, attempts } from "../src/secrets-site.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

const SENTINEL = "S3ntinel-Submit-secret-7f3a1";

describeBrowser("secrets: type with submit into a password field", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: SecretsSite;
  let ext: Page;
  const results: ToolResult[] = [];

  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await mcp.call(name, args);
    results.push(r);
    return r;
  };
  const msg = async (m: Record<string, unknown>) => {
    const r = (await ext.evaluate(async (x) => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage(x), m)) as { ok: boolean; error?: string };
    if (!r?.ok) throw new Error(`${String(m.type)}: ${JSON.stringify(r)}`);
    return r;
  };
  const allow = (extra: Partial<RuleIn> = {}) =>
    setPolicy(ext, { rules: [{ pattern: site.pattern(site.a), ...extra }, { pattern: site.pattern(site.b) }], actMode: true });
  const pageAt = (url: string) =>
    pollUntil(`a page at ${url}`, () => browser.context.pages().find((p) => p.url().startsWith(url)), { timeoutMs: 10_000, intervalMs: 50 });
  async function open(path: string): Promise<{ tabId: number; page: Page; pw: string; snap: string }> {
    const r = await call("navigate", { url: `${site.a}${path}`, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const page = await pageAt(`${site.a}${path}`);
    if (path === "/submit-frame") await page.frameLocator("#other").locator("#bpw").waitFor({ timeout: 10_000 });
    const snap = await call("snapshot", { tabId: r.data.tabId });
    expect(snap.isError, snap.text).toBe(false);
    return { tabId: r.data.tabId as number, page, pw: refOf(snap.text, "textbox", "Password"), snap: snap.text };
  }
  const posts = (origin: string) => site.reports.filter((r) => r.origin === origin && r.ev.startsWith("post "));
  const leakedTo = (origin: string) => site.reports.filter((r) => r.origin === origin).some((r) => r.v.includes(SENTINEL));
  /** The call returned and no document of the page began a navigation (a form post is one). */
  const nothingSubmitted = async (page: Page, path: string) => {
    expect(new URL(page.url()).pathname).toBe(path);
    expect(await attempts(page)).toEqual(page.frames().map(() => 0));
  };

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await SecretsSite.start();
    mcp = await Mcp.connect(torii, "secrets-submit");
    await mcp.waitForCatalogue();
    await allow();
    await msg({ type: "torii.secrets.add", name: "apw", kind: "password", value: SENTINEL, origins: [site.a] });
    await msg({ type: "torii.secrets.add", name: "elsewhere", kind: "password", value: SENTINEL, origins: [site.b] });
  });
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    await allow();
    await closeWebPages(browser);
    site.reports.length = 0;
  });

  it("the secret goes in, Enter submits, the form's own origin receives the value; no result shows it", async () => {
    const { tabId, page, pw, snap } = await open("/submit");
    expect((await call("fill", { tabId, ref: refOf(snap, "textbox", "User name"), value: "alice" })).isError).toBe(false);
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain("secret apw");
    expect(r.text).toContain("+ Enter");
    // The check the refusals below rely on sees this submission: a count, or already the page it
    // posted to (a new document counts from 0), or a document going away while asked.
    const saw = await page.evaluate(() => location.pathname === "/done" || ((window as unknown as { __attempts?: number }).__attempts ?? 0) > 0).catch(() => true);
    expect(saw).toBe(true);
    await pollUntil("the form's post", () => posts(site.a).find((p) => p.ev === "post /done"));
    const got = new URLSearchParams(posts(site.a)[0]?.v ?? "");
    expect(got.get("pw")).toBe(SENTINEL);
    expect(got.get("user")).toBe("alice");
    await expect.poll(() => page.url()).toContain("/done");
    // The landing page shows the value; no read gives it back.
    const read = await call("read_text", { tabId });
    expect(read.isError, read.text).toBe(false);
    expect(read.text).toContain("received {{secret:apw}}");
    const snap2 = await call("snapshot", { tabId });
    const state = await call("get_state", { tabId, selector: "#got" });
    for (const x of [r, read, snap2, state]) expect(JSON.stringify(x)).not.toContain(SENTINEL);
    expect(posts(site.b)).toEqual([]);
  });

  it("a literal password with submit still needs allowPassword; text around the secret or a second Enter too", async () => {
    const { tabId, page, pw } = await open("/submit");
    for (const text of ["literal-password", "x{{secret:apw}}", "{{secret:apw}}\n", "{{secret:apw}}{{secret:apw}}"]) {
      const r = await call("type", { tabId, ref: pw, text, submit: true });
      expect(r.error?.code, `${text}: ${r.text}`).toBe("password_field");
    }
    // Enter alone, into the field: press_key is typing, and no secret goes with it.
    expect((await call("press_key", { tabId, ref: pw, key: "Enter" })).error?.code).toBe("password_field");
    await nothingSubmitted(page, "/submit");
    expect(await page.locator("#pw").inputValue()).toBe("");
    expect(posts(site.a)).toEqual([]);
    // With the person's switch and the call's flag, a literal password submits as before.
    await allow({ allowPassword: true });
    const ok = await call("type", { tabId, ref: pw, text: "literal-password", submit: true, allowPassword: true });
    expect(ok.isError, ok.text).toBe(false);
    await pollUntil("the literal's post", () => posts(site.a).find((p) => p.v.includes("literal-password")));
  });

  it("an unknown name, a wrong origin, a locked store: typed errors with submit, nothing typed, nothing posted", async () => {
    const { tabId, page, pw } = await open("/submit");
    expect((await call("type", { tabId, ref: pw, text: "{{secret:nope}}", submit: true })).error?.code).toBe("secret_not_found");
    expect((await call("type", { tabId, ref: pw, text: "{{secret:elsewhere}}", submit: true })).error?.code).toBe("secret_origin_mismatch");
    await msg({ type: "torii.secrets.lock", locked: true });
    try {
      expect((await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true })).error?.code).toBe("secret_store_locked");
    } finally {
      await msg({ type: "torii.secrets.lock", locked: false });
    }
    await nothingSubmitted(page, "/submit");
    expect(await page.locator("#pw").inputValue()).toBe("");
    expect(posts(site.a)).toEqual([]);
  });

  it("a form that posts to another origin (its action hidden behind a field named action): refused, that origin receives nothing", async () => {
    const { tabId, page, pw } = await open("/submit-elsewhere");
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(r.error?.code, r.text).toBe("secret_origin_mismatch");
    await nothingSubmitted(page, "/submit-elsewhere");
    expect(posts(site.b)).toEqual([]);
    expect(leakedTo(site.b)).toBe(false);
  });

  it("a form that points itself at another origin from its submit handler: refused, that origin receives nothing", async () => {
    const { tabId, page, pw } = await open("/submit-rewrite");
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(r.error?.code, r.text).toBe("secret_origin_mismatch");
    await nothingSubmitted(page, "/submit-rewrite");
    expect(posts(site.b)).toEqual([]);
    expect(posts(site.a)).toEqual([]);
    expect(leakedTo(site.b)).toBe(false);
  });

  it("the page moves the focus to another password field before the Enter: that field gets no key, nothing is posted", async () => {
    const { tabId, page, pw } = await open("/submit-swap");
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(r.error?.code, r.text).toBe("password_field");
    await nothingSubmitted(page, "/submit-swap");
    expect(posts(site.a)).toEqual([]);
    expect(posts(site.b)).toEqual([]);
    expect(await page.locator("#pw2").inputValue()).toBe("");
    expect(leakedTo(site.b)).toBe(false);
  });

  it("the page moves the focus at the Enter's keydown, before its keypress submits: the other field gets nothing, nothing is posted", async () => {
    const { tabId, page, pw } = await open("/submit-swap-key");
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(r.error?.code, r.text).toBe("password_field");
    await nothingSubmitted(page, "/submit-swap-key");
    expect(posts(site.a)).toEqual([]);
    expect(posts(site.b)).toEqual([]);
    expect(await page.locator("#pw2").inputValue()).toBe("");
  });

  it("the page hands the field to a form that posts elsewhere: refused, that origin receives nothing", async () => {
    const { tabId, page, pw } = await open("/submit-reparent");
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(r.error?.code, r.text).toBe("secret_origin_mismatch");
    await nothingSubmitted(page, "/submit-reparent");
    expect(posts(site.b)).toEqual([]);
    expect(leakedTo(site.b)).toBe(false);
  });

  it("the page moves the focus into another origin's frame, onto its password field: the frame gets no key, nothing is posted", async () => {
    const { tabId, page, pw } = await open("/submit-frame");
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(["password_field", "origin_not_allowed"], r.text).toContain(r.error?.code);
    await nothingSubmitted(page, "/submit-frame");
    expect(posts(site.a)).toEqual([]);
    expect(posts(site.b)).toEqual([]);
    expect(await page.frameLocator("#other").locator("#bpw").inputValue()).toBe("");
    expect(leakedTo(site.b)).toBe(false);
  });

  it("a secret of the other origin typed into that origin's frame: refused before anything is typed", async () => {
    const { tabId, page, snap } = await open("/submit-frame");
    const inner = refOf(snap, "textbox", "Inner password");
    const r = await call("type", { tabId, ref: inner, text: "{{secret:apw}}", submit: true });
    expect(r.error?.code, r.text).toBe("secret_origin_mismatch");
    await nothingSubmitted(page, "/submit-frame");
    expect(await page.frameLocator("#other").locator("#bpw").inputValue()).toBe("");
    expect(posts(site.b)).toEqual([]);
  });

  it("a default button whose formaction posts to another origin (the form's base URL shadowed): refused, that origin receives nothing", async () => {
    const { tabId, page, pw } = await open("/submit-formaction");
    const r = await call("type", { tabId, ref: pw, text: "{{secret:apw}}", submit: true });
    expect(r.error?.code, r.text).toBe("secret_origin_mismatch");
    await nothingSubmitted(page, "/submit-formaction");
    expect(posts(site.b)).toEqual([]);
    expect(posts(site.a)).toEqual([]);
  });

  for (const path of ["/submit-elsewhere", "/submit-formaction"]) {
    it(`without a secret, a form that hides its post to an origin off the list behind a shadowed property is still stopped (I-38): ${path}`, async () => {
      await setPolicy(ext, { rules: [{ pattern: site.pattern(site.a) }], actMode: true });
      const { tabId, page, snap } = await open(path);
      const r = await call("type", { tabId, ref: refOf(snap, "textbox", "User name"), text: "alice", submit: true });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      await nothingSubmitted(page, path);
      expect(posts(site.b)).toEqual([]);
    });
  }

  it("sentinel: the value is in no result, audit row or log", async () => {
    for (const r of results) expect(JSON.stringify(r)).not.toContain(SENTINEL);
    const rows = await auditRows(ext);
    expect(rows.some((r) => (r as { secrets?: string }).secrets === `apw on ${site.a}`)).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(SENTINEL);
    expect(await rawAuditStorage(ext)).not.toContain(SENTINEL);
    expect(torii.log.toString()).not.toContain(SENTINEL);
    expect(browser.log.toString()).not.toContain(SENTINEL);
    expect(mcp.log.toString()).not.toContain(SENTINEL);
    const daemonAudit = await torii.cli(["audit", "--format", "json", "--limit", "10000"]);
    expect(daemonAudit.code, daemonAudit.stderr).toBe(0);
    expect(daemonAudit.stdout).toContain(`apw on ${site.a}`);
    expect(daemonAudit.stdout).not.toContain(SENTINEL);
  });
});

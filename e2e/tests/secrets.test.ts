// End to end: the person's secrets, in real headless Chromium through the real daemon and a real MCP
// client (SECURITY I-69). The person adds a secret in the options page; an agent lists names and
// origins and writes {{secret:NAME}} in fill / type / fill_form; the value lands only in a document
// of the secret's origins, never in a tool result, the audit, the logs or the link's traffic.
import { createHmac } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Page, Worker } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult, refOf } from "../src/mcp.ts";
import { auditRows, rawAuditStorage, setPolicy, type RuleIn } from "../src/safety.ts";
import { SecretsSite } from "../src/secrets-site.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

const SENTINEL = "S3ntinel-Pw-secret-5d09a";
const KEY = "S3ntinel-Key-secret-c41e7";
// "Hello!\xde\xad\xbe\xef" in base32: the seed never travels, the code does.
const SEED = "JBSWY3DPEHPK3PXP";

function totpAt(ms: number): string {
  const key = Buffer.from([0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, 0xde, 0xad, 0xbe, 0xef]);
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(Math.floor(ms / 30_000)));
  const h = createHmac("sha1", key).update(msg).digest();
  const off = (h[h.length - 1] as number) & 0x0f;
  return String((h.readUInt32BE(off) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await allFiles(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

describeBrowser("secrets", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: SecretsSite;
  let ext: Page;
  let worker: Worker;
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
  async function open(path: string, frame = path === "/attack" ? "#leafframe" : "#other"): Promise<{ tabId: number; page: Page; snap: string }> {
    const r = await call("navigate", { url: `${site.a}${path}`, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const page = await pageAt(`${site.a}${path}`);
    const tabId = r.data.tabId as number;
    // Its frame loaded, so the snapshot holds the frame's fields.
    await page.frameLocator(frame).locator("input").first().waitFor({ timeout: 10_000 });
    const snap = await call("snapshot", { tabId });
    expect(snap.isError, snap.text).toBe(false);
    return { tabId, page, snap: snap.text };
  }

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await SecretsSite.start();
    mcp = await Mcp.connect(torii, "secrets");
    await mcp.waitForCatalogue();
    // Every frame the extension sends on the link, recorded in its worker (the daemon can only learn
    // what the extension sends it).
    worker = await pollUntil("the extension's worker", () => browser.context.serviceWorkers().find((w) => w.url().startsWith(EXTENSION_ORIGIN)));
    await worker.evaluate(() => {
      const g = globalThis as unknown as { __sent?: string[] };
      if (g.__sent) return;
      g.__sent = [];
      const send = WebSocket.prototype.send;
      WebSocket.prototype.send = function (this: WebSocket, d: Parameters<typeof send>[0]) {
        g.__sent?.push(typeof d === "string" ? d : `[binary ${String((d as ArrayBuffer).byteLength)}]`);
        return send.call(this, d);
      };
    });
  });
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    await allow();
    await closeWebPages(browser);
  });

  it("the person adds secrets in the options page (a bad origin refused); the agent lists names, kinds and origins, never values", async () => {
    // The person adds a secret in the options page.
    const options = await browser.context.newPage();
    await options.goto(`${EXTENSION_ORIGIN}/options.html`);
    await options.locator("#secret-name").fill("apw");
    await options.locator("#secret-kind").selectOption("password");
    await options.locator("#secret-value").fill(SENTINEL);
    await options.locator("#secret-origins").fill(site.a);
    await options.locator("#secret-add").click();
    await options.locator('tr[data-secret="apw"]').waitFor({ timeout: 10_000 });
    // A bad origin is refused, named, and nothing is stored.
    await options.locator("#secret-name").fill("bad");
    await options.locator("#secret-value").fill("long-enough");
    await options.locator("#secret-origins").fill("https://example.com/login");
    await options.locator("#secret-add").click();
    await expect.poll(() => options.locator("#secret-error").textContent()).toContain("no path");
    expect(await options.locator('tr[data-secret="bad"]').count()).toBe(0);
    await options.close();
    await msg({ type: "torii.secrets.add", name: "otp", kind: "totp", value: SEED, origins: [site.a] });
    await msg({ type: "torii.secrets.add", name: "akey", kind: "token", value: KEY, origins: [site.a] });
    await msg({ type: "torii.secrets.add", name: "elsewhere", kind: "password", value: SENTINEL, origins: ["https://elsewhere.example"] });
    const r = await call("secrets");
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain(`apw (password): ${site.a}`);
    expect(r.text).toContain(`otp (totp): ${site.a}`);
    expect(r.text).toContain("elsewhere (password): https://elsewhere.example");
    expect(JSON.stringify(r)).not.toContain(SENTINEL);
    expect(JSON.stringify(r)).not.toContain(SEED);
    expect(JSON.stringify(r)).not.toContain(KEY);
  });

  it("fill, type and fill_form substitute on the secret's origin; its password field needs no allowPassword; a seed fills the current code", async () => {
    const { tabId, page, snap } = await open("/login");
    const pw = refOf(snap, "textbox", "Password");
    const f = await call("fill", { tabId, ref: pw, value: "{{secret:apw}}" });
    expect(f.isError, f.text).toBe(false);
    expect(f.text).toContain("secret apw");
    expect(await page.locator("#pw").inputValue()).toBe(SENTINEL);
    // The guard is unchanged for text the agent wrote itself, and for a secret with text around it.
    expect((await call("fill", { tabId, ref: pw, value: "typed-by-agent" })).error?.code).toBe("password_field");
    expect((await call("fill", { tabId, ref: pw, value: "x{{secret:apw}}" })).error?.code).toBe("password_field");
    const t = await call("type", { tabId, ref: refOf(snap, "textbox", "API key"), text: "Bearer {{secret:akey}}" });
    expect(t.isError, t.text).toBe(false);
    expect(await page.locator("#key").inputValue()).toBe(`Bearer ${KEY}`);
    const before = Date.now();
    const ff = await call("fill_form", {
      tabId,
      fields: [
        { ref: refOf(snap, "textbox", "User name"), value: "alice" },
        { ref: pw, value: "{{secret:apw}}" },
        { ref: refOf(snap, "textbox", "One-time code"), value: "{{secret:otp}}" },
      ],
    });
    expect(ff.isError, ff.text).toBe(false);
    const code = await page.locator("#otp").inputValue();
    expect([totpAt(before), totpAt(Date.now())]).toContain(code);
    expect(code).not.toContain(SEED);
    expect(await page.locator("#user").inputValue()).toBe("alice");
  });

  it("a name that does not exist, a malformed one, a wrong origin: typed errors, nothing filled", async () => {
    const { tabId, page, snap } = await open("/login");
    const user = refOf(snap, "textbox", "User name");
    const nf = await call("fill", { tabId, ref: user, value: "{{secret:nope}}" });
    expect(nf.error?.code, nf.text).toBe("secret_not_found");
    expect(nf.error?.hint).toContain("call secrets");
    expect((await call("type", { tabId, ref: user, text: "{{secret:nope}}" })).error?.code).toBe("secret_not_found");
    expect((await call("fill", { tabId, ref: user, value: "{{secret:bad name}}" })).error?.code).toBe("invalid_argument");
    const wrong = await call("fill", { tabId, ref: user, value: "{{secret:elsewhere}}" });
    expect(wrong.error?.code, wrong.text).toBe("secret_origin_mismatch");
    expect(wrong.error?.hint).toContain("Only the person");
    const wf = await call("fill_form", { tabId, fields: [{ ref: user, value: "{{secret:elsewhere}}" }] });
    expect(wf.error?.code, wf.text).toBe("secret_origin_mismatch");
    // type needs to know the field a secret goes to.
    expect((await call("type", { tabId, text: "{{secret:apw}}" })).error?.code).toBe("invalid_argument");
    expect(await page.locator("#user").inputValue()).toBe("");
  });

  it("inside a cross-origin frame (allowed, but not the secret's origin): refused, the frame never gets the value", async () => {
    const { tabId, page, snap } = await open("/login");
    const inner = refOf(snap, "textbox", "Inner field");
    const innerPw = refOf(snap, "textbox", "Inner password");
    for (const [tool, args] of [
      ["fill", { ref: inner, value: "{{secret:apw}}" }],
      ["fill", { ref: innerPw, value: "{{secret:apw}}" }],
      ["type", { ref: inner, text: "{{secret:apw}}" }],
      ["fill_form", { fields: [{ ref: inner, value: "{{secret:apw}}" }] }],
    ] as const) {
      const r = await call(tool, { tabId, ...args });
      expect(r.error?.code, `${tool}: ${r.text}`).toBe("secret_origin_mismatch");
    }
    const frame = page.frameLocator("#other");
    expect(await frame.locator("#inner").inputValue()).toBe("");
    expect(await frame.locator("#inner-pw").inputValue()).toBe("");
    expect(site.reports.filter((r) => r.origin === site.b).some((r) => r.v.includes(SENTINEL))).toBe(false);
  });

  it("a value the page copies into its text, or an editor holds, never comes back through read_text, snapshot, get_state or find; evaluate does not run there", async () => {
    await allow({ evalExpression: true });
    const { tabId, page, snap } = await open("/login");
    expect((await call("fill", { tabId, ref: refOf(snap, "textbox", "User name"), value: "{{secret:apw}}" })).isError).toBe(false);
    expect((await call("fill", { tabId, ref: refOf(snap, "textbox", "Note"), value: "note: {{secret:akey}}" })).isError).toBe(false);
    // The page really holds the values...
    await expect.poll(() => page.locator("#echo").textContent()).toBe(`Hello ${SENTINEL}`);
    expect(await page.locator("#note").textContent()).toBe(`note: ${KEY}`);
    // ...and every read shows the reference instead.
    const reads = [
      await call("read_text", { tabId }),
      await call("snapshot", { tabId }),
      await call("get_state", { tabId, selector: "#echo" }),
      await call("find", { tabId, text: "Hello" }),
    ];
    // Code could hand the value back in any form (SECURITY I-77): it does not run in this tab.
    const code = await call("evaluate", { tabId, expression: "document.getElementById('user').value + '|' + document.getElementById('echo').textContent" });
    expect(code.error?.code, code.text).toBe("secret_unmaskable");
    expect(JSON.stringify(code)).not.toContain(SENTINEL);
    for (const r of reads) {
      expect(r.isError, r.text).toBe(false);
      expect(JSON.stringify(r)).not.toContain(SENTINEL);
      expect(JSON.stringify(r)).not.toContain(KEY);
    }
    expect(reads[0]?.text).toContain("Hello {{secret:apw}}");
    expect(reads[0]?.text).toContain("note: {{secret:akey}}");
  });

  it("with the secret store locked: secret_store_locked, nothing filled; unlocked it works again", async () => {
    const { tabId, page, snap } = await open("/login");
    const user = refOf(snap, "textbox", "User name");
    await msg({ type: "torii.secrets.lock", locked: true });
    try {
      for (const [tool, args] of [
        ["fill", { ref: user, value: "{{secret:apw}}" }],
        ["type", { ref: user, text: "{{secret:apw}}" }],
        ["fill_form", { fields: [{ ref: user, value: "{{secret:apw}}" }] }],
      ] as const) {
        const r = await call(tool, { tabId, ...args });
        expect(r.error?.code, `${tool}: ${r.text}`).toBe("secret_store_locked");
        expect(r.error?.hint).toContain("Only the person");
      }
      expect((await call("secrets")).text).toContain("locked");
      expect(await page.locator("#user").inputValue()).toBe("");
    } finally {
      await msg({ type: "torii.secrets.lock", locked: false });
    }
    expect((await call("fill", { tabId, ref: user, value: "{{secret:apw}}" })).isError).toBe(false);
    expect(await page.locator("#user").inputValue()).toBe(SENTINEL);
  });

  it("attack page: the frame goes to another origin between the check and the act; that document never gets the value", async () => {
    const { tabId, page, snap } = await open("/attack");
    const leaf = refOf(snap, "textbox", "Leaf field");
    // The focusing click sends the frame to B, whose field takes the focus.
    const r = await call("type", { tabId, ref: leaf, text: "{{secret:apw}}" });
    // The frame leaves A for B's leaf. Its document may not reach B's server to say so: while a
    // document of this tab holds the secret, the tab's requests to B are refused (SECURITY I-76), and
    // the frame's own request may have been one of them (the browser's error page then).
    const arrived = await pollUntil("the leaf frame to leave A", async () => {
      const f = page.frames().find((x) => x.url().startsWith(`${site.b}/leaf`));
      if (!f) return undefined;
      const state = await f.evaluate(() => document.readyState).catch(() => "error page");
      return state === "complete" || state === "error page" ? state : undefined;
    });
    // Which check stops it depends on when the frame commits: the focus probe that cannot tell
    // (password_field, fail closed), the document judged against the secret's origins, the one
    // document the value may go to being gone, or the ref's document being another.
    if (r.isError) expect(["password_field", "secret_origin_mismatch", "navigation_failed", "stale_ref"], r.text).toContain(r.error?.code);
    const frame = page.frameLocator("#leafframe");
    const loaded = arrived === "complete" && (await frame.locator("#leaf").count()) > 0;
    if (loaded) expect(await frame.locator("#leaf").inputValue()).toBe("");
    // The ref is the old document's: refused before anything is sent.
    const again = await call("fill", { tabId, ref: leaf, value: "{{secret:apw}}" });
    expect(["stale_ref", "secret_origin_mismatch"], again.text).toContain(again.error?.code);
    if (loaded) expect(await frame.locator("#leaf").inputValue()).toBe("");
    expect(site.reports.filter((x) => x.origin === site.b).some((x) => x.v.includes(SENTINEL))).toBe(false);
  });

  it("measures what substituting a secret adds to a fill (median)", async () => {
    const { tabId, snap } = await open("/login");
    const key = refOf(snap, "textbox", "API key");
    const plain: number[] = [];
    const secret: number[] = [];
    // Interleaved, so the machine's load weighs on both alike.
    for (let i = 0; i < 40; i++) {
      const a = await call("fill", { tabId, ref: key, value: "plain-value-of-25-chars.." });
      const b = await call("fill", { tabId, ref: key, value: "{{secret:akey}}" });
      expect(a.isError || b.isError).toBe(false);
      plain.push(a.ms);
      secret.push(b.ms);
    }
    const diffs = plain.map((p, i) => (secret[i] as number) - p);
    // What the worker adds, step by step, in the worker itself: the frame's document id and the
    // decryption (the store's state is read from IndexedDB once, then kept).
    const steps = await worker.evaluate(async (tab) => {
      const c = (globalThis as unknown as {
        chrome: {
          webNavigation: { getFrame(d: { tabId: number; frameId: number }): Promise<{ documentId: string }> };
          scripting: { executeScript(d: { target: object; world: string; func: () => number }): Promise<unknown> };
        };
      }).chrome;
      const k = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, k, new TextEncoder().encode("S3ntinel-Key-secret-xxxxx"));
      const frame: number[] = [];
      const dec: number[] = [];
      const byFrame: number[] = [];
      const byDoc: number[] = [];
      for (let i = 0; i < 40; i++) {
        let t = performance.now();
        const f = await c.webNavigation.getFrame({ tabId: tab, frameId: 0 });
        frame.push(performance.now() - t);
        t = performance.now();
        await crypto.subtle.decrypt({ name: "AES-GCM", iv }, k, ct);
        dec.push(performance.now() - t);
        t = performance.now();
        await c.scripting.executeScript({ target: { tabId: tab, frameIds: [0] }, world: "ISOLATED", func: () => 1 });
        byFrame.push(performance.now() - t);
        t = performance.now();
        await c.scripting.executeScript({ target: { tabId: tab, documentIds: [f.documentId] }, world: "ISOLATED", func: () => 1 });
        byDoc.push(performance.now() - t);
      }
      const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
      return { getFrame: med(frame), decrypt: med(dec), byFrame: med(byFrame), byDoc: med(byDoc) };
    }, tabId);
    console.info(
      `fill round trip median: plain ${median(plain).toFixed(1)} ms, with a secret ${median(secret).toFixed(1)} ms; ` +
        `median of paired differences ${median(diffs).toFixed(1)} ms; in the worker: getFrame ${steps.getFrame.toFixed(2)} ms, decrypt ${steps.decrypt.toFixed(2)} ms, ` +
        `executeScript by frame ${steps.byFrame.toFixed(2)} ms / by document ${steps.byDoc.toFixed(2)} ms`,
    );
  });

  it("sentinel: no value reaches a tool result, the audit, the logs, the daemon's state or the link's traffic", async () => {
    const hidden = [SENTINEL, KEY, SEED];
    for (const r of results) for (const h of hidden) expect(JSON.stringify(r)).not.toContain(h);
    const rows = await auditRows(ext);
    // The audit says which secret was used where, never its value.
    expect(rows.some((r) => (r as { secrets?: string }).secrets === `apw on ${site.a}`)).toBe(true);
    for (const h of hidden) {
      expect(JSON.stringify(rows)).not.toContain(h);
      expect(await rawAuditStorage(ext)).not.toContain(h);
      expect(torii.log.toString()).not.toContain(h);
      expect(browser.log.toString()).not.toContain(h);
      expect(mcp.log.toString()).not.toContain(h);
    }
    const daemonAudit = await torii.cli(["audit", "--format", "json", "--limit", "10000"]);
    expect(daemonAudit.code, daemonAudit.stderr).toBe(0);
    expect(daemonAudit.stdout).toContain("fill");
    // The daemon's audit names the secret and the origin too (in its chain), never the value.
    expect(daemonAudit.stdout).toContain(`apw on ${site.a}`);
    for (const file of await allFiles(torii.stateDir)) {
      const bytes = await readFile(file).catch(() => Buffer.alloc(0));
      for (const h of hidden) expect(bytes.includes(h), `${file} holds a secret`).toBe(false);
    }
    for (const h of hidden) expect(daemonAudit.stdout).not.toContain(h);
    const sent = await worker.evaluate(() => (globalThis as unknown as { __sent?: string[] }).__sent ?? []);
    expect(sent.length).toBeGreaterThan(10);
    for (const frame of sent) for (const h of hidden) expect(frame.includes(h)).toBe(false);
  });
});

// A password field in a frame of another origin follows that origin's password switch, never the
// tab's (SECURITY I-18): the tab's origin allows passwords, the frame's origin is on the list but
// does not. Every typing tool is tried with allowPassword; the leak is decided from what reached
// the foreign page and its server (its fields beacon every value they get), not from Torii's report.
import type { Frame, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { InputSite } from "../src/input-site.ts";
import { Mcp } from "../src/mcp.ts";
import { setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

const SENTINEL = "Pw-S3ntinel-9d4e";

describeBrowser("password fields in another origin's frame", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: InputSite;
  let ext: Page;

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await InputSite.start();
    mcp = await Mcp.connect(torii, "gates-password-frames");
    await mcp.waitForCatalogue();
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    site.clear();
    await closeWebPages(browser);
  });

  /** The tab's origin allows passwords; `foreign` is on the list without them. */
  async function open(foreign: string): Promise<{ tabId: number; page: Page; frame: Frame; ref: (name: string) => string }> {
    await setPolicy(ext, {
      rules: [{ pattern: site.aPattern, allowPassword: true }, { pattern: foreign.replace("http://", "") }],
      actMode: true,
    });
    const url = `${site.a}/pw-top?b=${encodeURIComponent(foreign)}`;
    const r = await mcp.call("navigate", { url, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const tabId = r.data.tabId as number;
    const page = await pollUntil("the tab", () => browser.context.pages().find((p) => p.url().startsWith(url)), { timeoutMs: 10_000, intervalMs: 50 });
    const frame = await pollUntil("the foreign frame", async () => {
      const f = page.frames().find((fr) => fr.url().startsWith(`${foreign}/pw-sink`));
      if (!f) return undefined;
      await f.waitForLoadState("load");
      return f;
    }, { timeoutMs: 10_000, intervalMs: 50 });
    const snap = await pollUntil("the frame's fields in the outline", async () => {
      const s = await mcp.ok("snapshot", { tabId });
      return /"Frame password" \[[a-gi-z]+\d+\]/.test(s.text) ? s.text : undefined;
    }, { timeoutMs: 10_000, intervalMs: 200 });
    const ref = (name: string) => {
      const m = new RegExp(`"${name}" \\[([a-gi-z]+\\d+)\\]`).exec(snap)?.[1];
      if (!m) throw new Error(`no ref for ${name} in:\n${snap}`);
      return m;
    };
    return { tabId, page, frame, ref };
  }

  /** What the foreign page and its server got, after a marker sent last from that page arrived. */
  async function foreignGot(frame: Frame, origin: string): Promise<{ value: string; server: string[] }> {
    const n = Math.random().toString(36).slice(2);
    await frame.evaluate((m) => fetch(`/marker?${m}`), n);
    await pollUntil("the marker", () => site.hits(origin, "/marker").some((h) => h.query === `?${n}`), { timeoutMs: 5_000, intervalMs: 20 });
    const value = await frame.evaluate(() => (document.getElementById("fpw") as HTMLInputElement).value);
    return { value, server: site.hits(origin, "/beacon").map((h) => h.body) };
  }

  for (const which of ["b", "x"] as const) {
    const label = which === "b" ? "same-site" : "cross-site";

    it(`${label}: fill, type and press_key with allowPassword refuse the frame's password field; nothing reaches it`, async () => {
      const foreign = site[which];
      const { tabId, page, frame, ref } = await open(foreign);
      const pw = ref("Frame password");
      const tries: [string, Record<string, unknown>][] = [
        ["fill", { tabId, ref: pw, value: SENTINEL, allowPassword: true }],
        ["fill", { tabId, ref: pw, value: SENTINEL, mode: "insertText", allowPassword: true }],
        ["type", { tabId, ref: pw, text: SENTINEL, allowPassword: true }],
        ["type", { tabId, ref: pw, text: SENTINEL, keys: true, allowPassword: true }],
        ["press_key", { tabId, ref: pw, key: "a", allowPassword: true }],
      ];
      const outcomes: string[] = [];
      for (const [name, args] of tries) {
        const r = await mcp.call(name, args);
        outcomes.push(`${name} ${JSON.stringify({ ...args, tabId: undefined, ref: undefined })}: ${r.error?.code ?? r.text}`);
        expect(r.text).not.toContain(foreign.replace("http://", ""));
        await frame.evaluate(() => { (document.getElementById("fpw") as HTMLInputElement).value = ""; });
      }
      // Typing with the focus already in the frame's password field: refused too.
      await frame.focus("#fpw");
      const r = await mcp.call("type", { tabId, text: SENTINEL, allowPassword: true });
      outcomes.push(`type (focused): ${r.error?.code ?? r.text}`);
      expect(outcomes.filter((o) => !o.endsWith(": password_field"))).toEqual([]);
      const got = await foreignGot(frame, foreign);
      expect(got.value).toBe("");
      expect(got.server.filter((b) => b.startsWith("fpw=") && b !== "fpw=")).toEqual([]);
      expect(got.server.join("\n")).not.toContain(SENTINEL);
      expect(await page.locator("#pw").inputValue()).toBe("");
    });

    it(`${label}: the tab's own password field and the frame's text field still take what is allowed`, async () => {
      const foreign = site[which];
      const { tabId, page, frame, ref } = await open(foreign);
      await mcp.ok("fill", { tabId, ref: ref("Top password"), value: SENTINEL, allowPassword: true });
      expect(await page.locator("#pw").inputValue()).toBe(SENTINEL);
      await mcp.ok("fill", { tabId, ref: ref("Frame user"), value: "ada", allowPassword: true });
      expect(await frame.locator("#fuser").inputValue()).toBe("ada");
      // fill_form judges the same way (one rule for both).
      const r = await mcp.call("fill_form", { tabId, fields: [{ ref: ref("Frame password"), value: SENTINEL }], allowPassword: true });
      expect(r.error?.code, r.text).toBe("password_field");
      const got = await foreignGot(frame, foreign);
      expect(got.value).toBe("");
      expect(got.server.join("\n")).not.toContain(SENTINEL);
    });
  }
});

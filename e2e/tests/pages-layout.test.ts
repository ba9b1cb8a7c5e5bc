// Every extension page (options, popup, side panel, approval window, connect page) at the widths a
// person uses, 400, 800, 1280 and 1920 px, in light and dark, with real content: nothing scrolls or
// is cut off sideways, no word is broken across lines, every text meets WCAG AA contrast
// (src/ui-audit.ts). Each state is also saved as a screenshot in e2e/.artifacts/layout/ to look at
// (the whole page with TORII_WRITE_SCREENSHOTS=1, which also writes the options page at 1280 px to
// docs/img/). The forms' refusals are checked where a person looks: next to the field, the text
// kept, tied to the field for a screen reader.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Browser, clickPairAndReadCode, setDaemonUrl, waitForPopupConnected } from "../src/browser.ts";
import { EXTENSION_ORIGIN, repoRoot } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { openPanel, panelDriver, windowOf } from "../src/panel.ts";
import { setPolicy } from "../src/safety.ts";
import { Site } from "../src/site.ts";
import { testAgent } from "../src/test-agent.ts";
import { normalizeCode, type Torii } from "../src/torii.ts";
import { auditPage } from "../src/ui-audit.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";

const WRITE = process.env.TORII_WRITE_SCREENSHOTS === "1";
const SIZES = [
  { width: 400, height: 800 },
  { width: 800, height: 900 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];
const THEMES = ["light", "dark"] as const;
const SHOTS = join(repoRoot, "e2e", ".artifacts", "layout");
const T = 20_000;

/** Audits a page at every size in both themes; returns what a person would see wrong, by name. */
async function sweep(page: Page, name: string): Promise<string[]> {
  const problems: string[] = [];
  await mkdir(SHOTS, { recursive: true });
  let tAudit = 0;
  let tShot = 0;
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme, reducedMotion: "reduce" });
    for (const { width, height } of SIZES) {
      await page.setViewportSize({ width, height });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      let t0 = Date.now();
      const a = await auditPage(page);
      tAudit += Date.now() - t0;
      const at = `${name} ${theme} ${width}px`;
      if (a.checked < 4) problems.push(`${at}: only ${a.checked} texts measured`);
      for (const c of a.contrast) problems.push(`${at}: "${c.text}" ${c.ratio}:1 < ${c.need}:1 (${c.fg} on ${c.bg}) at ${c.where}`);
      for (const o of a.overflow) problems.push(`${at}: ${o.where} ${o.detail}`);
      for (const b of a.broken) problems.push(`${at}: "${b.word}" is broken across ${b.lines} lines at ${b.where}`);
      await page.evaluate(() => window.scrollTo(0, 0));
      t0 = Date.now();
      // What the person sees first; the whole page when the screenshots are wanted for review.
      await page.screenshot({ path: join(SHOTS, `${name}-${width}-${theme}.jpeg`), fullPage: WRITE, type: "jpeg", quality: 70 });
      tShot += Date.now() - t0;
      if (WRITE && name === "options" && width === 1280) {
        await page.screenshot({ path: join(repoRoot, "docs", "img", `options-wide-${theme}.png`) });
      }
    }
  }
  await page.emulateMedia({ colorScheme: "light", reducedMotion: "reduce" });
  console.log(`e2e: ${name}: audits ${tAudit} ms, screenshots ${tShot} ms`);
  return problems;
}

/** The field's inline error: shown, next to it, tied to it (aria-invalid, aria-describedby). */
async function inlineError(page: Page, field: Locator): Promise<string> {
  await expect.poll(() => field.getAttribute("aria-invalid"), { timeout: T }).toBe("true");
  const ids = ((await field.getAttribute("aria-describedby")) ?? "").split(/\s+/).filter(Boolean);
  expect(ids.length, "the field names its error with aria-describedby").toBeGreaterThan(0);
  const texts: string[] = [];
  for (const id of ids) {
    const e = page.locator(`[id="${id}"]`);
    if (!(await e.isVisible())) continue;
    const f = await field.boundingBox();
    const b = await e.boundingBox();
    // Within a few lines of the field, not at the far end of the page.
    expect(f && b && Math.abs(b.y - (f.y + f.height)) < 160, `the error #${id} sits next to its field`).toBe(true);
    texts.push((await e.textContent()) ?? "");
  }
  expect(texts.join(""), "a visible error text").not.toBe("");
  return texts.join(" ");
}

describeBrowser("extension pages at 400–1920 px, light and dark", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let popup: Page;
  let options: Page;
  let tmp: string;
  let site: Site;
  let mcp: Mcp | undefined;

  beforeAll(async () => {
    tmp = await shortTempDir();
    const agent = await testAgent(tmp);
    site = await Site.start();
    torii = await rig.daemon();
    await torii.configure({ agents: [{ name: "alpha", command: agent }], defaultAgent: "alpha" });
    await torii.start();
    browser = await rig.browser();
    popup = await browser.openPopup();
    await setDaemonUrl(popup, torii.wsUrl);
    const code = await clickPairAndReadCode(popup);
    await pollUntil(`the daemon to list pair request ${code}`, async () => (await torii.pendingPairs()).some((r) => normalizeCode(r.code) === code));
    const r = await torii.cli(["pair", "approve", code]);
    expect(r.code, r.stderr).toBe(0);
    await waitForPopupConnected(popup);
    // Every switch on for the first rule: the longest card; a long host name; a path pattern.
    await setPolicy(popup, {
      rules: [
        { pattern: `127.0.0.1:${site.port}`, act: true, evalExpression: true, evalProgram: true, fetch: true, allowPassword: true, invoke: true, captureSensitive: true, cookies: true, cookiesHttpOnly: true, storage: true, observe: true, approvals: { submit: "ask", upload: "deny" } },
        { pattern: "*.internal-documentation.example.org", evalExpression: true, cookies: true },
        { pattern: "https://example.com/app/*" },
      ],
      actMode: false,
      approvals: { submit: "ask", destructive_click: "ask" },
    });
    await popup.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome;
      await c.runtime.sendMessage({
        type: "torii.proxy.save",
        settings: { profiles: [{ name: "corporate-egress", kind: "fixed", scheme: "http", host: "proxy.corp.example.com", port: 3128, bypass: ["<local>", "*.internal.example.com"] }], active: "system", agentMaySwitch: false },
      });
      await c.runtime.sendMessage({ type: "torii.secrets.add", name: "github-password", kind: "password", value: "correct-horse", origins: ["https://github.com", "https://gist.github.com"] });
    });
    options = await browser.context.newPage();
    await options.goto(`${EXTENSION_ORIGIN}/options.html`);
    await options.locator('#rules [data-pattern="https://example.com/app/*"]').waitFor({ timeout: T });
    await options.locator('#proxy-profiles [data-profile="corporate-egress"]').waitFor({ timeout: T });
    await options.locator('#secrets [data-secret="github-password"]').waitFor({ timeout: T });
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
    await site?.close();
    if (tmp) await removeDir(tmp);
  });

  test("options: the allowlist, proxy profiles and secrets read whole at every width", async () => {
    // The per-site approvals open, so their rows are measured too.
    await options.locator("#rules details").evaluateAll((ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
    const problems = await sweep(options, "options");
    expect(problems, problems.join("\n")).toEqual([]);
    await options.locator("#rules details").evaluateAll((ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = false)));
  });

  test("options at 1280 px: each profile's buttons sit in its row; the secret fields line up", async () => {
    await options.setViewportSize({ width: 1280, height: 800 });
    // Inside the row and level with the profile's name, not hanging between two rows.
    for (const profile of ["direct", "corporate-egress"]) {
      const row = options.locator(`#proxy-profiles [data-profile="${profile}"]`);
      const r = await row.boundingBox();
      const name = await row.locator("td").first().evaluate((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        const b = range.getBoundingClientRect();
        return { y: b.y, height: b.height };
      });
      const buttons = await row.locator("button").all();
      expect(buttons.length, `${profile} has buttons`).toBeGreaterThan(0);
      for (const b of buttons) {
        const bb = await b.boundingBox();
        const label = `"${await b.textContent()}" of ${profile}`;
        expect(r && bb && bb.y >= r.y - 0.5 && bb.y + bb.height <= r.y + r.height + 0.5, `${label} inside its row`).toBe(true);
        const off = Math.abs(bb!.y + bb!.height / 2 - (name.y + name.height / 2));
        expect(off, `${label} level with the profile's name`).toBeLessThan(4);
      }
    }
    const boxes = await Promise.all(["#secret-name", "#secret-kind", "#secret-value", "#secret-origins"].map((s) => options.locator(s).boundingBox()));
    const tops = boxes.map((b) => Math.round(b?.y ?? -1));
    const heights = boxes.map((b) => Math.round(b?.height ?? -1));
    expect(new Set(tops).size, `secret fields' tops ${tops.join(", ")}`).toBe(1);
    expect(new Set(heights).size, `secret fields' heights ${heights.join(", ")}`).toBe(1);
    const proxy = await Promise.all(["#proxy-name", "#proxy-kind", "#proxy-scheme", "#proxy-host", "#proxy-port"].map((s) => options.locator(s).boundingBox()));
    const ptops = proxy.map((b) => Math.round(b?.y ?? -1));
    expect(new Set(ptops).size, `proxy fields' tops ${ptops.join(", ")}`).toBe(1);
  });

  test("options: a refused entry says why next to its field and keeps the text (allowlist, approval wait, proxy, secret)", async () => {
    await options.setViewportSize({ width: 1280, height: 800 });
    const pattern = options.locator("#pattern");
    await pattern.fill("*");
    await options.locator("#add").click();
    expect(await inlineError(options, pattern)).toMatch(/\*/);
    expect(await pattern.inputValue(), "the text stays in the box").toBe("*");
    expect(await options.locator("#rules [data-pattern]").count()).toBe(3);
    // Typing again clears the mark; a good pattern is added and the box emptied.
    await pattern.fill("docs.example.net");
    expect(await pattern.getAttribute("aria-invalid")).not.toBe("true");
    await options.locator("#add").click();
    await options.locator('#rules [data-pattern="docs.example.net"]').waitFor({ timeout: T });
    expect(await pattern.inputValue()).toBe("");
    await options.locator('#rules [data-pattern="docs.example.net"] button.remove').click();
    await expect.poll(() => options.locator("#rules [data-pattern]").count(), { timeout: T }).toBe(3);
    await options.locator("#add").click();
    expect(await inlineError(options, pattern)).toMatch(/type a site pattern/);

    // An approval wait outside 1–45 s is refused beside the field, not clamped in silence.
    const wait = options.locator("#approval-timeout");
    const before = await wait.inputValue();
    await wait.fill("99");
    await wait.press("Tab");
    expect(await inlineError(options, wait)).toMatch(/1 to 45/);
    expect(await wait.inputValue()).toBe("99");
    await wait.fill(before);
    await wait.press("Tab");
    await expect.poll(() => wait.getAttribute("aria-invalid"), { timeout: T }).toBeNull();

    await options.fill("#proxy-name", "broken");
    await options.selectOption("#proxy-kind", "fixed");
    await options.fill("#proxy-host", "proxy.example.com");
    await options.fill("#proxy-port", "99999");
    await options.click("#proxy-save");
    expect(await inlineError(options, options.locator("#proxy-port"))).toMatch(/port/i);
    expect(await options.locator("#proxy-port").inputValue()).toBe("99999");
    await options.fill("#proxy-name", "");
    await options.fill("#proxy-host", "");
    await options.fill("#proxy-port", "");

    await options.fill("#secret-name", "bad name!");
    await options.fill("#secret-value", "long-enough");
    await options.fill("#secret-origins", "https://example.com");
    await options.click("#secret-add");
    expect(await inlineError(options, options.locator("#secret-name"))).toMatch(/name/i);
    expect(await options.locator("#secret-name").inputValue()).toBe("bad name!");
    await options.fill("#secret-name", "fine");
    await options.fill("#secret-origins", "https://example.com/login");
    await options.click("#secret-add");
    expect(await inlineError(options, options.locator("#secret-origins"))).toContain("no path");
    expect(await options.locator("#secret-origins").inputValue()).toBe("https://example.com/login");
    expect(await options.locator('#secrets [data-secret="fine"]').count()).toBe(0);
    await options.fill("#secret-name", "");
    await options.fill("#secret-value", "");
    await options.fill("#secret-origins", "");
  });

  test("popup and connect page", async () => {
    await expect.poll(() => popup.locator("#open-panel").isVisible(), { timeout: T }).toBe(true);
    const problems = await sweep(popup, "popup");
    const connect = await browser.context.newPage();
    await connect.goto(`${EXTENSION_ORIGIN}/connect.html`);
    await expect.poll(() => connect.locator("#error").textContent(), { timeout: T }).toContain("torii launch");
    problems.push(...(await sweep(connect, "connect")));
    await connect.close();
    expect(problems, problems.join("\n")).toEqual([]);
  });

  test("side panel with a conversation", async () => {
    const panel = await openPanel(browser.context, await windowOf(popup));
    const { send, reply, idle, chip } = panelDriver(() => panel, T);
    await expect.poll(() => chip("alpha").getAttribute("data-state"), { timeout: 30_000 }).toBe("ready");
    await send("Compare **both** options:\n\n| option | cost |\n|:--|--:|\n| fast | 2 |\n| cheap | 1 |\n\n```sh\ntorii serve --verbose\n```\n\nand `inline code`, [a link](https://example.com)");
    await reply("alpha", 1);
    await idle();
    const problems = await sweep(panel, "sidepanel");
    await panel.close();
    expect(problems, problems.join("\n")).toEqual([]);
  });

  test("approval window", async () => {
    mcp = await Mcp.connect(torii);
    await mcp.waitForCatalogue();
    const nav = await mcp.ok("navigate", { url: site.url("form.html") });
    const pending = mcp.call("type", { tabId: nav.data.tabId as number, selector: "#fullname", text: "Ada Lovelace", submit: true });
    const w = await pollUntil("the approval window", () => browser.context.pages().find((p) => p.url().includes("/approval.html")), { timeoutMs: 15_000, intervalMs: 50 });
    await w.locator("#details").getByText("Sign-up form").waitFor({ timeout: T });
    const problems = await sweep(w, "approval");
    await w.locator("#deny").click({ noWaitAfter: true }).catch((e: Error) => {
      if (!/closed/i.test(e.message)) throw e;
    });
    const r = await pending;
    expect(r.isError, "denied").toBe(true);
    expect(problems, problems.join("\n")).toEqual([]);
  });
});

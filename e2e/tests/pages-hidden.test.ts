// What the extension's own pages show is what their code decided: a `hidden` element is not shown,
// whatever the stylesheets say. Checked in real Chromium on every page (popup, options, side panel,
// approval window), for the elements hidden now and for every other element were it hidden, plus the
// two cases a class's `display` once showed: the permissive-mode banner and "Show earlier (0)".
import type { Page } from "playwright-core";
import { beforeAll, expect, test } from "vitest";
import type { Browser } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";

const T = 15_000;

/** Elements whose `hidden` the page's CSS overrides: those hidden now, and any other one once hidden. */
async function hiddenButShown(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const name = (e: Element) => e.tagName.toLowerCase() + (e.id ? `#${e.id}` : "") + [...e.classList].map((c) => `.${c}`).join("");
    const bad: string[] = [];
    for (const e of document.body.querySelectorAll("*")) {
      if (!(e instanceof HTMLElement) || e.getAttribute("hidden") === "until-found") continue;
      if (e.hidden) {
        const d = getComputedStyle(e).display;
        if (d !== "none") bad.push(`${name(e)} carries hidden but has display ${d}`);
        continue;
      }
      // Hidden and shown again at once, within this task: the page never renders the change.
      e.hidden = true;
      const d = getComputedStyle(e).display;
      e.hidden = false;
      if (d !== "none") bad.push(`${name(e)} would have display ${d} when hidden`);
    }
    return bad;
  });
}

/** How many elements carry `hidden` now (so a page with none is not a pass by accident). */
const hiddenCount = (page: Page) => page.evaluate(() => document.querySelectorAll("[hidden]").length);

describeBrowser("extension pages honour the hidden attribute", () => {
  const rig = useRig();
  let browser: Browser;

  beforeAll(async () => {
    browser = await rig.browser();
  });

  async function open(path: string, ready: (p: Page) => Promise<unknown>): Promise<Page> {
    const p = await browser.context.newPage();
    await p.goto(`${EXTENSION_ORIGIN}/${path}`);
    await ready(p);
    return p;
  }

  test("popup", { timeout: 60_000 }, async () => {
    const popup = await browser.openPopup();
    await expect.poll(() => popup.locator("#status").textContent(), { timeout: T }).not.toBe("Loading…");
    expect(await hiddenCount(popup)).toBeGreaterThan(0);
    expect(await hiddenButShown(popup)).toEqual([]);
    await popup.close();
  });

  test("options: no permissive banner while permissive mode is off; shown while it is on", { timeout: 60_000 }, async () => {
    const options = await open("options.html", (p) => p.locator("#rules .empty").waitFor({ timeout: T }));
    const banner = options.locator("#permissive-row");
    // A fresh profile: permissive mode off, no sites.
    await expect.poll(() => options.locator("#rules .empty").textContent(), { timeout: T }).toContain("agents can use no site");
    expect(await banner.isVisible()).toBe(false);
    expect(await hiddenButShown(options)).toEqual([]);

    // On (as `torii launch --permissive` sets it): the banner shows; its Turn off hides it again.
    const reply = await options.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome;
      const get = (await c.runtime.sendMessage({ type: "torii.policy.get" })) as { policy: Record<string, unknown> };
      return (await c.runtime.sendMessage({ type: "torii.policy.set", policy: { ...get.policy, permissive: true } })) as { ok?: boolean; error?: string };
    });
    expect(reply.ok, reply.error).toBe(true);
    await banner.waitFor({ state: "visible", timeout: T });
    await options.locator("#permissive-off").click();
    await banner.waitFor({ state: "hidden", timeout: T });
    expect(await banner.getAttribute("hidden")).not.toBeNull();
    expect(await hiddenButShown(options)).toEqual([]);
    await options.close();
  });

  test("side panel: an empty room shows no Show earlier", { timeout: 60_000 }, async () => {
    const panel = await open("sidepanel.html", (p) => p.waitForFunction(() => document.body.dataset.ready === "true", undefined, { timeout: T }));
    expect(await panel.getByTestId("transcript").locator("li").count()).toBe(0);
    const earlier = panel.getByTestId("show-earlier");
    expect(await earlier.getAttribute("hidden")).not.toBeNull();
    expect(await earlier.isVisible()).toBe(false);
    expect(await panel.getByText(/Show earlier/).isVisible()).toBe(false);
    expect(await hiddenButShown(panel)).toEqual([]);
    await panel.close();
  });

  test("approval window", { timeout: 60_000 }, async () => {
    // No such request: the window says so, with its whole markup and stylesheets loaded.
    const approval = await open("approval.html#id=none", (p) =>
      expect.poll(() => p.locator("#state").textContent(), { timeout: T }).toBe("This request was answered or has expired."));
    expect(await hiddenButShown(approval)).toEqual([]);
    await approval.close();
  });
});

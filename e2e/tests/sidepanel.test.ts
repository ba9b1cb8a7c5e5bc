// The side panel and its multi-agent room: the real extension's sidepanel.html, opened as a tab for
// one window, chatting through the real daemon with the deterministic scripted ACP agent
// (internal/agents/scripted) configured twice, as "alpha" (the default) and "beta".
import { type Server, createServer } from "node:http";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Browser, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { openPanel as openPanelOf, panelDriver, windowOf } from "../src/panel.ts";
import { testAgent } from "../src/test-agent.ts";
import { allowEverything } from "../src/tools-rig.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";

const RELAY_LIMIT = 3;
const IDLE_SEC = 2;

const T = 15_000;
const textOf = async (l: Locator): Promise<string> => ((await l.textContent({ timeout: 5_000 })) ?? "").trim();
async function hasText(l: Locator, want: string | RegExp, timeout = T): Promise<void> {
  if (typeof want === "string") await expect.poll(() => textOf(l), { timeout }).toBe(want);
  else await expect.poll(() => textOf(l), { timeout }).toMatch(want);
}
async function containsText(l: Locator, want: string, timeout = T): Promise<void> {
  await expect.poll(() => textOf(l), { timeout }).toContain(want);
}
async function notContainsText(l: Locator, want: string): Promise<void> {
  expect(await textOf(l)).not.toContain(want);
}
async function hasAttr(l: Locator, name: string, want: string | RegExp, timeout = T): Promise<void> {
  const get = async () => (await l.getAttribute(name, { timeout: 5_000 })) ?? "";
  if (typeof want === "string") await expect.poll(get, { timeout }).toBe(want);
  else await expect.poll(get, { timeout }).toMatch(want);
}
async function hasCount(l: Locator, n: number, timeout = T): Promise<void> {
  await expect.poll(() => l.count(), { timeout }).toBe(n);
}
async function visible(l: Locator, timeout = T): Promise<void> {
  await l.waitFor({ state: "visible", timeout });
}
async function hidden(l: Locator, timeout = T): Promise<void> {
  await l.waitFor({ state: "hidden", timeout });
}
async function focused(l: Locator, timeout = T): Promise<void> {
  await expect.poll(() => l.evaluate((e) => e === document.activeElement), { timeout }).toBe(true);
}

describeBrowser("side panel", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let panel: Page;
  let windowId: number;
  let tmp: string;
  let site: Server;
  let siteUrl: string;

  const { transcript, agentMsgs, chip, send, reply, idle, clearScreen } = panelDriver(() => panel);
  const openPanel = () => openPanelOf(browser.context, windowId);

  beforeAll(async () => {
    tmp = await shortTempDir();
    const agent = await testAgent(tmp);
    site = createServer((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end('<!doctype html><title>Fixture</title><h1>Torii fixture page</h1><button id="b">Press me</button>');
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
    const addr = site.address();
    siteUrl = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/fixture`;

    torii = await rig.daemon();
    await torii.configure({
      agents: [
        { name: "alpha", command: agent },
        { name: "beta", command: agent },
      ],
      defaultAgent: "alpha",
      relayLimit: RELAY_LIMIT,
      agentIdleTimeoutSec: IDLE_SEC,
    });
    await torii.start();
    browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    // The person's policy lets the fixture origin through (as `torii launch --permissive` would);
    // tab access still comes only from the room's window grant (SECURITY I-29).
    await allowEverything(popup);
    windowId = await windowOf(popup);
    panel = await openPanel();
    await panel.setViewportSize({ width: 380, height: 760 });
    await pollUntil("the default agent to be ready", async () => (await chip("alpha").getAttribute("data-state")) === "ready", {
      timeoutMs: 30_000,
    });
  }, 180_000);

  afterAll(async () => {
    if (site) {
      site.closeAllConnections(); // the browser keeps its connection alive
      await new Promise<void>((r) => site.close(() => r()));
    }
    if (tmp) await removeDir(tmp);
  });

  test("a message gets a streamed, sanitized markdown reply with a plan checklist", async () => {
    await hasText(panel.getByTestId("link-status"), /connected/);
    await hasAttr(chip("beta"), "data-state", "off");
    await send("hello **there**");
    const user = transcript().getByTestId("msg-user").last();
    await hasText(user.locator("strong"), "there");
    const m = await reply("alpha", 1);
    await hasText(m.locator(".bubble strong"), "Hello");
    await containsText(m.locator(".bubble"), "scripted agent.");
    await hasText(m.locator(".bubble code"), "hello **there**");
    await hasText(m.locator(".name"), "alpha");
    await hasText(m.locator(".avatar"), "A");
    const plan = transcript().getByTestId("plan").last();
    await hasCount(plan.locator("li"), 2);
    await hasText(plan.locator('li[data-status="completed"]'), /Read the message/);
    await idle();
  });

  test("hostile markdown renders inert", async () => {
    await panel.evaluate(() => {
      (window as unknown as { __xss?: number }).__xss = 0;
    });
    const hostile = [
      '<img src=x onerror="window.__xss=1">',
      "[click me](javascript:window.__xss=2)",
      '<svg onload="window.__xss=3"><script>window.__xss=4</script></svg>',
      "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "![pixel](https://tracker.invalid/p.gif)",
      "[ok](https://example.com)",
    ].join("\n\n");
    await send(hostile);
    await reply("alpha", 2);
    const scope = transcript();
    await hasCount(scope.locator("script, img, svg, iframe, style, object, embed"), 0);
    const hrefs = await scope.locator("a[href]").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    // Only http(s) links survive (the image became a plain link: nothing is loaded).
    expect(hrefs).toContain("https://example.com");
    for (const h of hrefs) expect(h).toMatch(/^https:\/\//);
    const link = scope.locator('a[href="https://example.com"]');
    await hasAttr(link, "target", "_blank");
    await hasAttr(link, "rel", "noopener noreferrer");
    const handlers = await scope.locator("*").evaluateAll((els) =>
      els.flatMap((e) => Array.from(e.attributes).filter((a) => a.name.startsWith("on")).map((a) => a.name)),
    );
    expect(handlers).toEqual([]);
    await panel.waitForTimeout(200);
    expect(await panel.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBe(0);
    await containsText(scope.getByTestId("msg-user").last(), "<img src=x onerror=");
  });

  test("Stop cancels a running turn; Retry sends it again", async () => {
    await clearScreen();
    await send("/slow");
    const m = agentMsgs("alpha").last();
    await hasAttr(m, "data-streaming", "true", 10_000);
    await containsText(m, "slow 2");
    await visible(panel.getByTestId("stop"));
    await panel.getByTestId("stop").click();
    await hasCount(transcript().getByTestId("notice").filter({ hasText: "alpha stopped." }), 1, 10_000);
    await hasAttr(m, "data-streaming", "false");
    const text = (await m.textContent()) ?? "";
    expect(text).not.toContain("slow 39");
    await hidden(panel.getByTestId("stop"));
    // Retry sits on the message that was stopped; it sends it again; Escape stops it from the keyboard.
    const stopped = transcript().getByTestId("msg-user").last();
    await containsText(stopped.getByTestId("undelivered"), "Stopped — alpha");
    await stopped.getByTestId("retry").click();
    await hasCount(stopped.getByTestId("retry"), 0);
    await hasCount(transcript().getByTestId("msg-user"), 2);
    await hasAttr(agentMsgs("alpha").nth(1), "data-streaming", "true", 10_000);
    await panel.getByTestId("composer-input").press("Escape");
    await hasCount(transcript().getByTestId("notice").filter({ hasText: "alpha stopped." }), 2, 10_000);
    await idle();
  });

  test("a permission request is approved from the panel", async () => {
    await clearScreen();
    await send("/permission");
    const card = transcript().getByTestId("permission");
    await visible(card, 10_000);
    await containsText(card, "Write to the page");
    await focused(card.getByTestId("perm-allow"));
    await card.getByTestId("perm-allow").click();
    await hasText(card.getByTestId("perm-outcome"), /approved/);
    const m = await reply("alpha", 1);
    await containsText(m, "permission granted");
    await hasAttr(transcript().getByTestId("tool-card"), "data-status", "done");
    await idle();
  });

  test("reloading the panel keeps the history and resumes the same session", async () => {
    await clearScreen();
    await send("/echo-session");
    const before = ((await (await reply("alpha", 1)).locator(".bubble").textContent()) ?? "").trim();
    expect(before).toMatch(/^session \S+/);
    await panel.reload();
    await panel.waitForFunction(() => document.body.dataset.ready === "true");
    await hasText(agentMsgs("alpha").first().locator(".bubble"), before);
    await hasAttr(chip("alpha"), "data-state", "ready", 15_000);
    await send("/echo-session");
    const after = ((await (await reply("alpha", 2)).locator(".bubble").textContent()) ?? "").trim();
    expect(after, "the same agent session continues after the reload").toBe(before);
    await idle();
  });

  test("@mention routes to the agents named; an unknown mention is shown and not broadcast", async () => {
    await clearScreen();
    await chip("beta").getByTestId("connect-toggle").click();
    await hasAttr(chip("beta"), "data-state", "ready", 30_000);
    await send("@beta /echo-session");
    await reply("beta", 1);
    await idle();
    await hasCount(agentMsgs("alpha"), 0);
    await send("@alpha /echo-session");
    await reply("alpha", 1);
    await idle();
    await hasCount(agentMsgs("beta"), 1);
    await send("@nobody are you there?");
    await hasCount(transcript().getByTestId("notice").filter({ hasText: "No agent named @nobody" }), 1);
    await panel.waitForTimeout(1_000);
    await hasCount(agentMsgs(), 2);
    await notContainsText(transcript().getByTestId("msg-user").last(), "to ");
  });

  test(`ambient mode relays replies between agents until the loop guard trips at ${RELAY_LIMIT}`, async () => {
    await clearScreen();
    await panel.getByTestId("mode-toggle").click();
    await hasAttr(panel.getByTestId("mode-toggle"), "aria-pressed", "true");
    await send("hello room");
    await visible(panel.getByTestId("loop-guard"), 30_000);
    await idle();
    const relays = transcript().getByTestId("notice").filter({ hasText: /^(alpha → beta|beta → alpha)/ });
    await hasCount(relays, RELAY_LIMIT);
    // Both agents answered the person, then exactly RELAY_LIMIT relayed replies.
    await hasCount(agentMsgs(), 2 + RELAY_LIMIT);
    const relayed = await agentMsgs().locator(".bubble").allTextContents();
    expect(relayed.filter((t) => t.includes('<message from="')).length).toBe(RELAY_LIMIT);
    // The person speaking resets the guard.
    await panel.getByTestId("mode-toggle").click();
    const before = await agentMsgs("alpha").count();
    await send("@alpha thanks");
    await hidden(panel.getByTestId("loop-guard"));
    await reply("alpha", before + 1);
    await idle();
  });

  test("an agent uses a browser tool on the window's tab, shown as a tool card", async () => {
    await clearScreen();
    const tab = await browser.context.newPage();
    await tab.goto(siteUrl);
    const [tabId, tabWindow] = await panel.evaluate(async (url) => {
      const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id: number; url: string; windowId: number }[]> } } }).chrome;
      const t = (await c.tabs.query({})).find((x) => x.url === url);
      return [t?.id ?? -1, t?.windowId ?? -1];
    }, siteUrl);
    expect(tabId).toBeGreaterThan(0);
    // The person's own tab in the room's window: reachable only through the window grant the panel
    // recorded for alpha's session (SECURITY I-29), not opened by the agent.
    expect(tabWindow).toBe(windowId);
    await send(`@alpha /tool read_text {"tabId":${tabId}}`);
    const card = transcript().getByTestId("tool-card");
    await hasAttr(card, "data-status", /done|failed/, 20_000);
    await containsText(card.getByTestId("tool-touched"), `tab ${tabId}`);
    const m = await reply("alpha", 1);
    await idle();
    const text = (await m.textContent()) ?? "";
    expect(text, "the tool ran against the fixture tab").toContain("Torii fixture page");
    await hasAttr(card, "data-status", "done");
    await tab.close();
  });

  test("a crashed agent is reported; clicking its chip restarts it", async () => {
    await clearScreen();
    await send("@beta /crash");
    await hasAttr(chip("beta"), "data-state", /crashed|exited/, 20_000);
    await visible(transcript().getByTestId("notice").filter({ hasText: /beta (crashed|exited)/ }).first());
    await chip("beta").getByTestId("chip-main").click();
    await hasAttr(chip("beta"), "data-state", "ready", 30_000);
    await send("@beta /echo-session");
    await containsText((await reply("beta", 2)).locator(".bubble"), "session ");
    await idle();
  });

  test("a crashed agent stays crashed when the panel reloads, with its exit reason, and its chip restarts it", async () => {
    await clearScreen();
    await send("@beta /crash");
    await hasAttr(chip("beta"), "data-state", "crashed", 20_000);
    await containsText(chip("beta").getByTestId("chip-state"), "crashed");
    // The failed turn tells the person what to do, not the daemon's method name.
    const failed = transcript().getByTestId("notice").filter({ hasText: "beta: the turn failed" });
    await visible(failed);
    await containsText(failed, "click its chip to restart it");
    await notContainsText(failed, "torii/session/restart");
    await expect.poll(() => chip("beta").getByTestId("chip-main").getAttribute("title")).toMatch(/crashed \(exit status 3.*\) — click to restart/);
    // A reload re-attaches the session; the daemon's word on it (crashed) must not turn into "connected".
    await panel.reload();
    await panel.waitForFunction(() => document.body.dataset.ready === "true");
    await expect.poll(async () => Number((await panel.evaluate(() => document.body.dataset.syncs)) ?? "0"), { timeout: T }).toBeGreaterThanOrEqual(1);
    await hasAttr(chip("beta"), "data-state", "crashed");
    await chip("beta").getByTestId("chip-main").click();
    await hasAttr(chip("beta"), "data-state", "ready", 30_000);
    await send("@beta /echo-session");
    await containsText((await reply("beta", 2)).locator(".bubble"), "session "); // the history kept "about to crash"
    await idle();
  });

  test("an agent that crashes during a permission prompt: the prompt is withdrawn and the chip says crashed", async () => {
    await clearScreen();
    await send("@beta /permission-crash");
    const card = transcript().getByTestId("permission");
    await visible(card, 10_000);
    await hasAttr(chip("beta"), "data-state", "crashed", 20_000);
    await hasText(card.getByTestId("perm-outcome"), "withdrawn: beta crashed");
    await hasCount(card.locator("button"), 0);
    await chip("beta").getByTestId("chip-main").click();
    await hasAttr(chip("beta"), "data-state", "ready", 30_000);
    await idle();
  });

  test("an agent that stops answering shows as not responding while the room keeps working", async () => {
    await clearScreen();
    await send("@alpha /hang");
    await hasAttr(chip("alpha"), "data-state", "not_responding", (IDLE_SEC + 10) * 1000);
    await visible(transcript().getByTestId("notice").filter({ hasText: "alpha is not responding" }));
    await send("@beta still there?");
    await containsText((await reply("beta", 1)).locator(".bubble"), "still there?");
    await panel.getByTestId("stop").click();
    await hasAttr(chip("alpha"), "data-state", "ready", 15_000);
    await idle();
  });

  test("an agent flooding updates keeps the panel responsive and the DOM bounded", async () => {
    await clearScreen();
    await send("@alpha /flood 3000");
    // While the flood streams, the page keeps answering quickly.
    const lags: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = Date.now();
      await panel.evaluate(() => document.body.dataset.busy);
      lags.push(Date.now() - t0);
      await panel.waitForTimeout(50);
    }
    const m = await reply("alpha", 1, 60_000);
    await containsText(m.locator(".bubble"), "flood done");
    await idle();
    lags.sort((a, b) => a - b);
    console.log(`e2e: panel round trip during a flood: median ${lags[5]} ms, max ${lags[9]} ms`);
    expect(lags[5], "median round trip while flooding").toBeLessThan(500);
    // The whole flood is one bubble (plus its plan card), not 3,000 DOM nodes of entries.
    expect(await transcript().locator(":scope > li").count()).toBeLessThanOrEqual(4);
  });

  test("history survives closing and reopening the panel", async () => {
    const count = await transcript().locator("li").count();
    await panel.close();
    panel = await openPanel();
    await hasCount(transcript().locator("li"), count);
    await pollUntil("the roster after reopening", async () => (await chip("alpha").getAttribute("data-state")) === "ready");
  });
});

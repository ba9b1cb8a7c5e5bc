// Adversarial: whose tab is it. A tab the person opens while an agent's tab is active (a new tab,
// their own click on a new-tab link, Ctrl+click, middle click, even during an agent's call) never
// becomes the agent's; the agent's own input never counts as the person's attention (close_tab on
// its tab with a beforeunload handler closes it without a prompt); and a tab closed, a frame
// swapped or a foreign dialog raised between check and act leaks nothing.
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { pollUntil } from "../src/util.ts";

let n = 0;

describeBrowser("adversarial: tab ownership and attention", () => {
  const R = useAttackRig("adv-tabs");

  /** The person's tab must be invisible to the agent: not listed, not readable, not clickable. */
  async function expectPersonTab(personTab: number, secret: string) {
    const tabs = await R().call("tabs");
    const listed = ((tabs.data.tabs as { tabId: number }[] | undefined) ?? []).map((t) => t.tabId);
    const snap = await R().call("snapshot", { tabId: personTab }, 10_000);
    const click = await R().call("click", { tabId: personTab, selector: "a, button" }, 10_000);
    const problems = R().leaks({ extra: [secret] });
    if (listed.includes(personTab)) problems.push("tabs lists the person's tab");
    if (problems.length) throw new Error(`LEAK: ${problems.join("; ")}`);
    expect(snap.error?.code, snap.text).toBe("tab_not_owned");
    expect(click.error?.code, click.text).toBe("tab_not_owned");
  }

  for (const where of ["a", "b"] as const) {
    it(`the person opens a new tab on ${where === "a" ? "the allowed origin" : "b"} while an agent tab is active: not the agent's`, async () => {
      const agent = await R().open("/links", { x: "b" });
      await agent.page.bringToFront();
      const secret = `PERSON-TAB-${++n}-aa`;
      const p = await R().browser.context.newPage();
      await p.goto(R().site.url(where, "/nest-leaf", { person: secret }));
      await expectPersonTab(await R().tabIdOf(p), secret);
    });
  }

  for (const [how, act] of [
    ["clicks a target=_blank link", (p: Page) => p.click("#to-leaf-blank")],
    ["Ctrl+clicks a link", (p: Page) => p.click("#to-leaf", { modifiers: ["Control"] })],
    ["middle-clicks a link", (p: Page) => p.click("#to-leaf", { button: "middle" })],
    ["Shift+clicks a link (new window)", (p: Page) => p.click("#to-leaf", { modifiers: ["Shift"] })],
    ["clicks a window.open button", (p: Page) => p.click("#open-b")],
  ] as const) {
    it(`the person ${how} in the agent's tab: the new tab is the person's`, async () => {
      const agent = await R().open("/links", { x: "b" });
      const opened = R().browser.context.waitForEvent("page", { timeout: 8_000 });
      await act(agent.page);
      const p = await opened;
      await p.waitForLoadState().catch(() => {});
      await expectPersonTab(await R().tabIdOf(p), "from=links");
    });
  }

  it("the person opens a tab while the agent's call is running: it is not adopted", async () => {
    const agent = await R().open("/links", { x: "b" });
    const secret = `PERSON-TAB-${++n}-run`;
    const pending = R().call("wait_for", { tabId: agent.tabId, selector: "#never", timeoutMs: 2_000 }, 15_000);
    const p = await R().browser.context.newPage();
    await p.goto(R().site.url("a", "/nest-leaf", { person: secret }));
    await pending;
    await expectPersonTab(await R().tabIdOf(p), secret);
  });

  it("after the person opens a tab, a call without tabId still acts on the agent's own tab", async () => {
    const agent = await R().open("/nest-leaf", { mine: 1 });
    const secret = `PERSON-TAB-${++n}-def`;
    const p = await R().browser.context.newPage();
    await p.goto(R().site.url("a", "/nest-leaf", { person: secret }));
    await p.bringToFront();
    const res = await R().call("snapshot", {}, 10_000);
    expect(R().leaks({ extra: [secret] })).toEqual([]);
    expect(res.text).toContain(`mine=1`);
    expect(agent.tabId).toBeGreaterThan(0);
  });

  for (const [how, tool, args] of [
    ["mouse_click", "mouse_click", { selector: "#b" }],
    ["type", "type", { selector: "#f", text: "abc" }],
    ["press_key", "press_key", { selector: "#f", key: "a" }],
    ["click", "click", { selector: "#b" }],
  ] as const) {
    it(`the agent's ${how} does not count as the person's attention: close_tab closes its beforeunload tab at once`, async () => {
      const { tabId, page } = await R().open("/unload");
      let prompted = false;
      page.on("dialog", (d) => {
        if (d.type() === "beforeunload") prompted = true;
      });
      const acted = await R().call(tool, { tabId, ...args }, 15_000);
      expect(acted.isError, acted.text).toBe(false);
      const closed = page.waitForEvent("close", { timeout: 6_000 }).then(() => true, () => false);
      const res = await R().call("close_tab", { tabId }, 15_000);
      const gone = await closed;
      if (prompted || !gone) throw new Error(`LEAK: ${prompted ? "a beforeunload prompt was shown" : "the tab stayed open"} after the agent's ${how}`);
      expect(res.isError, res.text).toBe(false);
    });
  }

  for (const x of ATTACKERS) {
    it(`A swaps its own frame for ${x}'s as the pointer arrives (frame detached between check and act): no click reaches ${x}`, async () => {
      const { tabId, page } = await R().open("/detach", { x });
      await R().frameReady(page, x);
      await pollUntil("A's frame", () => page.frames().some((f) => f.url().includes("in=detach")), { timeoutMs: 5_000, intervalMs: 30 });
      const res = await R().call("mouse_click", { tabId, selector: "#mine" }, 15_000);
      await R().expectClean();
      expect(["origin_not_allowed", "navigation_failed"], res.text).toContain(res.error?.code);
    });

    it(`${x}'s frame raises an alert as the pointer reaches A's button (dialog between check and act): no text, no answer`, async () => {
      const { tabId, page } = await R().open("/dialog-frame", { x, dialog: "prompt", when: "message" });
      await R().frameReady(page, x);
      await R().call("mouse_click", { tabId, selector: "#go" }, 15_000);
      const ans = await R().call("handle_dialog", { tabId, accept: true, promptText: "agent-answer" }, 10_000);
      await R().expectClean({ extra: ["agent-answer"] });
      expect(R().site.beacons(x, ["dialog-result"])).toEqual([]);
      expect(["origin_not_allowed", "no_dialog"], ans.text).toContain(ans.error?.code);
    });
  }

  it("the tab is closed while the agent types into it: a typed error, nothing of another tab", async () => {
    const { tabId, page } = await R().open("/nest-leaf", { closing: 1 });
    const pending = R().call("type", { tabId, selector: "#leafin", text: "x".repeat(800), keys: true }, 20_000);
    await pollUntil("the first key", async () => {
      await R().flush();
      return R().site.beacons("a", ["keydown"]).length > 0;
    }, { timeoutMs: 8_000, intervalMs: 30 });
    await page.close({ runBeforeUnload: false });
    const res = await pending;
    await R().expectClean();
    expect(["no_tab", "navigation_failed", "cancelled", "timeout", "internal"], res.text).toContain(res.error?.code);
  });
});

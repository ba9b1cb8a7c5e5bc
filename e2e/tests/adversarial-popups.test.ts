// Adversarial: the agent's own action opens the attacker. window.open, target=_blank (with and
// without an opener), javascript: links, and the shortcuts that open new tabs or windows (Ctrl+click,
// middle click, Shift+click, Ctrl+Enter): the new tab is judged before anything of it is read.
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { pollUntil } from "../src/util.ts";

const REFUSED = ["origin_not_allowed", "tab_not_owned"];

describeBrowser("adversarial: popups and new tabs the agent opens", () => {
  const R = useAttackRig("adv-popups");

  for (const x of ATTACKERS) {
    for (const [how, tool, args] of [
      ["click a window.open button", "click", { selector: "#open-b" }],
      ["click a target=_blank link", "click", { selector: "#to-b-blank" }],
      ["click a target=_blank rel=noopener link", "click", { selector: "#to-b-noopener" }],
      ["mouse_click a javascript: link that calls window.open", "mouse_click", { selector: "#js-open" }],
      ["mouse_click with Control", "mouse_click", { selector: "#to-b", modifiers: ["Control"] }],
      ["mouse_click with the middle button", "mouse_click", { selector: "#to-b", button: "middle" }],
      ["mouse_click with Shift (new window)", "mouse_click", { selector: "#to-b", modifiers: ["Shift"] }],
      ["press_key Control+Enter on a focused link", "press_key", { key: "Control+Enter" }],
      ["mouse_click a target=_blank link with observe", "mouse_click", { selector: "#to-b-blank", observe: "snapshot" }],
    ] as const) {
      it(`${how} opening ${x}: the new tab is never read, tabs names nothing of ${x}`, async () => {
        const { tabId, page } = await R().open("/links", { x });
        if (tool === "press_key") await page.focus("#to-b");
        const before = await R().tabIds();
        const seen: Page[] = [];
        const onPage = (p: Page) => seen.push(p);
        R().browser.context.on("page", onPage);
        const res = await R().call(tool, { tabId, ...args }, 15_000);
        // Refused before the tab opened (judged by its effect) is as good as a new tab never read.
        const refused = res.error?.code === "origin_not_allowed";
        const popup = await pollUntil("the new tab", () => seen[0], { timeoutMs: refused ? 1_500 : 8_000, intervalMs: 30 }).catch(() => undefined);
        R().browser.context.off("page", onPage);
        if (!popup) {
          expect(refused, `no new tab opened and the call did not refuse: ${res.text}`).toBe(true);
          await R().expectClean();
          return;
        }
        await popup.waitForLoadState().catch(() => {});
        const fresh = await R().newTab(before);
        const tabs = await R().call("tabs");
        expect(tabs.isError, tabs.text).toBe(false);
        const snap = await R().call("snapshot", { tabId: fresh }, 10_000);
        const text = await R().call("read_text", { tabId: fresh }, 10_000);
        await R().expectClean();
        expect(REFUSED, snap.text).toContain(snap.error?.code);
        expect(REFUSED, text.text).toContain(text.error?.code);
      });
    }

    it(`click a javascript: link that sends the tab to ${x}: nothing of ${x}; if the tab left, reads are refused`, async () => {
      const { tabId, page } = await R().open("/links", { x });
      await R().call("click", { tabId, selector: "#js-nav", observe: "snapshot", waitFor: { selector: "#never", timeoutMs: 1_500 } }, 15_000);
      const left = page.url().startsWith(R().site.origin[x]);
      const after = await R().call("read_text", { tabId }, 10_000);
      await R().expectClean();
      // Refusing the script URL outright is as good as refusing what it loaded.
      if (left || after.isError) expect(after.error?.code, after.text).toBe("origin_not_allowed");
    });
  }
});

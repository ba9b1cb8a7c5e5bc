// Adversarial: asking about a foreign frame instead of reading it. wait_for, get_state, find,
// a root or an element screenshot aimed at B's or C's frame would each tell the agent what the
// frame holds; refs taken from an A frame that later became the attacker's must not act on it.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS, MARK } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { refOf } from "../src/mcp.ts";
import { pollUntil } from "../src/util.ts";

describeBrowser("adversarial: oracles on foreign frames", () => {
  const R = useAttackRig("adv-oracles");

  for (const x of ATTACKERS) {
    for (const [what, tool, args] of [
      ["wait_for its text", "wait_for", { text: MARK[x], timeoutMs: 1_500 }],
      ["wait_for its element", "wait_for", { selector: "#catch", timeoutMs: 1_500 }],
      ["an action's waitFor on its text", "click", { selector: "h1", waitFor: { text: MARK[x], timeoutMs: 1_500 } }],
      ["get_state of its element", "get_state", { selector: "#catch" }],
      ["find its button by role", "find", { role: "button" }],
    ] as const) {
      it(`${what} in ${x}'s frame: the answer says nothing about ${x}`, async () => {
        const { tabId, page } = await R().open("/iframe-target", { x });
        await R().frameReady(page, x);
        const res = await R().call(tool, { tabId, ...args }, 15_000);
        const found = JSON.stringify(res.data).match(/"found":true|"visible":true/);
        if (found) throw new Error(`LEAK: ${tool} answered ${found[0]} about ${x}'s frame: ${res.text.slice(0, 200)}`);
        await R().expectClean();
      });
    }

    for (const [what, tool, args] of [
      ["snapshot rooted at", "snapshot", { root: "#evil" }],
      ["read_text rooted at", "read_text", { root: "#evil" }],
      ["an element screenshot of", "screenshot", { selector: "#evil", format: "png" }],
      ["a region screenshot over", "screenshot", { region: { x: 0, y: 40, width: 420, height: 220 }, format: "png" }],
    ] as const) {
      it(`${what} ${x}'s <iframe>: refused or blank, nothing of ${x}`, async () => {
        const { tabId, page } = await R().open("/iframe-target", { x });
        await R().frameReady(page, x);
        const res = await R().call(tool, { tabId, ...args }, 15_000);
        await R().expectClean();
        await R().expectNoAttackerPixels(res);
      });
    }

    for (const [tool, role, name, extra] of [
      ["fill", "textbox", "Inner field", { value: "staleref-typed" }],
      ["type", "textbox", "Inner field", { text: "staleref-typed" }],
      ["click", "button", "Inner button", {}],
      ["mouse_click", "button", "Inner button", {}],
      ["select_option", "combobox", "Inner choice", { labels: ["two"] }],
    ] as const) {
      it(`${tool} by a ref taken before A's frame became ${x}'s: nothing reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/frame-later", { x, ms: 1_500 });
        await R().frameReady(page, "a");
        const snap = await R().call("snapshot", { tabId }, 15_000);
        const ref = refOf(snap.text, role, name);
        await pollUntil(`the frame to become ${x}'s`, () => page.frames().some((f) => f.url().startsWith(R().site.origin[x])), { timeoutMs: 8_000, intervalMs: 30 });
        await R().frameReady(page, x);
        const res = await R().call(tool, { tabId, ref, ...extra }, 15_000);
        await R().expectClean({ extra: ["staleref-typed"] });
        expect(["stale_ref", "origin_not_allowed", "not_found"], res.text).toContain(res.error?.code);
      });
    }
  }
});

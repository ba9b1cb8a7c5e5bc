// Adversarial: attacks beyond the listed classes. A's own form posting to an attacker (or into the
// attacker's frame), <a ping>, a popup that sends its opener to the attacker, a page
// that fakes an allowed-looking path with replaceState, A scrolling or sliding the attacker's frame
// under the pointer. Measured on the attackers' logs and what reached the agent.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { pollUntil } from "../src/util.ts";

let n = 0;

describeBrowser("adversarial: exfiltration and pointer tricks", () => {
  const R = useAttackRig("adv-exfil");

  for (const x of ATTACKERS) {
    for (const [how, steps] of [
      ["fill then click the submit of a form whose action is on", [["fill", { selector: "#fq" }], ["click", { selector: "#fbsub" }]]],
      ["type with submit:true into a form whose action is on", [["type", { selector: "#fq", submit: true }]]],
      ["fill then press_key Enter in a form whose action is on", [["fill", { selector: "#fq" }], ["press_key", { selector: "#fq", key: "Enter" }]]],
      ["fill then click the submit of a form that targets the frame of", [["fill", { selector: "#ftq" }], ["click", { selector: "#ftsub" }]]],
    ] as [string, [string, Record<string, unknown>][]][]) {
      it(`${how} ${x}: what the agent typed never reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/links", { x });
        await R().frameReady(page, x);
        const secret = `TYPED-${++n}-ex1`;
        let last;
        for (const [tool, args] of steps) {
          last = await R().call(tool, { tabId, ...args, ...(tool === "fill" ? { value: secret } : tool === "type" ? { text: secret } : {}) }, 15_000);
          if (last.isError) break;
        }
        // A submission fires A's submit event first (beaconed in order): only then can a POST be on its way.
        await R().flush();
        const posted = () => R().site.log.filter((e) => e.role === x && (e.body.includes(secret) || e.query.includes(secret)));
        if (R().site.beacons("a", ["submit"]).length > 0) await pollUntil(`the POST to reach ${x}`, () => posted().length > 0, { timeoutMs: 5_000, intervalMs: 30 }).catch(() => {});
        if (posted().length) throw new Error(`LEAK: ${x} received ${posted().map((e) => `${e.method} ${e.path}`).join(", ")} with the typed text`);
        await R().expectClean({ kinds: [] });
        expect(last?.error?.code, last?.text).toBe("origin_not_allowed");
      });
    }

    it(`click an <a ping> pointing at ${x}: ${x} is not told about the agent's click`, async () => {
      const { tabId } = await R().open("/links", { x });
      await R().call("click", { tabId, selector: "#ping" }, 15_000);
      await R().flush();
      const pinged = R().site.requests(x, "/ping");
      if (pinged.length) throw new Error(`LEAK: ${x} received ${pinged.length} ping(s) from the agent's click`);
      await R().expectClean({ kinds: [] });
    });

    it(`${x}'s popup (opened by the agent's click) sends the agent's A tab to ${x}: the next read is refused`, async () => {
      const { tabId, page } = await R().open("/links", { x, navopener: 1 });
      await R().call("click", { tabId, selector: "#open-b" }, 15_000);
      await pollUntil(`the opener to land on ${x}`, () => page.url().startsWith(R().site.origin[x]), { timeoutMs: 8_000, intervalMs: 30 });
      // Committed is not loaded: a read during the load is refused as navigation_failed instead.
      await page.waitForLoadState("load", { timeout: 8_000 }).catch(() => undefined);
      const res = await R().call("snapshot", { tabId }, 10_000);
      const tabs = await R().call("tabs");
      await R().expectClean({ kinds: [] });
      expect(res.error?.code, res.text).toBe("origin_not_allowed");
      expect(tabs.isError, tabs.text).toBe(false);
    });

    it(`${x}'s page rewrites its URL to an A-looking path (replaceState): still refused, nothing of ${x}`, async () => {
      const res = await R().call("navigate", { url: R().site.url("a", "/hop", { to: x, path: "/catch?rs=1" }), newTab: true }, 15_000);
      await pollUntil("the rewritten URL", () => R().browser.context.pages().some((p) => p.url().includes("looks=allowed")), { timeoutMs: 8_000, intervalMs: 30 });
      const snap = await R().call("snapshot", {}, 10_000);
      const tabs = await R().call("tabs");
      await R().expectClean({ kinds: [] });
      expect(snap.error?.code, snap.text).toBe("origin_not_allowed");
      expect(res.isError && tabs.isError).toBe(false);
    });

    it(`A scrolls ${x}'s frame under the pointer as it arrives: no click reaches ${x}`, async () => {
      const { tabId, page } = await R().open("/scroll-swap", { x });
      await R().frameReady(page, x);
      const res = await R().call("mouse_click", { tabId, selector: "#go" }, 15_000);
      await R().expectClean();
      expect(["origin_not_allowed", "navigation_failed"], res.text).toContain(res.error?.code);
    });

    it(`${x}'s frame sweeps across A's button without pause: 10 mouse_clicks, no click reaches ${x}`, async () => {
      const { tabId, page } = await R().open("/slide", { x });
      await R().frameReady(page, x);
      for (let i = 0; i < 10; i++) await R().call("mouse_click", { tabId, selector: "#go" }, 15_000);
      await R().expectClean();
    });
  }
});

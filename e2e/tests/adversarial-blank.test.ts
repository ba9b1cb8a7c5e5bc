// Adversarial: documents whose real origin is not their parent's or opener's. A blank popup or a
// blank frame written by B, srcdoc / blob: / data: children of B's frame, and document.open()
// replacing a document. None may be read or clicked as if it were A's.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS, type Attacker, MARK } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { pollUntil } from "../src/util.ts";

/** A tab the agent may not read answers one of these (ownership may refuse before the allowlist). */
const REFUSED = ["origin_not_allowed", "tab_not_owned"];
const TYPED = "blanktyped";

describeBrowser("adversarial: blank and written documents", () => {
  const R = useAttackRig("adv-blank");

  /** A's tab with x's frame; x's frame opens a blank popup and writes its own page into it. */
  async function bPopup(x: Attacker, reopen = false) {
    const o = await R().open("/b-popup", { x, ...(reopen ? { reopen: 1 } : {}) });
    await R().frameReady(o.page, x);
    const before = await R().tabIds();
    const seen = R().browser.context.waitForEvent("page", { timeout: 8_000 });
    await R().call("click", { tabId: o.tabId, selector: "#poke" }, 15_000);
    const popup = await seen;
    const popupId = await R().newTab(before);
    await pollUntil("the popup's written content", async () => (await popup.content()).includes(MARK[x]), { timeoutMs: 5_000, intervalMs: 30 });
    if (reopen) await pollUntil("the second write", async () => (await popup.content()).includes("second write"), { timeoutMs: 5_000, intervalMs: 30 });
    return { ...o, popup, popupId };
  }

  for (const x of ATTACKERS) {
    it(`${x} writes a blank popup: tabs lists it without its title or text`, async () => {
      await bPopup(x);
      const t = await R().call("tabs");
      expect(t.isError, t.text).toBe(false);
      await R().expectClean();
    });

    for (const [tool, args] of [
      ["snapshot", {}],
      ["read_text", {}],
      ["find", { text: "button" }],
      ["screenshot", { format: "png" }],
      ["click", { selector: "#bbtn" }],
      ["mouse_click", { selector: "#bbtn" }],
      ["type", { selector: "#bin", text: TYPED }],
    ] as const) {
      it(`${x} writes a blank popup: ${tool} on it is refused and nothing reaches ${x}`, async () => {
        const { popupId } = await bPopup(x);
        const res = await R().call(tool, { tabId: popupId, ...args }, 15_000);
        await R().expectClean();
        await R().expectNoAttackerPixels(res);
        expect(REFUSED, res.text).toContain(res.error?.code);
      });
    }

    it(`${x}'s blank popup rewritten with document.open(): the new document is not read either`, async () => {
      const { popupId } = await bPopup(x, true);
      const res = await R().call("read_text", { tabId: popupId }, 15_000);
      await R().expectClean({ extra: ["second write"] });
      expect(REFUSED, res.text).toContain(res.error?.code);
    });

    /** x's frame turns itself into about:blank (x's origin) and x's second frame writes into it. */
    async function blankSelf(x: Attacker) {
      const o = await R().open("/blank-self", { x });
      await pollUntil(`${x} to write into its blank frame`, async () => {
        await R().flush();
        return R().site.beacons(x, ["wrote"]).length > 0;
      }, { timeoutMs: 8_000, intervalMs: 50 });
      return o;
    }
    for (const [tool, args] of [
      ["snapshot", {}],
      ["read_text", {}],
      ["find", { role: "button" }],
      ["screenshot", { format: "png" }],
      ["mouse_click", { selector: "#f1" }],
      ["type", { selector: "#f1", text: TYPED }],
    ] as const) {
      it(`a blank frame on A written by ${x} (parent A, origin ${x}): ${tool} gets none of it`, async () => {
        const { tabId } = await blankSelf(x);
        const res = await R().call(tool, { tabId, ...args }, 15_000);
        await R().expectClean();
        await R().expectNoAttackerPixels(res);
        if (tool === "mouse_click" || tool === "type") expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });
    }

    for (const kind of ["blank", "srcdoc", "blob", "data"] as const) {
      for (const tool of ["snapshot", "read_text"] as const) {
        it(`${x}'s frame holds a ${kind} document it made: ${tool} of A's tab shows none of it`, async () => {
          const { tabId, page } = await R().open("/b-child", { x, kind });
          // Armed once x's document (or its child) shows the marker.
          await pollUntil(`${x}'s ${kind} document`, async () => {
            for (const f of page.frames()) if (f !== page.mainFrame() && (await f.content().catch(() => "")).includes(MARK[x])) return true;
            return false;
          }, { timeoutMs: 8_000, intervalMs: 50 });
          await R().call(tool, { tabId }, 15_000);
          await R().expectClean({ extra: ["blob:"] });
        });
      }
    }

    it(`A navigates ${x}'s frame to about:blank and writes into it (A's own document): no trace of ${x}`, async () => {
      const { tabId, page } = await R().open("/a-writes-blank", { x });
      await pollUntil("A's write", async () => page.frames().some((f) => f.url() === "about:blank"), { timeoutMs: 8_000, intervalMs: 50 });
      const res = await R().call("snapshot", { tabId }, 15_000);
      expect(res.isError, res.text).toBe(false);
      await R().expectClean();
    });

    it(`document.open() replaces A's document with one embedding ${x}: old refs fail, nothing of ${x} is read`, async () => {
      const { tabId, page } = await R().open("/doc-open", { x });
      const snap = await R().call("snapshot", { tabId });
      const old = /button "Old button" \[([a-gi-z]+\d+)\]/.exec(snap.text)?.[1];
      expect(old, snap.text).toBeTruthy();
      await R().call("click", { tabId, selector: "#swap" }, 15_000);
      await pollUntil("the replaced document", async () => (await page.title()) === "Replaced", { timeoutMs: 5_000, intervalMs: 30 });
      const stale = await R().call("click", { tabId, ref: old }, 10_000);
      const again = await R().call("snapshot", { tabId }, 15_000);
      await R().expectClean();
      expect(["stale_ref", "not_found"], stale.text).toContain(stale.error?.code);
      expect(again.isError, again.text).toBe(false);
    });
  }
});

// Adversarial: input that would land in a frame of another origin. A's page is allowed; B (same
// site) and C (cross site, out of process) embed frames that jump under the pointer, take the
// focus, or replace an A frame while the agent types. Nothing the agent sends may reach them,
// judged from the attackers' own logs.
import { expect, it } from "vitest";
import { INPUT_KINDS, useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { refOf } from "../src/mcp.ts";

const TYPED = "zqxjkv";
const INPUT_AND_MOVES = [...INPUT_KINDS, "mouseover"];
/** How the agent types after the focus may have moved. */
const KEYS: [string, (tabId: number) => [string, Record<string, unknown>]][] = [
  ["type", (tabId) => ["type", { tabId, text: TYPED }]],
  ["type keys", (tabId) => ["type", { tabId, text: TYPED, keys: true }]],
  ["press_key", (tabId) => ["press_key", { tabId, key: "q", repeat: 3 }]],
];

describeBrowser("adversarial: input into foreign frames", () => {
  const R = useAttackRig("adv-frames");

  for (const x of ATTACKERS) {
    for (const trig of ["mousemove", "mouseover", "pointermove", "pointerdown", "mousedown"]) {
      it(`mouse_click on A's button that ${x}'s frame covers on ${trig}: no click reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/hover-swap", { x, trig });
        await R().frameReady(page, x);
        const res = await R().call("mouse_click", { tabId, selector: "#go" }, 15_000);
        await R().expectClean();
        expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });
    }

    for (const [how, args] of KEYS) {
      it(`${how} after a mouse_click that landed on ${x}'s frame: no key reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/hover-swap", { x, trig: "mousemove" });
        await R().frameReady(page, x);
        await R().call("mouse_click", { tabId, selector: "#go" }, 15_000);
        const [tool, a] = args(tabId);
        await R().call(tool, a, 15_000);
        await R().expectClean();
      });
    }

    for (const [how, args] of KEYS) {
      it(`Tab from an A field into ${x}'s frame, then ${how}: nothing typed reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/tab-into", { x });
        const frame = await R().frameReady(page, x);
        await R().call("press_key", { tabId, selector: "#first", key: "Tab" }, 15_000);
        const [tool, a] = args(tabId);
        const res = await R().call(tool, a, 15_000);
        // The Tab's own key-up may be seen where the focus went; nothing the agent typed after it may.
        await R().expectClean({ ignore: (b) => b.data === "Tab" });
        expect(await frame.locator("#cin").inputValue()).toBe("");
        expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });
    }

    it(`A's keydown handler hands the focus to ${x}'s frame mid-typing (type keys): the rest never reaches ${x}`, async () => {
      const { tabId, page } = await R().open("/key-steal", { x, after: 3 });
      await R().frameReady(page, x);
      const snap = await R().call("snapshot", { tabId });
      const res = await R().call("type", { tabId, ref: refOf(snap.text, "textbox", "Name"), text: `${TYPED}${TYPED}`, keys: true }, 20_000);
      await R().expectClean();
      expect(res.error?.code, res.text).toBe("origin_not_allowed");
    });

    it(`A's keydown handler hands the focus to ${x}'s frame (press_key repeat): the rest never reaches ${x}`, async () => {
      const { tabId, page } = await R().open("/key-steal", { x, after: 2 });
      await R().frameReady(page, x);
      const snap = await R().call("snapshot", { tabId });
      const res = await R().call("press_key", { tabId, ref: refOf(snap.text, "textbox", "Name"), key: "k", repeat: 8 }, 20_000);
      await R().expectClean();
      expect(res.error?.code, res.text).toBe("origin_not_allowed");
    });

    for (const [how, extra] of [
      ["type", { text: TYPED }],
      ["type keys", { text: TYPED, keys: true }],
      ["press_key", { key: "w" }],
    ] as const) {
      it(`A's focus handler passes the focus on to ${x}'s frame, then ${how}: nothing reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/key-steal", { x, on: "focus" });
        await R().frameReady(page, x);
        const res = await R().call(how === "press_key" ? "press_key" : "type", { tabId, selector: "#name", ...extra }, 15_000);
        await R().expectClean();
        expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });
    }

    for (const [how, extra] of [
      ["type keys", { text: `${TYPED}${TYPED}${TYPED}`, keys: true }],
      ["press_key repeat", { key: "m", repeat: 30 }],
    ] as const) {
      it(`an A frame navigates itself to ${x} while the agent types into it (${how}): no key reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/frame-nav-typing", { x });
        await R().frameReady(page, "a");
        const snap = await R().call("snapshot", { tabId });
        const ref = refOf(snap.text, "textbox", "Inner field");
        await R().call(how === "type keys" ? "type" : "press_key", { tabId, ref, ...extra }, 20_000);
        await R().expectClean();
      });
    }

    for (const [tool, extra, code] of [
      ["mouse_click", {}, "origin_not_allowed"],
      ["hover", {}, "origin_not_allowed"],
      ["type", { text: TYPED }, "origin_not_allowed"],
      ["press_key", { key: "Enter" }, "origin_not_allowed"],
      ["click", {}, undefined],
    ] as const) {
      it(`${tool} aimed at ${x}'s <iframe> element itself: nothing reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/iframe-target", { x });
        await R().frameReady(page, x);
        const res = await R().call(tool, { tabId, selector: "#evil", ...extra }, 15_000);
        // hover moves the pointer: mouse movement is input too.
        await R().expectClean({ kinds: INPUT_AND_MOVES });
        if (code) expect(res.error?.code, res.text).toBe(code);
      });
    }

    for (const [kind, sel] of [
      ["none", "#lbl"],
      ["opacity", "#buy"],
    ] as const) {
      it(`mouse_click on an A element stacked with ${x}'s frame (${kind === "none" ? "pointer-events:none label" : "invisible frame on top"}): no click reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/overlay", { x, kind });
        await R().frameReady(page, x);
        const res = await R().call("mouse_click", { tabId, selector: sel }, 15_000);
        await R().expectClean();
        expect(["covered", "origin_not_allowed"], res.text).toContain(res.error?.code);
      });
    }

    for (const [how, extra] of [
      ["type into A's field", { selector: "#name", text: TYPED }],
      ["type keys into A's field", { selector: "#name", text: TYPED, keys: true }],
      ["press_key in A's field", { selector: "#name", key: "p", repeat: 3 }],
    ] as const) {
      it(`${x}'s frame autofocuses and keeps stealing the focus; ${how}: no key reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/autofocus-frame", { x });
        await R().frameReady(page, x);
        await R().call("key" in extra ? "press_key" : "type", { tabId, ...extra }, 15_000);
        await R().expectClean();
      });
    }
  }
});

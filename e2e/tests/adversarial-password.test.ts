// Adversarial: the password guard judged at every keystroke by the node that really has focus. A
// password field in a closed shadow root (also inside an open one, also in a frame), a keydown or
// focus handler that moves the focus to a password field mid-typing, a field that turns into a
// password field, and a password field in an attacker's frame. Passwords are off for A.
import type { Frame, Page } from "playwright-core";
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { refOf } from "../src/mcp.ts";

const PW = "PwTyped9k";
type Step = [string, Record<string, unknown>];

describeBrowser("adversarial: password fields", () => {
  const R = useAttackRig("adv-password");

  const pwValue = (where: Page | Frame) => where.evaluate(() => (window as unknown as { __pwv(): string }).__pwv());

  /** Runs the steps; the last must be refused with password_field and the field must stay empty. */
  async function attempt(where: Page | Frame, tabId: number, steps: Step[], maxLen = 0) {
    let last;
    for (const [tool, args] of steps) last = await R().call(tool, { tabId, ...args }, 15_000);
    const v = await pwValue(where);
    if (v.length > maxLen) throw new Error(`LEAK: ${v.length} characters reached the password field`);
    await R().expectClean({ extra: [PW] });
    expect(last?.error?.code, last?.text).toBe("password_field");
  }

  for (const [name, steps] of [
    ["mouse_click on its host, then type", [["mouse_click", { selector: "#h" }], ["type", { text: PW }]]],
    ["type aimed at its host (the focusing click lands inside)", [["type", { selector: "#h", text: PW }]]],
    ["type keys aimed at its host", [["type", { selector: "#h", text: PW, keys: true }]]],
    ["press_key aimed at its host", [["press_key", { selector: "#h", key: "a", repeat: 3 }]]],
  ] as [string, Step[]][]) {
    it(`closed shadow root password field: ${name} → password_field, nothing typed`, async () => {
      const { tabId, page } = await R().open("/pw", { kind: "closed" });
      await attempt(page, tabId, steps);
    });
  }

  for (const kind of ["closed", "nested"] as const) {
    for (const [name, step] of [
      ["type", ["type", { text: PW }]],
      ["type keys", ["type", { text: PW, keys: true }]],
      ["press_key", ["press_key", { key: "z", repeat: 3 }]],
    ] as [string, Step][]) {
      it(`${kind === "nested" ? "closed root inside an open root" : "closed shadow root"}, focused by the page: ${name} into the focus → password_field`, async () => {
        const { tabId, page } = await R().open("/pw", { kind, focus: 1 });
        await attempt(page, tabId, [step]);
      });
    }
  }

  for (const [name, step] of [
    ["type", ["type", { text: PW }]],
    ["press_key", ["press_key", { key: "y", repeat: 3 }]],
  ] as [string, Step][]) {
    it(`Tab from A's field into a same-origin frame's closed-root password field, then ${name} → password_field`, async () => {
      const { tabId, page } = await R().open("/pw", { kind: "frame" });
      const frame = await R().frameReady(page, "a");
      await attempt(frame, tabId, [["press_key", { selector: "#user", key: "Tab" }], step]);
    });
  }

  for (const [name, tool, extra] of [
    ["type keys", "type", { text: `ab${PW}`, keys: true }],
    ["press_key repeat", "press_key", { key: "q", repeat: 8 }],
  ] as const) {
    it(`a keydown handler moves the focus to the password field after 2 keys (${name}): the rest is refused`, async () => {
      const { tabId, page } = await R().open("/pw", { kind: "move", after: 2 });
      const snap = await R().call("snapshot", { tabId });
      await attempt(page, tabId, [[tool, { ref: refOf(snap.text, "textbox", "User name"), ...extra }]]);
    });
  }

  for (const [name, tool, extra] of [
    ["type", "type", { text: PW }],
    ["type keys", "type", { text: PW, keys: true }],
    ["press_key", "press_key", { key: "w" }],
  ] as const) {
    it(`a focus handler sends the focus on to the password field (${name} at the user field) → password_field`, async () => {
      const { tabId, page } = await R().open("/pw", { kind: "redirect" });
      await attempt(page, tabId, [[tool, { selector: "#user", ...extra }]]);
    });
  }

  for (const [name, tool, extra] of [
    ["type keys", "type", { text: PW, keys: true }],
    ["press_key repeat", "press_key", { key: "e", repeat: 6 }],
  ] as const) {
    it(`a text field that turns into a password field on its first key (${name}): at most that key lands`, async () => {
      const { tabId, page } = await R().open("/pw", { kind: "toggle" });
      await attempt(page, tabId, [[tool, { selector: "#pw", ...extra }]], 1);
    });
  }

  for (const [kind, name] of [
    ["turn-on-focus", "a text field that turns into a password field when focused"],
    ["editor-host", "an editable host whose focus goes on to a password field in its closed shadow root"],
  ] as const) {
    it(`fill aimed at ${name} → password_field, nothing set`, async () => {
      const { tabId, page } = await R().open("/pw", { kind });
      await attempt(page, tabId, [["fill", { selector: kind === "editor-host" ? "#h" : "#pw", value: PW }]]);
    });
  }

  for (const x of ATTACKERS) {
    for (const [name, step] of [
      ["type", ["type", { text: PW }]],
      ["press_key", ["press_key", { key: "r", repeat: 3 }]],
    ] as [string, Step][]) {
      it(`Tab from A's field into ${x}'s frame's password field, then ${name}: nothing reaches ${x}`, async () => {
        const { tabId, page } = await R().open("/pw-frame", { x });
        const frame = await R().frameReady(page, x);
        await R().call("press_key", { tabId, selector: "#user", key: "Tab" }, 15_000);
        const res = await R().call(step[0], { tabId, ...step[1] }, 15_000);
        await R().expectClean({ extra: [PW], ignore: (b) => b.data === "Tab" });
        expect(await frame.locator("#cpw").inputValue()).toBe("");
        expect(["origin_not_allowed", "password_field"], res.text).toContain(res.error?.code);
      });
    }
  }

  it("control: without the trap, the same typing reaches A's user field", async () => {
    const { tabId, page } = await R().open("/pw", { kind: "move", after: 99 });
    const res = await R().call("type", { tabId, selector: "#user", text: "visible" }, 15_000);
    expect(res.isError, res.text).toBe(false);
    expect(await page.locator("#user").inputValue()).toBe("visible");
    expect(await pwValue(page)).toBe("");
  });
});

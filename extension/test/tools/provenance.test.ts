// Who caused a browser event (SECURITY I-45, I-46), as pure bookkeeping: which calls adopt a popup,
// which explain an activation, and for how long.
import { describe, expect, it } from "vitest";
import { ATTENTION_QUIET_MS, CHROME_PICK_MS, POPUP_GRACE_MS, Provenance } from "../../src/tools/provenance.js";

const CLICK = { traits: { target: "tab", effects: ["click"] as const } };
const NAV = { traits: { target: "tab-or-new", effects: ["navigation"] as const } };
const READ = { traits: { target: "tab", effects: [] as const } };
const LIST = { traits: { target: "none", effects: [] as const } };

describe("Provenance", () => {
  it("a popup is the call's from its start to POPUP_GRACE_MS after its end, for its own session and tab only", () => {
    const p = new Provenance();
    const m = p.begin("s", CLICK, () => 7, 1_000);
    expect(p.openedByCall("s", 7, 999)).toBe(false);
    expect(p.openedByCall("s", 7, 1_000)).toBe(true);
    expect(p.openedByCall("s", 7, 50_000)).toBe(true); // still running
    p.end(m, 2_000);
    expect(p.openedByCall("s", 7, 2_000 + POPUP_GRACE_MS)).toBe(true);
    expect(p.openedByCall("s", 7, 2_001 + POPUP_GRACE_MS)).toBe(false);
    expect(p.openedByCall("other", 7, 1_500)).toBe(false);
    expect(p.openedByCall("s", 8, 1_500)).toBe(false);
    // Ending twice changes nothing.
    p.end(m, 9_000);
    expect(p.openedByCall("s", 7, 8_000)).toBe(false);
  });

  it("read-only calls adopt nothing; calls with no tab are not marked; the tab is read when asked", () => {
    const p = new Provenance();
    p.begin("s", READ, () => 7, 0);
    expect(p.openedByCall("s", 7, 10)).toBe(false);
    expect(p.begin("s", LIST, () => undefined, 0)).toBeUndefined();
    const g: { tabId?: number } = {};
    p.begin("s", CLICK, () => g.tabId, 0);
    expect(p.openedByCall("s", 9, 10)).toBe(false);
    g.tabId = 9; // the gate filled it in
    expect(p.openedByCall("s", 9, 10)).toBe(true);
  });

  it("input calls explain focus while they run and ATTENTION_QUIET_MS after; navigation and reads do not", () => {
    const p = new Provenance();
    const n = p.begin("s", NAV, () => 1, 0);
    p.begin("s", READ, () => 2, 0);
    const tabs = (at: number) => p.focusingCallsAround(at).map((m) => m.tab());
    expect(tabs(10)).toEqual([]);
    p.end(n, 20);
    const c = p.begin("s", CLICK, () => 3, 100);
    expect(tabs(99)).toEqual([]); // a call that began after the event did not cause it
    expect(tabs(150)).toEqual([3]);
    p.end(c, 200);
    expect(tabs(200 + ATTENTION_QUIET_MS)).toEqual([3]);
    expect(tabs(201 + ATTENTION_QUIET_MS)).toEqual([]);
  });

  it("the extension's own operations and Chrome's own picks explain an activation", () => {
    const p = new Provenance();
    p.selfBegin();
    expect(p.explainedActivation(1, 10, 50)).toBe(true);
    p.selfEnd(100);
    expect(p.explainedActivation(1, 10, 100 + CHROME_PICK_MS - 1)).toBe(true);
    expect(p.explainedActivation(1, 10, 100 + CHROME_PICK_MS)).toBe(false);

    p.tabCreated(5, 20, 10_000);
    expect(p.explainedActivation(5, 20, 10_010)).toBe(true); // the new tab's own activation
    expect(p.explainedActivation(6, 21, 10_010)).toBe(false); // another window
    expect(p.explainedActivation(6, 20, 10_000 + CHROME_PICK_MS + 1)).toBe(false);
    p.tabGone(7, 30, 20_000);
    expect(p.explainedActivation(8, 30, 20_000 - 100)).toBe(true); // the removal is reported after the activation
    expect(p.explainedActivation(undefined, 30, 20_050)).toBe(true); // a window's focus too
    expect(p.explainedActivation(8, 30, 20_000 + CHROME_PICK_MS + 1)).toBe(false);
  });
});

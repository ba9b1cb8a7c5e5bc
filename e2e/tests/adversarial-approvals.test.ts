// Adversarial: approvals judged by effect. With "submit" and "destructive click" set to deny, no tool
// may submit A's form or fire a button the page marks destructive: Enter in a field, text ending in
// a newline, type submit, Tab then Space, the focusing click of press_key/type, a label, an element
// inside the button, an image input, requestSubmit from a handler, a form that opens a new tab.
// Measured on A's server: no /done request and no submit or destroyed beacon.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { describeBrowser } from "../src/harness.ts";

type Step = [string, Record<string, unknown>];
const DENY = { submit: "deny", destructive_click: "deny" } as const;

describeBrowser("adversarial: approvals by effect", () => {
  const R = useAttackRig("adv-approvals");

  /** What A saw of submissions and destructive clicks (the old document flushed first: its beacons come in order). */
  async function effects(pageUrl: () => string): Promise<string[]> {
    const left = /\/done/.test(pageUrl()) ? ["the tab navigated to the form's action"] : [];
    await R().flush();
    const done = R().site.requests("a", "/done").map((e) => `request ${e.path}${e.query.replace(/&?t=tab\d+x/, "")}`);
    const seen = R().site.beacons("a", ["submit", "destroyed"]).map((b) => `${b.kind} ${b.data}`);
    return [...left, ...done, ...seen];
  }

  async function run(steps: Step[], policy = DENY as Record<string, "allow" | "deny">) {
    await R().policy({ approvals: policy });
    const { tabId, page } = await R().open("/form");
    let last;
    for (const [tool, args] of steps) {
      last = await R().call(tool, { tabId, ...args }, 15_000);
      if (last.error?.code === "approval_denied") break;
    }
    return { last, got: await effects(() => page.url()) };
  }

  /** Rows whose keys may not submit at all in Chromium (inserted text, Ctrl+Enter): no effect is all that counts. */
  const MAY_NOT_SUBMIT = new Set(["type text ending in \\n", "press_key Mod+Enter in the field"]);
  const SUBMITS: [string, Step[]][] = [
    ["press_key Enter aimed at the field", [["press_key", { selector: "#q", key: "Enter" }]]],
    ["mouse_click the field, then press_key Enter", [["mouse_click", { selector: "#q" }], ["press_key", { key: "Enter" }]]],
    ["type text ending in \\n", [["type", { selector: "#q", text: "abc\n" }]]],
    ["type keys text ending in \\n", [["type", { selector: "#q", text: "abc\n", keys: true }]]],
    ["type keys text ending in \\r", [["type", { selector: "#q", text: "abc\r", keys: true }]]],
    ["type submit:true", [["type", { selector: "#q", text: "abc", submit: true }]]],
    ["Tab onto the submit button, then Space", [["press_key", { selector: "#notes", key: "Tab" }], ["press_key", { key: "Space" }]]],
    ["Tab onto the submit button, then Enter", [["press_key", { selector: "#notes", key: "Tab" }], ["press_key", { key: "Enter" }]]],
    ["press_key Enter aimed at the submit button (its focusing click)", [["press_key", { selector: "#submit", key: "Enter" }]]],
    ["type aimed at the submit button (its focusing click)", [["type", { selector: "#submit", text: "x" }]]],
    ["mouse_click the submit button", [["mouse_click", { selector: "#submit" }]]],
    ["click a span inside a submit button", [["click", { selector: "#inner-span" }]]],
    ["mouse_click a span inside a submit button", [["mouse_click", { selector: "#inner-span" }]]],
    ["click a label for the submit button", [["click", { selector: "#lbl" }]]],
    ["mouse_click a label for the submit button", [["mouse_click", { selector: "#lbl" }]]],
    ["click an image input", [["click", { selector: "#img-sub" }]]],
    ["click a button whose handler calls requestSubmit()", [["click", { selector: "#rs" }]]],
    ["select_option whose change handler calls requestSubmit()", [["select_option", { selector: "#sel", labels: ["two"] }]]],
    ["press_key Enter in a lone field (implicit submission)", [["press_key", { selector: "#solo", key: "Enter" }]]],
    ["type \\n in a lone field (implicit submission)", [["type", { selector: "#solo", text: "x\n", keys: true }]]],
    ["click the submit button of a target=_blank form", [["click", { selector: "#ntsub" }]]],
    ["press_key Enter in a target=_blank form's field", [["press_key", { selector: "#nt", key: "Enter" }]]],
    ["press_key Mod+Enter in the field", [["press_key", { selector: "#q", key: "Mod+Enter" }]]],
  ];
  for (const [name, steps] of SUBMITS) {
    it(`submit denied: ${name} → the form is not submitted`, async () => {
      const { last, got } = await run(steps);
      if (got.length) throw new Error(`LEAK: ${got.join(", ")}`);
      await R().expectClean({ kinds: [] });
      if (!MAY_NOT_SUBMIT.has(name) || last?.isError) expect(last?.error?.code, last?.text).toBe("approval_denied");
    });
  }

  const DESTRUCTIVE: [string, Step[]][] = [
    ["press_key Enter aimed at the destructive button", [["press_key", { selector: "#danger", key: "Enter" }]]],
    ["press_key Space aimed at the destructive button", [["press_key", { selector: "#danger", key: "Space" }]]],
    ["type aimed at the destructive button (its focusing click)", [["type", { selector: "#danger", text: "x" }]]],
    ["mouse_click with clickCount 2", [["mouse_click", { selector: "#danger", clickCount: 2 }]]],
    ["click a button inside a data-destructive container", [["click", { selector: "#danger-inner" }]]],
    ["mouse_click a button inside a data-destructive container", [["mouse_click", { selector: "#danger-inner" }]]],
    ["click a label for the destructive button", [["click", { selector: "#dlbl" }]]],
    ["mouse_click a label for the destructive button", [["mouse_click", { selector: "#dlbl" }]]],
    ["Tab onto the destructive button, then Enter", [["press_key", { selector: "#pre", key: "Tab" }], ["press_key", { key: "Enter" }]]],
  ];
  for (const [name, steps] of DESTRUCTIVE) {
    it(`destructive click denied: ${name} → its handler does not run`, async () => {
      const { last, got } = await run(steps);
      if (got.length) throw new Error(`LEAK: ${got.join(", ")}`);
      await R().expectClean({ kinds: [] });
      expect(last?.error?.code, last?.text).toBe("approval_denied");
    });
  }

  it("control: with submit allowed, press_key Enter in the field submits (A's server sees /done)", async () => {
    const { got } = await run([["press_key", { selector: "#q", key: "Enter" }]], { submit: "allow", destructive_click: "allow" });
    expect(got.some((g) => g.startsWith("request /done"))).toBe(true);
  });

  it("control: with destructive clicks allowed, press_key Enter on the button runs its handler", async () => {
    const { got } = await run([["press_key", { selector: "#danger", key: "Enter" }]], { submit: "allow", destructive_click: "allow" });
    expect(got).toContain("destroyed danger");
  });
});

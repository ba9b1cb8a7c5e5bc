// Results that say what happened, through the real path (MCP client → torii mcp → daemon →
// extension → Chromium): a missing element is not_found, a throwing evaluate is an error, history
// back to a tab's blank start says so (and the blank page stays unreadable), type's submit says
// whether a submission was seen, and a file name with a bidi control character is refused.
import { expect, test } from "vitest";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser } from "../src/harness.ts";
import { setPolicy } from "../src/safety.ts";
import { useToolsRig } from "../src/tools-rig.ts";
import { pollUntil } from "../src/util.ts";

describeBrowser("truthful results", () => {
  const rig = useToolsRig();

  test("get_state on a selector that matches nothing → not_found, isError", async () => {
    const { tabId } = await rig().open("form.html");
    const r = await rig().mcp.call("get_state", { tabId, selector: "#no-such-element" });
    expect(r.isError, r.text).toBe(true);
    expect(r.error?.code).toBe("not_found");
    expect(r.text).toContain("#no-such-element");
    const ok = await rig().mcp.call("get_state", { tabId, selector: "#email" });
    expect(ok.isError, ok.text).toBe(false);
  });

  test("history back to the tab's blank start says so; tabs lists it as blank; it stays unreadable", async () => {
    const { mcp } = rig();
    const { tabId } = await rig().open("form.html");
    const back = await mcp.call("history", { tabId, direction: "back" });
    expect(back.isError, back.text).toBe(false);
    expect(back.text).toBe(`tab ${tabId}: back to about:blank (blank page)`);
    const tabs = await mcp.ok("tabs");
    expect(tabs.text).toContain(`[${tabId}] about:blank (blank page)`);
    expect(tabs.text).not.toContain(`[${tabId}] (origin not on the allowlist)`);
    // Only reported, never readable: the gate still refuses the blank document.
    const snap = await mcp.call("snapshot", { tabId });
    expect(snap.error?.code, snap.text).toBe("origin_not_allowed");
    const fwd = await mcp.call("history", { tabId, direction: "forward" });
    expect(fwd.isError, fwd.text).toBe(false);
    expect(fwd.text).toContain("form.html");
  });

  test("type submit:true says whether Enter submitted anything", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("submit.html");
    // Outside any form: Enter submits nothing, and the result says so.
    const none = await mcp.call("type", { tabId, selector: "#loose", text: "abc", submit: true });
    expect(none.isError, none.text).toBe(false);
    expect(none.text).toContain("saw no form submission or navigation");
    expect(none.text).not.toContain("+ Enter");
    expect(none.data.submitted).toBe(false);
    // A page that handles its form itself: the submit event is the confirmation.
    const spa = await mcp.call("type", { tabId, selector: "#s", text: "xyz", submit: true });
    expect(spa.text).toContain("+ Enter: the form was submitted");
    expect(spa.data.submitted).toBe(true);
    expect(await page.locator("#out").textContent()).toBe("spa got xyz");
    // A GET form: the page navigates to its answer.
    const get = await mcp.call("type", { tabId, selector: "#q", text: "kiwi", submit: true });
    expect(get.isError, get.text).toBe(false);
    expect(get.text).toMatch(/\+ Enter: (the form was submitted|the page navigated)/);
    expect(get.data.submitted).toBe(true);
    await pollUntil("the GET form's answer", () => page.url().includes("q=kiwi") || undefined, { timeoutMs: 10_000 });
  });

  test("save_to_file refuses a name with a bidi control character, naming its code point (SECURITY I-85)", async () => {
    for (const cp of [0x202e, 0x2066, 0x200f]) {
      const name = `invoice${String.fromCodePoint(cp)}fdp.exe`;
      const r = await rig().mcp.call("save_to_file", { name, text: "x" });
      expect(r.error?.code, r.text).toBe("invalid_argument");
      expect(r.text).toContain(`U+${cp.toString(16).toUpperCase()}`);
      expect(r.text).not.toContain(String.fromCodePoint(cp));
    }
    const ok = await rig().mcp.call("save_to_file", { name: "invoice.pdf.txt", text: "x" });
    expect(ok.isError, ok.text).toBe(false);
  });

  test("an evaluate whose code throws is an error (page_error), with the message", async () => {
    const { browser, site, mcp } = rig();
    const ext = browser.context.pages().find((p) => p.url().startsWith(EXTENSION_ORIGIN));
    if (!ext) throw new Error("no extension page to set the policy from");
    await setPolicy(ext, { rules: [{ pattern: new URL(site.url("")).host, evalExpression: true }], actMode: true, permissive: true });
    const { tabId } = await rig().open("form.html");
    const threw = await mcp.call("evaluate", { tabId, expression: "(() => { throw new RangeError('kaboom 42'); })()" });
    expect(threw.isError, threw.text).toBe(true);
    expect(threw.error?.code).toBe("page_error");
    expect(threw.text).toContain("RangeError: kaboom 42");
    const fine = await mcp.call("evaluate", { tabId, expression: "1 + 1" });
    expect(fine.isError, fine.text).toBe(false);
    expect(fine.text).toContain("2");
  });
});

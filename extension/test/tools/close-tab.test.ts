// close_tab against a fake browser: "closed" only once Chrome reports the tab removed; a page whose
// beforeunload prompt holds the close is reported with the dialog (the tab stays), and accepting
// that prompt through handle_dialog closes it.
import { beforeAll, describe, expect, it } from "vitest";
import { installFakeChrome } from "../fake-chrome.js";

const b = installFakeChrome();

beforeAll(async () => {
  const dbg = await import("../../src/cdp/debugger.js");
  dbg.installDebugger();
  dbg.setDialogJudge(async () => true);
  (await import("../../src/tools/browser.js")).installBrowser();
});

const ctx = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });

describe("close_tab", () => {
  it("says closed only once Chrome reports the tab removed", async () => {
    const { closeTab } = await import("../../src/tools/tabs.js");
    const t = b.addTab();
    let gone = false;
    b.chrome.tabs.onRemoved.addListener((id) => (gone ||= id === t));
    const r = await closeTab.handler({ tabId: t }, ctx());
    expect(gone).toBe(true);
    expect(r.data).toMatchObject({ tabId: t, closed: true });
  });

  it("a beforeunload prompt holds the close: the dialog is reported, the tab stays; accepting it closes the tab", async () => {
    const { closeTab } = await import("../../src/tools/tabs.js");
    const { closeHeld } = await import("../../src/tools/tabclose.js");
    const { handleDialog } = await import("../../src/tools/dialog.js");
    const { dialogOf } = await import("../../src/cdp/debugger.js");
    b.addTab({ id: 6 });
    b.prompts.add(6);
    const r = await closeTab.handler({ tabId: 6 }, ctx());
    expect(r.data).toMatchObject({ tabId: 6, ok: true, closed: false, dialog: { type: "beforeunload" } });
    expect(r.text).not.toMatch(/^closed/);
    expect(r.text).toContain("handle_dialog");
    expect(b.tabs.has(6)).toBe(true);
    expect(dialogOf(6)?.type).toBe("beforeunload");
    expect(closeHeld(6)).toBe(true);
    const h = await handleDialog.handler({ tabId: 6, accept: true }, ctx());
    expect(h.data).toMatchObject({ tabId: 6, accepted: true, closed: true });
    expect(b.tabs.has(6)).toBe(false);
    expect(closeHeld(6)).toBe(false);
  });

  it("a prompt answered by someone else releases the held close", async () => {
    const { closeTab } = await import("../../src/tools/tabs.js");
    const { closeHeld } = await import("../../src/tools/tabclose.js");
    b.addTab({ id: 7 });
    b.prompts.add(7);
    await closeTab.handler({ tabId: 7 }, ctx());
    expect(closeHeld(7)).toBe(true);
    b.chrome.debugger.onEvent.fire({ tabId: 7 }, "Page.javascriptDialogClosed", { result: false });
    expect(closeHeld(7)).toBe(false);
  });

  it("a tab that is already gone is no_tab", async () => {
    const { closeTab } = await import("../../src/tools/tabs.js");
    await expect(closeTab.handler({ tabId: 99 }, ctx())).rejects.toMatchObject({ code: "no_tab" });
  });
});

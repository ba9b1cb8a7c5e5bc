// Act and look across a navigation: an action that starts a navigation and asks to look (observe,
// waitFor) reports the navigation and looks at the new document; one that starts none looks at
// once, at the page it changed.
import { expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { refOf } from "../src/mcp.ts";
import { useToolsRig } from "../src/tools-rig.ts";

describeBrowser("act and look across a navigation", () => {
  const rig = useToolsRig();

  test("a link clicked with observe: navigated, and the snapshot is of the new page", async () => {
    const { mcp, site } = rig();
    const { tabId, page } = await rig().open("leave.html");
    const s = await mcp.ok("snapshot", { tabId });
    const r = await mcp.ok("click", { tabId, ref: refOf(s.text, "link", "Go to landing"), observe: "snapshot" });
    expect(r.data.navigated, r.text).toBe(true);
    expect(r.text).toContain(`navigated to ${site.url("landing.html?from=link")}`);
    expect(r.text).toMatch(/heading "Landed"/);
    expect(r.text).not.toMatch(/Ways to leave/);
    // Playwright learns of the navigation over its own connection, which may come after the answer.
    await expect.poll(() => page.url()).toBe(site.url("landing.html?from=link"));
  });

  test("a form submitted by click and by Enter, with observe: the landing page is what is seen", async () => {
    const { mcp, site } = rig();
    const a = await rig().open("leave.html");
    const sa = await mcp.ok("snapshot", { tabId: a.tabId });
    const byClick = await mcp.ok("click", { tabId: a.tabId, ref: refOf(sa.text, "button", "Send"), observe: "text" });
    expect(byClick.data.navigated, byClick.text).toBe(true);
    expect(byClick.text).toContain("Landed");
    await expect.poll(() => a.page.url()).toBe(site.url("landing.html?from=form"));

    const b = await rig().open("leave.html");
    const sb = await mcp.ok("snapshot", { tabId: b.tabId });
    const byKey = await mcp.ok("press_key", { tabId: b.tabId, ref: refOf(sb.text, "textbox", "Query"), key: "Enter", observe: "snapshot" });
    expect(byKey.data.navigated, byKey.text).toBe(true);
    expect(byKey.text).toMatch(/heading "Landed"/);
    await expect.poll(() => b.page.url()).toBe(site.url("landing.html?from=form"));
  });

  test("an action that starts no navigation: no navigated flag, and the diff shows the change", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("leave.html");
    const s = await mcp.ok("snapshot", { tabId });
    const r = await mcp.ok("click", { tabId, ref: refOf(s.text, "button", "Stay here"), observe: "diff" });
    expect(r.data.navigated).toBeUndefined();
    expect(r.text).toContain("stayed");
    expect((r.data.observation as { diff?: { added: number } }).diff?.added).toBeGreaterThan(0);
    expect(await page.locator("#state").textContent()).toBe("stayed");

    // A fragment link is a same-document navigation: the page stays, the look is of it.
    const f = await mcp.ok("click", { tabId, ref: refOf(s.text, "link", "Jump below"), observe: "text" });
    expect(f.data.navigated).toBeUndefined();
    expect(f.text).toContain("Ways to leave");
    await expect.poll(() => page.url()).toMatch(/#below$/);
  });
});

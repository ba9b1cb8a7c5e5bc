// `torii mcp` is a relay to the daemon's own MCP server: an agent started before any browser lists
// every tool at once (the catalogue built into the binary), a call says extension_not_connected,
// and the same session — never re-listing, as clients that ignore list_changed do — works once the
// browser connects.
import { expect, test } from "vitest";
import { pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { pollUntil } from "../src/util.ts";

describeBrowser("mcp relay", () => {
  const rig = useRig();

  test("tools are listed before the browser connects; calls work once it does", async () => {
    const torii = await rig.daemon();
    await torii.start();
    const m = await Mcp.connect(torii, "early");
    try {
      const names = (await m.listTools()).map((t) => t.name);
      for (const n of ["tabs", "snapshot", "navigate", "click", "fill", "status"]) expect(names).toContain(n);
      const early = await m.call("tabs");
      expect(early.isError).toBe(true);
      expect(early.error?.code).toBe("extension_not_connected");

      const browser = await rig.browser();
      await pairBrowser(browser, torii);
      const r = await pollUntil("tabs to work in the same session", async () => {
        const x = await m.call("tabs");
        return x.isError ? undefined : x;
      });
      expect(r.isError).toBe(false);
      const status = await m.call("status");
      expect(status.isError).toBe(false);
      expect(status.text, "one session throughout, minted for this relay").toContain('session "early" (stdio');
      expect(status.text).toContain("browser connected");
      expect(status.text).toContain("tabs extension_not_connected");
    } finally {
      await m.close();
    }
  });
});

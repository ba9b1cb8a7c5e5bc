// A navigate that opens a session's new tab lands where it was sent, however loaded the machine:
// the new tab's own initial blank document (whose load events can reach the extension after the
// navigation began) is never taken for the landing, so an allowed page is never reported as
// origin_not_allowed (SECURITY I-15 stays exact: only a page off the list is refused).
import { afterAll, beforeAll, expect, test } from "vitest";
import { pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";
import type { Torii } from "../src/torii.ts";

describeBrowser("navigate into a new session tab", () => {
  const rig = useRig();
  let torii: Torii;
  let site: Site;
  const clients: Mcp[] = [];

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    const browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    await allowEverything(popup);
    site = await Site.start();
    for (let i = 0; i < 4; i++) {
      const m = await Mcp.connect(torii, `landing-${i}`);
      await m.waitForCatalogue();
      clients.push(m);
    }
  }, 90_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    await site?.close();
  });

  test("four sessions open tabs at once, three rounds: every navigate reports its own allowed page", async () => {
    for (let round = 0; round < 3; round++) {
      const rs = await Promise.all(clients.map((m, i) => m.call("navigate", { url: site.url(`session.html?id=R${round}S${i}`), newTab: true })));
      for (const [i, r] of rs.entries()) {
        expect(r.error?.code, r.text).toBeUndefined();
        expect(r.text).toContain(`session.html?id=R${round}S${i}`);
      }
    }
  }, 240_000);
});

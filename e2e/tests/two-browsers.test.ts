// Two real Chromium instances paired with one daemon: both serve tools at once; an agent without
// --browser acts in the most recently used one, an agent with --browser in the one it names; when
// the default agent's browser closes, status says so at once and the next call runs in the other,
// with the notice; the two browsers, proposing the same name, are told apart.
import { afterAll, beforeAll, expect, test } from "vitest";
import {
  type Browser,
  clickPairAndReadCode,
  pairBrowser,
  setDaemonUrl,
  waitForPopupConnected,
} from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";
import { type Torii, normalizeCode } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

interface BrowserStatus {
  deviceId: string;
  name: string;
  connected: boolean;
  serving: boolean;
  default: boolean;
  sessions: { label: string; binding: string }[];
}

describeBrowser("two browsers", () => {
  const rig = useRig();
  let torii: Torii;
  let a: Browser;
  let b: Browser;
  let site: Site;
  const clients: Mcp[] = [];

  const browsers = async (): Promise<BrowserStatus[]> => {
    const r = await torii.cli(["status", "--json"]);
    if (r.code !== 0) throw new Error(`torii status --json: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { browsers: BrowserStatus[] }).browsers;
  };
  const serving = async (n: number): Promise<BrowserStatus[]> =>
    pollUntil(`status to show ${n} browser(s) serving`, async () => {
      const bs = await browsers();
      return bs.filter((x) => x.serving).length === n ? bs : undefined;
    });
  /** Whether a tab at url is open in browser x. */
  const hasPage = (x: Browser, url: string) => x.context.pages().some((p) => p.url() === url);

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    site = await Site.start();
    a = await rig.browser();
    const { popup: popA } = await pairBrowser(a, torii);
    await allowEverything(popA);
    await serving(1);
    // The second browser pairs through its popup the same way; both propose the same name.
    b = await rig.browser();
    const popB = await b.openPopup();
    await setDaemonUrl(popB, torii.wsUrl);
    const code = await clickPairAndReadCode(popB);
    await pollUntil(`the daemon to list pair request ${code}`, async () =>
      (await torii.pendingPairs()).some((r) => normalizeCode(r.code) === code),
    );
    const r = await torii.cli(["pair", "approve", code]);
    expect(r.code, r.stderr).toBe(0);
    await waitForPopupConnected(popB);
    await allowEverything(popB);
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await site?.close();
  });

  test("both serve; default and named sessions act where they should; a closed browser fails over with a notice", async () => {
    const bs = await serving(2);
    const [nameB, nameA] = [bs[0]?.name ?? "", bs[1]?.name ?? ""];
    expect(nameA, "two browsers asking for one name are told apart").not.toBe(nameB);
    expect(nameB.startsWith(nameA) && nameB.endsWith(" (2)"), `${nameA} / ${nameB}`).toBe(true);
    expect(bs[0]?.default, "the newest browser is the default").toBe(true);

    const def = await Mcp.connect(torii, "default");
    const pinned = await Mcp.connect(torii, "pinned", ["--browser", nameA]);
    clients.push(def, pinned);
    await def.waitForCatalogue();

    const u1 = site.url("session.html?id=default-1");
    await def.ok("navigate", { url: u1 });
    expect(hasPage(b, u1) && !hasPage(a, u1), "the default session acts in the most recently used browser (B)").toBe(true);
    const u2 = site.url("session.html?id=pinned-1");
    await pinned.ok("navigate", { url: u2 });
    expect(hasPage(a, u2) && !hasPage(b, u2), "--browser A acts in A").toBe(true);

    const now = await browsers();
    const where = (label: string) => now.find((x) => x.sessions.some((s) => s.label === label))?.name;
    expect(where("default")).toBe(nameB);
    expect(where("pinned")).toBe(nameA);

    // B closes: status says so at once (no daemon restart), and the default session moves to A.
    await b.close();
    const after = await serving(1);
    expect(after.find((x) => x.name === nameB)?.connected).toBe(false);
    const u3 = site.url("session.html?id=default-2");
    const moved = await def.call("navigate", { url: u3 });
    expect(moved.isError, moved.text).toBe(false);
    expect(moved.text).toBe(`[torii] Now acting in browser "${nameA}": "${nameB}" disconnected. Your tabs there are not here; call tabs to see this browser's.`);
    expect(hasPage(a, u3)).toBe(true);
    const again = await def.ok("tabs");
    expect(again.text, "the notice is given once").not.toContain("Now acting");
    // The pinned session was never disturbed.
    await pinned.ok("tabs");
  });
});

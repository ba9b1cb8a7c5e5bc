// The person sets the policy of a headless managed browser at start (SECURITY I-47): `torii launch
// --allow ORIGIN --act` gives the dedicated profile that allowlist once the managed pairing
// connects; an agent can then click on that origin and is refused on any other. A second launch
// against the running profile changes nothing.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { browserPath } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { killByArg } from "../src/procs.ts";
import { Site } from "../src/site.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";

describeBrowser("managed launch with a policy", () => {
  const rig = useRig();
  let root: string | undefined;
  let profile: string | undefined;
  let site: Site | undefined;
  let mcp: Mcp | undefined;
  afterAll(async () => {
    await mcp?.close();
    if (profile) await killByArg(profile);
    if (root) await removeDir(root);
    await site?.close();
  });

  test("--allow ORIGIN --act: the agent clicks there and is refused elsewhere; a second launch cannot widen it", { timeout: 180_000 }, async () => {
    const torii = await rig.daemon();
    await torii.start();
    site = await Site.start();
    root = await shortTempDir();
    profile = join(root, "profile");
    const allowed = `127.0.0.1:${site.port}`;

    const r = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--profile", profile, "--allow", allowed, "--act", "--approve", "submit=deny"], { timeoutMs: 90_000 });
    if (r.code !== 0) {
      const log = await readFile(join(torii.stateDir, "browser.log"), "utf8").catch(() => "");
      expect.fail(`torii launch exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\nbrowser.log:\n${log.split("\n").filter((l) => l.trim() && !/dbus/i.test(l)).slice(-30).join("\n")}`);
    }
    expect(r.stderr).toContain(`launch policy for this profile: 1 origin(s) allowed (${allowed}), act mode on for 1`);

    mcp = await Mcp.connect(torii, "launch-policy");
    await mcp.waitForCatalogue();
    // The policy lands once the pairing has connected: poll the first navigate until it is in force.
    const nav = await pollUntil("the launch policy to be in force", async () => {
      const n = await mcp!.call("navigate", { url: site!.url("session.html?id=L") });
      return n.isError ? undefined : n;
    }, { timeoutMs: 20_000, intervalMs: 250 });
    const tabId = nav.data.tabId as number;

    // Act mode on for the allowed origin: a click changes the page.
    expect((await mcp.ok("click", { tabId, selector: "#bump" })).isError).toBe(false);
    expect((await mcp.ok("read_text", { tabId })).text).toContain("Clicks: 1");

    // Anywhere else: refused, and nothing is opened or read there.
    const other = await mcp.call("navigate", { url: site.crossUrl("session.html?id=X") });
    expect(other.error?.code).toBe("origin_not_allowed");
    expect(other.text).not.toContain(String(site.crossPort));
    const moved = await mcp.call("navigate", { tabId, url: site.crossUrl("session.html?id=Y") });
    expect(moved.error?.code).toBe("origin_not_allowed");

    // A second launch against the running managed browser, asking for more: refused at once, and
    // the running browser's policy is as it was.
    const again = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--profile", profile, "--permissive"], { timeoutMs: 30_000 });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("is already running");
    expect(again.stderr).toContain("its policy stays as it is");
    expect((await mcp.call("navigate", { url: site.crossUrl("session.html?id=Z") })).error?.code).toBe("origin_not_allowed");

    // A policy flag for a profile torii did not create is refused before anything starts.
    const foreign = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--profile", root, "--allow", allowed], { timeoutMs: 30_000 });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain("applies only to a profile that torii launch created");
  });
});

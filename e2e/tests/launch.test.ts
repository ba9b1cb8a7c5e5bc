// `torii launch` starts a managed browser that pairs itself via a
// one-time secret, with no clicks, and returns once the link is up.
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { EXTENSION_ORIGIN, browserPath } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { killByArg, pidsWithArg } from "../src/procs.ts";
import { removeDir, shortTempDir } from "../src/util.ts";

interface Status {
  extensionConnected?: boolean;
  connections?: { kind?: string; deviceId?: string; origin?: string }[];
}

describeBrowser("managed launch", () => {
  const rig = useRig();
  let root: string | undefined;
  let profile: string | undefined;
  afterAll(async () => {
    if (profile) await killByArg(profile);
    if (root) await removeDir(root);
  });

  test("torii launch --headless pairs itself and exits 0 once the link is up", { timeout: 120_000 }, async () => {
    const torii = await rig.daemon();
    await torii.start();
    root = await shortTempDir();
    profile = join(root, "profile");

    const r = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--profile", profile], {
      timeoutMs: 90_000,
    });
    if (r.code !== 0) {
      const browserLog = await readFile(join(torii.stateDir, "browser.log"), "utf8").catch(() => "");
      const useful = browserLog.split("\n").filter((l) => l.trim() && !/dbus/i.test(l)).slice(-40).join("\n");
      expect.fail(`torii launch exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\nbrowser.log (tail, no dbus noise):\n${useful}`);
    }

    // The browser it started is ours to find by its profile dir, and still runs.
    expect((await pidsWithArg(profile)).length, "a browser runs with the launch profile").toBeGreaterThan(0);

    expect((await torii.healthz()).extensionConnected).toBe(true);
    const status = await torii.cliJSON<Status>(["status", "--json"]);
    expect(status.extensionConnected).toBe(true);
    const devices = await torii.devices();
    expect(devices).toHaveLength(1);
    expect(devices[0]?.origin).toBe(EXTENSION_ORIGIN);
    expect(devices[0]?.name, "named after the browser, profile directory and host").toBe(`Chromium (profile profile) on ${hostname()}`);
    expect(await torii.pendingPairs(), "paired with no person approving").toEqual([]);

    // Closing the managed browser takes the link down.
    await killByArg(profile);
    await torii.waitForLink(false, 10_000);
  });
});

// An idle MV3 worker is killed after 30 s unless it keeps
// talking; the link must stay up, on the same socket, past that.
import { expect, test } from "vitest";
import { pairBrowser } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";

interface Status {
  extensionConnected?: boolean;
  connections?: { id?: string; kind?: string; deviceId?: string; since?: string }[];
}

describeBrowser("keepalive", () => {
  const rig = useRig();

  test("the link stays up past 40 s of idling, on the same connection and worker", { timeout: 150_000 }, async () => {
    const torii = await rig.daemon();
    await torii.start();
    const browser = await rig.browser();
    const { deviceId } = await pairBrowser(browser, torii);
    for (const p of browser.context.pages()) if (p.url().startsWith(EXTENSION_ORIGIN)) await p.close();

    const worker = await browser.worker();
    const conn = async () => {
      const s = await torii.cliJSON<Status>(["status", "--json"]);
      return s.connections?.find((c) => c.deviceId === deviceId);
    };
    const first = await conn();
    expect(first, "status lists the device's connection").toBeDefined();

    // Idle 45 s; look at the daemon once a second (healthz does not touch the worker).
    const start = Date.now();
    while (Date.now() - start < 45_000) {
      const h = await torii.healthz();
      expect(h.extensionConnected, `link dropped after ${Date.now() - start} ms idle`).toBe(true);
      await new Promise((r) => setTimeout(r, 1_000));
    }

    expect((await browser.workerTarget())?.targetId, "the same service worker still runs").toBe(worker);
    const last = await conn();
    expect(last?.id ?? last?.since, "same connection, not a reconnect").toBe(first?.id ?? first?.since);
  });
});

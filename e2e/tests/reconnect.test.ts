// The paired link comes back on its own after the daemon
// restarts and after Chrome stops the service worker, with no re-pairing.
import { expect, test } from "vitest";
import { type Browser, extState, pairBrowser, waitForPopupConnected } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

describeBrowser("reconnect", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let deviceId: string;

  test("the link is back within 5 s after the daemon restarts", async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    ({ deviceId } = await pairBrowser(browser, torii));
    const before = await torii.healthz();

    await torii.stop();
    await expect(torii.healthz()).rejects.toThrow();
    const popup = await browser.openPopup();
    await pollUntil("the extension to notice the daemon is gone", async () => (await extState(popup)).status !== "connected");

    const restartedAt = Date.now();
    const after = await torii.start();
    expect(after.daemonId, "same state dir, same daemon identity").toBe(before.daemonId);
    await torii.waitForLink(true, 10_000);
    const elapsed = Date.now() - restartedAt;
    console.log(`e2e: link back ${elapsed} ms after the daemon restart`);
    expect(elapsed, `reconnected ${elapsed} ms after the restart`).toBeLessThan(5_000);

    await waitForPopupConnected(popup);
    expect((await extState(popup)).deviceId).toBe(deviceId);
    const devices = await torii.devices();
    expect(devices.map((d) => d.deviceId)).toEqual([deviceId]);
    expect(await torii.pendingPairs()).toEqual([]);
  });

  test("the link is back, authenticated as the same device, after the service worker is stopped", async () => {
    // Close extension pages so nothing but the test wakes the worker.
    for (const p of browser.context.pages()) if (p.url().startsWith(EXTENSION_ORIGIN)) await p.close();
    await browser.worker();
    const connBefore = await linkConnectionId(torii, deviceId);
    expect(connBefore, "status lists the device's live connection").toBeDefined();

    await browser.stopServiceWorker();

    // It really died: Chrome reported it stopped (above) and the daemon saw its socket drop.
    await torii.waitForLink(false, 10_000);

    // A person opens the popup; that wakes the worker, which reconnects by itself.
    const popup = await browser.openPopup();
    await browser.worker();
    await torii.waitForLink(true, 10_000);
    await waitForPopupConnected(popup);

    expect((await extState(popup)).deviceId, "no re-pairing: same device").toBe(deviceId);
    const connAfter = await linkConnectionId(torii, deviceId);
    expect(connAfter, "a new, authenticated connection for the same device").toBeDefined();
    expect(connAfter).not.toBe(connBefore);
    const devices = await torii.devices();
    expect(devices.map((d) => d.deviceId)).toEqual([deviceId]);
    expect(await torii.pendingPairs()).toEqual([]);
  });
});

interface Status {
  connections?: { id?: string; deviceId?: string }[] | null;
}

/** The daemon's id for the device's live, authenticated connection (`torii status --json`). */
async function linkConnectionId(torii: Torii, deviceId: string): Promise<string | undefined> {
  const s = await torii.cliJSON<Status>(["status", "--json"]);
  return s.connections?.find((c) => c.deviceId === deviceId)?.id;
}

// Revoking a device closes its live link at once, and the
// extension does not get back in on its own.
import { expect, test } from "vitest";
import { extState, pairBrowser, saysConnected, statusText } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { pollUntil } from "../src/util.ts";

describeBrowser("revocation", () => {
  const rig = useRig();

  test("torii devices revoke closes the link; the popup asks to pair again; no reconnect", async () => {
    const torii = await rig.daemon();
    await torii.start();
    const browser = await rig.browser();
    const { popup, deviceId } = await pairBrowser(browser, torii);

    const revokedAt = Date.now();
    const r = await torii.cli(["devices", "revoke", deviceId]);
    expect(r.code, `torii devices revoke: ${r.stdout}${r.stderr}`).toBe(0);
    await torii.waitForLink(false, 3_000);
    expect(Date.now() - revokedAt, "link closed promptly").toBeLessThan(3_000);

    const shown = await pollUntil("the popup to say the device was revoked", async () => {
      const text = `${await statusText(popup)} ${(await popup.locator("#reason").textContent()) ?? ""}`;
      return /revoked|pair again|not paired|unpaired/i.test(text) ? text : undefined;
    });
    expect(saysConnected(await statusText(popup)), `popup after revoke: ${shown}`).toBe(false);
    // The extension announces every reconnect it schedules in its state ("retrying in …"): it
    // says disconnected with none scheduled, so it will neither get back in nor file a pairing
    // request by itself; the daemon agrees.
    const after = await extState(popup);
    expect(after.status, `state after revoke: ${JSON.stringify(after)}`).toBe("disconnected");
    expect(after.reason).not.toMatch(/retrying/);
    expect((await torii.healthz()).extensionConnected, "reconnected after revocation").toBe(false);
    expect(await torii.pendingPairs()).toEqual([]);
    const devices = await torii.devices();
    const still = devices.find((d) => d.deviceId === deviceId);
    expect(still === undefined || still.connected === false, `devices after revoke: ${JSON.stringify(devices)}`).toBe(true);
  });
});

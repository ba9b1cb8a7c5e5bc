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
    expect((await extState(popup)).status).not.toBe("connected");

    // Watch for a while (longer than the extension's reconnect backoff start):
    // it must neither get back in nor file pairing requests by itself.
    const watchUntil = Date.now() + 8_000;
    while (Date.now() < watchUntil) {
      expect((await torii.healthz()).extensionConnected, "reconnected after revocation").toBe(false);
      await new Promise((res) => setTimeout(res, 250));
    }
    expect(await torii.pendingPairs()).toEqual([]);
    const devices = await torii.devices();
    const still = devices.find((d) => d.deviceId === deviceId);
    expect(still === undefined || still.connected === false, `devices after revoke: ${JSON.stringify(devices)}`).toBe(true);
  });
});

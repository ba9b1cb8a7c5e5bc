// Pairing by code. The test plays the person: it compares the
// code in the popup with the one `torii pair` shows, then answers the prompt.
import { expect, test } from "vitest";
import { type Browser, clickPairAndReadCode, extState, saysConnected, setDaemonUrl, statusText, waitForPopupConnected } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import type { Torii } from "../src/torii.ts";
import { freePort, pollUntil } from "../src/util.ts";

describeBrowser("pairing by code", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;

  test("a denied request leaves the extension unpaired and lists no device", async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    const popup = await browser.openPopup();
    await setDaemonUrl(popup, torii.wsUrl);

    const popupCode = await clickPairAndReadCode(popup);
    const terminal = torii.pairInteractive();
    try {
      const prompt = await terminal.prompt();
      expect(prompt.code, "the terminal shows the same code as the popup").toBe(popupCode);
      terminal.answer("n\n");
      await terminal.exit();
    } finally {
      terminal.kill();
    }

    const shown = await pollUntil("the popup to say the pairing was denied", async () => {
      const text = `${await statusText(popup)} ${(await popup.locator("#reason").textContent()) ?? ""}`;
      return /denied/i.test(text) ? text : undefined;
    });
    expect(saysConnected(await statusText(popup)), `popup status after deny: ${shown}`).toBe(false);
    expect((await extState(popup)).status).not.toBe("connected");
    expect(await torii.devices()).toEqual([]);
    expect((await torii.healthz()).extensionConnected).toBe(false);
  });

  test("a daemon address where nothing listens: the popup names the address, `torii serve` and where to change it", async () => {
    const port = await freePort(); // bound and released: nothing listens there
    const url = `ws://127.0.0.1:${port}/acp`;
    const popup = await browser.openPopup();
    await setDaemonUrl(popup, url);
    await popup.locator("#pair").click();
    const reason = await pollUntil("the popup to say the daemon cannot be reached", async () => {
      const r = (await popup.locator("#reason").textContent()) ?? "";
      return r.includes("cannot reach") ? r : undefined;
    });
    expect(reason).toContain(`cannot reach the daemon at ${url}`);
    expect(reason).toContain("is `torii serve` running?");
    expect(reason).toContain("Connection settings → Daemon address");
    expect((await extState(popup)).status).toBe("disconnected");
    // The field the message names is where the popup shows the address.
    expect(await popup.locator("#daemon-url").inputValue()).toBe(url);
    await popup.close();
  });

  test("an approved request connects the popup, lists the device and brings the link up", async () => {
    const popup = await browser.openPopup();
    await setDaemonUrl(popup, torii.wsUrl);

    const popupCode = await clickPairAndReadCode(popup);
    const terminal = torii.pairInteractive();
    try {
      const prompt = await terminal.prompt();
      expect(prompt.code, "the terminal shows the same code as the popup").toBe(popupCode);
      expect(prompt.origin).toBe(EXTENSION_ORIGIN);
      terminal.answer("y\n");
      expect(await terminal.exit(), `torii pair output:\n${terminal.output}`).toBe(0);
    } finally {
      terminal.kill();
    }

    await waitForPopupConnected(popup);
    const state = await extState(popup);
    expect(state.status).toBe("connected");
    expect(state.deviceId).toBeTruthy();

    const devices = await torii.devices();
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ deviceId: state.deviceId, origin: EXTENSION_ORIGIN });
    if (state.deviceName) expect(devices[0]?.name).toBe(state.deviceName);
    expect(await popup.locator("#device-name").inputValue(), "the popup shows the paired device name").toBe(devices[0]?.name);

    expect((await torii.healthz()).extensionConnected).toBe(true);
    expect(await torii.pendingPairs()).toEqual([]);
  });

  test("a paired extension pointed where nothing listens retries with the same message; the right address reconnects it", async () => {
    const popup = await browser.openPopup();
    const url = `ws://127.0.0.1:${await freePort()}/acp`;
    await setDaemonUrl(popup, url);
    const reason = await pollUntil("the popup to say the daemon cannot be reached", async () => {
      const r = (await popup.locator("#reason").textContent()) ?? "";
      return r.includes("cannot reach") ? r : undefined;
    });
    expect(reason).toContain(`cannot reach the daemon at ${url} — is \`torii serve\` running?`);
    expect(reason).toContain("Connection settings → Daemon address");
    expect(reason).toMatch(/retrying in [\d.]+ s$/);
    await setDaemonUrl(popup, torii.wsUrl);
    await waitForPopupConnected(popup);
  });
});

// SECURITY I-57 with the real extension: its reconnect ticket is its reserved way in, so a flood
// holding every unauthenticated slot cannot keep it out after the daemon restarts (the daemon
// kept the ticket's hash on disk) or after Chrome stops its service worker (the worker kept the
// ticket in chrome.storage.session).
import type { Page } from "playwright-core";
import { afterEach, expect, test } from "vitest";
import { type Browser, extState, pairBrowser, waitForPopupConnected } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { Flood, probeAnonymous } from "../src/flood.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

describeBrowser("reconnect under a flood", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let deviceId: string;
  let flood: Flood | undefined;

  afterEach(async () => {
    flood?.stop();
    flood = undefined;
    // The next flood starts on a daemon that has let go of this one's slots: one of them
    // released after the next flood's 503 would free a slot the probes would find.
    if (torii?.running) await drained(torii);
  });

  const startFlood = async (): Promise<Flood> => {
    const f = new Flood("127.0.0.1", torii.port, deviceId);
    flood = f;
    await f.start();
    expect(f.errors, "every flood upgrade either held a slot or was refused with 503").toEqual([]);
    return f;
  };

  /**
   * A fresh upgrade without a ticket is refused: the flood holds every slot. Polled: a slot one
   * of the flood's connections gives back is refilled by the flood a moment later.
   */
  const expectSlotsHeld = async (when: string) => {
    await expect.poll(() => probeAnonymous("127.0.0.1", torii.port), { message: `an anonymous upgrade ${when}`, timeout: 3_000, interval: 50 }).toBe(503);
  };

  test("the link is back within 5 s of a daemon restart while a flood holds every slot", async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    let popup: Page;
    ({ popup, deviceId } = await pairBrowser(browser, torii));

    await torii.stop();
    // Restart while the extension waits out a long back-off step, so the flood is in place
    // before its next attempt: the one the flood would otherwise keep out.
    const backoffMs = await nextRetryAtLeast(popup, 1_500);
    const restartedAt = Date.now();
    await torii.start();
    const f = await startFlood();
    const fullAt = Date.now();
    await expectSlotsHeld("once the flood is in place");

    await torii.waitForLink(true, 10_000);
    const elapsed = Date.now() - restartedAt;
    console.log(
      `e2e: link back ${elapsed} ms after the restart (flood full after ${fullAt - restartedAt} ms, ` +
        `the extension's retry was ${backoffMs} ms away), holding ${f.holding} slots`,
    );
    expect(elapsed, `reconnected ${elapsed} ms after the restart`).toBeLessThan(5_000);
    await expectSlotsHeld("with the extension back");
    expect(f.holding).toBeGreaterThanOrEqual(128);
    expect(await cameInOnTicket(torii, deviceId), "the extension's connection took its reserved slot").toBe(true);

    // The link is really usable: a browser tool call through MCP, with the flood still on.
    const mcp = await Mcp.connect(torii);
    try {
      await mcp.waitForCatalogue();
      const tabs = await mcp.ok("tabs");
      expect(Array.isArray(tabs.data.tabs), tabs.text).toBe(true);
    } finally {
      await mcp.close();
    }
    f.stop();
    await waitForPopupConnected(popup);
    expect((await extState(popup)).deviceId).toBe(deviceId);
  });

  test("the link is back after Chrome stops the service worker while a flood holds every slot", async () => {
    // Close extension pages so nothing but the test wakes the worker.
    for (const p of browser.context.pages()) if (p.url().startsWith(EXTENSION_ORIGIN)) await p.close();
    await browser.worker();
    await torii.waitForLink(true, 10_000);

    await browser.stopServiceWorker();
    await torii.waitForLink(false, 10_000);
    const f = await startFlood();
    await expectSlotsHeld("before the worker wakes");

    // A person opens the popup; that wakes the worker, which has only what it stored.
    const wokeAt = Date.now();
    const popup = await browser.openPopup();
    await browser.worker();
    await torii.waitForLink(true, 10_000);
    console.log(`e2e: link back ${Date.now() - wokeAt} ms after the worker was woken, holding ${f.holding} slots`);
    await expectSlotsHeld("with the extension back");
    expect(await cameInOnTicket(torii, deviceId), "the new worker's connection took the reserved slot").toBe(true);
    f.stop();
    await waitForPopupConnected(popup);
    expect((await extState(popup)).deviceId, "no re-pairing: same device").toBe(deviceId);
  });
});

/**
 * Resolves when the extension schedules a reconnect at least minMs away (its state broadcast
 * says "retrying in N s"), with that delay. Event driven: the popup listens to the worker.
 */
async function nextRetryAtLeast(popup: Page, minMs: number): Promise<number> {
  return popup.evaluate(
    (min) =>
      new Promise<number>((resolve) => {
        type Msg = { type?: string; state?: { reason?: string } };
        const rt = (globalThis as unknown as {
          chrome: { runtime: { onMessage: { addListener(f: (m: Msg) => void): void; removeListener(f: (m: Msg) => void): void } } };
        }).chrome.runtime;
        const l = (m: Msg) => {
          const x = m?.type === "torii.state" ? /retrying in ([\d.]+) s/.exec(m.state?.reason ?? "") : null;
          if (x && Number(x[1]) * 1000 >= min) {
            rt.onMessage.removeListener(l);
            resolve(Number(x[1]) * 1000);
          }
        };
        rt.onMessage.addListener(l);
      }),
    minMs,
  );
}

interface Status {
  connections?: { id?: string; kind?: string; deviceId?: string }[] | null;
}

/** Waits until the daemon lists no unauthenticated connection. */
async function drained(torii: Torii): Promise<void> {
  await pollUntil("the daemon to let go of every flood connection", async () => {
    const s = await torii.cliJSON<Status>(["status", "--json"]);
    return !(s.connections ?? []).some((c) => c.kind === "unauthenticated");
  }, { timeoutMs: 15_000 });
}

/**
 * Whether the device's live connection came in on a reserved slot: the daemon logs each
 * upgrade (--verbose) with reserved=true when a live ticket chose its slot.
 */
async function cameInOnTicket(torii: Torii, deviceId: string): Promise<boolean> {
  const s = await torii.cliJSON<Status>(["status", "--json"]);
  const id = s.connections?.find((c) => c.deviceId === deviceId)?.id;
  if (!id) throw new Error(`status lists no connection of ${deviceId}: ${JSON.stringify(s)}`);
  const line = await pollUntil(`the daemon's log line for connection ${id}`, () =>
    String(torii.log)
      .split("\n")
      .find((l) => l.includes('msg="link: connected"') && l.includes(`conn=${id}`)),
  { timeoutMs: 2_000 });
  return /\breserved=true\b/.test(line);
}

// One real Chromium with the real unpacked extension, a fresh profile each time.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BrowserContext, type CDPSession, type Page, type Worker, chromium } from "playwright-core";
import { EXTENSION_ORIGIN, browserPath, chromiumArgs } from "./env.ts";
import { type Torii, normalizeCode } from "./torii.ts";
import { Tail, pollUntil, removeDir, shortTempDir, withTimeout } from "./util.ts";

export interface ExtState {
  status: string;
  reason?: string;
  deviceName?: string;
  deviceId?: string;
  daemonUrl?: string;
  pairingCode?: string;
  paused?: boolean;
}

export class Browser {
  readonly log = new Tail();
  private constructor(
    readonly context: BrowserContext,
    readonly userDataDir: string,
  ) {
    const onConsole = (src: string) => (msg: { type(): string; text(): string }) =>
      this.log.push(`[${src} ${msg.type()}] ${msg.text()}\n`);
    const watchWorker = (w: Worker) => {
      if (w.url().startsWith(EXTENSION_ORIGIN)) {
        this.log.push(`--- service worker up: ${w.url()} ---\n`);
        w.on("console", onConsole("worker"));
        w.on("close", () => this.log.push(`--- service worker gone: ${w.url()} ---\n`));
      }
    };
    context.serviceWorkers().forEach(watchWorker);
    context.on("serviceworker", watchWorker);
    context.on("page", (p) => p.on("console", onConsole(p.url().replace(EXTENSION_ORIGIN, "ext"))));
  }

  static async launch(): Promise<Browser> {
    if (!browserPath) throw new Error("no browser");
    const dir = await shortTempDir();
    // Downloads go to a folder of the profile, never the person's ~/Downloads.
    await mkdir(join(dir, "Default"), { recursive: true });
    await writeFile(join(dir, "Default", "Preferences"), JSON.stringify({ download: { default_directory: join(dir, "downloads"), prompt_for_download: false } }));
    const context = await chromium.launchPersistentContext(dir, {
      executablePath: browserPath,
      headless: true,
      args: chromiumArgs(),
      // Playwright's defaults disable extensions; this suite is about one.
      ignoreDefaultArgs: ["--disable-extensions"],
      timeout: 60_000,
    });
    const b = new Browser(context, dir);
    try {
      await b.worker();
    } catch (e) {
      await b.close();
      throw e;
    }
    return b;
  }

  /** The browser's download folder (inside its profile). */
  get downloadDir(): string {
    return join(this.userDataDir, "downloads");
  }

  private browserSession: CDPSession | undefined;

  /**
   * The extension's service worker target as Chrome itself reports it
   * (Target.getTargets); Playwright's worker list does not notice a stop.
   */
  async workerTarget(): Promise<{ targetId: string; url: string } | undefined> {
    if (!this.browserSession) {
      const b = this.context.browser();
      if (!b) throw new Error("no browser handle for a CDP session");
      this.browserSession = await b.newBrowserCDPSession();
    }
    const { targetInfos } = await this.browserSession.send("Target.getTargets");
    return targetInfos.find((t) => t.type === "service_worker" && t.url.startsWith(`${EXTENSION_ORIGIN}/`));
  }

  /** Waits until the extension's service worker runs; returns its target id. */
  async worker(timeoutMs = 20_000): Promise<string> {
    const t = await pollUntil("the extension's service worker to run", () => this.workerTarget(), { timeoutMs });
    return t.targetId;
  }

  /** The popup, opened as a normal tab (a toolbar click cannot be made headless). */
  async openPopup(): Promise<Page> {
    const page = await this.context.newPage();
    await page.goto(`${EXTENSION_ORIGIN}/popup.html`);
    await page.locator("#status").waitFor({ state: "visible", timeout: 10_000 });
    return page;
  }

  async close(): Promise<void> {
    await this.swSession?.detach().catch(() => {});
    await this.browserSession?.detach().catch(() => {});
    await this.context.close().catch(() => {});
    await removeDir(this.userDataDir);
  }

  private swSession: CDPSession | undefined;
  private swStopped = false; // Chrome reported our worker's runningStatus "stopped"

  /**
   * Stops the extension's service worker for real, as Chrome does to an idle
   * worker (DevTools' ServiceWorker.stopAllWorkers), and waits until Chrome
   * reports it stopped. The DevTools session lives on the tab the browser
   * started with, so no tab is opened or closed here: a tab event would wake
   * a worker that listens to chrome.tabs.
   */
  async stopServiceWorker(): Promise<void> {
    if (!this.swSession) {
      const page = this.context.pages().find((p) => !p.url().startsWith(EXTENSION_ORIGIN));
      if (!page) throw new Error("no non-extension tab to hold a DevTools session");
      const cdp = await this.context.newCDPSession(page);
      cdp.on("ServiceWorker.workerVersionUpdated", (e) => {
        for (const v of e.versions)
          if (v.scriptURL.startsWith(`${EXTENSION_ORIGIN}/`) && v.runningStatus === "stopped") this.swStopped = true;
      });
      await cdp.send("ServiceWorker.enable");
      this.swSession = cdp;
    }
    const sawStopped = () => this.swStopped;
    this.swStopped = false;
    await this.swSession.send("ServiceWorker.stopAllWorkers");
    await pollUntil("Chrome to report the extension's service worker stopped", sawStopped, { timeoutMs: 10_000 });
    this.log.push("--- service worker stopped by the test ---\n");
  }
}

/** The worker's own view of its state, asked the way the popup asks it. */
export async function extState(page: Page): Promise<ExtState> {
  const reply = await page.evaluate(async () => {
    const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome;
    return (await c.runtime.sendMessage({ type: "torii.getState" })) as Record<string, unknown> | undefined;
  });
  // The worker answers {ok, state} or the bare state.
  const state = (reply && typeof reply.state === "object" ? reply.state : reply) as ExtState | undefined;
  if (!state || typeof state.status !== "string") throw new Error(`torii.getState answered ${JSON.stringify(reply)}`);
  return state;
}

export async function statusText(page: Page): Promise<string> {
  return ((await page.locator("#status").textContent()) ?? "").trim();
}

/** "connected" but not "not connected" / "disconnected". */
export function saysConnected(text: string): boolean {
  return /\bconnected\b/i.test(text) && !/\b(not|dis|un)[\s-]?connected\b/i.test(text);
}

/** Points the extension at this daemon through the popup's daemon-URL field. */
export async function setDaemonUrl(popup: Page, url: string): Promise<void> {
  const input = popup.locator("#daemon-url");
  // The field may sit in a collapsed "Connection settings" section: open it as a person would.
  if (!(await input.isVisible())) {
    const summary = popup.locator("details:has(#daemon-url) > summary");
    if ((await summary.count()) > 0) await summary.click();
  }
  await input.fill(url);
  await input.press("Enter");
  await input.blur();
  await pollUntil(`the extension to take daemon URL ${url}`, async () => (await extState(popup)).daemonUrl === url, {
    timeoutMs: 10_000,
  });
}

/** Clicks Pair and reads the 6-digit code the popup shows. */
export async function clickPairAndReadCode(popup: Page): Promise<string> {
  await popup.locator("#pair").click();
  return pollUntil(
    "a 6-digit code in the popup's #code",
    async () => {
      const code = normalizeCode((await popup.locator("#code").textContent()) ?? "");
      return code.length === 6 ? code : undefined;
    },
    { timeoutMs: 15_000 },
  );
}

export async function waitForPopupConnected(popup: Page, timeoutMs = 15_000): Promise<string> {
  return pollUntil("the popup's #status to say connected", async () => {
    const t = await statusText(popup);
    return saysConnected(t) ? t : undefined;
  }, { timeoutMs });
}

/**
 * Pairs a fresh browser with a daemon through the popup and the
 * non-interactive `torii pair approve CODE`; returns the popup and the device.
 */
export async function pairBrowser(browser: Browser, torii: Torii): Promise<{ popup: Page; deviceId: string }> {
  const popup = await browser.openPopup();
  await setDaemonUrl(popup, torii.wsUrl);
  const code = await clickPairAndReadCode(popup);
  await pollUntil(`the daemon to list pair request ${code}`, async () =>
    (await torii.pendingPairs()).some((r) => normalizeCode(r.code) === code),
  );
  const r = await torii.cli(["pair", "approve", code]);
  if (r.code !== 0) throw new Error(`torii pair approve ${code} exited ${r.code}: ${r.stdout}${r.stderr}`);
  await waitForPopupConnected(popup);
  await torii.waitForLink(true);
  const devices = await torii.devices();
  if (devices.length !== 1 || !devices[0]) throw new Error(`expected one device after pairing, got ${JSON.stringify(devices)}`);
  return { popup, deviceId: devices[0].deviceId };
}

/**
 * Closes every page but the extension's own, each bounded: cleanup between tests, where a tab
 * held by a dialog or a navigation (or a close Chromium never confirms) must not stall the next one.
 */
export async function closeWebPages(browser: Browser): Promise<void> {
  const open = browser.context.pages().filter((p) => !p.url().startsWith("chrome-extension://"));
  await Promise.all(open.map((p) => withTimeout(p.close({ runBeforeUnload: false }), 3_000)));
}

// Per-file setup shared by the tests: a daemon, a browser, logs on failure.
import { afterAll, beforeEach, describe } from "vitest";
import { Browser } from "./browser.ts";
import { NO_BROWSER_MESSAGE, browserPath } from "./env.ts";
import { Torii } from "./torii.ts";

/** `describe`, or a skip with a clear reason when no browser exists (never in CI: global setup fails there). */
export const describeBrowser: typeof describe = browserPath
  ? describe
  : (((name: string, fn: () => void) => describe.skip(`${name} — ${NO_BROWSER_MESSAGE}`, fn)) as typeof describe);

export interface Rig {
  torii: Torii;
  browser: Browser;
}

/** Registers cleanup for every daemon and browser made through it, and dumps their logs when a test fails. */
export function useRig(): { daemon(): Promise<Torii>; browser(): Promise<Browser> } {
  const daemons: Torii[] = [];
  const browsers: Browser[] = [];
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      for (const t of daemons) console.error(`==== torii serve log (${t.addr}) ====\n${t.log}`);
      for (const b of browsers) console.error(`==== browser console ====\n${b.log}`);
    });
  });
  afterAll(async () => {
    for (const b of browsers.splice(0)) await b.close();
    for (const t of daemons.splice(0)) await t.dispose();
  });
  return {
    async daemon() {
      const t = await Torii.create();
      daemons.push(t);
      return t;
    },
    async browser() {
      const b = await Browser.launch();
      browsers.push(b);
      return b;
    },
  };
}

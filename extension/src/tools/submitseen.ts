// Whether the Enter of `type … submit` submitted anything: a form's submit event in the document
// typed into, or a navigation of the tab. The result says which, or that none was seen; it never
// claims a submission the page did not make.

import { left, sleep, withDeadline } from "../cdp/deadline.js";
import { watchNav, type NavWatch } from "./browser.js";
import type { ToolContext } from "./define.js";

/** How long after the Enter a navigation may take to reach the browser before "none seen". */
const SETTLE_MS = 1_500;

// Runs in the page's isolated world (self-contained): counts the document's submit events from
// now on, before the page's own listeners (capture on window). A submit the page then cancels to
// handle itself (a single-page app) still counts: the form was submitted.
function armSubmitCount(): void {
  const w = self as unknown as { __toriiSubmits?: number; __toriiSubmitListener?: boolean };
  w.__toriiSubmits = 0;
  if (w.__toriiSubmitListener) return;
  w.__toriiSubmitListener = true;
  window.addEventListener("submit", () => (w.__toriiSubmits = (w.__toriiSubmits ?? 0) + 1), { capture: true });
}

function submitCount(): number {
  return (self as unknown as { __toriiSubmits?: number }).__toriiSubmits ?? 0;
}

async function inFrame<T>(tabId: number, frameId: number, func: () => T): Promise<T | undefined> {
  const r = await withDeadline(chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, world: "ISOLATED", func }), 2_000, "submit check").catch(() => undefined);
  return r?.[0]?.result as T | undefined;
}

export interface SubmitWatch {
  /** After the Enter: what it caused, waiting a moment for a navigation to show. */
  outcome(ctx: ToolContext): Promise<"submitted" | "navigated" | "none">;
  stop(): void;
}

/** Starts watching before the Enter: the tab's navigations, and submits in the frame typed into. */
export async function watchSubmit(tabId: number, frameId: number): Promise<SubmitWatch> {
  const nav: NavWatch = watchNav(tabId);
  await inFrame(tabId, frameId, armSubmitCount);
  return {
    async outcome(ctx) {
      const until = Math.min(Date.now() + SETTLE_MS, ctx.deadline - 1_000);
      for (;;) {
        if (nav.started() || nav.finished()) return "navigated";
        if (((await inFrame(tabId, frameId, submitCount)) ?? 0) > 0) return "submitted";
        if (nav.started() || nav.finished()) return "navigated";
        if (Date.now() >= until || left(ctx.deadline) < 1_000) return "none";
        await sleep(50, ctx.signal);
      }
    },
    stop: () => nav.stop(),
  };
}

// Whether the Enter of `type … submit` submitted anything: a form's submit event in the document
// typed into, or a navigation of the tab. The result says which, or that none was seen; it never
// claims a submission the page did not make.

import { atMost, left, withDeadline } from "../cdp/deadline.js";
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

// Runs in the page's isolated world (self-contained): true once the document has seen a submit
// since armSubmitCount (at once, or on the next one within `ms`), false when none came.
function submitSeen(ms: number): Promise<boolean> {
  const w = self as unknown as { __toriiSubmits?: number };
  if ((w.__toriiSubmits ?? 0) > 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const end = (seen: boolean) => {
      clearTimeout(timer);
      window.removeEventListener("submit", onSubmit, { capture: true });
      resolve(seen);
    };
    const onSubmit = () => end(true);
    const timer = setTimeout(() => end(false), ms);
    window.addEventListener("submit", onSubmit, { capture: true });
  });
}

async function inFrame<A extends unknown[], T>(tabId: number, frameId: number, ms: number, func: (...args: A) => T | Promise<T>, ...args: A): Promise<T | undefined> {
  const run = chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, world: "ISOLATED", func, args });
  const r = await withDeadline(run, ms, "submit check").catch(() => undefined);
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
  await inFrame(tabId, frameId, 2_000, armSubmitCount);
  return {
    async outcome(ctx) {
      const ms = Math.max(0, Math.min(SETTLE_MS, left(ctx.deadline) - 1_000));
      const moved = () => nav.started() || nav.finished();
      if (moved()) return "navigated";
      // The first of: a navigation of the tab, a submit in the document (which a navigation may
      // end before it answers: then wait on for the navigation's start).
      const seen = inFrame(tabId, frameId, ms + 2_000, submitSeen, ms);
      const first = await withDeadline(Promise.race([nav.moved.then(() => "moved" as const), seen]), ms + 2_000, "submit check", ctx.signal).catch((e: unknown) => {
        if (ctx.signal.aborted) throw e;
        return undefined;
      });
      if (first === undefined) await atMost(nav.moved, Math.max(0, Math.min(ms, left(ctx.deadline) - 1_000)), ctx.signal);
      if (moved()) return "navigated";
      return first === true ? "submitted" : "none";
    },
    stop: () => nav.stop(),
  };
}

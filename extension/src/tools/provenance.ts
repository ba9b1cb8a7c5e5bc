// Who caused a browser event: an agent's call, the extension itself, or the person. Chrome tells an
// extension that a tab opened, was activated or that a window took focus, never who did it; the
// only evidence is timing against what Torii itself was doing at that moment. Pure bookkeeping (no
// chrome.* here): tools/ownership/attribution.ts feeds it from the registry's calls and Chrome's tab events.
//
// Two decisions rest on it:
// - SECURITY I-45: a tab a page opens (popup, target=_blank, window.open) is an agent's only when
//   that agent's own effect-causing call was running on the opener tab when Chrome created it, or
//   had ended less than POPUP_GRACE_MS before.
// - SECURITY I-46: an activation or focus counts as the person's attention only when no agent input
//   call ran in that window within ATTENTION_QUIET_MS of it, and neither the extension's own tab or
//   window operation nor Chrome's pick of a tab for one that opened or closed explains it
//   (CHROME_PICK_MS).

import type { Effect } from "./traits.js";

/**
 * How long after an agent's call a popup it set off is still the agent's. 1 s covers the usual
 * deferred opens (setTimeout, a promise, an animation frame, a quick loopback fetch) after the
 * action returned; the call itself already waits for a navigation it started. It is kept short
 * because it is also how long the person's own Ctrl+click on that tab would be misread as the agent's.
 */
export const POPUP_GRACE_MS = 1_000;

/**
 * How far an activation or focus event may be from what explains it: Chrome delivers the events of
 * a CDP mouse press, a tabs.update or a tab closing within a few hundred ms (measured ~140 ms for
 * a press focusing a headless window), in either order with onRemoved.
 */
export const ATTENTION_QUIET_MS = 1_000;

/**
 * How close to a tab opening or closing in the same window an activation is Chrome's own pick (the
 * new tab, or the neighbour of the closed one). Chrome fires both in the same task; they arrive
 * within a few ms (measured 1–20 ms), in either order.
 */
export const CHROME_PICK_MS = 300;

/** Effects that put events or code into the page: they can focus its window or move its tabs. */
const FOCUS_EFFECTS: readonly Effect[] = ["click", "keys", "input", "upload", "code", "dialog"];

export interface CallMark {
  readonly id: number;
  readonly session: string;
  /** The tab the call acts on, once the gate knows it (undefined: none, or not yet). */
  readonly tab: () => number | undefined;
  /** It can cause effects (a popup it sets off is its own). */
  readonly acts: boolean;
  /** It can move focus (CDP input, page code, a dialog answered). */
  readonly focuses: boolean;
  readonly start: number;
  end?: number;
  /** The window of its tab, once looked up (the tab may close before an event is judged). */
  window?: number;
}

/** What one registry call looks like to the bookkeeping. */
export interface CallShape {
  traits: { target: string; effects: readonly Effect[] };
}

export class Provenance {
  private calls: CallMark[] = [];
  private n = 0;
  private selfOps = 0;
  private selfUntil = 0;
  /** windowId → the last time Chrome created, removed, attached or detached a tab in it. */
  private tabChanges = new Map<number, number>();
  /** tabId → when Chrome created it (its first activation is Chrome's, not the person's). */
  private born = new Map<number, number>();

  begin(session: string, tool: CallShape, tab: () => number | undefined, now: number): CallMark | undefined {
    if (tool.traits.target === "none") return undefined;
    const m: CallMark = {
      id: ++this.n,
      session,
      tab,
      acts: tool.traits.effects.length > 0,
      focuses: tool.traits.effects.some((e) => FOCUS_EFFECTS.includes(e)),
      start: now,
    };
    this.calls.push(m);
    return m;
  }

  end(m: CallMark | undefined, now: number): void {
    if (!m || m.end !== undefined) return;
    m.end = now;
    this.prune(now);
  }

  /**
   * SECURITY I-45: a tab Chrome created at `at`, opened by a page in `openerTab` (owned by
   * `owner`), is the owner's only if one of the owner's effect-causing calls on that tab covers `at`.
   */
  openedByCall(owner: string, openerTab: number, at: number): boolean {
    return this.calls.some((c) => c.acts && c.session === owner && c.tab() === openerTab && c.start <= at && at <= (c.end ?? Infinity) + POPUP_GRACE_MS);
  }

  /** Marks the extension's own tab or window operation (create, activate, focus, remove). */
  selfBegin(): void {
    this.selfOps++;
  }

  selfEnd(now: number): void {
    this.selfOps = Math.max(0, this.selfOps - 1);
    // Chrome reports what the operation did before or just after its promise settles.
    this.selfUntil = Math.max(this.selfUntil, now + CHROME_PICK_MS);
  }

  /** The extension is (or just was) moving tabs or windows itself. */
  selfActive(now: number): boolean {
    return this.selfOps > 0 || now < this.selfUntil;
  }

  tabCreated(tabId: number, windowId: number | undefined, now: number): void {
    this.born.set(tabId, now);
    if (windowId !== undefined) this.tabChanges.set(windowId, now);
  }

  tabChanged(windowId: number | undefined, now: number): void {
    if (windowId !== undefined) this.tabChanges.set(windowId, now);
  }

  tabGone(tabId: number, windowId: number | undefined, now: number): void {
    this.born.delete(tabId);
    this.tabChanged(windowId, now);
  }

  /**
   * SECURITY I-46: the agent calls that may have caused a focus or activation at `at`: calls that
   * put input or code into a page, in flight then or ended less than ATTENTION_QUIET_MS before.
   */
  focusingCallsAround(at: number): CallMark[] {
    // A call that began after the event cannot have caused it.
    return this.calls.filter((c) => c.focuses && c.start <= at && (c.end === undefined || c.end + ATTENTION_QUIET_MS >= at));
  }

  /**
   * SECURITY I-46: an activation of `tabId` (undefined for a window's focus) in `windowId` at `at`
   * (judged after the settle delay) that something other than the person explains: the
   * extension's own operation, Chrome activating a tab as it opens, or picking a neighbour as another
   * tab of the window closes. Agent calls are checked by the caller (it needs each call's window).
   */
  explainedActivation(tabId: number | undefined, windowId: number, at: number): boolean {
    if (this.selfActive(at)) return true;
    const b = tabId !== undefined ? this.born.get(tabId) : undefined;
    if (b !== undefined && Math.abs(at - b) <= CHROME_PICK_MS) return true;
    const ch = this.tabChanges.get(windowId);
    return ch !== undefined && Math.abs(at - ch) <= CHROME_PICK_MS;
  }

  private prune(now: number): void {
    const keep = Math.max(POPUP_GRACE_MS, ATTENTION_QUIET_MS) + 30_000;
    this.calls = this.calls.filter((c) => c.end === undefined || c.end + keep > now);
    for (const [k, t] of this.born) if (t + keep < now) this.born.delete(k);
    for (const [k, t] of this.tabChanges) if (t + keep < now) this.tabChanges.delete(k);
  }
}

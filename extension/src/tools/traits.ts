// A tool's traits: what it touches, reads and can cause, declared once on its definition
// (define.ts) and read by the gate, ownership, the guards and tools/list. Types and constants
// only, so every module that judges a call can import them without importing the registry.

/**
 * What a tool's call can cause. The gate, ownership, the download guard and the effect guard key on
 * these, never on tool names, so a new tool cannot skip a check by not being on some list.
 * - click: activates what is under a target or point (a real or DOM click, and the focusing click of
 *   typing aimed at a ref): may submit a form, fire a destructive button, follow a link.
 * - keys: keyboard events into the focused element (Enter may submit, Space may activate).
 * - input: sets values or moves the pointer without activating (fill, select, hover).
 * - navigation: loads another document in the tab.
 * - code: runs the agent's code in the page (or a request with the page's cookies).
 * - upload, close, dialog: sets files on an input, closes the tab, answers a JavaScript dialog.
 * - identity: changes how the tab or the browser shows itself to sites (user agent, proxy).
 * - emulate: changes what the tab's page sees of its device (viewport, scale, touch), not the window.
 */
export type Effect = "click" | "keys" | "input" | "navigation" | "code" | "upload" | "close" | "dialog" | "identity" | "emulate";

/** The effects that put events into the page: the effect guard watches them (SECURITY I-36). */
export const INPUT_EFFECTS: readonly Effect[] = ["click", "keys", "input", "upload"];

/**
 * The effects that make a tool destructive (tools/list's destructiveHint: it "may perform
 * destructive updates to its environment"). A click or a key may submit a form or fire a delete
 * button (Enter submits, Space activates); a navigation discards the page's unsaved work; code
 * can do anything the page can, requests with the person's cookies included; an upload is often
 * sent on the input's change; closing a tab and accepting a confirm() cannot be taken back.
 * Setting a value or moving the pointer activates nothing itself (a page script reacting to the
 * change is the page's doing, as on a scroll), so `input` alone is not: fill, select_option,
 * fill_form and hover are not destructive, type and press_key (keys) are. A Record, so that a new
 * effect does not compile until it is classified here.
 */
export const DESTRUCTIVE_EFFECTS: Readonly<Record<Effect, boolean>> = {
  click: true,
  keys: true,
  input: false,
  navigation: true,
  code: true,
  upload: true,
  close: true,
  dialog: true,
  // A user agent or proxy profile is taken back by reset or another switch.
  identity: false,
  // The page lays itself out again; nothing is submitted or lost, and `reset` undoes it.
  emulate: false,
};

/** Everything the gates need to know about a tool, declared once on its definition (SECURITY I-48). */
export interface Traits {
  /** What the call touches: no tab (it judges each tab it lists), an existing tab, or a new one when tabId is omitted. */
  target: "none" | "tab" | "tab-or-new";
  /** What of the page it returns: nothing, page content (text, outline, state), pixels, or the tab list. */
  reads: "none" | "page" | "pixels" | "tabs";
  /** What it can cause; empty for a read-only tool. */
  effects: readonly Effect[];
  /** The person's switch it needs beyond the allowlist (SECURITY I-16, I-17). */
  switch: "act" | "evaluate" | "fetch" | "invoke" | "proxy" | "cookies" | "storage" | "observe" | "none";
  /**
   * It runs code whose effects nothing can know before it runs: a page function, where any name may
   * be `eval`, `fetch` or a form's submit under another name, and neither its name, its source nor
   * `bind` tells (SECURITY I-71). The gate then holds it to everything evaluate's program form
   * needs, and more: that switch beside its own, act mode, and the approvals of code and of every
   * effect at once (submit, destructive click, new origin), asked in one request.
   */
  anyEffect?: boolean;
  /** It may type into a field: the password guard applies (SECURITY I-18). */
  typing?: boolean;
  /** Refused while a JavaScript dialog is open, answers one, or unaffected by one. */
  dialog: "blocked" | "answers" | "ignores";
  /** May run on a tab handed to the person (SECURITY I-22). */
  handoff: "refused" | "allowed";
  /**
   * The URL the call will open or request, judged before it goes (SECURITY I-15). Throws
   * invalid_argument naming the field for one that is not a URL: the gate asks it before any
   * policy, so a malformed argument is never reported (or audited) as a blocked origin.
   */
  destination?(args: Record<string, unknown>): string | undefined;
}

export function hasEffect(t: { traits: Traits }, ...e: Effect[]): boolean {
  return t.traits.effects.some((x) => e.includes(x));
}

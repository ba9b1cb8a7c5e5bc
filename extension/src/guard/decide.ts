// The effect guard's decisions, kept pure so node tests cover them: which events count as input,
// what a frame may receive while an agent's call is armed on its tab (its own origin judged against
// the person's policy), and whether one event is let through or blocked (SECURITY I-36…I-38).
// The DOM facts (focused password field, what a click or key would cause) are gathered by
// guard/index.ts; nothing here touches the page.

import { approvalChoice, judgeDocument, judgeUrl, passwordAllowed, type Policy } from "../policy/policy.js";

/** The effects the guard stops at the moment they happen unless the call was allowed them. */
export const EFFECT_KINDS = ["submit", "destructive_click", "new_origin"] as const;
export type EffectKind = (typeof EFFECT_KINDS)[number];

/** Why an event was blocked: the error code the call then fails with, and the effect kind. */
export interface Block {
  code: "origin_not_allowed" | "secret_origin_mismatch" | "password_field" | "approval_denied" | "navigation_failed";
  kind?: EffectKind;
  /** Kept from the page but no failure of the call (a focus change carries no input). */
  quiet?: true;
}

/** What the worker sends when it arms a tab for one call. */
export interface ArmSpec {
  /** Per call: a late answer or disarm of another call never applies to this one. */
  token: string;
  /** Epoch ms after which the frame disarms itself (a lost worker never leaves a tab armed). */
  expires: number;
  policy: Policy;
  /** Kinds the person approved for this call (ask → approved). */
  approved: EffectKind[];
  /** The gate allowed password fields for this call (call flag ∧ the tab's origin switch). */
  allowPassword: boolean;
}

/** What one frame may receive while armed, from its own real origin. */
export interface Rights {
  allowed: boolean;
  effects: EffectKind[];
  allowPassword: boolean;
}

/** A request the page would send (form action, link, ping) goes to an http(s) origin off the list. */
export function sendsOffList(policy: Policy, urls: string[]): boolean {
  return urls.some((u) => /^https?:/i.test(u) && !judgeUrl(policy, u).allowed);
}

/**
 * SECURITY I-36: the frame's rights from the origin its document really has (`self.origin`).
 * Effects the person allows outright on that origin, or approved for this call, pass; password
 * fields need the call's permission and this origin's own switch.
 */
export function rightsFor(spec: ArmSpec, origin: string, url: string): Rights {
  const v = judgeDocument(spec.policy, origin, url);
  if (!v.allowed) return { allowed: false, effects: [], allowPassword: false };
  const effects = EFFECT_KINDS.filter((k) => spec.approved.includes(k) || approvalChoice(spec.policy, v, k) === "allow");
  return { allowed: true, effects, allowPassword: spec.allowPassword && passwordAllowed(v, true) };
}

const KEYS = ["keydown", "keypress", "keyup"];
const TEXT = ["beforeinput", "input", "textInput", "compositionstart", "compositionupdate", "compositionend", "paste", "cut", "copy"];
const PRESS = ["mousedown", "mouseup", "click", "dblclick", "auxclick", "contextmenu", "pointerdown", "pointerup", "touchstart", "touchend", "wheel", "drop", "dragstart"];
const MOVE = [
  "mousemove", "mouseover", "mouseout", "mouseenter", "mouseleave", "pointermove", "pointerover", "pointerout", "pointerenter",
  "pointerleave", "pointercancel", "pointerrawupdate", "touchmove", "touchcancel", "drag", "dragend", "dragenter", "dragleave", "dragover",
  "selectstart",
];
const FOCUS = ["focus", "blur", "focusin", "focusout"];

/** Every event type the guard listens to (capture phase on window, the first listener of all). */
export const GUARDED_EVENTS: readonly string[] = [...KEYS, ...TEXT, ...PRESS, ...MOVE, ...FOCUS, "submit"];

/**
 * Events that carry a key or text to the focused field (the password check). Not keyup: its key
 * went down, and was judged, where the focus was then (a Tab into a password field is no typing).
 */
export const TYPING_EVENTS = new Set(["keydown", "keypress", "beforeinput", "textInput", "paste"]);
/**
 * The events of one Enter key that may reach a password field under a secret's submit grant: the
 * key going down, its keypress, and the `beforeinput` of its line break (a single-line field
 * inserts nothing; the browser submits the form right after it). Never textInput or paste, nor a
 * beforeinput that carries text (guard/secret-submit.ts checks its kind).
 */
export const SUBMIT_KEY_EVENTS = new Set(["keydown", "keypress", "beforeinput"]);
/** Events whose effect (submit, destructive, leaving) the guard judges. */
export const EFFECT_EVENTS = new Set(["click", "auxclick", "keydown", "submit"]);
/** Blocked while a new document has not yet heard from the worker whether its tab is armed. */
const PENDING_BLOCKED = new Set([...KEYS, ...TEXT, ...PRESS, "submit"]);
/**
 * In a subframe, focus too: a frame inserted during a call and focused at once must not learn it
 * (a top-level document's own autofocus is left alone).
 */
const PENDING_BLOCKED_SUBFRAME = new Set([...PENDING_BLOCKED, ...FOCUS]);

export type Phase = "idle" | "pending" | "armed";

export interface EventFacts {
  type: string;
  trusted: boolean;
  /** The document is in a frame, not the tab's top. */
  subframe?: boolean;
  /** Typing events: the focused element (through shadow roots) is a password field. */
  password?: boolean;
  /** Effect events: what the event would cause. */
  effects?: EffectKind[];
  /** Effect events: it would send a request (a form's action, a link, a ping) to an origin off the list. */
  offList?: boolean;
  /**
   * Typing events: the call's submit key (Enter, no modifier, trusted) on the very password field
   * this call just filled with one secret of this document's origin (SECURITY I-69). It types
   * nothing; it may only submit that field's form.
   */
  submitKey?: boolean;
  /** Effect events: the document holds a secret and the submission would go to an origin it is not bound to (SECURITY I-76). */
  secretElsewhere?: boolean;
}

/**
 * One event's fate. `latched` is the block already recorded in this frame during this call: once
 * something was blocked, the rest of the agent's input there is not delivered either.
 */
export function decide(phase: Phase, rights: Rights | undefined, latched: Block | undefined, f: EventFacts): Block | null {
  if (phase === "idle") return null;
  if (phase === "pending") {
    if (!f.trusted || !(f.subframe ? PENDING_BLOCKED_SUBFRAME : PENDING_BLOCKED).has(f.type)) return null;
    // Stopped either way. A focus change, or the keyup of a key that went down in the document
    // before (the Enter that submitted and brought this one), carries nothing of the agent's and
    // does not fail the call.
    return FOCUS.includes(f.type) || f.type === "keyup" ? { code: "navigation_failed", quiet: true } : { code: "navigation_failed" };
  }
  if (!rights || !rights.allowed) {
    // SECURITY I-36: a frame off the list gets none of it; a submit from its own script neither.
    return f.trusted || f.type === "submit" ? { code: "origin_not_allowed" } : null;
  }
  if (latched && f.trusted && f.type !== "focus" && f.type !== "blur" && f.type !== "focusin" && f.type !== "focusout") return latched;
  // SECURITY I-38: a form, link or ping would carry the page's data to an origin off the list.
  if (f.offList) return { code: "origin_not_allowed" };
  // SECURITY I-18: the field that has focus at this very key decides, not the one checked before;
  // the one key let through is the submit key on the field the secret went into (I-69).
  if (f.password && TYPING_EVENTS.has(f.type) && !rights.allowPassword && !(f.submitKey && SUBMIT_KEY_EVENTS.has(f.type))) {
    return { code: "password_field" };
  }
  // SECURITY I-76: a document that holds a secret sends nothing to an origin the secret is not
  // bound to, whatever the list allows.
  if (f.secretElsewhere) return { code: "secret_origin_mismatch" };
  // SECURITY I-38: an effect the call was not allowed is stopped where it happens.
  for (const k of f.effects ?? []) if (!rights.effects.includes(k)) return { code: "approval_denied", kind: k };
  return null;
}

/** A pending frame's provisional blocks, once it learns the tab is armed: a frame off the list got input meant for it. */
export function settlePending(blocks: Block[], rights: Rights): Block[] {
  if (!blocks.length) return [];
  return blocks.map(() => (rights.allowed ? { code: "navigation_failed" as const } : { code: "origin_not_allowed" as const }));
}

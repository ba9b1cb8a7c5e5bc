// What an input call will cause, predicted before it acts from the page as it is at that moment:
// the target it clicks (or focuses by clicking), the keys it sends and the element they land on.
// Pure rules, so node tests cover them; the facts come from the page (tools/effects.ts) and the
// person's allow / ask / deny choice is applied by the gate (SECURITY I-19, I-37). What is not
// predicted here is still stopped where it happens by the guard (SECURITY I-38).

import type { ClickEffects } from "../page/risk.js";
import type { ApprovalKind } from "../policy/policy.js";
import { maskSecret } from "../policy/approvals.js";
import type { Effect } from "./traits.js";
import { KeyError, parseCombo } from "./keys.js";

/** What the page says about the element an input lands on. */
export interface ElementFacts {
  label: string;
  /** Clicking (or keyboard-activating) it. */
  click: ClickEffects;
  /** Enter pressed while it has focus. */
  enter: ClickEffects;
  /** Space pressed while it has focus. */
  space: ClickEffects;
}

export interface InputFacts {
  /** The tab's origin (a link elsewhere is a new origin). */
  origin: string;
  /** The call's target, when it names one. */
  target?: ElementFacts;
  /** The element that has focus now (through shadow roots and frames), when known. */
  focus?: ElementFacts;
}

interface Predicted {
  kind: ApprovalKind;
  element?: string;
  text?: string;
  target?: string;
}

/** The keys a call sends, in order ("Enter", " ", "Tab", other names), from its arguments. */
export function keysOf(args: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (typeof args.key === "string") {
    let name = "";
    try {
      name = parseCombo(args.key, false).key.key;
    } catch (e) {
      if (!(e instanceof KeyError)) throw e;
    }
    const n = typeof args.repeat === "number" ? Math.max(1, Math.min(100, Math.floor(args.repeat))) : 1;
    for (let i = 0; i < n; i++) out.push(name);
  }
  if (typeof args.text === "string") {
    for (const ch of args.text) out.push(ch === "\n" || ch === "\r" ? "Enter" : ch === "\t" ? "Tab" : ch);
  }
  if (args.submit === true) out.push("Enter");
  return out;
}

function originOfUrl(u: string): string {
  try {
    return new URL(u).origin;
  } catch {
    return "";
  }
}

function kindsOf(fx: ClickEffects, origin: string): { kind: ApprovalKind; target?: string }[] {
  const out: { kind: ApprovalKind; target?: string }[] = [];
  if (fx.submit) out.push({ kind: "submit" });
  if (fx.destructive) out.push({ kind: "destructive_click" });
  if (fx.href !== undefined) {
    const o = originOfUrl(fx.href);
    if (o !== origin) out.push({ kind: "new_origin", ...(o ? { target: o } : {}) });
  }
  return out;
}

/**
 * SECURITY I-37: the effects of one input call. A click on the target; the keys after it land on
 * the target when the call clicked it, else on the current focus; Tab moves the focus somewhere
 * this cannot know, so keys after it are left to the guard. `submit: true` always counts as a
 * submission.
 */
export function predictInput(
  effects: readonly Effect[],
  args: Record<string, unknown>,
  facts: InputFacts,
  secretOk: boolean,
): Predicted[] {
  const out: Predicted[] = [];
  const add = (p: Predicted) => {
    if (!out.some((x) => x.kind === p.kind)) out.push(p);
  };
  const clicks = effects.includes("click") && facts.target !== undefined;
  if (clicks && facts.target) for (const k of kindsOf(facts.target.click, facts.origin)) add({ ...k, element: facts.target.label });
  if (effects.includes("keys")) {
    let on: ElementFacts | undefined = clicks ? facts.target : facts.focus;
    for (const key of keysOf(args)) {
      if (key === "Tab") on = undefined;
      if (!on) continue;
      const fx = key === "Enter" ? on.enter : key === " " ? on.space : undefined;
      if (fx) for (const k of kindsOf(fx, facts.origin)) add({ ...k, element: on.label });
    }
    if (args.submit === true) add({ kind: "submit" });
    // The person sees what would be typed with every question this call raises (masked if secret).
    const typed = typeof args.text === "string" && args.text !== "" ? maskIf(args.text, secretOk) : undefined;
    if (typed !== undefined) for (const p of out) p.text ??= typed;
  }
  return out;
}

function maskIf(text: string, secretOk: boolean): string {
  // Typed text is shown to the person only; a field that may be a password is masked.
  if (secretOk) return maskSecret(text);
  // SECURITY I-69: a secret is shown by its name; its value is never known to the approval.
  const shown = text.replace(/\{\{secret:([^{}]*)\}\}/g, "[secret $1, hidden]");
  return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
}

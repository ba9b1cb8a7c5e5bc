// The one gate every tool call passes before its handler (the extension is the last line
// of defence). It refuses while the person has paused Torii, then applies the person's
// policy: origin allowlist, act mode, code-execution switches, handoff and human approval. The
// checks run here, in the extension, on every call, whatever the daemon asks (SECURITY I-14…I-20).
// Handlers add what can only be known while acting: the landing origin after a navigation and the
// frame each page read runs in (tools/origin.ts), and the effect guard armed around every input,
// which judges each event where it lands (tools/effects.ts).

import type { ApprovalKind, Policy, Verdict } from "../policy/policy.js";
import { APPROVAL_LABELS, actAllowed, approvalChoice, evalAllowed, invokeAllowed, judgeUrl, observeAllowed, passwordAllowed, storeAllowed, type EvalKind, type StoreSwitch } from "../policy/policy.js";
import { originOf } from "../policy/pattern.js";
import type { ApprovalOutcome, ApprovalRequest } from "../policy/approvals.js";
import { toolError, type ToolError } from "./errors.js";
import { hasEffect, INPUT_EFFECTS, type Effect, type Traits } from "./traits.js";
import { EFFECT_KINDS, type EffectKind } from "../guard/decide.js";
import { predictInput, type InputFacts } from "./predict.js";
import { checkOwnership } from "./ownership/check.js";
import type { SessionRef } from "./ownership/state.js";

export interface GateCall {
  /** What the gate reads of a tool: its name, for messages and the audit, and its traits (traits.ts). */
  tool: { name: string; readOnly: boolean; traits: Traits };
  args: Record<string, unknown>;
}

/** Per-call context: the caller's cancellation and what the gate learnt, for handlers and the audit. */
export interface GateContext {
  signal: AbortSignal;
  /** The agent session's label, when the daemon sends one. */
  session?: string;
  /** The daemon-minted session the call belongs to (tools/ownership/state.ts). */
  owner?: SessionRef;
  /** The session's folder in the download sandbox, as the daemon names it (files.ts, downloads.ts). */
  filesFolder?: string;
  /** Set by the gate: the tab the call acts on and its origin ("" when none). */
  tabId?: number;
  origin?: string;
  /** Set by the gate: fill/type/press_key may touch a password field (call flag ∧ origin switch). */
  allowPassword?: boolean;
  /** Set by the gate: how approval went ("auto" when the policy allowed it without asking). */
  approval?: ApprovalOutcome | "auto";
  /**
   * Set by the gate for a call that puts input into the page: the effect kinds the person approved
   * for it. The handler arms the effect guard with them (SECURITY I-36, I-38).
   */
  guard?: { approved: EffectKind[] };
  /** Set by a handler: what the extension's audit adds to the call's record (a proxy switch's profiles; never an argument). */
  auditNote?: string;
  /** Set by an action (common.ts act): no download it started in its tab is still to come (downloads.ts). */
  noDownload?: boolean;
}

/** What the page says about an action's target (engine `risk`). */
interface TargetRisk {
  label: string;
  isPassword: boolean;
  submit: boolean;
  destructive: boolean;
}

/** The chrome-facing side of the gate, injected by the service worker (tools/safety.ts). */
export interface PolicyEnv {
  policy(): Promise<Policy>;
  /** The tab (given or active) and its effective URL (about:blank → the origin it inherits). */
  tab(tabId: number | undefined): Promise<{ tabId: number; url: string }>;
  /** True while the person handles this tab (handoff). */
  inHandoff(tabId: number): boolean;
  /** Every frame of the tab is allowed (screenshots show frames' pixels). */
  allFramesAllowed(tabId: number, p: Policy): Promise<boolean>;
  /** The target element's risk, or undefined when it cannot be described. */
  risk(tabId: number, target: { ref?: string; selector?: string }, signal: AbortSignal): Promise<TargetRisk | undefined>;
  /** SECURITY I-77: a secret's value was sent into this tab in this browser run (absent: never). */
  holdsSecret?(tabId: number): Promise<boolean>;
  /** SECURITY I-72: the person let agents switch the browser's proxy profile (absent: never). */
  proxySwitchAllowed?(): Promise<boolean>;
  /** Throws dialog_blocking while a JavaScript dialog is open on the tab. */
  checkNoDialog(tabId: number): void;
  /**
   * What the page says now about where an input call lands: its target, else the focused element
   * (tools/effects.ts); the gate predicts the effects from it (tools/predict.ts).
   */
  inputFacts(tabId: number, origin: string, effects: readonly Effect[], args: Record<string, unknown>, signal: AbortSignal): Promise<InputFacts>;
  ask(req: Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">, timeoutMs: number, signal: AbortSignal): Promise<ApprovalOutcome>;
}

export interface GateState {
  paused(): boolean | Promise<boolean>;
  /** Absent only in unit tests of the registry; without it every policy-checked call is refused. */
  env?: PolicyEnv;
}

let state: GateState = { paused: () => false };

/** Wired by the service worker to the link's settings and the policy; tests inject their own. */
export function setGateState(s: GateState): void {
  state = s;
}

/** The person's policy now (SECURITY I-79: what a result may carry); undefined without one. */
export function policyNow(): Promise<Policy> | undefined {
  return state.env?.policy();
}

/** SECURITY I-14: a refusal never names the blocked host; the person sees it in the extension. */
export function notAllowed(what: string): never {
  throw toolError("origin_not_allowed", `${what} is not on the person's allowlist; nothing was sent or read`);
}

const STORE_LABELS: Record<StoreSwitch, string> = { cookies: "Cookies", cookiesHttpOnly: "HttpOnly values", storage: "Storage" };

/** SECURITY I-68: the refusal names the switch and where the person sets it. */
export function storeOff(s: StoreSwitch): ToolError {
  return toolError(
    "storage_not_allowed",
    `reading ${s === "storage" ? "storage" : "cookies"} is off for this origin: the "${STORE_LABELS[s]}" switch (${s}) is off; nothing was read`,
    `Only the person can turn "${STORE_LABELS[s]}" on for this site, in the Torii options (the site's card under Sites); ask them instead of retrying.`,
    { switch: s },
  );
}

function hasTarget(a: Record<string, unknown>): boolean {
  return typeof a.ref === "string" || typeof a.selector === "string";
}

/**
 * Throws a ToolError when the call must not run. Every decision is taken from the tool's traits
 * (SECURITY I-48): what it touches, reads and can cause, and which switch it needs.
 */
export async function gate(call: GateCall, ctx: GateContext): Promise<void> {
  const { tool, args } = call;
  const tr = tool.traits;
  // The URL argument is parsed before any policy is consulted: one that is not a URL is the
  // agent's mistake (invalid_argument naming the field), never a blocked origin, whatever the tab.
  const rawDest = tr.destination?.(args);
  if (tr.target === "tab-or-new" && args.newTab === true && args.tabId !== undefined) {
    const hint = `Drop tabId to open a new tab, or drop newTab to navigate tab ${String(args.tabId)}.`;
    throw toolError("invalid_argument", "newTab: give tabId to navigate that tab, or newTab: true to open another, not both", hint, { field: "newTab" });
  }
  if (await state.paused()) {
    // SECURITY I-20: pause refuses every call at once.
    throw toolError("paused", `${tool.name} refused: Torii is paused`);
  }
  // SECURITY I-24: the session's own tabs and its grants only; fills in its default tab.
  const { current } = await checkOwnership(call, ctx.owner);
  const env = state.env;
  if (!env) throw toolError("origin_not_allowed", "no policy is loaded in the extension; nothing was sent");
  const policy = await env.policy();
  // SECURITY I-72: a proxy switch changes the whole browser, so it needs the person's own switch
  // whatever tab is in front (it names none).
  if (tr.switch === "proxy" && !(await env.proxySwitchAllowed?.())) {
    throw toolError(
      "proxy_switch_off",
      `${tool.name} refused: the person has not allowed agents to switch the proxy. Only the person can, with "Let agents switch the proxy profile" in the Torii options (Proxy profiles); ask them instead of retrying`,
    );
  }
  if (tr.target === "none") {
    // It judges each tab it lists itself (SECURITY I-14).
    ctx.origin = "";
    return;
  }

  let verdict: Verdict = { allowed: false };
  let tabId: number | undefined;
  let origin = "";
  let newTab = tr.target === "tab-or-new" && args.tabId === undefined;
  // SECURITY I-87: the session's current tab, named by the ownership check, when its page is one the
  // person's list allows; on any other page (a blank tab whose load never started, a redirect's
  // landing off the list) a new tab opens instead, as for a session with no current tab.
  let t = newTab ? undefined : await env.tab(args.tabId as number | undefined);
  if (current && t && !judgeUrl(policy, t.url).allowed) {
    delete args.tabId;
    newTab = true;
    t = undefined;
  }
  if (t) {
    tabId = t.tabId;
    ctx.tabId = tabId;
    if (tr.handoff === "refused" && env.inHandoff(tabId)) {
      // SECURITY I-22: reads and actions are withheld while the person handles the tab.
      throw toolError("handoff_active", `tab ${tabId} is handed to the person; nothing was sent or read`);
    }
    // SECURITY I-77: code run in a page that holds a secret can hand it back in any form no mask
    // recognises (reversed, encrypted), so it does not run there.
    if (hasEffect(tool, "code") && (await env.holdsSecret?.(tabId))) {
      throw toolError("secret_unmaskable", `${tool.name}: tab ${tabId} received one of the person's secrets in this browser run, and what code returns cannot be checked for it; nothing ran`);
    }
    verdict = judgeUrl(policy, t.url);
    if (!verdict.allowed) {
      // A tab that navigate may leave for a new one says how (SECURITY I-87: it is the session's own).
      if (tr.target !== "tab-or-new") notAllowed(`the page in tab ${tabId}`);
      throw toolError("origin_not_allowed", `the page in tab ${tabId} is not on the person's allowlist; nothing was sent or read`, "Call navigate with newTab: true to open another tab, or close_tab to close this one.");
    }
    origin = originOf(t.url);
    ctx.origin = origin;
    // Everything behind an open dialog would hang; only a tool that answers it, or is unaffected, runs.
    if (tr.dialog === "blocked") env.checkNoDialog(tabId);
  }

  // SECURITY I-15: a URL the call opens or requests is judged before it goes.
  let dest: { url: string; origin: string; verdict: Verdict } | undefined;
  // SECURITY I-44: a relative request URL resolves against the document's base URL, which only the
  // page knows: the handler judges it there. An absolute one is judged here already.
  const url = rawDest !== undefined && tr.switch === "fetch" ? absoluteUrl(rawDest) : rawDest;
  if (url !== undefined) {
    const v = judgeUrl(policy, url);
    if (!v.allowed) notAllowed(tr.switch === "fetch" ? "the request's destination" : "the destination");
    dest = { url, origin: originOf(url), verdict: v };
    if (newTab) {
      verdict = v;
      origin = dest.origin;
      ctx.origin = origin;
    }
  }

  // SECURITY I-16, I-17: the switch the tool needs, which only the person sets.
  switch (tr.switch) {
    case "none":
      break;
    case "act":
      if (!actAllowed(policy, verdict) || (hasEffect(tool, "navigation") && dest && !actAllowed(policy, dest.verdict))) {
        throw toolError(
          "act_mode_off",
          `${tool.name} changes the page and act mode is off for this origin. Only the person can turn act mode on, in the Torii popup; ask them instead of retrying`,
        );
      }
      break;
    case "evaluate":
    case "fetch": {
      const kind: EvalKind = tr.switch === "fetch" ? "fetch" : typeof args.program === "string" ? "program" : "expression";
      if (!evalAllowed(verdict, kind)) {
        const sw = kind === "fetch" ? "fetch_in_page" : `evaluate (${kind})`;
        throw toolError("eval_not_allowed", `${sw} is off for this origin; only the person can enable it in the Torii options`);
      }
      break;
    }
    case "observe":
      // SECURITY I-65: what the page logs and fetches is kept only where the person opted in.
      if (!observeAllowed(verdict)) throw observeOff(tool.name);
      break;
    case "cookies":
    case "storage":
      // SECURITY I-68: the top document's switch here; a frame's own is checked where it is read.
      if (!storeAllowed(verdict, tr.switch)) throw storeOff(tr.switch);
      break;
    case "invoke":
      // SECURITY I-71: its own switch; neither act mode nor evaluate's switches grant it.
      if (!invokeAllowed(verdict)) {
        throw toolError(
          "eval_not_allowed",
          `invoke is off for this origin: only the person can turn on "Invoke" for this site in the Torii options (Sites); ask them instead of retrying`,
        );
      }
      break;
    case "proxy":
      // Checked above, before any tab is looked at.
      break;
    default:
      // A switch this gate does not know is refused, never skipped.
      throw toolError("internal", `${tool.name}: unknown switch; refused`);
  }
  // SECURITY I-71: code whose effects cannot be known before it runs (a page function may be eval,
  // fetch or a submit under any name) runs only where evaluate's program form would, and only with
  // act mode, whatever its name, source or binding.
  if (tr.anyEffect) {
    if (!evalAllowed(verdict, "program")) {
      throw toolError(
        "eval_not_allowed",
        `${tool.name} runs page code that can do anything a program can, so it also needs evaluate (program), which is off for this origin; nothing was called`,
        `Only the person can turn on "Eval program" for this site in the Torii options (Sites); ask them instead of retrying.`,
        { switch: "evalProgram" },
      );
    }
    if (!actAllowed(policy, verdict)) {
      throw toolError(
        "act_mode_off",
        `${tool.name} runs page code that can change the page and act mode is off for this origin; nothing was called. Only the person can turn act mode on, in the Torii popup; ask them instead of retrying`,
      );
    }
  }

  // SECURITY I-18: the password decision travels to the handler, which checks the fields.
  if (tr.typing) ctx.allowPassword = passwordAllowed(verdict, args.allowPassword === true);

  // SECURITY I-15: pixels show every frame of the page.
  if (tr.reads === "pixels" && tabId !== undefined && !(await env.allFramesAllowed(tabId, policy))) {
    notAllowed("a frame embedded in this page");
  }

  // SECURITY I-19: risky effects the person chose to be asked about wait for an answer.
  const asks: Ask[] = [];
  if (tabId !== undefined) {
    if (hasEffect(tool, "navigation") && dest && dest.origin !== origin) asks.push({ kind: "new_origin", target: dest.origin });
    // SECURITY I-71: code of unknowable effects is asked about as code and as every effect at once.
    if (hasEffect(tool, "code")) asks.push({ kind: "evaluate", text: describeCode(args), ...(tr.anyEffect ? { also: [...EFFECT_KINDS] } : {}) });
    if (hasEffect(tool, "upload") && hasTarget(args)) {
      const r = await env.risk(tabId, args as { ref?: string; selector?: string }, ctx.signal);
      asks.push({ kind: "upload", element: r?.label ?? String(args.ref ?? args.selector), text: fileNames(args.files) });
    }
    // SECURITY I-37: input is judged by what it will cause, whichever tool sends it.
    if (hasEffect(tool, "click", "keys")) {
      // The page is asked only when its answer can change the outcome: with every effect kind
      // allowed outright on this origin nothing predicted is asked about (the guard still judges
      // each event in its own frame), so the probe's round trip is skipped.
      const facts = EFFECT_KINDS.every((k) => approvalChoice(policy, verdict, k) === "allow")
        ? { origin }
        : await env.inputFacts(tabId, origin, tr.effects, args, ctx.signal);
      asks.push(...predictInput(tr.effects, args, facts, ctx.allowPassword === true));
    }
  }
  const approved: EffectKind[] = [];
  for (const a of asks) {
    if ((await decide(env, policy, verdict, tool, origin, a, ctx)) && isEffectKind(a.kind)) approved.push(a.kind);
  }
  // SECURITY I-38: what was not approved here is stopped by the guard where it happens.
  if (tabId !== undefined && hasEffect(tool, ...INPUT_EFFECTS)) ctx.guard = { approved };
}

/** The refusal names the switch and where the person sets it: the agent cannot. */
function observeOff(tool: string): ToolError {
  return toolError(
    "observe_off",
    `${tool} needs the "Console & network" switch for this origin, which is off; only the person can turn it on, in the Torii options (the site's card under Sites)`,
  );
}

interface Ask {
  kind: ApprovalKind;
  /** The other kinds the same call counts as: one answer for all of them (SECURITY I-71). */
  also?: ApprovalKind[];
  element?: string;
  text?: string;
  target?: string;
}

function isEffectKind(k: ApprovalKind): k is EffectKind {
  return (EFFECT_KINDS as readonly string[]).includes(k);
}

/**
 * One approval: the person's allow / ask / deny choice for this kind on this origin (for an ask
 * with `also`, every kind's: one deny refuses, one ask asks once for all); true when they approved
 * it in the window.
 */
async function decide(env: PolicyEnv, policy: Policy, verdict: Verdict, tool: GateCall["tool"], origin: string, a: Ask, ctx: GateContext): Promise<boolean> {
  const kinds = [a.kind, ...(a.also ?? [])];
  const choices = kinds.map((k) => approvalChoice(policy, verdict, k));
  if (choices.every((c) => c === "allow")) {
    ctx.approval ??= "auto";
    return false;
  }
  const denied = kinds.filter((_, i) => choices[i] === "deny");
  if (denied.length > 0) {
    ctx.approval = "denied";
    if (!a.also) throw toolError("approval_denied", `the person's policy denies this action (${a.kind}) on this origin`);
    // SECURITY I-71: refused before anything runs, naming each choice only the person can change.
    const named = denied.map((k) => `"${APPROVAL_LABELS[k]}" (${k})`).join(", ");
    throw toolError(
      "approval_denied",
      `${tool.name} runs page code that counts as every effect, and the person's policy denies ${named} on this origin; nothing was called`,
      `Only the person can change ${named} for this site in the Torii options (approvals); ask them instead of retrying.`,
      { denied },
    );
  }
  const out = await env.ask(
    {
      kind: a.kind,
      ...(a.also ? { also: a.also } : {}),
      tool: tool.name,
      origin,
      ...(a.target ? { target: a.target } : {}),
      ...(a.element ? { element: a.element } : {}),
      ...(a.text !== undefined ? { text: a.text } : {}),
      ...(ctx.session ? { session: ctx.session } : {}),
      ...(ctx.tabId !== undefined ? { tabId: ctx.tabId } : {}),
    },
    policy.approvalTimeoutMs,
    ctx.signal,
  );
  ctx.approval = out;
  if (out === "denied") throw toolError("approval_denied", `the person denied ${tool.name} (${a.kind})`);
  if (out === "timeout") throw toolError("approval_timeout", `no answer from the person within ${Math.round(policy.approvalTimeoutMs / 1000)} s; nothing was done`);
  if (out === "unanswerable") throw unanswerable(tool.name, kinds.filter((_, i) => choices[i] === "ask"));
  if (out === "cancelled") {
    const why: unknown = ctx.signal.reason;
    throw why instanceof Error && "code" in why ? why : toolError("cancelled", `${tool.name}: cancelled while waiting for approval`);
  }
  return true;
}

/**
 * SECURITY I-80: the person's policy says "ask" and no one can answer here. Refused before anything
 * runs, naming the launch-policy setting that decides it (only the person sets it, at launch).
 */
export function unanswerable(tool: string, kinds: ApprovalKind[]): ToolError {
  const named = kinds.map((k) => `"${APPROVAL_LABELS[k]}" (${k})`).join(", ");
  const flags = kinds.map((k) => `--approve ${k}=allow`).join(" ");
  return toolError(
    "approval_unanswerable",
    `${tool} needs the person's approval of ${named}, and no one can give it: this browser was started headless by torii launch and no Torii popup is open; nothing was done`,
    `The launch policy decides this and only the person sets it: they can start the browser with ${flags} (or deny), or "approvals": {${kinds.map((k) => `"${k}": "allow"`).join(", ")}} in --policy FILE, or start it with a window (without --headless) to be asked. Do not retry as is.`,
    { kinds },
  );
}

/** The file names (not paths, never contents) an upload approval shows. */
export function fileNames(paths: unknown): string {
  const list = Array.isArray(paths) ? paths.map(String) : [];
  return list.map((p) => p.split(/[\\/]/).pop() || p).join(", ");
}

function describeCode(a: Record<string, unknown>): string {
  // invoke: the page function's path and its JSON arguments, as the call would run it.
  if (typeof a.path === "string") a = { expression: `${a.path}(${typeof a.args === "string" ? a.args.trim().replace(/^\[([\s\S]*)\]$/, "$1") : ""})` };
  const code = typeof a.program === "string" ? a.program : typeof a.expression === "string" ? a.expression : typeof a.url === "string" ? `${String(a.method ?? "GET")} ${a.url}` : "";
  return code.length > 600 ? `${code.slice(0, 600)}…` : code;
}

function absoluteUrl(url: string): string | undefined {
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

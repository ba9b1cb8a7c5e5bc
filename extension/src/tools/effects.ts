// The worker's side of input gating: arming the effect guard (guard.js, a content script in every
// frame) around each input action, the frame under a mouse point and the focused frame checked
// before sending, the password guard's checks, and the page facts the gate predicts effects from.
// The guard blocks at the moment of each event; this file makes a call fail with the right code
// when it did (SECURITY I-18, I-36…I-39).

import { EFFECT_KINDS, type ArmSpec, type Block, type EffectKind } from "../guard/decide.js";
import type { ArmReply, FocusFacts, GuardApi, Hit } from "../guard/index.js";
import type { TargetRisk } from "../page/risk.js";
import { dialogOf, waitDialog } from "../cdp/debugger.js";
import { withDeadline } from "../cdp/deadline.js";
import { documentAllowsPassword, type Policy } from "../policy/policy.js";
import { engine, NotRidden, resolveTarget, type EngineOpts, type EngineReply, type Ridden, type Target } from "./browser.js";
import type { Effect } from "./traits.js";
import { toolError, type ToolError } from "./errors.js";
import type { ElementFacts, InputFacts } from "./predict.js";
import { tabHoldsSecret } from "./secret-net.js";

const GUARD_FILE = "guard.js";
const PROBE_MS = 5_000;

// ---------- arming ----------

interface Armed {
  spec: ArmSpec;
  /**
   * "armed": every frame was armed (one executeScript). "lazy": not yet; the call's one engine
   * action may arm the top document itself (actEngine), when the tab has no other frame.
   * "riding": that action is running; "ridden": it ran and its document disarmed itself.
   */
  state: "armed" | "lazy" | "riding" | "ridden";
  /** Documents that started meanwhile and were told to arm (installGuardLink). */
  hellos: number;
  /** What the ridden action's document reported. */
  ridden?: Ridden;
  /** What each frame answered when armed (frameId → reply). */
  replies: Map<number, ArmReply>;
  /** Frame ids by path (ArmReply.path), to name the frame a parent sees under a point or focused. */
  byPath: Map<string, number>;
  /** The top frame's document when armed (a click that navigated is not judged afterwards). */
  topDoc?: string;
  /** A frame reported a block: the rest of the input is not sent. */
  blocked?: Block;
}

const armed = new Map<number, Armed>();

type Shim = { missing: true } | ArmReply;

// These run in the page (ISOLATED world, the guard's world); they must be self-contained.
function armFrame(spec: ArmSpec): Shim {
  const gd = (globalThis as { __toriiGuard?: GuardApi }).__toriiGuard;
  return gd ? gd.arm(spec) : { missing: true };
}
function disarmFrame(token: string): { blocks: Block[]; left?: boolean; stops?: number } | null {
  const gd = (globalThis as { __toriiGuard?: GuardApi }).__toriiGuard;
  if (!gd) return null;
  // `left` only from the top frame that was armed with this token; anything else is "cannot tell".
  const left = gd.left?.(token);
  const stops = gd.secretStops?.(token) ?? 0;
  return { blocks: gd.disarm(token), ...(left !== undefined ? { left } : {}), ...(stops ? { stops } : {}) };
}
function hitFrame(x: number, y: number): Hit | null {
  const gd = (globalThis as { __toriiGuard?: GuardApi }).__toriiGuard;
  return gd ? gd.hit(x, y) : null;
}
function focusFrame(): FocusFacts | null {
  const gd = (globalThis as { __toriiGuard?: GuardApi }).__toriiGuard;
  return gd ? gd.focus() : null;
}

function newToken(): string {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** Injects the guard into frames that loaded before the extension did (a late guard: SECURITY I-36). */
async function injectGuard(tabId: number, frameIds: number[]): Promise<void> {
  if (!frameIds.length) return;
  await chrome.scripting.executeScript({ target: { tabId, frameIds }, world: "ISOLATED", files: [GUARD_FILE] }).catch(() => undefined);
}

type ArmOpts = { policy: Policy; approved: readonly EffectKind[]; allowPassword: boolean; expires: number };

/** The tab's arming for one call, known to the worker before any frame is armed. */
function prepare(tabId: number, o: ArmOpts): Armed {
  const spec: ArmSpec = { token: newToken(), expires: o.expires, policy: o.policy, approved: [...o.approved], allowPassword: o.allowPassword };
  const a: Armed = { spec, state: "lazy", hellos: 0, replies: new Map(), byPath: new Map() };
  // Set before any frame is armed: a document that starts meanwhile asks and is told it is armed.
  armed.set(tabId, a);
  return a;
}

/**
 * SECURITY I-36: arms every frame of the tab for one call (one executeScript). Each frame judges
 * its own real origin against the policy; the tab stays armed until disarm or `expires`.
 */
async function armAll(tabId: number, a: Armed): Promise<void> {
  a.state = "armed";
  const run = (target: chrome.scripting.InjectionTarget) =>
    withDeadline(chrome.scripting.executeScript({ target, world: "ISOLATED", func: armFrame, args: [a.spec] }), PROBE_MS, "arming the input guard");
  const res = await run({ tabId, allFrames: true });
  const missing: number[] = [];
  for (const r of res) {
    const v = r.result as Shim | null | undefined;
    if (v && !("missing" in v)) record(a, r.frameId, v);
    else missing.push(r.frameId);
    if (r.frameId === 0 && r.documentId) a.topDoc = r.documentId;
  }
  if (missing.length) {
    await injectGuard(tabId, missing);
    for (const r of await run({ tabId, frameIds: missing }).catch(() => [])) {
      const v = r.result as Shim | null | undefined;
      if (v && !("missing" in v)) record(a, r.frameId, v);
    }
  }
}

/** Arms every frame now unless that is done (before input that is not one ridden engine action). */
export async function ensureArmed(tabId: number): Promise<void> {
  const a = armed.get(tabId);
  if (a && a.state !== "armed") await armAll(tabId, a);
}

/** The tab's frame tree has the top frame alone. */
async function alone(tabId: number): Promise<boolean> {
  const frames = await withDeadline(chrome.webNavigation.getAllFrames({ tabId }), PROBE_MS, "getAllFrames").catch(() => null);
  return frames?.length === 1 && frames[0]?.frameId === 0;
}

/**
 * An input action that is one engine call. SECURITY I-36: in a tab whose top document is its only
 * frame (the browser's frame tree says so, and the document finds no frame in its own tree), the
 * guard is armed, the action run and the guard disarmed in that one injection, and a document that
 * starts meanwhile is armed on its hello; anywhere else every frame is armed first, as for any input.
 */
export async function actEngine<T>(tabId: number, method: string, args: Record<string, unknown>, o: EngineOpts): Promise<EngineReply<T>> {
  const a = armed.get(tabId);
  if (a?.state === "lazy" && (o.frameId ?? 0) === 0 && (await alone(tabId))) {
    a.state = "riding";
    try {
      const r = await engine<T>(tabId, method, args, { ...o, arm: a.spec });
      a.ridden = r.ridden;
      a.state = r.ridden ? "ridden" : "armed";
      return r;
    } catch (e) {
      if (!(e instanceof NotRidden)) throw e;
      a.state = "lazy";
    }
  }
  await ensureArmed(tabId);
  return engine<T>(tabId, method, args, o);
}

function record(a: Armed, frameId: number, v: ArmReply): void {
  a.replies.set(frameId, v);
  if (v.path) a.byPath.set(v.path.join("."), frameId);
}

/** The reply of the frame at `path`, when one answered the arming. */
function replyAt(a: Armed, path: number[] | null | undefined): { frameId: number; reply: ArmReply } | undefined {
  const id = path ? a.byPath.get(path.join(".")) : undefined;
  const reply = id !== undefined ? a.replies.get(id) : undefined;
  return id !== undefined && reply ? { frameId: id, reply } : undefined;
}

/**
 * Disarms the tab; throws the error of the first thing a frame blocked (codes only, no page content).
 * Resolves to what the armed top document says of leaving: "stayed" (it answered, is the one
 * armed, and no navigation began), "left" (one began), "unknown" otherwise. A ridden action's
 * document has disarmed itself: the frames are asked only when another one was armed meanwhile.
 */
async function disarm(tabId: number): Promise<Leaving> {
  const a = armed.get(tabId);
  if (!a) return "unknown";
  armed.delete(tabId);
  const blocks: Block[] = [...(a.ridden?.blocks ?? [])];
  let leaving: Leaving = a.ridden?.left === undefined ? "unknown" : a.ridden.left ? "left" : "stayed";
  // A document armed on its hello (a frame the action inserted, say) is disarmed with the rest. A
  // tab that holds a secret is always asked: its guard may have stopped a departure of the secret
  // that the action set off in a later task (a form.submit(), a re-pointed form's navigation).
  if (a.state === "armed" || a.state === "riding" || a.hellos > 0 || tabHoldsSecret(tabId)) {
    // Scripts do not run behind an open dialog: then the frames disarm themselves at expiry.
    const dlg = waitDialog(tabId);
    const res = dialogOf(tabId)
      ? []
      : await withDeadline(
          Promise.race([
            chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: "ISOLATED", func: disarmFrame, args: [a.spec.token] }),
            dlg.promise.then(() => []),
          ]),
          PROBE_MS,
          "disarming the input guard",
        )
          .catch(() => [])
          .finally(() => dlg.cancel());
    for (const r of res) {
      const v = r.result as { blocks?: Block[]; left?: boolean; stops?: number } | null | undefined;
      blocks.push(...(v?.blocks ?? []));
      // SECURITY I-76: a secret's departure stopped since this call armed the tab fails the call.
      if (typeof v?.stops === "number" && v.stops > 0) blocks.push({ code: "secret_origin_mismatch" });
      if (a.state === "armed" && r.frameId === 0 && typeof v?.left === "boolean" && a.topDoc !== undefined && r.documentId === a.topDoc) leaving = v.left ? "left" : "stayed";
    }
  }
  const err = blockError(blocks);
  if (err) throw err;
  // A frame that told us it blocked but is gone now (navigated, removed) still fails the call.
  if (a.blocked) throw blockError([a.blocked]) as ToolError;
  return leaving;
}

/** Whether the tab's top document began leaving during an armed action. */
export type Leaving = "stayed" | "left" | "unknown";

/** A frame's report, read defensively: an unknown code still stops the input. */
function blockOf(code: unknown, kind: unknown): Block {
  const c = ORDER.includes(code as Block["code"]) ? (code as Block["code"]) : "navigation_failed";
  return EFFECT_KINDS.includes(kind as EffectKind) ? { code: c, kind: kind as EffectKind } : { code: c };
}

const ORDER: Block["code"][] = ["origin_not_allowed", "secret_origin_mismatch", "password_field", "approval_denied", "navigation_failed"];

/** The error a call fails with when the guard blocked something (the most serious block wins). */
export function blockError(blocks: Block[]): ToolError | undefined {
  const b = [...blocks].sort((x, y) => ORDER.indexOf(x.code) - ORDER.indexOf(y.code))[0];
  if (!b) return undefined;
  switch (b.code) {
    case "origin_not_allowed":
      return toolError("origin_not_allowed", "the input would have reached a frame that is not on the person's allowlist; it was not delivered");
    case "secret_origin_mismatch":
      // SECURITY I-76: no destination is named (it may be off the allowlist).
      return toolError(
        "secret_origin_mismatch",
        "the page would have sent a document that holds a secret to an origin the secret is not bound to (a form submission or navigation); it was stopped and nothing was sent",
        "A secret goes only to its own origins. If the person wants this site to receive it, only they can add that origin to the secret (Torii options); otherwise submit to the secret's own origin, or navigate elsewhere with navigate.",
      );
    case "password_field":
      return toolError("password_field", "refused: a key arrived while a password field had focus and passwords are not allowed for this call; that key and the rest were not delivered");
    case "approval_denied": {
      const what = b.kind === "submit" ? "a form submission" : b.kind === "destructive_click" ? "a click the page marks destructive" : "a navigation to another origin";
      const done = b.kind === "submit" ? "nothing was submitted" : b.kind === "new_origin" ? "the page did not leave" : "the click was not delivered";
      return toolError("approval_denied", `the input would have caused ${what}, which needs the person's approval for this call; ${done}`);
    }
    default:
      return toolError("navigation_failed", "a frame loaded while the input was sent; the input it got before its check was not delivered");
  }
}

/** Thrown between keys once a frame has blocked input; the disarm then reports the real code. */
class GuardStop extends Error {
  override name = "GuardStop";
}

/**
 * The token the tab is armed with for the running call: the page engine hands it to its document's
 * guard with a secret's submit grant (SECURITY I-69), so the grant is that call's alone.
 */
export function armedToken(tabId: number): string | undefined {
  return armed.get(tabId)?.spec.token;
}

/** Throws when a frame has blocked input during this call: the rest is not sent. */
export function checkNotBlocked(tabId: number): void {
  if (armed.get(tabId)?.blocked) throw new GuardStop("the input guard stopped this input");
}

/**
 * Runs one input action with the tab armed (one executeScript to arm, one to disarm). A block
 * recorded by any frame fails the call with its code, whatever the action itself returned.
 * `leaving`: whether the top document began a navigation meanwhile, as it reported itself.
 * `oneCall`: the action's input is one engine call made with actEngine, which may arm the tab in
 * that call's own injection; any other input arms every frame first (ensureArmed).
 */
export async function guardInput<T>(tabId: number, o: ArmOpts & { oneCall?: boolean }, fn: () => Promise<T>): Promise<{ out: T; leaving: Leaving }> {
  const a = prepare(tabId, o);
  if (!o.oneCall) {
    try {
      await armAll(tabId, a);
    } catch (e) {
      armed.delete(tabId);
      throw e;
    }
  }
  let out: T;
  try {
    out = await fn();
  } catch (e) {
    await disarm(tabId);
    throw e;
  }
  return { out, leaving: await disarm(tabId) };
}

/**
 * SECURITY I-36: before mouse events go out, the frame under the point must be on the list (a
 * frame inserted afterwards is the guard's). Same-origin frames are crossed in one step; each
 * cross-origin frame is asked in turn. `after`: checked again once the click is done, since a frame
 * moved there mid-press gets nothing (the press is captured by the first frame) but the click did
 * not land where it was aimed.
 */
export async function checkPoint(tabId: number, x: number, y: number, after = false): Promise<void> {
  const a = armed.get(tabId);
  if (!a) return;
  if (after) return checkPointAfter(tabId, a, x, y);
  if (a.state !== "armed") await armAll(tabId, a);
  let frameId = 0;
  for (let hops = 0; hops < 8; hops++) {
    const [r] = await withDeadline(
      chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, world: "ISOLATED", func: hitFrame, args: [x, y] }),
      PROBE_MS,
      "frame under the point",
    );
    const h = r?.result as Hit | null | undefined;
    if (!h) break;
    if (h.here) return;
    // A frame that did not answer the arming (inserted since, or one we cannot place) is judged off the list.
    const at = replyAt(a, h.path);
    if (!at?.reply.allowed) throw toolError("origin_not_allowed", "the point is inside a frame that is not on the person's allowlist; nothing was sent");
    frameId = at.frameId;
    x = h.x;
    y = h.y;
  }
  throw toolError("origin_not_allowed", "cannot tell which frame is under the point; nothing was sent");
}

/**
 * The same question once the click is done, answered only when it can be: the top document is
 * still the one armed (no navigation), no dialog is open, and the frame there is one the arming
 * judged off the list.
 */
async function checkPointAfter(tabId: number, a: Armed, x: number, y: number): Promise<void> {
  if (dialogOf(tabId)) return;
  const dlg = waitDialog(tabId);
  try {
    const res = await withDeadline(
      Promise.race([
        chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, world: "ISOLATED", func: hitFrame, args: [x, y] }),
        dlg.promise.then(() => []),
      ]),
      PROBE_MS,
      "frame under the point",
    ).catch(() => []);
    const r = res[0];
    const h = r?.result as Hit | null | undefined;
    if (!h || h.here || r?.documentId !== a.topDoc) return;
    if (replyAt(a, h.path)?.reply.allowed === false) {
      throw toolError("origin_not_allowed", "a frame that is not on the person's allowlist was put under the point during the click; it received nothing, and the click did not land where it was aimed");
    }
  } finally {
    dlg.cancel();
  }
}

/** SECURITY I-36: keys go to the focused frame; it must be on the list (from the replies when armed). */
export function checkFocusFrame(tabId: number): void {
  const a = armed.get(tabId);
  if (!a) return;
  if (a.state !== "armed") throw toolError("internal", "the input guard is not armed in every frame; nothing was sent");
  let rep = a.replies.get(0);
  for (let hops = 0; hops < 16; hops++) {
    if (!rep || !rep.allowed) throw toolError("origin_not_allowed", "the focus is in a frame that is not on the person's allowlist; nothing was sent");
    if (!rep.focusPath) return;
    rep = replyAt(a, rep.focusPath)?.reply;
  }
}

/** The worker's half of the guard link: a starting document asks whether its tab is armed; a blocking frame says so. */
export function installGuardLink(): void {
  chrome.runtime.onMessage.addListener((msg: unknown, sender, sendResponse: (r: unknown) => void) => {
    const m = msg as { type?: unknown; token?: unknown; code?: unknown; kind?: unknown } | null;
    if (!m || (m.type !== "torii.guard.hello" && m.type !== "torii.guard.blocked")) return false;
    const tabId = sender.tab?.id;
    if (sender.id !== chrome.runtime.id || tabId === undefined) return false;
    const a = armed.get(tabId);
    if (m.type === "torii.guard.hello") {
      const live = a !== undefined && Date.now() < a.spec.expires;
      if (live) a.hellos++;
      sendResponse(live ? { arm: a.spec } : {});
      return false;
    }
    if (a && m.token === a.spec.token && !a.blocked) a.blocked = blockOf(m.code, m.kind);
    return false;
  });
}

// ---------- page facts (password guard, prediction) ----------

/** The focused frame's facts, following the focus from the top frame into cross-origin frames. */
async function probeFocus(tabId: number): Promise<FocusFacts | undefined> {
  const res = await withDeadline(
    chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: "ISOLATED", func: focusFrame }),
    PROBE_MS,
    "focus probe",
  ).catch(() => null);
  if (!res) return undefined;
  const all: FocusFacts[] = [];
  const missing: number[] = [];
  for (const r of res) {
    const v = r.result as FocusFacts | null | undefined;
    if (v) all.push(v);
    else missing.push(r.frameId);
  }
  if (missing.length) {
    await injectGuard(tabId, missing);
    const again = await chrome.scripting.executeScript({ target: { tabId, frameIds: missing }, world: "ISOLATED", func: focusFrame }).catch(() => []);
    for (const r of again) if (r.result) all.push(r.result as FocusFacts);
  }
  const by = new Map(all.filter((f) => f.path).map((f) => [(f.path as number[]).join("."), f]));
  // From the top frame, down the frames that hold the focus.
  let f = by.get("");
  for (let hops = 0; f && hops < 16; hops++) {
    if (f.here || !f.framePath) return f;
    f = by.get(f.framePath.join("."));
  }
  return undefined;
}

/** The engine's `risk` of a target and the document that answered (undefined when nothing matches). */
async function riskIn(tabId: number, t: Target, signal: AbortSignal): Promise<{ risk: TargetRisk; docId: string; origin: string; url: string } | undefined> {
  const r = await resolveTarget(tabId, t);
  try {
    const e = await engine<TargetRisk>(tabId, "risk", r.args, { signal, deadline: Date.now() + 10_000, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
    return { risk: e.value, docId: e.docId, origin: e.origin, url: e.url };
  } catch (err) {
    if (err instanceof Error && "code" in err && (err as { code: string }).code === "not_found") return undefined;
    throw err;
  }
}

/** The engine's `risk` of a target (undefined when nothing matches). */
export async function riskOf(tabId: number, t: Target, signal: AbortSignal): Promise<TargetRisk | undefined> {
  return (await riskIn(tabId, t, signal))?.risk;
}

function passwordError() {
  return toolError("password_field", "refused: the field is a password field and passwords are not allowed for this call; nothing was typed");
}

/**
 * SECURITY I-18: refuses before typing when the target (resolved through refs, shadow roots and
 * frames) or the element that has focus (through open and closed shadow roots, in every frame) is
 * a password field, unless the gate allowed passwords (the call's flag and the tab's switch) and
 * the document that holds the field allows them too, judged by the origin it reports itself: a
 * frame of another origin follows its own switch, never the tab's (a value set through the native
 * setter lands before the effect guard sees an event). Resolves to the document the target was
 * checked in, so the action goes to that one and no other (stale_ref otherwise).
 */
export async function guardPassword(
  tabId: number,
  t: Target,
  allow: boolean | undefined,
  o: { signal: AbortSignal; checkFocus: boolean; policy: () => Promise<Policy>; secret?: boolean },
): Promise<string | undefined> {
  // SECURITY I-69: a value that is one secret reference may go into a password field: the secret's
  // origins, checked in the document that holds the field, stand in for the switch.
  const ok = async (doc: { origin?: unknown; url?: unknown }) => o.secret === true || (allow === true && documentAllowsPassword(await o.policy(), doc, true));
  let docId: string | undefined;
  if (t.ref !== undefined || t.selector !== undefined) {
    const r = await riskIn(tabId, t, o.signal);
    // Still fail closed, but with the code the agent can act on: nothing matched, nothing was typed.
    if (!r) throw toolError("not_found", `${t.ref ?? t.selector} matches nothing; nothing was typed`);
    if (r.risk.isPassword && !(await ok(r))) throw passwordError();
    docId = r.docId;
  }
  if (o.checkFocus) {
    const f = await probeFocus(tabId);
    // Cannot tell: fail closed.
    if (!f || (f.password && !(await ok(f)))) throw passwordError();
  }
  return docId;
}

function factsOfRisk(r: TargetRisk): ElementFacts {
  return { label: r.label, click: { submit: r.submit, destructive: r.destructive, ...(r.href ? { href: r.href } : {}) }, enter: r.enter, space: r.space };
}

/**
 * SECURITY I-37: where an input call lands, from the page now: its target's risk when it clicks
 * one, else the focused element (through closed shadow roots and frames). The gate predicts the
 * effects from these facts and puts each through the person's choice.
 */
export async function inputFacts(tabId: number, origin: string, effects: readonly Effect[], args: Record<string, unknown>, signal: AbortSignal): Promise<InputFacts> {
  const facts: InputFacts = { origin };
  const clicks = effects.includes("click") && (typeof args.ref === "string" || typeof args.selector === "string");
  if (clicks) {
    const r = await riskOf(tabId, args as Target, signal);
    if (r) facts.target = factsOfRisk(r);
  } else if (effects.includes("keys")) {
    const f = await probeFocus(tabId);
    if (f) facts.focus = { label: f.label, click: { submit: false, destructive: false }, enter: f.enter, space: f.space };
  }
  return facts;
}

// The service worker's side of the person's policy: the stored policy (chrome.storage.local, key
// "policy"), the frame and landing-origin checks every page read and action passes, pending
// approvals and their window, the audit ring, handoffs, and the messages the extension's own pages
// (popup, options, approval window) and the handoff banner send. Agents and the daemon have no
// path to change any of it: none of these messages is reachable from the link (SECURITY I-14).

import { ApprovalQueue, type ApprovalRequest } from "../policy/approvals.js";
import { AuditRing, type AuditEntry } from "../policy/audit.js";
import { originOf } from "../policy/pattern.js";
import { judgeUrl, normalizePolicy, defaultPolicy, permissivePolicy, type Policy } from "../policy/policy.js";
import { withDeadline } from "../cdp/deadline.js";
import { checkNoDialog, engine, resolveTab, resolveTarget, setFrameCheck } from "./browser.js";
import { toolError } from "./errors.js";
import { notAllowed, type PolicyEnv, type TargetRisk } from "./gate.js";

export const POLICY_KEY = "policy";
const AUDIT_KEY = "audit";

// ---------- the stored policy ----------

let cached: Policy | undefined;
let loading: Promise<Policy> | undefined;

export async function getPolicy(): Promise<Policy> {
  if (cached) return cached;
  loading ??= chrome.storage.local.get(POLICY_KEY).then((r) => {
    cached = normalizePolicy(r[POLICY_KEY]);
    loading = undefined;
    return cached;
  });
  return loading;
}

export async function savePolicy(p: unknown): Promise<Policy> {
  const clean = normalizePolicy(p);
  await chrome.storage.local.set({ [POLICY_KEY]: clean });
  cached = clean;
  return clean;
}

// ---------- effective URLs of tabs and frames ----------

const INHERITS = /^about:(blank|srcdoc)([?#].*)?$/i;

/**
 * SECURITY I-15: the URL whose origin a document really has. about:blank and about:srcdoc inherit
 * their creator's origin: a subframe's parent, a top-level document's opener tab. With no opener to
 * inherit from, the document stays opaque (never allowed by a rule).
 */
async function effectiveFrameUrl(tabId: number, frameId: number, hops = 0): Promise<string> {
  const f = await withDeadline(chrome.webNavigation.getFrame({ tabId, frameId }), 5_000, "getFrame").catch(() => null);
  if (!f) {
    if (frameId === 0) return effectiveTabUrl(tabId, hops);
    throw toolError("navigation_failed", `frame ${frameId} of tab ${tabId} is gone`);
  }
  const url = f.url ?? "";
  if ((url === "" || INHERITS.test(url)) && hops < 8) {
    if (f.parentFrameId >= 0) return effectiveFrameUrl(tabId, f.parentFrameId, hops + 1);
    return openerUrl(tabId, url, hops);
  }
  return url;
}

async function openerUrl(tabId: number, url: string, hops: number): Promise<string> {
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (t?.openerTabId !== undefined) {
    try {
      return await effectiveFrameUrl(t.openerTabId, 0, hops + 1);
    } catch {
      return "opaque:opener-gone";
    }
  }
  return url || "about:blank";
}

async function effectiveTabUrl(tabId: number, hops = 0): Promise<string> {
  const t = await resolveTab(tabId);
  const url = t.url || t.pendingUrl || "";
  if ((url === "" || INHERITS.test(url)) && hops < 8) return openerUrl(tabId, url, hops);
  return url;
}

/** The frame's document is on the allowlist; refuses with origin_not_allowed (no host named) otherwise. */
export async function assertFrameAllowed(tabId: number, frameId: number): Promise<void> {
  const p = await getPolicy();
  const url = await effectiveFrameUrl(tabId, frameId);
  if (!judgeUrl(p, url).allowed) notAllowed(frameId === 0 ? `the page in tab ${tabId}` : "this frame's origin");
}

/**
 * SECURITY I-15: after an action, the page it left the tab on (redirects included) must still be
 * on the list; otherwise the call fails with origin_not_allowed and nothing of the page is read.
 */
export async function assertLanding(tabId: number): Promise<void> {
  const p = await getPolicy();
  const url = await effectiveTabUrl(tabId);
  if (!judgeUrl(p, url).allowed) {
    throw toolError("origin_not_allowed", "the action left the tab on an origin that is not on the person's allowlist; nothing was read from it");
  }
}

/** A URL the tool is about to open (history entries) must be on the list. */
export async function assertUrlAllowed(url: string, what: string): Promise<void> {
  if (!judgeUrl(await getPolicy(), url).allowed) notAllowed(what);
}

/** Whether a tab's page is shown to agents (tabs redacts the others). */
export async function tabVisible(tabId: number): Promise<boolean> {
  try {
    return judgeUrl(await getPolicy(), await effectiveTabUrl(tabId)).allowed;
  } catch {
    return false;
  }
}

async function allFramesAllowed(tabId: number, p: Policy): Promise<boolean> {
  const frames = (await withDeadline(chrome.webNavigation.getAllFrames({ tabId }), 5_000, "getAllFrames").catch(() => null)) ?? [];
  for (const f of frames) {
    const url = f.url === "" || INHERITS.test(f.url) ? await effectiveFrameUrl(tabId, f.frameId).catch(() => "") : f.url;
    if (!judgeUrl(p, url).allowed) return false;
  }
  return true;
}

// ---------- page probes (password guard, approvals) ----------

// Runs in every frame (ISOLATED world); must be self-contained. The deepest focused element
// through open shadow roots; same-origin and cross-origin frames answer for themselves.
function focusProbe(): { hasFocus: boolean; password: boolean; inForm: boolean } {
  let el: Element | null = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  const inp = el as HTMLInputElement | null;
  const password = !!inp && inp.localName === "input" && String(inp.type).toLowerCase() === "password";
  let inForm = false;
  if (inp && "form" in inp && (inp as HTMLInputElement).form) inForm = true;
  else if (el?.closest?.("form")) inForm = true;
  return { hasFocus: document.hasFocus(), password, inForm };
}

async function probeFocus(tabId: number): Promise<{ password: boolean; inForm: boolean }> {
  const results = await withDeadline(
    chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: "ISOLATED", func: focusProbe }),
    5_000,
    "focus probe",
  ).catch(() => null);
  if (!results) return { password: true, inForm: true }; // cannot tell: fail closed
  const all = results.map((r) => r.result).filter((x): x is { hasFocus: boolean; password: boolean; inForm: boolean } => !!x);
  const focused = all.filter((x) => x.hasFocus);
  const pool = focused.length ? focused : all;
  return { password: pool.some((x) => x.password), inForm: pool.some((x) => x.inForm) };
}

/**
 * SECURITY I-18: refuses when the target (resolved through refs, shadow roots and frames) or the
 * element that actually has focus is a password field, unless the gate allowed passwords.
 */
export async function guardPassword(
  tabId: number,
  t: { ref?: string; selector?: string },
  allow: boolean | undefined,
  o: { signal: AbortSignal; deadline: number; checkFocus: boolean },
): Promise<void> {
  if (allow) return;
  if (t.ref !== undefined || t.selector !== undefined) {
    const r = await riskOf(tabId, t, o.signal);
    // Still fail closed, but with the code the agent can act on: nothing matched, nothing was typed.
    if (!r) throw toolError("not_found", `${t.ref ?? t.selector} matches nothing; nothing was typed`);
    if (r.isPassword) throw passwordError();
  }
  if (o.checkFocus && (await probeFocus(tabId)).password) throw passwordError();
}

function passwordError() {
  return toolError("password_field", "refused: the field is a password field and passwords are not allowed for this call; nothing was typed");
}

async function riskOf(tabId: number, t: { ref?: string; selector?: string }, signal: AbortSignal): Promise<TargetRisk | undefined> {
  const r = await resolveTarget(tabId, t);
  try {
    const e = await engine<TargetRisk>(tabId, "risk", r.args, { signal, deadline: Date.now() + 10_000, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
    return e.value;
  } catch (err) {
    if (err instanceof Error && "code" in err && (err as { code: string }).code === "not_found") return undefined;
    throw err;
  }
}

// ---------- approvals ----------

export const approvals = new ApprovalQueue({
  show: (req) => void openApprovalWindow(req),
  changed: () => broadcast(),
});

const approvalWindows = new Map<string, number>();

async function openApprovalWindow(req: ApprovalRequest): Promise<void> {
  try {
    const w = await chrome.windows.create({
      url: chrome.runtime.getURL(`approval.html#id=${encodeURIComponent(req.id)}`),
      type: "popup",
      width: 440,
      height: 460,
      focused: true,
    });
    if (w?.id !== undefined) approvalWindows.set(req.id, w.id);
  } catch (e) {
    console.warn("torii: cannot open the approval window", e);
  }
}

function closeApprovalWindows(): void {
  for (const [id, wid] of approvalWindows) {
    if (approvals.get(id)) continue;
    approvalWindows.delete(id);
    void chrome.windows.remove(wid).catch(() => undefined);
  }
}

function broadcast(): void {
  closeApprovalWindows();
  chrome.runtime.sendMessage({ type: "torii.policy.changed" }).catch(() => undefined);
}

// ---------- handoff ----------

export interface Handoff {
  id: string;
  tabId: number;
  reason: string;
  message: string;
  /** Secret shared with the banner (isolated world); the page cannot read it. */
  nonce: string;
  done(outcome: "done" | "cancelled"): void;
}
const handoffs = new Map<number, Handoff>();

export function inHandoff(tabId: number): boolean {
  return handoffs.has(tabId);
}

export function startHandoff(h: Handoff): void {
  handoffs.set(h.tabId, h);
  broadcast();
}

export function endHandoff(tabId: number): void {
  handoffs.delete(tabId);
  broadcast();
}

export function handoffOf(tabId: number): Handoff | undefined {
  return handoffs.get(tabId);
}

export function listHandoffs(): { tabId: number; reason: string; message: string }[] {
  return [...handoffs.values()].map((h) => ({ tabId: h.tabId, reason: h.reason, message: h.message }));
}

// ---------- audit ----------

export const audit = new AuditRing({
  load: async () => (await chrome.storage.local.get(AUDIT_KEY))[AUDIT_KEY],
  save: (entries) => chrome.storage.local.set({ [AUDIT_KEY]: entries }),
});

export function recordAudit(e: AuditEntry): void {
  void audit.record(e).catch(() => undefined);
}

// ---------- the gate's environment ----------

export const policyEnv: PolicyEnv = {
  policy: getPolicy,
  async tab(tabId) {
    const t = await resolveTab(tabId);
    const id = t.id as number;
    return { tabId: id, url: await effectiveTabUrl(id) };
  },
  inHandoff,
  checkNoDialog,
  allFramesAllowed,
  risk: riskOf,
  async focusInForm(tabId) {
    return (await probeFocus(tabId)).inForm;
  },
  ask: (req, ms, signal) => approvals.ask(req, ms, signal),
};

// ---------- messages from the extension's own pages ----------

export type PolicyRequest =
  | { type: "torii.policy.get" }
  | { type: "torii.policy.set"; policy: unknown }
  | { type: "torii.approval.list" }
  | { type: "torii.approval.decide"; id: string; approve: boolean }
  | { type: "torii.audit.list"; limit?: number }
  | { type: "torii.audit.clear" }
  | { type: "torii.handoff.list" };

async function handlePage(m: PolicyRequest): Promise<unknown> {
  switch (m.type) {
    case "torii.policy.get":
      return { policy: await getPolicy() };
    case "torii.policy.set": {
      const p = await savePolicy(m.policy);
      broadcast();
      return { policy: p };
    }
    case "torii.approval.list":
      return { approvals: approvals.list() };
    case "torii.approval.decide":
      return { ok: approvals.decide(String(m.id), m.approve === true) };
    case "torii.audit.list":
      return { entries: await audit.list(typeof m.limit === "number" ? m.limit : undefined) };
    case "torii.audit.clear":
      await audit.clear();
      return { ok: true };
    case "torii.handoff.list":
      return { handoffs: listHandoffs() };
  }
}

/** The managed-launch connect page asks for a permissive policy (only with a valid one-time secret). */
export async function applyLaunchPolicy(kind: string): Promise<void> {
  if (kind === "permissive") {
    const cur = await getPolicy();
    await savePolicy({ ...permissivePolicy(), rules: cur.rules });
    broadcast();
  }
}

let installed = false;

export function installSafety(): void {
  if (installed) return;
  installed = true;
  setFrameCheck(assertFrameAllowed);
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && changes[POLICY_KEY]) cached = normalizePolicy(changes[POLICY_KEY].newValue);
  });
  chrome.tabs.onRemoved.addListener((tabId) => {
    const h = handoffs.get(tabId);
    if (h) h.done("cancelled");
  });
  chrome.runtime.onMessage.addListener((msg: unknown, sender, sendResponse: (r: unknown) => void) => {
    if (!msg || typeof msg !== "object") return false;
    const m = msg as { type?: unknown };
    if (typeof m.type !== "string") return false;
    if (m.type === "torii.handoff.finish") {
      // From the banner (a content script in the handed tab's top frame), with the handoff's nonce.
      const f = msg as { id?: unknown; nonce?: unknown; outcome?: unknown };
      const tabId = sender.tab?.id;
      const h = tabId !== undefined ? handoffs.get(tabId) : undefined;
      if (sender.id === chrome.runtime.id && h && sender.frameId === 0 && f.id === h.id && f.nonce === h.nonce) {
        h.done(f.outcome === "done" ? "done" : "cancelled");
        sendResponse({ ok: true });
      }
      return false;
    }
    if (!m.type.startsWith("torii.policy.") && !m.type.startsWith("torii.approval.") && !m.type.startsWith("torii.audit.") && m.type !== "torii.handoff.list") {
      return false;
    }
    // SECURITY I-14: only the extension's own pages (options, popup, approval window) reach here;
    // content scripts, web pages and other extensions are ignored.
    if (sender.id !== chrome.runtime.id || !sender.url?.startsWith(self.location.origin + "/")) {
      return false;
    }
    handlePage(msg as PolicyRequest).then(
      (r) => sendResponse({ ok: true, ...(r as object) }),
      (e: unknown) => sendResponse({ ok: false, error: e instanceof Error ? e.message : String(e) }),
    );
    return true;
  });
}

export { defaultPolicy, originOf };

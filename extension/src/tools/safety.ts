// The service worker's side of the person's policy: the stored policy (chrome.storage.local, key
// "policy") and the judges of tools/origin.ts wired to it, pending
// approvals and their window, handoffs, and the messages the extension's own pages
// (popup, options, approval window) and the handoff banner send. Agents and the daemon have no
// path to change any of it: none of these messages is reachable from the link (SECURITY I-14).

import { ApprovalQueue, type ApprovalRequest } from "../policy/approvals.js";
import { normalizePolicy, permissivePolicy, type Policy } from "../policy/policy.js";
import { checkNoDialog, resolveTab } from "./browser.js";
import { allFramesAllowed, installOrigin, judgedTabUrl, topFrameEvents } from "./origin.js";
import type { PolicyEnv } from "./gate.js";
import { inputFacts, riskOf } from "./effects.js";
import { proxySwitchAllowed } from "./proxystore.js";
import { audit } from "./auditlog.js";
import { outbound } from "./secrets.js";
import { auditWitness } from "../background/auditwitness.js";
import { noOneCanAnswer } from "../background/unattended.js";

export const POLICY_KEY = "policy";

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

// ---------- approvals ----------

export const approvals = new ApprovalQueue({
  show: (req) => void openApprovalWindow(req),
  changed: () => broadcast(),
  // SECURITY I-80: in a headless managed browser with no Torii page open, "ask" fails at once.
  unanswerable: noOneCanAnswer,
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

function inHandoff(tabId: number): boolean {
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

function listHandoffs(): { tabId: number; reason: string; message: string }[] {
  return [...handoffs.values()].map((h) => ({ tabId: h.tabId, reason: h.reason, message: h.message }));
}

// ---------- the gate's environment ----------

export const policyEnv: PolicyEnv = {
  policy: getPolicy,
  async tab(tabId) {
    // Asked of the browser on every call, not taken from the last call's reading: this read is
    // also what lets the events the person's own actions caused (a dialog they just closed) reach
    // the worker before the call's dialog check.
    const since = topFrameEvents();
    const t = await resolveTab(tabId);
    const id = t.id as number;
    return { tabId: id, url: await judgedTabUrl(id, t, since) };
  },
  inHandoff,
  checkNoDialog,
  allFramesAllowed,
  risk: riskOf,
  inputFacts,
  ask: (req, ms, signal) => approvals.ask(req, ms, signal),
  proxySwitchAllowed: () => proxySwitchAllowed(),
  holdsSecret: (tabId) => outbound.holds(tabId),
};

// ---------- messages from the extension's own pages ----------

type PolicyRequest =
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
      await auditWitness.clear(); // a fresh copy witnesses the daemon's chain afresh (SECURITY I-70)
      return { ok: true };
    case "torii.handoff.list":
      return { handoffs: listHandoffs() };
  }
}

/**
 * SECURITY I-14, I-47: the policy a managed launch starts its profile with, applied by
 * background/managed.ts only after its connect succeeded in a managed profile. `permissive` keeps
 * the rules and switches the permissive policy on; a launch policy (already checked strictly,
 * policy/launch.ts) replaces the whole policy.
 */
export async function applyLaunchPolicy(p: "permissive" | Policy): Promise<void> {
  if (p === "permissive") {
    const cur = await getPolicy();
    await savePolicy({ ...permissivePolicy(), rules: cur.rules });
  } else {
    await savePolicy({ ...p, permissive: false });
  }
  broadcast();
}

let installed = false;

export function installSafety(): void {
  if (installed) return;
  installed = true;
  installOrigin(getPolicy);
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

// Page side of the policy messages (options page, popup, approval window). Only the extension's
// own pages can send these; the worker ignores them from anywhere else (SECURITY I-14).

import type { ApprovalRequest } from "../policy/approvals.js";
import type { AuditEntry } from "../policy/audit.js";
import type { Policy } from "../policy/policy.js";

async function call<T>(msg: Record<string, unknown>): Promise<T> {
  const r = (await chrome.runtime.sendMessage(msg)) as ({ ok: boolean; error?: string } & T) | undefined;
  if (!r) throw new Error("the extension's service worker did not answer");
  if (!r.ok) throw new Error(r.error ?? "failed");
  return r;
}

export async function getPolicy(): Promise<Policy> {
  return (await call<{ policy: Policy }>({ type: "torii.policy.get" })).policy;
}

export async function setPolicy(p: Policy): Promise<Policy> {
  return (await call<{ policy: Policy }>({ type: "torii.policy.set", policy: p })).policy;
}

export async function listApprovals(): Promise<ApprovalRequest[]> {
  return (await call<{ approvals: ApprovalRequest[] }>({ type: "torii.approval.list" })).approvals;
}

export async function decide(id: string, approve: boolean): Promise<boolean> {
  return (await call<{ ok: boolean }>({ type: "torii.approval.decide", id, approve })).ok;
}

export async function listAudit(limit?: number): Promise<AuditEntry[]> {
  return (await call<{ entries: AuditEntry[] }>({ type: "torii.audit.list", ...(limit ? { limit } : {}) })).entries;
}

/** Calls fn when the policy, approvals or handoffs change. */
export function onPolicyChanged(fn: () => void): void {
  chrome.runtime.onMessage.addListener((msg: unknown) => {
    if (msg && typeof msg === "object" && (msg as { type?: unknown }).type === "torii.policy.changed") fn();
    return false;
  });
}

/** Saves text as a file download from an extension page. */
export function download(name: string, text: string, mime: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: mime }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5_000);
}

export function el<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`page lacks #${id}`);
  return e as T;
}

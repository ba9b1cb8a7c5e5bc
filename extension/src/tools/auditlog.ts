// The service worker's audit ring (chrome.storage.local): every tool call, the person's proxy
// switches, and what the options page lists and clears (tools/safety.ts). Its own module, so the
// modules that record an entry need not import the policy's message handlers.
import { AuditRing, type AuditEntry } from "../policy/audit.js";

// Reached lazily: modules that import this one load where chrome.storage is not (unit tests).
export const audit = new AuditRing({
  get: (keys) => chrome.storage.local.get(keys),
  set: (items) => chrome.storage.local.set(items),
  remove: (keys) => chrome.storage.local.remove(keys),
});

export function recordAudit(e: AuditEntry): void {
  void audit.record(e).catch(() => undefined);
}

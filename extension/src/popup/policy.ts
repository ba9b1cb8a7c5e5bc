// The popup's policy sections: paused state, act mode, allow the current site, pending approvals,
// the latest calls from the audit with JSON/CSV export. Separate from popup.ts, which
// owns the link controls.

import { originOf } from "../policy/pattern.js";
import { APPROVAL_LABELS, judgeUrl, withRule, type Policy } from "../policy/policy.js";
import { auditToCSV, auditToJSON, isAuditKey } from "../policy/audit.js";
import { decide, download, el, getPolicy, listApprovals, listAudit, onPolicyChanged, setPolicy } from "../options/api.js";
import { isStateMessage } from "../shared/messages.js";

const actBox = el<HTMLInputElement>("act-mode");
const siteOrigin = el("site-origin");
const siteStatus = el("site-status");
const allowBtn = el<HTMLButtonElement>("allow-site");
const approvalsEl = el<HTMLUListElement>("approvals");
const auditList = el<HTMLOListElement>("audit-list");
const pausedBanner = el("paused-banner");
const errorEl = el("error");

let policy: Policy | undefined;
let siteUrl = "";

async function activeUrl(): Promise<string> {
  const [t] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return t?.url ?? "";
}

function renderPolicy(): void {
  const p = policy;
  if (!p) return;
  actBox.checked = p.actMode;
  const origin = originOf(siteUrl);
  if (!origin) {
    siteOrigin.textContent = "This tab is not a web page.";
    siteStatus.textContent = "";
    delete siteStatus.dataset.allowed;
    allowBtn.hidden = true;
    return;
  }
  const v = judgeUrl(p, siteUrl);
  siteOrigin.textContent = origin;
  siteStatus.textContent = v.allowed ? (v.permissive ? "allowed (permissive mode)" : "agents allowed") : "agents not allowed";
  siteStatus.dataset.allowed = String(v.allowed);
  allowBtn.hidden = v.allowed && !v.permissive;
}

async function refresh(): Promise<void> {
  try {
    [policy, siteUrl] = await Promise.all([getPolicy(), activeUrl()]);
    renderPolicy();
    const reqs = await listApprovals();
    approvalsEl.replaceChildren(
      ...reqs.map((r) => {
        const li = document.createElement("li");
        li.dataset.id = r.id;
        const t = document.createElement("span");
        t.textContent = `${APPROVAL_LABELS[r.kind]} — ${r.tool} on ${r.origin}${r.element ? ` · ${r.element}` : ""}${r.text ? ` · “${r.text}”` : ""}`;
        const yes = document.createElement("button");
        yes.type = "button";
        yes.textContent = "Approve";
        yes.className = "approve primary";
        yes.addEventListener("click", () => void decide(r.id, true).then(refresh));
        const no = document.createElement("button");
        no.type = "button";
        no.textContent = "Deny";
        no.className = "secondary deny";
        no.addEventListener("click", () => void decide(r.id, false).then(refresh));
        const b = document.createElement("div");
        b.className = "buttons";
        b.append(yes, no);
        li.append(t, b);
        return li;
      }),
    );
    const entries = await listAudit(30);
    auditList.replaceChildren(
      ...entries.map((e) => {
        const li = document.createElement("li");
        const when = new Date(e.ts).toLocaleTimeString();
        li.textContent = `${when} ${e.tool} ${e.origin || "-"} ${e.outcome}${e.approval ? ` (${e.approval})` : ""}${e.detail ? ` ${e.detail}` : ""} ${e.ms} ms `;
        if (e.code) {
          const c = document.createElement("span");
          c.className = "error-code";
          c.textContent = e.code;
          li.append(c);
        }
        return li;
      }),
    );
  } catch (e) {
    errorEl.textContent = e instanceof Error ? e.message : String(e);
  }
}

actBox.addEventListener("change", () => {
  if (policy) void setPolicy({ ...policy, actMode: actBox.checked }).then(refresh);
});
allowBtn.addEventListener("click", () => {
  const origin = originOf(siteUrl);
  if (!policy || !origin) return;
  // The exact origin the person is looking at: scheme, host and port.
  void setPolicy(withRule(policy, { pattern: origin })).then(refresh);
});
el<HTMLButtonElement>("open-options").addEventListener("click", () => void chrome.runtime.openOptionsPage());
el<HTMLButtonElement>("audit-json").addEventListener("click", () => void listAudit().then((e) => download("torii-audit.json", auditToJSON(e), "application/json")));
el<HTMLButtonElement>("audit-csv").addEventListener("click", () => void listAudit().then((e) => download("torii-audit.csv", auditToCSV(e), "text/csv")));

// The paused state comes with the link state the worker broadcasts.
chrome.runtime.onMessage.addListener((msg: unknown) => {
  if (isStateMessage(msg)) pausedBanner.hidden = !msg.state.paused;
  return false;
});
void chrome.runtime.sendMessage({ type: "torii.getState" }).then((r: unknown) => {
  const s = (r as { state?: { paused?: boolean } } | undefined)?.state;
  pausedBanner.hidden = !s?.paused;
});
// Redrawn when what it shows changes, never on a timer: the policy, approvals and handoffs (the
// worker says so), the audit (its saved buckets) and the tab it speaks of.
onPolicyChanged(() => void refresh());
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && Object.keys(changes).some(isAuditKey)) void refresh();
});
chrome.tabs.onActivated.addListener(() => void refresh());
chrome.tabs.onUpdated.addListener((_id, info) => {
  if (info.url !== undefined) void refresh();
});
chrome.windows.onFocusChanged.addListener(() => void refresh());
void refresh();

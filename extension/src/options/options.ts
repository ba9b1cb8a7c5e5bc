// Options page: the person's policy — the origin allowlist with per-origin switches (act mode,
// evaluate expression/program, fetch_in_page, passwords, cookies, storage, console & network, approvals), global act mode, approval
// defaults and timeout. Only this page, the popup and the approval window change the policy.

import { APPROVAL_KINDS, APPROVAL_LABELS, patternProblem, withRule, type Policy } from "../policy/policy.js";
import { auditToCSV, auditToJSON } from "../policy/audit.js";
import { download, el, getPolicy, listAudit, onPolicyChanged, setPolicy } from "./api.js";
import { clearOnEdit, markInvalid } from "./fielderror.js";
import { choiceSelect, renderRules, showRuleError } from "./rules.js";
import "./secrets.js";

const patternInput = el<HTMLInputElement>("pattern");
const patternError = el("pattern-error");
const addBtn = el<HTMLButtonElement>("add");
const rulesList = el<HTMLUListElement>("rules");
const actBox = el<HTMLInputElement>("act-mode");
const permissiveRow = el("permissive-row");
const permissiveOff = el<HTMLButtonElement>("permissive-off");
const defaultsEl = el("approval-defaults");
const timeoutInput = el<HTMLInputElement>("approval-timeout");
const timeoutError = el("timeout-error");
const errorEl = el("error");

let policy: Policy | undefined;

/**
 * Saves the policy. A refusal is shown where the change was made: `onRefused` (a field's inline
 * error), else the rule's card, else the page's error line.
 */
async function save(p: Policy, pattern?: string, onRefused?: (message: string) => void): Promise<boolean> {
  errorEl.textContent = "";
  try {
    policy = await setPolicy(p);
    render();
    return true;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // The page shows the stored policy again (a switch that did not save flips back).
    render();
    if (onRefused) onRefused(message);
    else if (!pattern || !showRuleError(rulesList, pattern, message)) errorEl.textContent = message;
    return false;
  }
}

function render(): void {
  const p = policy;
  if (!p) return;
  actBox.checked = p.actMode;
  permissiveRow.hidden = !p.permissive;
  if (document.activeElement !== timeoutInput && timeoutInput.getAttribute("aria-invalid") !== "true") timeoutInput.value = String(Math.round(p.approvalTimeoutMs / 1000));
  renderRules(rulesList, p, (next, pattern) => void save(next, pattern));
  defaultsEl.replaceChildren();
  for (const k of APPROVAL_KINDS) {
    const row = document.createElement("label");
    row.className = "approval-row";
    const name = document.createElement("span");
    name.textContent = APPROVAL_LABELS[k];
    row.append(name);
    const sel = choiceSelect(p.approvals[k], false, (c) => void save({ ...p, approvals: { ...p.approvals, [k]: c ?? "ask" } }));
    sel.dataset.default = k;
    row.append(sel);
    defaultsEl.append(row);
  }
}

clearOnEdit([patternInput], patternError);
addBtn.addEventListener("click", () => {
  const v = patternInput.value.trim();
  const problem = v === "" ? "type a site pattern first, e.g. example.com" : patternProblem(v);
  // The text stays in the box, so the person can correct it.
  if (problem) return markInvalid(patternInput, patternError, problem);
  if (!policy) return;
  void save(withRule(policy, { pattern: v }), undefined, (m) => markInvalid(patternInput, patternError, m)).then((ok) => {
    if (ok) patternInput.value = "";
  });
});
patternInput.addEventListener("keydown", (e) => {
  if (e.key === "Enter") addBtn.click();
});
actBox.addEventListener("change", () => policy && void save({ ...policy, actMode: actBox.checked }));
permissiveOff.addEventListener("click", () => policy && void save({ ...policy, permissive: false }));
clearOnEdit([timeoutInput], timeoutError);
timeoutInput.addEventListener("change", () => {
  const min = Number(timeoutInput.min);
  const max = Number(timeoutInput.max);
  const s = Number(timeoutInput.value);
  if (timeoutInput.value.trim() === "" || !Number.isFinite(s) || s < min || s > max) {
    return markInvalid(timeoutInput, timeoutError, `a number of seconds from ${min} to ${max}`);
  }
  if (policy) void save({ ...policy, approvalTimeoutMs: s * 1000 }, undefined, (m) => markInvalid(timeoutInput, timeoutError, m));
});
el<HTMLButtonElement>("export-json").addEventListener("click", () => void listAudit().then((e) => download("torii-audit.json", auditToJSON(e), "application/json")));
el<HTMLButtonElement>("export-csv").addEventListener("click", () => void listAudit().then((e) => download("torii-audit.csv", auditToCSV(e), "text/csv")));

async function load(): Promise<void> {
  policy = await getPolicy();
  render();
}
onPolicyChanged(() => void load());
void load();

// Options page: the person's policy — the origin allowlist with per-origin switches (act mode,
// evaluate expression/program, fetch_in_page, passwords, cookies, storage, console & network, approvals), global act mode, approval
// defaults and timeout. Only this page, the popup and the approval window change the policy.

import { APPROVAL_KINDS, APPROVAL_LABELS, patternProblem, withoutRule, withRule, type Choice, type OriginRule, type Policy } from "../policy/policy.js";
import { auditToCSV, auditToJSON } from "../policy/audit.js";
import { download, el, getPolicy, listAudit, onPolicyChanged, setPolicy } from "./api.js";
import "./secrets.js";

const patternInput = el<HTMLInputElement>("pattern");
const addBtn = el<HTMLButtonElement>("add");
const rulesBody = el<HTMLTableSectionElement>("rules");
const actBox = el<HTMLInputElement>("act-mode");
const permissiveRow = el("permissive-row");
const permissiveOff = el<HTMLButtonElement>("permissive-off");
const defaultsEl = el("approval-defaults");
const timeoutInput = el<HTMLInputElement>("approval-timeout");
const errorEl = el("error");

let policy: Policy | undefined;

const SWITCHES: [keyof OriginRule, string][] = [
  ["act", "Act"],
  ["evalExpression", "Eval expr."],
  ["evalProgram", "Eval program"],
  ["fetch", "fetch_in_page"],
  ["allowPassword", "Passwords"],
  ["invoke", "Invoke"],
  ["captureSensitive", "Capture headers/bodies"],
  // SECURITY I-68: the browser's stores, each its own switch; HttpOnly values only beside Cookies.
  ["cookies", "Cookies"],
  ["cookiesHttpOnly", "HttpOnly values"],
  ["storage", "Storage"],
  ["observe", "Console & network"],
];

async function save(p: Policy): Promise<void> {
  errorEl.textContent = "";
  try {
    policy = await setPolicy(p);
    render();
  } catch (e) {
    errorEl.textContent = e instanceof Error ? e.message : String(e);
  }
}

function choiceSelect(value: Choice | undefined, withDefault: boolean, onChange: (c: Choice | undefined) => void): HTMLSelectElement {
  const s = document.createElement("select");
  for (const v of [...(withDefault ? ["default"] : []), "allow", "ask", "deny"]) {
    const o = document.createElement("option");
    o.value = v;
    o.textContent = v;
    s.append(o);
  }
  s.value = value ?? "default";
  s.addEventListener("change", () => onChange(s.value === "default" ? undefined : (s.value as Choice)));
  return s;
}

function render(): void {
  const p = policy;
  if (!p) return;
  actBox.checked = p.actMode;
  permissiveRow.hidden = !p.permissive;
  if (document.activeElement !== timeoutInput) timeoutInput.value = String(Math.round(p.approvalTimeoutMs / 1000));
  rulesBody.replaceChildren();
  if (p.rules.length === 0) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = SWITCHES.length + 3;
    td.className = "empty";
    td.textContent = p.permissive ? "No entries; permissive mode allows every site." : "No entries: agents can use no site at all.";
    tr.append(td);
    rulesBody.append(tr);
  }
  for (const rule of p.rules) {
    const tr = document.createElement("tr");
    tr.dataset.pattern = rule.pattern;
    const name = document.createElement("td");
    name.textContent = rule.pattern;
    name.className = "pattern";
    name.dataset.label = "Site";
    tr.append(name);
    for (const [field, label] of SWITCHES) {
      const td = document.createElement("td");
      // The narrow layout shows each switch with its column name (options.css).
      td.dataset.label = label;
      td.className = "switch-cell";
      const box = document.createElement("input");
      box.type = "checkbox";
      box.dataset.field = field;
      box.title = label;
      box.setAttribute("aria-label", `${label} on ${rule.pattern}`);
      box.checked = rule[field] === true;
      box.addEventListener("change", () => void save(withRule(p, { ...rule, [field]: box.checked })));
      td.append(box);
      tr.append(td);
    }
    const ap = document.createElement("td");
    ap.className = "approvals-cell";
    const det = document.createElement("details");
    const sum = document.createElement("summary");
    sum.textContent = "approvals";
    det.append(sum);
    for (const k of APPROVAL_KINDS) {
      const row = document.createElement("label");
      row.className = "approval-row";
      row.append(document.createTextNode(APPROVAL_LABELS[k] + " "));
      const sel = choiceSelect(rule.approvals?.[k], true, (c) => {
        const approvals = { ...(rule.approvals ?? {}) };
        if (c) approvals[k] = c;
        else delete approvals[k];
        void save(withRule(p, { ...rule, approvals }));
      });
      sel.dataset.approval = k;
      row.append(sel);
      det.append(row);
    }
    ap.append(det);
    tr.append(ap);
    const rm = document.createElement("td");
    rm.className = "remove-cell";
    const b = document.createElement("button");
    b.type = "button";
    b.className = "secondary remove";
    b.textContent = "Remove";
    b.setAttribute("aria-label", `Remove ${rule.pattern}`);
    b.className = "danger remove";
    b.addEventListener("click", () => void save(withoutRule(p, rule.pattern)));
    rm.append(b);
    tr.append(rm);
    rulesBody.append(tr);
  }
  defaultsEl.replaceChildren();
  for (const k of APPROVAL_KINDS) {
    const row = document.createElement("label");
    row.className = "approval-row";
    row.append(document.createTextNode(APPROVAL_LABELS[k] + " "));
    const sel = choiceSelect(p.approvals[k], false, (c) => void save({ ...p, approvals: { ...p.approvals, [k]: c ?? "ask" } }));
    sel.dataset.default = k;
    row.append(sel);
    defaultsEl.append(row);
  }
}

addBtn.addEventListener("click", () => {
  const v = patternInput.value.trim();
  const problem = patternProblem(v);
  if (problem) {
    errorEl.textContent = problem;
    return;
  }
  if (!policy) return;
  void save(withRule(policy, { pattern: v })).then(() => {
    patternInput.value = "";
  });
});
patternInput.addEventListener("keydown", (e) => {
  if (e.key === "Enter") addBtn.click();
});
actBox.addEventListener("change", () => policy && void save({ ...policy, actMode: actBox.checked }));
permissiveOff.addEventListener("click", () => policy && void save({ ...policy, permissive: false }));
timeoutInput.addEventListener("change", () => {
  const s = Number(timeoutInput.value);
  if (policy && Number.isFinite(s)) void save({ ...policy, approvalTimeoutMs: s * 1000 });
});
el<HTMLButtonElement>("export-json").addEventListener("click", () => void listAudit().then((e) => download("torii-audit.json", auditToJSON(e), "application/json")));
el<HTMLButtonElement>("export-csv").addEventListener("click", () => void listAudit().then((e) => download("torii-audit.csv", auditToCSV(e), "text/csv")));

async function load(): Promise<void> {
  policy = await getPolicy();
  render();
}
onPolicyChanged(() => void load());
void load();

// The approval window: shows one pending risky action exactly (tool, kind, origin, target, text with
// secrets masked) and sends the person's answer. The agent's call waits for it (SECURITY I-19).

import { APPROVAL_LABELS } from "../policy/policy.js";
import { decide, el, listApprovals, onPolicyChanged } from "../options/api.js";

const id = new URLSearchParams(location.hash.slice(1)).get("id") ?? "";
const details = el("details");
const approveBtn = el<HTMLButtonElement>("approve");
const denyBtn = el<HTMLButtonElement>("deny");
const stateEl = el("state");

function row(label: string, value: string | undefined): void {
  if (value === undefined || value === "") return;
  const dt = document.createElement("dt");
  dt.textContent = label;
  const dd = document.createElement("dd");
  dd.textContent = value;
  details.append(dt, dd);
}

async function load(): Promise<void> {
  const req = (await listApprovals()).find((r) => r.id === id);
  details.replaceChildren();
  if (!req) {
    stateEl.textContent = "This request was answered or has expired.";
    approveBtn.disabled = true;
    denyBtn.disabled = true;
    return;
  }
  row("Action", APPROVAL_LABELS[req.kind]);
  row("Tool", req.tool);
  row("Site", req.origin || "(new tab)");
  row("Goes to", req.target);
  row("Element", req.element);
  row(req.kind === "evaluate" ? "Code" : req.kind === "upload" ? "Files" : req.kind === "download" ? "Download" : "Text", req.text);
  row("Agent session", req.session);
  const left = Math.max(0, Math.round((req.expiresAt - Date.now()) / 1000));
  stateEl.textContent = `The agent waits for your answer (${left} s left).`;
}

async function answer(approve: boolean): Promise<void> {
  approveBtn.disabled = true;
  denyBtn.disabled = true;
  const ok = await decide(id, approve);
  stateEl.textContent = ok ? (approve ? "Approved." : "Denied.") : "Too late: the request had expired.";
  setTimeout(() => window.close(), 400);
}

approveBtn.addEventListener("click", () => void answer(true));
denyBtn.addEventListener("click", () => void answer(false));
onPolicyChanged(() => void load());
void load();

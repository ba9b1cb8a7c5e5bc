// The approval window: shows one pending risky action exactly (tool, kind, origin, target, text with
// secrets masked) and sends the person's answer. The agent's call waits for it (SECURITY I-19).

import { APPROVAL_LABELS } from "../policy/policy.js";
import { decide, el, listApprovals, onPolicyChanged } from "../options/api.js";

const id = new URLSearchParams(location.hash.slice(1)).get("id") ?? "";
const details = el("details");
const approveBtn = el<HTMLButtonElement>("approve");
const denyBtn = el<HTMLButtonElement>("deny");
const stateEl = el("state");

// The countdown of the request on screen: a timer that redraws it from the request's own expiry, so
// it keeps time however late the page loaded or how often it is re-rendered.
let tick: ReturnType<typeof setTimeout> | undefined;
let shownExpiry: number | undefined;
let answered = false;

function stopCountdown(): void {
  if (tick !== undefined) clearTimeout(tick);
  tick = undefined;
}

function expired(): void {
  stopCountdown();
  // The worker refuses the call at that moment (approval_timeout): an answer could no longer count.
  stateEl.textContent = "Expired: the agent was told nobody answered, and nothing was done.";
  approveBtn.disabled = true;
  denyBtn.disabled = true;
}

function countdown(expiresAt: number): void {
  stopCountdown();
  shownExpiry = expiresAt;
  const ms = expiresAt - Date.now();
  if (ms <= 0) return expired();
  const left = Math.ceil(ms / 1000);
  stateEl.textContent = `The agent waits for your answer (${left} s left).`;
  // Redraw when the shown second changes (or at expiry), not on a fixed period that drifts.
  tick = setTimeout(() => countdown(expiresAt), ms - (left - 1) * 1000);
}

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
  if (answered) return; // the answer's own text stays until the window closes
  details.replaceChildren();
  if (!req) {
    // Gone from the worker's list: by its expiry when that has passed, else answered elsewhere.
    if (shownExpiry !== undefined && Date.now() >= shownExpiry) return expired();
    stopCountdown();
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
  countdown(req.expiresAt);
}

async function answer(approve: boolean): Promise<void> {
  answered = true;
  stopCountdown();
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

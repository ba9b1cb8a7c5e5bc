// The approval window: shows one pending risky action exactly (what, in which tab, on which
// element, the text to be typed with secrets masked) and sends the person's answer; "always
// allow here" also writes the person's rule for that kind on that origin. The agent's call waits
// for the answer (SECURITY I-19); only the person, in this extension page, can give it (I-14).

import type { ApprovalRequest } from "../policy/approvals.js";
import { APPROVAL_LABELS, judgeUrl, normalizeRule, withRule, type Policy } from "../policy/policy.js";
import { decide, el, getPolicy, listApprovals, onPolicyChanged, setPolicy } from "../options/api.js";

const id = new URLSearchParams(location.hash.slice(1)).get("id") ?? "";
const details = el("details");
const actionEl = el("action");
const approveBtn = el<HTMLButtonElement>("approve");
const denyBtn = el<HTMLButtonElement>("deny");
const stateEl = el("state");
const barFill = el("bar-fill");
const timer = stateEl.parentElement as HTMLElement;
const alwaysRow = el("always-row");
const alwaysBox = el<HTMLInputElement>("always");
const alwaysLabel = el("always-label");
const errorEl = el("error");

// The countdown of the request on screen: a timer that redraws it from the request's own expiry, so
// it keeps time however late the page loaded or how often it is re-rendered.
let tick: ReturnType<typeof setTimeout> | undefined;
let shownExpiry: number | undefined;
let answered = false;
let shown: ApprovalRequest | undefined;

function stopCountdown(): void {
  if (tick !== undefined) clearTimeout(tick);
  tick = undefined;
  timer.dataset.state = "done";
}

function closed(text: string): void {
  stopCountdown();
  stateEl.textContent = text;
  approveBtn.disabled = true;
  denyBtn.disabled = true;
  alwaysBox.disabled = true;
}

function expired(): void {
  // The worker refuses the call at that moment (approval_timeout): an answer could no longer count.
  closed("Expired: the agent was told nobody answered, and nothing was done.");
}

function countdown(req: ApprovalRequest): void {
  if (tick !== undefined) clearTimeout(tick);
  timer.dataset.state = "running";
  shownExpiry = req.expiresAt;
  const ms = req.expiresAt - Date.now();
  if (ms <= 0) return expired();
  const left = Math.ceil(ms / 1000);
  stateEl.textContent = `The agent waits for your answer (${left} s left).`;
  const total = Math.max(1, req.expiresAt - req.createdAt);
  barFill.style.transform = `scaleX(${Math.max(0, (ms - 1000) / total)})`;
  // Redraw when the shown second changes (or at expiry), not on a fixed period that drifts.
  tick = setTimeout(() => countdown(req), ms - (left - 1) * 1000);
}

function row(label: string, value: string | Node | undefined, cls = ""): void {
  if (value === undefined || value === "") return;
  const dt = document.createElement("dt");
  dt.textContent = label;
  const dd = document.createElement("dd");
  if (cls) dd.className = cls;
  dd.append(value);
  details.append(dt, dd);
}

/** The masked form predict.ts/maskSecret produce: shown as hidden, never as text to read. */
function isMasked(text: string): boolean {
  return text.startsWith("••••");
}

/** Text (a URL) with a break opportunity after each separator: a long one wraps at "/" or ".", not inside a word. */
function wrappable(text: string): DocumentFragment {
  const f = document.createDocumentFragment();
  for (const part of text.split(/(?<=[/.?&=#:_-])/)) f.append(part, document.createElement("wbr"));
  return f;
}

/** The tab's title and URL, filled in when Chrome answers (the rest of the request shows at once). */
function tabLine(tabId: number | undefined): Node | undefined {
  if (tabId === undefined) return undefined;
  const box = document.createElement("span");
  box.textContent = `tab ${tabId}`;
  chrome.tabs.get(tabId).then(
    (t) => {
      const title = document.createElement("span");
      title.className = "tab-title";
      title.textContent = t.title || "(untitled)";
      const url = document.createElement("span");
      url.className = "tab-url";
      url.append(wrappable(t.url ?? ""));
      box.replaceChildren(title, url);
    },
    () => (box.textContent = `tab ${tabId} (closed)`),
  );
  return box;
}

function textLabel(req: ApprovalRequest): string {
  return req.kind === "evaluate" ? "Code" : req.kind === "upload" ? "Files" : req.kind === "download" ? "Download" : "Text to type";
}

async function load(): Promise<void> {
  const req = (await listApprovals()).find((r) => r.id === id);
  if (answered) return; // the answer's own text stays until the window closes
  if (!req) {
    // Gone from the worker's list: by its expiry when that has passed, else answered elsewhere.
    if (shownExpiry !== undefined && Date.now() >= shownExpiry) return expired();
    closed("This request was answered or has expired.");
    return;
  }
  const tab = tabLine(req.tabId);
  shown = req;
  details.replaceChildren();
  actionEl.textContent = APPROVAL_LABELS[req.kind];
  // SECURITY I-71: a call whose effects cannot be known counts as each of them; the person sees
  // every one this answer covers.
  const also = req.also ?? [];
  if (also.length) row("Can also", also.map((k) => APPROVAL_LABELS[k]).join("; "), "also");
  row("Tab", tab);
  row("Site", req.origin ? wrappable(req.origin) : "(new tab)");
  row("Goes to", req.target ? wrappable(req.target) : undefined);
  row("Element", req.element);
  if (req.text) {
    const masked = isMasked(req.text);
    row(textLabel(req), masked ? `Hidden secret — ${req.text.replace(/^•+\s*/, "").replace(/[()]/g, "")}` : req.text, req.kind === "evaluate" ? "code" : masked ? "typed masked" : "typed");
  }
  row("Tool", req.tool);
  row("Agent session", req.session);
  // "Always allow" writes one kind's choice; an answer that covers several is given call by call
  // (each kind is the person's to set in the options).
  alwaysRow.hidden = !req.origin || also.length > 0;
  alwaysLabel.textContent = `Always allow “${APPROVAL_LABELS[req.kind].toLowerCase()}” on ${req.origin}`;
  countdown(req);
}

/** "Always allow here": the person's rule for this kind on this exact origin, kept with its other switches. */
async function allowAlways(req: ApprovalRequest): Promise<void> {
  const p: Policy = await getPolicy();
  // The rule that lets this origin in today gets the choice, in its place (the first matching rule
  // decides); a permissive-only origin gets a rule of its own.
  const v = judgeUrl(p, `${req.origin}/`);
  const current = v.allowed && !v.permissive ? v.rule : undefined;
  const rule = current ?? { pattern: req.origin };
  const updated = normalizeRule({ ...rule, approvals: { ...(rule.approvals ?? {}), [req.kind]: "allow" } });
  if (!updated) throw new Error(`cannot write a rule for ${req.origin}`);
  await setPolicy(current ? { ...p, rules: p.rules.map((r) => (r.pattern === current.pattern ? updated : r)) } : withRule(p, updated));
}

async function answer(approve: boolean): Promise<void> {
  answered = true;
  stopCountdown();
  approveBtn.disabled = true;
  denyBtn.disabled = true;
  alwaysBox.disabled = true;
  try {
    if (approve && alwaysBox.checked && shown?.origin && !shown.also?.length) await allowAlways(shown);
  } catch (e) {
    errorEl.textContent = `Could not save “always allow”: ${e instanceof Error ? e.message : String(e)}`;
  }
  const ok = await decide(id, approve);
  stateEl.textContent = ok ? (approve ? "Approved." : "Denied.") : "Too late: the request had expired.";
  if (!errorEl.textContent) setTimeout(() => window.close(), 400);
}

approveBtn.addEventListener("click", () => void answer(true));
denyBtn.addEventListener("click", () => void answer(false));
onPolicyChanged(() => void load());
void load().then(() => {
  if (!approveBtn.disabled) approveBtn.focus();
});

// The popup's "Agent sessions" section: agent tabs per session with close-all, and the
// person's grants of their own tabs to a session (which tab, scopes, how long; revocable). Talks
// to the service worker with torii.sessions.* messages, which only extension pages may send
// (tools/ownership/popup.ts, SECURITY I-27). Kept apart from popup.ts so the two evolve separately.

import type { SessionLook } from "../tools/ownership/groupbook.js";
import type { Scope } from "../tools/ownership/state.js";
import type { CloseReport } from "../tools/ownership/close.js";
import type { SessionsView } from "../tools/ownership/popup.js";

const root = document.getElementById("sessions");

async function ask<T>(msg: Record<string, unknown>): Promise<T> {
  const r = (await chrome.runtime.sendMessage(msg)) as T & { error?: string };
  if (r && typeof r === "object" && "error" in r && r.error) throw new Error(r.error);
  return r;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...kids: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
}

/** After close-all: each tab that stayed open and why (most often its page's leave-page prompt, for the person to answer). */
function showStayed(r: CloseReport): void {
  for (const t of r.stayed) root?.append(el("p", { className: "reason", textContent: `Tab ${t.tabId} stayed open: ${t.why}.` }));
}

/** The session's tab group as the tab strip shows it: its colour and title, or that the person removed it. */
function groupBadge(g: SessionLook): HTMLElement {
  const dot = el("span", { className: "group-dot" });
  dot.dataset.color = g.color;
  const words = g.declined ? "tab group removed by you; not regrouped" : `tab group “${g.title}”, ${g.color}`;
  const b = el("span", { className: "group-badge", title: words }, dot, el("span", { className: "sr-only", textContent: words }));
  b.setAttribute("aria-label", words);
  return b;
}

async function render(): Promise<void> {
  if (!root) return;
  let v: SessionsView;
  try {
    v = await ask<SessionsView>({ type: "torii.sessions.view" });
  } catch (e) {
    root.replaceChildren(el("p", { className: "reason", textContent: `Sessions unavailable: ${e instanceof Error ? e.message : String(e)}` }));
    return;
  }
  const details = el("details", { open: v.sessions.some((s) => s.tabs.length + s.granted.length > 0) });
  details.append(el("summary", { textContent: `Agent sessions (${v.sessions.filter((s) => s.ended === undefined).length} live)` }));
  for (const s of v.sessions) {
    if (s.tabs.length + s.granted.length === 0 && s.ended !== undefined) continue;
    const head = el("p", { className: "session" }, el("strong", { textContent: s.label || s.id }), ` ${s.kind}${s.ended !== undefined ? " · ended" : ""} · ${s.tabs.length} tab(s) `);
    head.dataset.session = s.id;
    if (s.group) head.prepend(groupBadge(s.group));
    if (s.tabs.length > 0) {
      const b = el("button", { type: "button", className: "secondary", textContent: "Close all" });
      b.dataset.session = s.id;
      b.addEventListener("click", () => void ask<CloseReport>({ type: "torii.sessions.closeAll", sessionId: s.id }).then(async (r) => {
        await render();
        showStayed(r);
      }));
      head.append(b);
    }
    const list = el("ul", { className: "session-tabs" });
    for (const t of s.tabs) list.append(el("li", { textContent: `[${t.tabId}] ${t.title || t.url || "(blank)"}` }));
    for (const t of s.granted) list.append(el("li", { className: "granted", textContent: `[${t.tabId}] ${t.title || t.url} (your tab, granted)` }));
    details.append(head, list);
  }

  // Grants: the person lends one of their own tabs to a live session.
  const live = v.sessions.filter((s) => s.ended === undefined);
  const grants = el("ul", { className: "grants" });
  for (const g of v.grants) {
    const b = el("button", { type: "button", className: "secondary", textContent: "Revoke" });
    b.addEventListener("click", () => void ask({ type: "torii.sessions.revoke", id: g.id }).then(render));
    const mins = Math.max(0, Math.round((g.expiresAt - Date.now()) / 60_000));
    grants.append(el("li", {}, `tab ${g.tabId} → ${g.label}: ${g.scopes.join("+")} on ${g.origin}, ${mins} min left `, b));
  }
  details.append(el("h3", { textContent: "Grants of your tabs" }), grants);
  if (live.length > 0 && v.personTabs.length > 0) {
    const tab = el("select", { id: "grant-tab" });
    for (const t of v.personTabs) tab.append(el("option", { value: String(t.tabId), textContent: t.title || t.url }));
    const sess = el("select", { id: "grant-session" });
    for (const s of live) sess.append(el("option", { value: s.id, textContent: s.label || s.id }));
    const scope = (name: Scope, on: boolean) => {
      const c = el("input", { type: "checkbox", checked: on, value: name });
      c.dataset.scope = name;
      return el("label", {}, c, ` ${name} `);
    };
    const minutes = el("select", { id: "grant-minutes" });
    for (const m of [15, 60, 240]) minutes.append(el("option", { value: String(m), textContent: `${m} min` }));
    const go = el("button", { type: "button", textContent: "Grant" });
    const form = el("div", { className: "grant-form" }, tab, sess, scope("read", true), scope("write", false), scope("evaluate", false), minutes, go);
    go.addEventListener("click", () => {
      const scopes = [...form.querySelectorAll<HTMLInputElement>("input[data-scope]")].filter((c) => c.checked).map((c) => c.value as Scope);
      void ask({ type: "torii.sessions.grant", tabId: Number(tab.value), sessionId: sess.value, scopes, minutes: Number(minutes.value) })
        .then(render)
        .catch((e: unknown) => form.append(el("p", { className: "error", textContent: e instanceof Error ? e.message : String(e) })));
    });
    details.append(form);
  }
  root.replaceChildren(details);
}

void render();

// handoff (a human handoff): the agent hands a tab to the person for a QR code,
// MFA, a CAPTCHA or a device confirmation. The tab is focused, a banner in the page says why, and
// the call waits until the person clicks Done or Cancel (or the time runs out). Meanwhile every
// other call on that tab is refused with handoff_active, so nothing of the page is read and the
// agent cannot click the banner itself (SECURITY I-22).

import { left, withDeadline } from "../cdp/deadline.js";
import { defineTool, MAX_ARG_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from "./define.js";
import { toolError, ToolError } from "./errors.js";
import { onNav, resolveTab } from "./browser.js";
import { S } from "./common.js";
import { endHandoff, startHandoff } from "./safety.js";
import { selfOp } from "./ownership/attribution.js";

const REASONS: Record<string, string> = {
  qr: "scan a QR code",
  mfa: "complete a sign-in step (MFA)",
  captcha: "solve a CAPTCHA",
  device: "confirm on another device",
  login: "sign in",
  other: "do something only you can do",
};

// Runs in the page's top frame (ISOLATED world); must be self-contained. Only trusted clicks (a
// person's) count; the nonce stays in this closure, out of the page's reach.
function showBanner(id: string, nonce: string, why: string, message: string): void {
  type Slot = { host?: HTMLElement };
  const g = globalThis as unknown as { __toriiHandoff?: Slot };
  g.__toriiHandoff?.host?.remove();
  const host = document.createElement("torii-handoff");
  host.style.cssText = "all:initial;position:fixed;top:0;left:0;right:0;z-index:2147483647;";
  const root = host.attachShadow({ mode: "open" });
  const bar = document.createElement("div");
  bar.setAttribute("role", "alert");
  bar.style.cssText =
    "font:14px/1.4 system-ui,sans-serif;background:#1b1b1f;color:#fff;padding:10px 14px;display:flex;gap:12px;align-items:center;box-shadow:0 2px 8px rgba(0,0,0,.4)";
  const text = document.createElement("div");
  text.style.cssText = "flex:1";
  const strong = document.createElement("strong");
  strong.textContent = `Torii: an agent handed this tab to you to ${why}.`;
  text.append(strong);
  if (message) {
    const m = document.createElement("div");
    m.style.cssText = "opacity:.85";
    m.textContent = `The agent says: ${message}`;
    text.append(m);
  }
  const hint = document.createElement("div");
  hint.style.cssText = "opacity:.7;font-size:12px";
  hint.textContent = "The agent cannot see or touch this tab until you click Done or Cancel.";
  text.append(hint);
  const mk = (label: string, outcome: "done" | "cancelled", bg: string) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.dataset.toriiHandoff = outcome;
    b.style.cssText = `font:inherit;padding:6px 14px;border-radius:6px;border:0;cursor:pointer;background:${bg};color:#fff`;
    b.addEventListener("click", (ev) => {
      if (!ev.isTrusted) return;
      const rt = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime;
      void rt.sendMessage({ type: "torii.handoff.finish", id, nonce, outcome }).catch(() => undefined);
      host.remove();
    });
    return b;
  };
  bar.append(text, mk("Done", "done", "#1e7a34"), mk("Cancel", "cancelled", "#b3261e"));
  root.append(bar);
  (document.documentElement ?? document.body).append(host);
  g.__toriiHandoff = { host };
}

function hideBanner(): void {
  const g = globalThis as unknown as { __toriiHandoff?: { host?: HTMLElement } };
  g.__toriiHandoff?.host?.remove();
  delete g.__toriiHandoff;
}

export const handoff = defineTool<{ tabId?: number; reason: string; message?: string; timeoutMs?: number }>({
  name: "handoff",
  description: "Let the person act on the tab (QR, MFA, CAPTCHA…) until they click Done or Cancel.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      reason: { type: "string", enum: Object.keys(REASONS) },
      message: { type: "string", maxLength: 200 },
      timeoutMs: { ...S.timeoutMs(MAX_ARG_TIMEOUT_MS), doc: `Default and most ${MAX_ARG_TIMEOUT_MS}; call again for more` },
    },
    required: ["reason"],
  },
  // It reads nothing and changes nothing on the page itself; the person acts.
  traits: { target: "tab", reads: "none", effects: [], switch: "none", dialog: "ignores", handoff: "refused" },
  // Each call asks the person again.
  idempotent: false,
  // The person's wait and the banner's cleanup, within every call's cap (SECURITY I-80).
  timeoutMs: MAX_TOOL_TIMEOUT_MS,
  async handler(a, ctx) {
    const tab = await resolveTab(a.tabId);
    const tabId = tab.id as number;
    const id = crypto.randomUUID();
    const nonce = crypto.randomUUID();
    const why = REASONS[a.reason] ?? REASONS.other!;
    const message = (a.message ?? "").replace(/\s+/g, " ").trim();
    const inject = () =>
      chrome.scripting
        .executeScript({ target: { tabId, frameIds: [0] }, world: "ISOLATED", func: showBanner, args: [id, nonce, why, message] })
        .catch(() => undefined);
    let finish: (o: "done" | "cancelled" | "timeout") => void = () => undefined;
    const outcome = new Promise<"done" | "cancelled" | "timeout">((resolve) => (finish = resolve));
    startHandoff({ id, tabId, reason: a.reason, message, nonce, done: (o) => finish(o) });
    // The person may go through several pages (an MFA flow): the banner follows the tab.
    const offNav = onNav((ev) => {
      if (ev.tabId === tabId && ev.frameId === 0 && ev.kind === "completed") void inject();
      if (ev.tabId === tabId && ev.kind === "removed") finish("cancelled");
    });
    // Within the call's own deadline (shorter when the call queued), so this answer comes first.
    const waitMs = Math.max(1_000, Math.min(a.timeoutMs ?? MAX_ARG_TIMEOUT_MS, left(ctx.deadline) - 3_000));
    const timer = setTimeout(() => finish("timeout"), waitMs);
    const onAbort = () => finish("cancelled");
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    try {
      // The extension brings the tab forward, not the person (SECURITY I-46).
      const wid = tab.windowId;
      await selfOp(() => withDeadline(chrome.tabs.update(tabId, { active: true }), 5_000, "tabs.update")).catch(() => undefined);
      if (wid !== undefined) await selfOp(() => chrome.windows.update(wid, { focused: true })).catch(() => undefined);
      await inject();
      const o = await outcome;
      if (ctx.signal.aborted) {
        const r: unknown = ctx.signal.reason;
        throw r instanceof ToolError ? r : toolError("cancelled", "handoff: cancelled");
      }
      if (o === "cancelled") throw toolError("handoff_cancelled", "the person cancelled the handoff");
      if (o === "timeout") {
        // An MCP client gives up on a call at 60 s: a longer wait for the person is a new call.
        throw toolError("timeout", `the person did not finish the handoff within ${Math.round(waitMs / 1000)} s; the banner was removed`, "Call handoff again to give them more time, or check the page before going on.");
      }
      return { text: `the person finished (${a.reason}); take a new snapshot`, data: { tabId, done: true } };
    } finally {
      clearTimeout(timer);
      offNav();
      ctx.signal.removeEventListener("abort", onAbort);
      endHandoff(tabId);
      await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, world: "ISOLATED", func: hideBanner }).catch(() => undefined);
    }
  },
});

// handle_dialog: accept or dismiss the JavaScript dialog (alert / confirm / prompt / beforeunload)
// that an action raised; the action's result said `dialog: {type, message}`. A dialog raised by a
// document off the allowlist is the person's to answer (SECURITY I-41).

import { attach, clearDialog, cdp, judgedDialog, waitDialog, type DialogInfo } from "../cdp/debugger.js";
import { left, withDeadline } from "../cdp/deadline.js";
import { defineTool, type ToolContext, type ToolOutput } from "./define.js";
import { toolError, ToolError } from "./errors.js";
import { resolveTab } from "./browser.js";
import { act, ACTION_PROPS, S, type ActionArgs } from "./common.js";
import { closeHeld, tabRemoved } from "./tabclose.js";

export const handleDialog = defineTool<ActionArgs & { accept: boolean; promptText?: string }>({
  name: "handle_dialog",
  description: "Accept or dismiss the open JS dialog; promptText answers a prompt.",
  inputSchema: {
    type: "object",
    properties: { tabId: S.tabId, accept: { type: "boolean" }, promptText: { type: "string" }, ...ACTION_PROPS },
    required: ["accept"],
  },
  traits: { target: "tab", reads: "page", effects: ["dialog"], switch: "act", dialog: "answers", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    const d = await openDialog(tabId, ctx);
    if (d.foreign) {
      throw toolError(
        "origin_not_allowed",
        "the open dialog was raised by a frame whose origin is not on the person's allowlist; only the person can answer it",
        "Call handoff so the person answers it; nothing was answered.",
      );
    }
    // A close the prompt held (close_tab): accepting it removes the tab, so there is no page left
    // to look at; the result says closed only once Chrome reports the tab removed.
    if (a.accept && d.type === "beforeunload" && closeHeld(tabId)) return acceptClose(tabId, d, ctx);
    return act(tabId, a, ctx, async () => {
      const params: Record<string, unknown> = { accept: a.accept };
      if (a.promptText !== undefined) params.promptText = a.promptText;
      try {
        await cdp(tabId, "Page.handleJavaScriptDialog", params, left(ctx.deadline, 10_000), ctx.signal);
      } catch (e) {
        if (e instanceof ToolError && /no dialog/i.test(e.message)) throw toolError("no_dialog", `no dialog is open on tab ${tabId}`);
        throw e;
      }
      clearDialog(tabId);
      return { text: `${a.accept ? "accepted" : "dismissed"} ${d.type} ${JSON.stringify(d.message)}`, data: { accepted: a.accept, dialog: d } };
    });
  },
});

async function acceptClose(tabId: number, d: DialogInfo, ctx: ToolContext): Promise<ToolOutput> {
  const gone = tabRemoved(tabId, left(ctx.deadline, 10_000), ctx.signal);
  try {
    try {
      await cdp(tabId, "Page.handleJavaScriptDialog", { accept: true }, left(ctx.deadline, 10_000), ctx.signal);
    } catch (e) {
      // The tab may go (and the debugger with it) before the command's answer arrives.
      if (!(await chrome.tabs.get(tabId).then(() => false, () => true))) {
        if (e instanceof ToolError && /no dialog/i.test(e.message)) throw toolError("no_dialog", `no dialog is open on tab ${tabId}`);
        throw e;
      }
    }
    clearDialog(tabId);
    const closed = await gone.promise;
    const text = `accepted ${d.type} ${JSON.stringify(d.message)}; ${closed ? `closed tab ${tabId}` : `tab ${tabId} has not closed yet (call tabs)`}`;
    return { text, data: { tabId, ok: true, accepted: true, dialog: d, closed } };
  } finally {
    gone.cancel();
  }
}

/**
 * The open dialog, judged. The debugger reports a dialog that was open before it attached when it
 * attaches; one the extension has not seen is never answered blind (it may be foreign).
 */
async function openDialog(tabId: number, ctx: { signal: AbortSignal; deadline: number }): Promise<DialogInfo> {
  await attach(tabId, left(ctx.deadline, 5_000), ctx.signal);
  const known = await judgedDialog(tabId);
  if (known) return known;
  const w = waitDialog(tabId);
  try {
    return await withDeadline(w.promise, 300, "dialog", ctx.signal);
  } catch {
    throw toolError("no_dialog", `no dialog is open on tab ${tabId}`);
  } finally {
    w.cancel();
  }
}

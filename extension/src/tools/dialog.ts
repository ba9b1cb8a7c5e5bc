// handle_dialog: accept or dismiss the JavaScript dialog (alert / confirm / prompt / beforeunload)
// that an action raised; the action's result said `dialog: {type, message}`.

import { clearDialog, cdp, dialogOf } from "../cdp/debugger.js";
import { left } from "../cdp/deadline.js";
import { defineTool } from "./define.js";
import { toolError, ToolError } from "./errors.js";
import { resolveTab } from "./browser.js";
import { act, ACTION_PROPS, S, type ActionArgs } from "./common.js";

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
    const d = dialogOf(tabId);
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
      const what = d ? `${d.type} ${JSON.stringify(d.message)}` : "dialog";
      return { text: `${a.accept ? "accepted" : "dismissed"} ${what}`, data: { accepted: a.accept, ...(d ? { dialog: d } : {}) } };
    });
  },
});

// set_user_agent: one tab's user agent, with the navigator.platform and client hints (Sec-CH-UA*,
// navigator.userAgentData) that agree with it, through CDP Emulation.setUserAgentOverride on that
// tab's own debugger session. The override lives in that session only: no other tab, window or
// profile setting changes, and it ends with reset, the tab, or the debugger's detach (SECURITY I-72).

import { cdp } from "../cdp/debugger.js";
import { left } from "../cdp/deadline.js";
import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { resolveTab } from "./browser.js";
import { S } from "./common.js";
import { identityOf, MAX_UA_BYTES, userAgentProblem } from "./uadata.js";

export const setUserAgent = defineTool<{ tabId?: number; userAgent?: string; reset?: boolean }>({
  name: "set_user_agent",
  group: "emulation",
  description: "This tab's user agent and client hints only; reset restores.",
  inputSchema: {
    type: "object",
    properties: { tabId: S.tabId, userAgent: { type: "string", maxLength: MAX_UA_BYTES }, reset: { type: "boolean" } },
  },
  traits: { target: "tab", reads: "none", effects: ["identity"], switch: "act", dialog: "ignores", handoff: "refused" },
  idempotent: true,
  async handler(a, ctx) {
    const reset = a.reset === true;
    if (reset === (a.userAgent !== undefined)) {
      throw toolError("invalid_argument", "pass either userAgent (the new string) or reset:true", undefined, { field: a.userAgent === undefined ? "userAgent" : "reset" });
    }
    const tabId = ctx.gate?.tabId ?? ((await resolveTab(a.tabId)).id as number);
    const ms = Math.min(10_000, left(ctx.deadline));
    if (reset) {
      // An empty userAgent ends the override: the tab is the browser's own again.
      await cdp(tabId, "Emulation.setUserAgentOverride", { userAgent: "" }, ms, ctx.signal);
      return { text: `tab ${tabId} uses the browser's own user agent again`, data: { tabId, reset: true }, whole: true };
    }
    const ua = a.userAgent as string;
    const problem = userAgentProblem(ua);
    if (problem) throw toolError("invalid_argument", problem, undefined, { field: "userAgent" });
    const id = identityOf(ua);
    await cdp(
      tabId,
      "Emulation.setUserAgentOverride",
      { userAgent: ua, ...(id.platform ? { platform: id.platform } : {}), ...(id.metadata ? { userAgentMetadata: id.metadata } : {}) },
      ms,
      ctx.signal,
    );
    const hints = id.metadata ? `client hints: ${id.metadata.platform || "no platform"}, ${id.metadata.brands.map((b) => `${b.brand} ${b.version}`).join(", ")}` : "no client hints (that browser sends none)";
    return {
      text: `tab ${tabId} now sends this user agent on its next requests and shows it in navigator.userAgent; ${hints}. Other tabs are unchanged; reset:true restores`,
      data: { tabId, userAgent: ua, platform: id.platform, clientHints: id.metadata ? { platform: id.metadata.platform, mobile: id.metadata.mobile, brands: id.metadata.brands } : null },
      whole: true,
    };
  },
});

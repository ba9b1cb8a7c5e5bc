// Code execution in the page, gated separately from act mode (issue 4, SECURITY I-17): evaluate
// runs an expression or a program (an async function body) in the page's main world through CDP;
// fetch_in_page sends one request with the page's cookies. Each is refused unless the person turned
// that switch on for the page's origin (expression, program and fetch are separate switches), and
// the person's approval choice for "evaluate" applies. Results are untrusted page data.

import { cdp } from "../cdp/debugger.js";
import { left } from "../cdp/deadline.js";
import { judgeUrl } from "../policy/policy.js";
import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { checkNoDialog, guarded, resolveTab } from "./browser.js";
import { S } from "./common.js";
import { assertLanding, getPolicy } from "./safety.js";

const MAX_CHARS = 20_000;

interface EvalReply {
  result?: { type: string; subtype?: string; value?: unknown; description?: string; unserializableValue?: string };
  exceptionDetails?: { text?: string; exception?: { description?: string } };
}

function render(v: unknown, maxChars: number): { text: string; truncated: boolean } {
  let s: string;
  try {
    s = v === undefined ? "undefined" : typeof v === "string" ? v : JSON.stringify(v, null, 1);
  } catch {
    s = String(v);
  }
  if (s.length > maxChars) return { text: s.slice(0, maxChars), truncated: true };
  return { text: s, truncated: false };
}

async function runInPage(tabId: number, expression: string, timeoutMs: number, ctx: { signal: AbortSignal; deadline: number }): Promise<EvalReply> {
  checkNoDialog(tabId);
  const ms = left(ctx.deadline, timeoutMs + 2_000);
  return guarded(
    tabId,
    "evaluate",
    cdp<EvalReply>(tabId, "Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true, userGesture: false, timeout: timeoutMs, replMode: false }, ms, ctx.signal),
    { signal: ctx.signal, ms },
  );
}

export const evaluate = defineTool<{ tabId?: number; expression?: string; program?: string; timeoutMs?: number }>({
  name: "evaluate",
  description: "Run JS in the page: expression, or program (async body with return).",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      expression: { type: "string", minLength: 1 },
      program: { type: "string", minLength: 1 },
      timeoutMs: S.timeoutMs(30000),
    },
  },
  traits: { target: "tab", reads: "page", effects: ["code"], switch: "evaluate", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    if ((a.expression === undefined) === (a.program === undefined)) throw toolError("invalid_argument", "give expression or program, not both");
    const tabId = (await resolveTab(a.tabId)).id as number;
    // Expression mode auto-returns one parenthesised expression; program mode is an async body.
    const src = a.expression !== undefined ? `(${a.expression}\n)` : `(async () => {\n${a.program as string}\n})()`;
    const r = await runInPage(tabId, src, a.timeoutMs ?? 10_000, ctx);
    await assertLanding(tabId);
    if (r.exceptionDetails) {
      const msg = r.exceptionDetails.exception?.description ?? r.exceptionDetails.text ?? "exception";
      return { text: `threw: ${msg.split("\n")[0]}`, data: { tabId, threw: true, exception: msg.slice(0, 2000) } };
    }
    const res = r.result;
    const value = res?.unserializableValue ?? res?.value;
    const out = render(value, MAX_CHARS);
    return {
      text: out.text + (out.truncated ? "\n[truncated]" : ""),
      data: { tabId, type: res?.subtype ?? res?.type ?? "undefined", ...(out.truncated ? { truncated: true } : {}) },
    };
  },
});

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

export const fetchInPage = defineTool<{ tabId?: number; url: string; method?: string; headers?: Record<string, string>; body?: string }>({
  name: "fetch_in_page",
  description: "HTTP request with the page's cookies; returns status and body.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      url: { type: "string", minLength: 1 },
      method: { type: "string", enum: METHODS },
      headers: { type: "object" },
      body: { type: "string" },
    },
    required: ["url"],
  },
  traits: { target: "tab", reads: "page", effects: ["code"], switch: "fetch", dialog: "blocked", handoff: "refused", destination: (a) => String(a.url ?? "") },
  async handler(a, ctx) {
    for (const [k, v] of Object.entries(a.headers ?? {})) {
      if (typeof v !== "string") throw toolError("invalid_argument", `headers.${k}: expected a string`);
    }
    const tabId = (await resolveTab(a.tabId)).id as number;
    const p = JSON.stringify({ url: a.url, method: a.method ?? "GET", headers: a.headers ?? {}, body: a.body, max: MAX_CHARS });
    const src = `(async (p) => {
  const r = await fetch(p.url, { method: p.method, headers: p.headers, body: p.body, credentials: "include", redirect: "follow" });
  const t = p.method === "HEAD" ? "" : await r.text();
  return { status: r.status, url: r.url, redirected: r.redirected, type: r.headers.get("content-type") || "", length: t.length, body: t.slice(0, p.max) };
})(${p})`;
    const r = await runInPage(tabId, src, 15_000, ctx);
    await assertLanding(tabId);
    if (r.exceptionDetails) {
      const msg = r.exceptionDetails.exception?.description ?? r.exceptionDetails.text ?? "fetch failed";
      throw toolError("navigation_failed", `fetch failed: ${msg.split("\n")[0]}`, "Check the URL; cross-origin requests follow the page's CORS rules.");
    }
    const v = r.result?.value as { status: number; url: string; redirected: boolean; type: string; length: number; body: string } | undefined;
    if (!v) throw toolError("internal", "fetch gave no result");
    // SECURITY I-15/I-17: a response that was redirected off the allowlist is dropped unread.
    if (!judgeUrl(await getPolicy(), v.url).allowed) {
      throw toolError("origin_not_allowed", "the request was redirected to an origin that is not on the person's allowlist; its response was dropped");
    }
    const truncated = v.length > v.body.length;
    return {
      text: `HTTP ${v.status} ${v.type}\n${v.body}${truncated ? "\n[truncated]" : ""}`,
      data: { tabId, status: v.status, url: v.url, contentType: v.type, length: v.length, ...(truncated ? { truncated: true } : {}) },
    };
  },
});

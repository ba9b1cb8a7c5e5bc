// Code execution in the page, gated separately from act mode (SECURITY I-17): evaluate runs an
// expression or a program (an async function body) in the page's main world through CDP;
// fetch_in_page sends one request with the page's cookies from the page's isolated world, where
// the page cannot change what the request is judged by. Each is refused unless the person turned
// that switch on for the page's origin (expression, program and fetch are separate switches), and
// the person's approval choice for "evaluate" applies. Results are untrusted page data.

import { cdp } from "../cdp/debugger.js";
import { left } from "../cdp/deadline.js";
import { judgeUrl } from "../policy/policy.js";
import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { checkNoDialog, guarded, resolveTab, watchNav } from "./browser.js";
import { S } from "./common.js";
import { CUT_MARGIN, maskCut } from "./secrets.js";
import { assertLanding, docAllowed } from "./origin.js";
import { getPolicy } from "./safety.js";

const MAX_CHARS = 20_000;

export interface EvalReply {
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
  const c = maskCut(s, maxChars);
  return { text: c.text, truncated: c.cut };
}

/**
 * Runs the expression in the tab's top document. SECURITY I-15: the top frame is watched from
 * before the tab is judged again until the answer is in; a document that replaced the judged one
 * meanwhile fails the call with navigation_failed, and its answer is not used.
 */
export async function runInPage(tabId: number, expression: string, timeoutMs: number, ctx: { signal: AbortSignal; deadline: number }): Promise<EvalReply> {
  checkNoDialog(tabId);
  const w = watchNav(tabId);
  try {
    await assertLanding(tabId);
    const ms = left(ctx.deadline, timeoutMs + 2_000);
    const r = await guarded(
      tabId,
      "evaluate",
      cdp<EvalReply>(tabId, "Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true, userGesture: false, timeout: timeoutMs, replMode: false }, ms, ctx.signal),
      { signal: ctx.signal, ms, watchNavigation: true },
    );
    await assertLanding(tabId);
    if (w.committed()) throw toolError("navigation_failed", "the page navigated during evaluate; its answer was dropped");
    return r;
  } finally {
    w.stop();
  }
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
    if (r.exceptionDetails) {
      const msg = maskCut(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text ?? "exception", 2000).text;
      // A failure the agent must see as one (isError), like a page function's in invoke.
      throw toolError("page_error", `the code threw: ${msg.split("\n")[0]}`, "Your code threw in the page; read the message, fix the expression or program, then retry.", { tabId, exception: msg });
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

interface Resolved {
  abs?: string;
  origin: string;
  url: string;
}

interface Fetched {
  refused?: "origin" | "target" | "redirect";
  error?: string;
  status?: number;
  url?: string;
  redirected?: boolean;
  type?: string;
  length?: number;
  body?: string;
}

// Runs in the page's isolated world (self-contained): the URL as the page resolves it, against
// document.baseURI (a <base href> included), and the document's own origin.
function resolveInPage(u: string): Resolved {
  let abs: string | undefined;
  try {
    abs = new URL(u, document.baseURI).href;
  } catch {
    abs = undefined;
  }
  return { ...(abs ? { abs } : {}), origin: self.origin, url: location.href };
}

// Runs in the page's isolated world (self-contained). Refuses, sending nothing, unless the document
// and the resolved URL are still the ones the worker judged.
async function fetchInPageWorld(p: { url: string; expect: string; origin: string; method: string; headers: Record<string, string>; body?: string; max: number }): Promise<Fetched> {
  if (self.origin !== p.origin) return { refused: "origin" };
  let abs = "";
  try {
    abs = new URL(p.url, document.baseURI).href;
  } catch {
    abs = "";
  }
  if (abs !== p.expect) return { refused: "target" };
  try {
    // Redirects are not followed: the browser would send the next hop before it could be judged.
    const r = await fetch(abs, { method: p.method, headers: p.headers, body: p.body, credentials: "include", redirect: "manual" });
    if (r.type === "opaqueredirect") return { refused: "redirect" };
    const t = p.method === "HEAD" ? "" : await r.text();
    return { status: r.status, url: r.url, redirected: r.redirected, type: r.headers.get("content-type") || "", length: t.length, body: t.slice(0, p.max) };
  } catch (e) {
    return { error: String((e as Error)?.message ?? e).split("\n")[0] };
  }
}

async function inTop<A extends unknown[], R>(tabId: number, func: (...a: A) => R | Promise<R>, args: A, ms: number, signal: AbortSignal): Promise<R | undefined> {
  const run = chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, world: "ISOLATED", func: func as never, args: args as never }).then((res) => res[0]?.result as R | undefined);
  return guarded(tabId, "fetch_in_page", run, { signal, ms, watchNavigation: true });
}

/**
 * The request URL as given, for the gate: a relative one is resolved and judged in the page
 * (SECURITY I-44). An absolute one whose scheme no policy can allow ("localhost:8080/x" parses as
 * scheme `localhost:`) is the agent's mistake, invalid_argument naming `url`, not a blocked origin.
 */
function requestUrl(url: string): string {
  let scheme: string | undefined;
  try {
    scheme = new URL(url).protocol;
  } catch {
    return url;
  }
  if (!["http:", "https:", "blob:", "data:", "file:", "about:"].includes(scheme)) {
    throw toolError("invalid_argument", `url: scheme ${scheme} cannot be requested`, "Give an http(s) URL, or a path relative to the page.", { field: "url" });
  }
  return url;
}

export const fetchInPage = defineTool<{ tabId?: number; url: string; method?: string; headers?: Record<string, string>; body?: string }>({
  name: "fetch_in_page",
  description: "HTTP request with the page's cookies; returns status and body.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      url: { type: "string", minLength: 1 },
      method: { type: "string", enum: METHODS },
      headers: { type: "object", properties: {}, additionalProperties: { type: "string" } },
      body: { type: "string" },
    },
    required: ["url"],
  },
  traits: { target: "tab", reads: "page", effects: ["code"], switch: "fetch", dialog: "blocked", handoff: "refused", destination: (a) => requestUrl(String(a.url ?? "")) },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    checkNoDialog(tabId);
    const policy = await getPolicy();
    // SECURITY I-44: the request goes where the page would send it: the URL resolved against the
    // document's base URL, judged here before anything is sent; the page refuses to send it if
    // its document or that resolution changed since.
    const where = await inTop(tabId, resolveInPage, [a.url], left(ctx.deadline, 5_000), ctx.signal);
    if (!where || !docAllowed(policy, where.origin, where.url)) {
      throw toolError("origin_not_allowed", "the page is not on the person's allowlist; nothing was sent");
    }
    if (!where.abs) throw toolError("invalid_argument", "url: not a URL the page can resolve", "Give an http(s) URL, or a path relative to the page.", { field: "url" });
    if (!judgeUrl(policy, where.abs).allowed) {
      throw toolError("origin_not_allowed", "the request's destination is not on the person's allowlist; nothing was sent", "Only the person can add an origin, in the Torii popup or options.");
    }
    const p = { url: a.url, expect: where.abs, origin: where.origin, method: a.method ?? "GET", headers: a.headers ?? {}, ...(a.body !== undefined ? { body: a.body } : {}), max: MAX_CHARS + CUT_MARGIN };
    const v = await inTop(tabId, fetchInPageWorld, [p], left(ctx.deadline, 17_000), ctx.signal);
    if (!v) throw toolError("navigation_failed", "the page navigated or unloaded during fetch_in_page; nothing was returned");
    if (v.refused === "redirect") {
      throw toolError(
        "origin_not_allowed",
        "the server answered with a redirect, which fetch_in_page does not follow (where it leads cannot be judged before the browser sends it); nothing of it was returned",
        "Request the redirect's target directly, if it is on the person's allowlist.",
      );
    }
    if (v.refused) throw toolError("navigation_failed", "the page changed before the request was sent; nothing was sent", "Check the page and call fetch_in_page again.");
    if (v.error !== undefined) {
      throw toolError("navigation_failed", `fetch failed: ${v.error}`, "Check the URL; cross-origin requests follow the page's CORS rules.");
    }
    // SECURITY I-44: the answer is of the URL judged; should it come from anywhere else, it is dropped unread.
    if (!v.url || !judgeUrl(await getPolicy(), v.url).allowed) {
      throw toolError("origin_not_allowed", "the request was redirected to an origin that is not on the person's allowlist; its response was dropped");
    }
    const cut = maskCut(v.body ?? "", MAX_CHARS);
    const body = cut.text;
    const length = v.length ?? body.length;
    const truncated = cut.cut || length > (v.body ?? "").length;
    return {
      text: `HTTP ${v.status} ${v.type}\n${body}${truncated ? "\n[truncated]" : ""}`,
      data: { tabId, status: v.status, url: v.url, contentType: v.type, length, ...(truncated ? { truncated: true } : {}) },
    };
  },
});

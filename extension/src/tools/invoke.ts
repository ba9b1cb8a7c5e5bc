// invoke: calls a function the page already defines (`app.store.reset`) with JSON arguments and
// returns its answer as bounded JSON. A page function can do anything a program can (`$.globalEval`
// is eval under another name, and neither a name, a source text nor `bind` tells), so the call is
// code execution of unknowable effect (traits.anyEffect): it needs its own per-origin switch and
// evaluate's program switch, act mode, and the approvals of code and of every effect, all judged
// by the gate before the page is touched; permissive mode grants none of it (SECURITY I-71). It
// runs in the top document's main world through CDP, watched like evaluate: an answer from a
// document that replaced the judged one is dropped (SECURITY I-15).

import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { resolveTab } from "./browser.js";
import { S } from "./common.js";
import { runInPage } from "./evaluate.js";
import { invokeInPage, type InvokeOutcome } from "./invoke-page.js";

/** The answer's bound, as evaluate's (a longer one is cut in the page and says so). */
const MAX_CHARS = 20_000;

/** Segments that reach prototypes or redefine properties: refused whatever the page holds (prototype pollution). */
const FORBIDDEN = new Set(["__proto__", "prototype", "constructor", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"]);

/** Words that are not a binding the first segment could read (`() => new` would not parse). */
const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if import in " +
    "instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package " +
    "private protected public await arguments eval"
  ).split(" "),
);

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** The path's segments, or invalid_argument naming `path` and the segment at fault. */
export function parsePath(path: string): string[] {
  const segs = path.split(".");
  const bad = (why: string) => toolError("invalid_argument", `path: ${why}; nothing was called`, "Give a dotted path of names from the page's globals to a function, e.g. app.store.reset.", { field: "path" });
  if (segs.length > 32) throw bad("at most 32 segments");
  segs.forEach((s, i) => {
    if (FORBIDDEN.has(s)) throw bad(`"${s}" reaches into prototypes and is refused`);
    if (i === 0 ? !IDENT.test(s) || RESERVED.has(s) : !IDENT.test(s) && !INDEX.test(s)) throw bad(`"${s}" is not a property name`);
  });
  return segs;
}

/** The expression that runs invokeInPage in the page: data goes in as JSON text, never as code. */
export function invokeExpression(segs: string[], args: unknown[], max: number, timeoutMs: number): string {
  const root = segs[0] as string;
  return `(${invokeInPage.toString()})(globalThis, ${JSON.stringify(segs)}, ${JSON.stringify(JSON.stringify(args))}, ${max}, ${timeoutMs}, () => ${root})`;
}

function failure(o: Exclude<InvokeOutcome, { ok: true }>, timeoutMs: number) {
  switch (o.fail) {
    case "missing":
      return toolError("not_found", `${o.at} does not exist on the page${o.type ? ` (its parent is ${o.type})` : ""}; nothing was called`, "Check the path: evaluate (if allowed) or the page's code shows what it defines.");
    case "getter":
      return toolError("invalid_argument", `path: ${o.at} is a getter; invoke never runs getters (they are page code that may navigate or change the page), nothing was called`, "Give a path of plain properties to a function.", { field: "path" });
    case "not_function":
      return toolError("invalid_argument", `path: ${o.at} is ${o.type === "undefined" ? "undefined" : `a${/^[aeiou]/.test(o.type ?? "") ? "n" : ""} ${o.type}`}, not a function; nothing was called`, "Give the path of a function, e.g. app.store.reset.", { field: "path" });
    case "no_source":
      return toolError(
        "invalid_argument",
        `path: ${o.at} is a function the page cannot show the source of (built into the browser, bound, or a proxy); invoke calls only functions the page's own scripts define, nothing was called`,
        "Give the path of the page's own function (a bound method: the method it binds), or use the tool made for it (navigate, fetch_in_page, evaluate).",
        { field: "path" },
      );
    case "class":
      return toolError("invalid_argument", `path: ${o.at} is a class; invoke calls functions and never constructs, nothing was called`, "Give the path of a method of an instance the page holds.", {
        field: "path",
      });
    case "threw":
      if (o.reading) return toolError("page_error", `reading ${o.at} threw ${o.name}: ${o.message}; nothing was called`, undefined, { name: o.name, message: o.message });
      return toolError("page_error", `${o.at} threw ${o.name}: ${o.message}`, undefined, { name: o.name, message: o.message });
    case "timeout":
      return toolError("timeout", `${o.at} returned a promise that did not settle within ${timeoutMs} ms; it may still be running`);
  }
}

const TIMEOUT_MS = 10_000;

/** The arguments: a JSON array as text (any JSON values, which a typed schema could not say compactly). */
export function parseArgs(text: string | undefined): unknown[] {
  if (text === undefined) return [];
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw toolError("invalid_argument", `args: not JSON (${(e as Error).message})`, 'Give a JSON array, e.g. "[3, {\"force\": true}]".', { field: "args" });
  }
  if (!Array.isArray(v)) throw toolError("invalid_argument", "args: must be a JSON array of the arguments", 'e.g. "[3]" for one argument.', { field: "args" });
  return v;
}

export const invoke = defineTool<{ tabId?: number; path: string; args?: string }>({
  name: "invoke",
  group: "invoke",
  description: "Call a page function by path (app.store.reset); args: JSON array text.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      path: { type: "string", minLength: 1, maxLength: 1000 },
      args: { type: "string", maxLength: 1_000_000 },
    },
    required: ["path"],
  },
  traits: { target: "tab", reads: "page", effects: ["code"], switch: "invoke", anyEffect: true, dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const segs = parsePath(a.path);
    const args = parseArgs(a.args);
    const tabId = (await resolveTab(a.tabId)).id as number;
    const max = MAX_CHARS;
    const timeoutMs = TIMEOUT_MS;
    const r = await runInPage(tabId, invokeExpression(segs, args, max, timeoutMs), timeoutMs, ctx);
    if (r.exceptionDetails) {
      // Only the wrapper itself can throw here (the call's own exception is caught in the page).
      throw toolError("page_error", `invoke could not run in this page: ${(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text ?? "exception").split("\n")[0]}`);
    }
    const o = r.result?.value as InvokeOutcome | undefined;
    if (!o || typeof o !== "object") throw toolError("internal", "invoke: the page gave no answer");
    if (!("ok" in o)) throw failure(o, timeoutMs);
    const notes: string[] = [];
    if (o.cycles > 0) notes.push(`[${o.cycles} circular reference${o.cycles > 1 ? "s" : ""} replaced by "[Circular]"]`);
    if (o.truncated) notes.push(`[truncated at ${max} chars: the answer is longer; call a function that returns a part of it]`);
    return {
      text: (o.type === "undefined" ? "undefined" : o.json) + (notes.length ? `\n${notes.join("\n")}` : ""),
      data: { tabId, path: a.path, type: o.type, ...(o.truncated ? { truncated: true } : {}), ...(o.cycles ? { cycles: o.cycles } : {}) },
    };
  },
});

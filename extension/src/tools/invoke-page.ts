// The page side of invoke: walks a path of plain data properties from the page's global object to
// a function the page's own scripts defined, calls it with JSON arguments and returns its answer as
// bounded JSON. It runs in the page's main world (stringified by tools/invoke.ts), so it must be
// self-contained; node tests call it directly with a stand-in global (SECURITY I-71).
//
// These checks make a call do what its path says; they are not what keeps code from running. The
// page's own functions can be eval under another name (`$.globalEval`), and the page can rewrite
// Function.prototype.toString to make a built-in look like its own, so no test here can tell what
// a function does. The gate holds every call to evaluate's program switch, act mode and every
// approval before the page is touched (tools/gate.ts, traits.anyEffect).

/** What the page answered: a bounded JSON text, or why nothing was called or what it threw. */
export type InvokeOutcome =
  | { ok: true; json: string; type: string; truncated: boolean; cycles: number }
  | { fail: "missing" | "getter" | "not_function" | "no_source" | "class"; at: string; type?: string }
  | { fail: "threw"; at: string; name: string; message: string; reading?: true }
  | { fail: "timeout"; at: string };

/**
 * `root` is the page's global object; `lexical` reads the first segment as a global binding when it
 * is not a property of it (`const app = …` in a classic script), so no getter of `root` runs for it.
 * Only data properties are followed, never accessors: a getter is page code that can navigate or
 * change the page, and a property read through one is refused before anything runs (a Proxy's
 * traps are the page's code too: one that throws ends the walk, nothing called). Only a function
 * whose source the page shows is called: never a built-in, a bound function (whatever it wraps:
 * `fetch.bind(window)` shows no source either) or a callable Proxy, and never a class.
 */
export async function invokeInPage(
  root: object,
  path: string[],
  argsJson: string,
  max: number,
  timeoutMs: number,
  lexical?: () => unknown,
): Promise<InvokeOutcome> {
  const describe = (x: unknown) => (x === null ? "null" : Array.isArray(x) ? "array" : typeof x);
  const thrown = (e: unknown): { fail: "threw"; name: string; message: string } => {
    let en = "Error";
    let msg = "";
    try {
      if (e instanceof Error) {
        en = String(e.name);
        msg = String(e.message);
      } else {
        en = describe(e);
        msg = typeof e === "string" ? e : JSON.stringify(e) ?? String(e);
      }
    } catch {
      msg = "(an exception that cannot be described)";
    }
    return { fail: "threw", name: en.slice(0, 100), message: msg.slice(0, 2000) };
  };
  const name = (i: number) => path.slice(0, i + 1).join(".");
  let self: unknown = undefined;
  let cur: unknown = root;
  for (let i = 0; i < path.length; i++) {
    const key = path[i] as string;
    if (cur === null || (typeof cur !== "object" && typeof cur !== "function")) return { fail: "missing", at: name(i), type: describe(cur) };
    let d: PropertyDescriptor | undefined;
    let o: object | null = cur as object;
    try {
      for (let hops = 0; o && !d && hops < 256; hops++) {
        d = Object.getOwnPropertyDescriptor(o, key);
        if (!d) o = Object.getPrototypeOf(o) as object | null;
      }
    } catch (e) {
      return { ...thrown(e), at: name(i), reading: true };
    }
    if (!d && i === 0 && lexical) {
      let found = false;
      let v: unknown;
      try {
        v = lexical();
        found = true;
      } catch {
        found = false;
      }
      if (!found) return { fail: "missing", at: name(i) };
      self = undefined;
      cur = v;
      continue;
    }
    if (!d) return { fail: "missing", at: name(i) };
    if (!("value" in d)) return { fail: "getter", at: name(i) };
    self = cur;
    cur = d.value;
  }
  const at = path.join(".");
  if (typeof cur !== "function") return { fail: "not_function", at, type: describe(cur) };
  const fn = cur as (...a: unknown[]) => unknown;
  // The function's own `toString` is not asked (a page may give any function one that lies).
  let src = "";
  try {
    src = String(Reflect.apply(Function.prototype.toString, fn, []));
  } catch {
    src = "";
  }
  if (src === "" || /\{\s*\[native code\]\s*\}\s*$/.test(src)) return { fail: "no_source", at };
  if (/^class\b/.test(src)) return { fail: "class", at };

  let value: unknown;
  try {
    const args = JSON.parse(argsJson) as unknown[];
    value = Reflect.apply(fn, self, args);
    if (value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function") {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<{ late: true }>((r) => {
        timer = setTimeout(() => r({ late: true }), timeoutMs);
      });
      const won = await Promise.race([Promise.resolve(value).then((v) => ({ v })), late]);
      clearTimeout(timer);
      if ("late" in won) return { fail: "timeout", at };
      value = won.v;
    }
  } catch (e) {
    return { ...thrown(e), at };
  }

  // Bounded JSON: it stops writing at `max` characters (a 10 MB answer costs the page no more than
  // that), cuts cycles ("[Circular]") and skips what JSON skips (functions, symbols, undefined).
  // Accessors are not read: serialising runs no page getter.
  const out: string[] = [];
  let len = 0;
  let truncated = false;
  let cycles = 0;
  const open = new Set<object>();
  const push = (s: string) => {
    if (truncated) return;
    if (len + s.length > max) {
      out.push(s.slice(0, max - len));
      len = max;
      truncated = true;
      return;
    }
    out.push(s);
    len += s.length;
  };
  const skip = (x: unknown) => x === undefined || typeof x === "function" || typeof x === "symbol";
  const walk = (x: unknown, depth: number): void => {
    if (truncated) return;
    if (x === null || x === undefined || typeof x === "function" || typeof x === "symbol") return push("null");
    if (typeof x === "string") return push(JSON.stringify(x.length > max ? x.slice(0, max + 1) : x));
    if (typeof x === "number") return push(Number.isFinite(x) ? String(x) : "null");
    if (typeof x === "boolean") return push(x ? "true" : "false");
    if (typeof x === "bigint") return push(JSON.stringify(String(x)));
    const obj = x as object;
    if (open.has(obj)) {
      cycles++;
      return push('"[Circular]"');
    }
    if (depth > 100) return push('"[Too deep]"');
    if (obj instanceof Date) return push(JSON.stringify(Number.isNaN(obj.getTime()) ? null : obj.toISOString()));
    open.add(obj);
    if (Array.isArray(obj)) {
      push("[");
      for (let i = 0; i < obj.length && !truncated; i++) {
        if (i) push(",");
        const d = Object.getOwnPropertyDescriptor(obj, i);
        walk(d && "value" in d ? d.value : null, depth + 1);
      }
      push("]");
    } else {
      push("{");
      let first = true;
      for (const k of Object.keys(obj)) {
        if (truncated) break;
        const d = Object.getOwnPropertyDescriptor(obj, k);
        if (!d || !("value" in d) || skip(d.value)) continue;
        if (!first) push(",");
        first = false;
        push(`${JSON.stringify(k)}:`);
        walk(d.value, depth + 1);
      }
      push("}");
    }
    open.delete(obj);
  };
  if (value === undefined) return { ok: true, json: "", type: "undefined", truncated: false, cycles: 0 };
  walk(value, 0);
  return { ok: true, json: out.join(""), type: describe(value), truncated, cycles };
}

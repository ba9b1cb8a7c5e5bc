// invoke and drag in node: invoke is code execution of unknowable effect (its own switch and
// evaluate's program switch, act mode, the approvals of code and of every effect in one request;
// permissive mode grants none of it; SECURITY I-71), the gates drag shares with mouse_click, the
// path rules, and the page side of invoke run against a stand-in global: getters never run,
// prototypes are not reachable, functions without source and classes are not called, cycles and
// huge answers are bounded.
import { afterEach, describe, expect, it } from "vitest";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { getTool } from "../../src/tools/registry.js";
import { defaultPolicy, normalizeRule, permissivePolicy, type Policy } from "../../src/policy/policy.js";
import { ToolError } from "../../src/tools/errors.js";
import { invokeExpression, parseArgs, parsePath } from "../../src/tools/invoke.js";
import { invokeInPage } from "../../src/tools/invoke-page.js";
import { checkEnd, pathPoints, stepsFor } from "../../src/tools/drag.js";

function env(policy: Policy, asked: string[] = []): PolicyEnv {
  return {
    policy: async () => policy,
    tab: async (id) => ({ tabId: id ?? 7, url: "https://good.example/app" }),
    inHandoff: () => false,
    checkNoDialog: () => undefined,
    allFramesAllowed: async () => true,
    risk: async () => undefined,
    inputFacts: async (_t, origin) => ({ origin }),
    ask: async (req) => {
      asked.push(`${[req.kind, ...(req.also ?? [])].join("+")}:${req.text ?? ""}`);
      return "approved";
    },
  };
}

async function run(tool: string, args: Record<string, unknown>, e: PolicyEnv): Promise<{ code: string; message: string; hint: string; data?: Record<string, unknown>; ctx: GateContext }> {
  setGateState({ paused: () => false, env: e });
  const ctx: GateContext = { signal: new AbortController().signal };
  try {
    await gate({ tool: getTool(tool)!, args }, ctx);
    return { code: "ok", message: "", hint: "", ctx };
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    return { code: err.code, message: err.message, hint: err.hint, ...(err.data ? { data: err.data } : {}), ctx };
  }
}

const rule = (r: Record<string, unknown>, actMode = true): Policy => ({ ...defaultPolicy(), actMode, rules: [{ pattern: "good.example", ...r }] });

afterEach(() => setGateState({ paused: () => false }));

describe("invoke's switch", () => {
  it("is off by default and not granted by act mode, evaluate's switches or permissive mode", async () => {
    for (const p of [rule({}), rule({ act: true, evalExpression: true, evalProgram: true, fetch: true, allowPassword: true }), permissivePolicy()]) {
      const r = await run("invoke", { path: "app.reset" }, env(p));
      expect(r.code).toBe("eval_not_allowed");
      expect(r.message).toContain("invoke is off");
      expect(r.message).toContain("Torii options");
    }
  });
  it("on for the origin, it also needs evaluate's program switch (the expression one is not enough), permissive mode neither", async () => {
    for (const p of [rule({ invoke: true }), rule({ invoke: true, evalExpression: true, fetch: true }), { ...permissivePolicy(), rules: [{ pattern: "good.example", invoke: true }] }]) {
      const r = await run("invoke", { path: "app.reset" }, env(p));
      expect(r.code).toBe("eval_not_allowed");
      expect(r.message).toContain("evaluate (program)");
      expect(r.hint).toContain("Eval program");
      expect(r.data).toEqual({ switch: "evalProgram" });
    }
  });
  it("needs act mode, globally or for the origin", async () => {
    const r = await run("invoke", { path: "app.add" }, env(rule({ invoke: true, evalProgram: true }, false)));
    expect(r.code).toBe("act_mode_off");
    expect(r.message).toContain("nothing was called");
    expect((await run("invoke", { path: "app.add" }, env(rule({ invoke: true, evalProgram: true, act: true }, false)))).code).toBe("ok");
  });
  it("with every switch on: one request asks about code and every effect, the call shown", async () => {
    const asked: string[] = [];
    const p = rule({ invoke: true, evalProgram: true });
    const r = await run("invoke", { path: "app.add", args: '[1, {"a":2}]' }, env(p, asked));
    expect(r.code).toBe("ok");
    expect(asked).toEqual(['evaluate+submit+destructive_click+new_origin:app.add(1, {"a":2})']);
    expect(r.ctx.approval).toBe("approved");
  });
  it("one ask among allows is enough to ask, once, naming every effect", async () => {
    const asked: string[] = [];
    const p = { ...rule({ invoke: true, evalProgram: true }), approvals: { ...defaultPolicy().approvals, evaluate: "allow", submit: "allow", destructive_click: "allow", new_origin: "ask" } } as Policy;
    expect((await run("invoke", { path: "app.add" }, env(p, asked))).code).toBe("ok");
    expect(asked).toEqual(["evaluate+submit+destructive_click+new_origin:app.add()"]);
  });
  it("all allowed: nobody is asked", async () => {
    const asked: string[] = [];
    const all = { evaluate: "allow", submit: "allow", destructive_click: "allow", new_origin: "allow" } as const;
    const r = await run("invoke", { path: "app.add" }, env(rule({ invoke: true, evalProgram: true, approvals: all }), asked));
    expect(r.code).toBe("ok");
    expect(r.ctx.approval).toBe("auto");
    expect(asked).toEqual([]);
  });
  it("any effect denied: refused before anyone is asked, naming each denied choice", async () => {
    for (const kind of ["evaluate", "submit", "destructive_click", "new_origin"] as const) {
      const asked: string[] = [];
      const r = await run("invoke", { path: "app.hello" }, env(rule({ invoke: true, evalProgram: true, approvals: { [kind]: "deny" } }), asked));
      expect(r.code, kind).toBe("approval_denied");
      expect(r.message).toContain(`(${kind})`);
      expect(r.message).toContain("nothing was called");
      expect(r.hint).toContain(`(${kind})`);
      expect(r.data).toEqual({ denied: [kind] });
      expect(asked).toEqual([]);
    }
    const both = await run("invoke", { path: "app.hello" }, env(rule({ invoke: true, evalProgram: true, approvals: { submit: "deny", new_origin: "deny", evaluate: "ask" } })));
    expect(both.data).toEqual({ denied: ["submit", "new_origin"] });
  });
  it("evaluate itself still asks about code alone", async () => {
    const asked: string[] = [];
    expect((await run("evaluate", { program: "return 1" }, env(rule({ evalProgram: true }), asked))).code).toBe("ok");
    expect(asked).toEqual(["evaluate:return 1"]);
  });
  it("is declared as code of any effect in its one registry entry", () => {
    const t = getTool("invoke")!;
    expect(t.traits).toMatchObject({ effects: ["code"], switch: "invoke", anyEffect: true });
    expect(t.destructive).toBe(true);
  });
  it("does not grant evaluate", async () => {
    expect((await run("evaluate", { expression: "1" }, env(rule({ invoke: true })))).code).toBe("eval_not_allowed");
  });
  it("survives normalisation (the options page's save)", () => {
    expect(normalizeRule({ pattern: "good.example", invoke: true })).toMatchObject({ invoke: true });
    expect(normalizeRule({ pattern: "good.example", invoke: "yes" })).not.toHaveProperty("invoke");
  });
});

describe("drag's gates", () => {
  it("needs act mode like mouse_click, and arms the effect guard", async () => {
    const args = { from: { ref: "b1" }, to: { x: 10, y: 10 } };
    expect((await run("drag", args, env(rule({}, false)))).code).toBe("act_mode_off");
    expect((await run("mouse_click", { ref: "b1" }, env(rule({}, false)))).code).toBe("act_mode_off");
    const ok = await run("drag", args, env(rule({})));
    expect(ok.code).toBe("ok");
    expect(ok.ctx.guard).toBeDefined();
  });
  it("is a destructive write tool with the click effect", () => {
    const t = getTool("drag")!;
    expect(t.traits.effects).toEqual(["click"]);
    expect(t.readOnly).toBe(false);
    expect(t.destructive).toBe(true);
  });
  it("ends: a ref, a selector or both coordinates, exactly one", () => {
    expect(() => checkEnd({ ref: "b1" }, "from")).not.toThrow();
    expect(() => checkEnd({ x: 1, y: 2 }, "to")).not.toThrow();
    for (const bad of [{}, { x: 1 }, { ref: "b1", x: 1, y: 1 }, { ref: "b1", selector: "#a" }]) {
      expect(() => checkEnd(bad, "to")).toThrow(expect.objectContaining({ code: "invalid_argument", data: { field: "to" } }));
    }
  });
  it("steps of about 20 px, 5 to 40", () => {
    expect(stepsFor({ x: 0, y: 0 }, { x: 3, y: 0 })).toBe(5);
    expect(stepsFor({ x: 0, y: 0 }, { x: 300, y: 400 })).toBe(25);
    expect(stepsFor({ x: 0, y: 0 }, { x: 5000, y: 0 })).toBe(40);
  });
  it("the path ends at the end point", () => {
    const p = pathPoints({ x: 0, y: 0 }, { x: 100, y: 50 }, 4);
    expect(p).toEqual([{ x: 25, y: 12.5 }, { x: 50, y: 25 }, { x: 75, y: 37.5 }, { x: 100, y: 50 }]);
  });
});

describe("invoke paths", () => {
  it("refuses prototype paths and non-names before the page is touched", () => {
    for (const bad of ["__proto__.constructor", "app.__proto__", "app.constructor", "Object.prototype", "app..x", "app.x-y", "new", "app[0]", "eval"]) {
      expect(() => parsePath(bad), bad).toThrow(expect.objectContaining({ code: "invalid_argument", data: { field: "path" } }));
    }
    expect(parsePath("app.store.items.0.reset")).toEqual(["app", "store", "items", "0", "reset"]);
  });
  it("args: a JSON array text, else invalid_argument naming args", () => {
    expect(parseArgs(undefined)).toEqual([]);
    expect(parseArgs('[3, {"force": true}]')).toEqual([3, { force: true }]);
    for (const bad of ["{", '{"a":1}', "3", "app.x()"]) {
      expect(() => parseArgs(bad), bad).toThrow(expect.objectContaining({ code: "invalid_argument", data: { field: "args" } }));
    }
  });
  it("arguments go into the page as JSON text, never as code", () => {
    const e = invokeExpression(["app", "f"], [{ __proto__: { polluted: true } }, "\u2028</script>"], 100, 1000);
    expect(e).toContain(JSON.stringify(JSON.stringify([{ __proto__: { polluted: true } }, "\u2028</script>"])));
  });
});

describe("invoke in the page", () => {
  class Store {
    items = [1, 2];
    reset(this: Store, n: number) {
      this.items = Array.from({ length: n }, (_, i) => i);
      return this.items;
    }
  }
  const make = () => {
    let navigated = false;
    const app = {
      store: new Store(),
      version: "1.2",
      boom() {
        throw new TypeError("store is locked");
      },
      cycle() {
        const a: Record<string, unknown> = { name: "a" };
        a.self = a;
        return { a, list: [a] };
      },
      huge() {
        return "x".repeat(10 * 1024 * 1024);
      },
      async later(v: number) {
        return v * 2;
      },
      never() {
        return new Promise(() => undefined);
      },
      get nav() {
        navigated = true;
        return { go: () => "went" };
      },
    };
    const lying = fetch.bind(globalThis);
    lying.toString = () => "function lying(u) { return page(u); }";
    const honest = (n: string) => `hello ${n}`;
    honest.toString = () => "function honest() { [native code] }";
    const trap = new Proxy({}, { getOwnPropertyDescriptor: () => { throw new Error("the trap refuses"); } });
    const callableProxy = new Proxy(() => "ran", {});
    return {
      root: { app, parseInt, bound: parseInt.bind(null), boundPage: app.version.concat.bind("v"), pageBound: ((n: number) => n + 1).bind(null), lying, honest, trap, callableProxy, Store },
      navigated: () => navigated,
    };
  };
  const call = (root: object, path: string, args: unknown[] = [], max = 1000, ms = 200) => invokeInPage(root, path.split("."), JSON.stringify(args), max, ms);

  it("calls a method with its object as this and returns JSON", async () => {
    const { root } = make();
    expect(await call(root, "app.store.reset", [3])).toEqual({ ok: true, json: "[0,1,2]", type: "array", truncated: false, cycles: 0 });
    expect(await call(root, "app.later", [21])).toMatchObject({ ok: true, json: "42" });
  });
  it("not a function, missing", async () => {
    const { root } = make();
    expect(await call(root, "app.version")).toEqual({ fail: "not_function", at: "app.version", type: "string" });
    expect(await call(root, "app.nope.x")).toEqual({ fail: "missing", at: "app.nope" });
  });
  it("no function without a source is called: built-ins, bound functions of any target, callable proxies, a bound built-in whose toString lies", async () => {
    const { root } = make();
    for (const path of ["parseInt", "bound", "boundPage", "pageBound", "lying", "callableProxy"]) {
      expect(await call(root, path, ["7"]), path).toEqual({ fail: "no_source", at: path });
    }
  });
  it("a page function's own toString is not asked: one that claims to be built in is called as what it is", async () => {
    expect(await call(make().root, "honest", ["torii"])).toMatchObject({ ok: true, json: '"hello torii"' });
  });
  it("a class is not constructed", async () => {
    expect(await call(make().root, "Store")).toEqual({ fail: "class", at: "Store" });
  });
  it("a proxy's trap that throws on the way ends the walk, nothing called", async () => {
    expect(await call(make().root, "trap.x")).toEqual({ fail: "threw", at: "trap.x", name: "Error", message: "the trap refuses", reading: true });
  });
  it("a throw is reported with its message", async () => {
    expect(await call(make().root, "app.boom")).toEqual({ fail: "threw", at: "app.boom", name: "TypeError", message: "store is locked" });
  });
  it("a getter is refused and never runs", async () => {
    const m = make();
    expect(await call(m.root, "app.nav.go")).toEqual({ fail: "getter", at: "app.nav" });
    expect(m.navigated()).toBe(false);
  });
  it("cycles are cut, huge answers bounded", async () => {
    const { root } = make();
    const c = await call(root, "app.cycle");
    expect(c).toMatchObject({ ok: true, cycles: 2, truncated: false });
    expect(JSON.parse((c as { json: string }).json)).toEqual({ a: { name: "a", self: "[Circular]" }, list: [{ name: "a", self: "[Circular]" }] });
    const h = await call(root, "app.huge", [], 5000);
    expect(h).toMatchObject({ ok: true, truncated: true });
    expect((h as { json: string }).json.length).toBe(5000);
  });
  it("a promise that never settles times out", async () => {
    expect(await call(make().root, "app.never", [], 1000, 50)).toEqual({ fail: "timeout", at: "app.never" });
  });
  it("the first segment may be a lexical global, read without any getter", async () => {
    const r = await invokeInPage({}, ["app", "later"], "[1]", 100, 100, () => ({ later: (v: number) => v + 1 }));
    expect(r).toMatchObject({ ok: true, json: "2" });
    const miss = await invokeInPage({}, ["nope", "x"], "[]", 100, 100, () => {
      throw new ReferenceError("nope is not defined");
    });
    expect(miss).toEqual({ fail: "missing", at: "nope" });
  });
});

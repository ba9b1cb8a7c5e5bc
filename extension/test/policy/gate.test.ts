// The gate with a fake environment: each of the person's gates refuses with its own code, the
// refusal never names a blocked host, and approvals wait for the person (SECURITY I-14…I-22).
import { afterEach, describe, expect, it } from "vitest";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { getTool } from "../../src/tools/registry.js";
import { defineTool, type AnyTool } from "../../src/tools/define.js";
import type { Effect, Traits } from "../../src/tools/traits.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";
import { ToolError } from "../../src/tools/errors.js";

const NO_EFFECT = { submit: false, destructive: false };
/** The target the fake page describes: a button the page marks destructive. */
const DELETE_BUTTON = { label: 'button "Delete"', click: { submit: false, destructive: true }, enter: NO_EFFECT, space: NO_EFFECT };

function env(policy: Policy, url: string, o: Partial<PolicyEnv> = {}): PolicyEnv {
  return {
    policy: async () => policy,
    tab: async (id) => ({ tabId: id ?? 7, url }),
    inHandoff: () => false,
    checkNoDialog: () => undefined,
    allFramesAllowed: async () => true,
    risk: async () => ({ label: 'button "Delete"', isPassword: false, submit: false, destructive: true }),
    inputFacts: async (_t, origin, _e, args) => ({ origin, ...(args.ref || args.selector ? { target: DELETE_BUTTON } : {}) }),
    ask: async () => "approved",
    ...o,
  };
}

async function code(tool: string, args: Record<string, unknown>, e: PolicyEnv, paused = false): Promise<string> {
  setGateState({ paused: () => paused, env: e });
  const ctx: GateContext = { signal: new AbortController().signal };
  try {
    await gate({ tool: getTool(tool)!, args }, ctx);
    return "ok";
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    expect(err.message).not.toContain("evil.example");
    return err.code;
  }
}

const allowed = (rule: Record<string, unknown> = {}, actMode = true): Policy => ({ ...defaultPolicy(), actMode, approvals: { ...defaultPolicy().approvals, destructive_click: "allow" }, rules: [{ pattern: "good.example", ...rule }] });

afterEach(() => setGateState({ paused: () => false }));

describe("gate", () => {
  it("no policy wired: refuses", async () => {
    setGateState({ paused: () => false });
    await expect(gate({ tool: getTool("snapshot")!, args: {} }, { signal: new AbortController().signal })).rejects.toMatchObject({ code: "origin_not_allowed" });
  });
  it("pause first", async () => {
    expect(await code("snapshot", {}, env(allowed(), "https://good.example/"), true)).toBe("paused");
  });
  it("origin: tab, navigate target, blocked host never named", async () => {
    expect(await code("snapshot", {}, env(allowed(), "https://evil.example/"))).toBe("origin_not_allowed");
    expect(await code("snapshot", {}, env(allowed(), "https://good.example/"))).toBe("ok");
    expect(await code("navigate", { url: "https://evil.example/" }, env(allowed(), "https://good.example/"))).toBe("origin_not_allowed");
    expect(await code("navigate", { url: "evil.example/x" }, env(allowed(), "https://good.example/"))).toBe("origin_not_allowed");
    expect(await code("snapshot", {}, env(defaultPolicy(), "https://good.example/"))).toBe("origin_not_allowed");
  });
  it("navigate: newTab with tabId is invalid_argument before the tab is looked at (SECURITY I-87)", async () => {
    const e = env(allowed(), "https://good.example/", { tab: async () => { throw new Error("the tab was looked at"); } });
    setGateState({ paused: () => false, env: e });
    const err = await gate({ tool: getTool("navigate")!, args: { url: "https://good.example/", tabId: 7, newTab: true } }, { signal: new AbortController().signal }).catch((x: unknown) => x);
    expect(err).toMatchObject({ code: "invalid_argument", data: { field: "newTab" } });
    expect(await code("navigate", { url: "https://good.example/", newTab: true }, e)).toBe("ok");
  });
  it("act mode", async () => {
    expect(await code("click", { selector: "#x" }, env(allowed({}, false), "https://good.example/"))).toBe("act_mode_off");
    expect(await code("click", { selector: "#x" }, env(allowed({ act: true }, false), "https://good.example/"))).toBe("ok");
    expect(await code("snapshot", {}, env(allowed({}, false), "https://good.example/"))).toBe("ok");
  });
  it("eval switches", async () => {
    const e = env(allowed({ evalExpression: true }), "https://good.example/", {});
    expect(await code("evaluate", { expression: "1" }, e)).toBe("ok");
    expect(await code("evaluate", { program: "return 1" }, e)).toBe("eval_not_allowed");
    expect(await code("fetch_in_page", { url: "/x" }, e)).toBe("eval_not_allowed");
    const f = env(allowed({ fetch: true }), "https://good.example/");
    expect(await code("fetch_in_page", { url: "/x" }, f)).toBe("ok");
    expect(await code("fetch_in_page", { url: "https://evil.example/x" }, f)).toBe("origin_not_allowed");
  });
  it("console and network capture need the origin's own switch, which names itself", async () => {
    for (const t of ["console_tail", "network_tail"]) {
      const off = env(allowed({ act: true, evalExpression: true, evalProgram: true, fetch: true }), "https://good.example/");
      setGateState({ paused: () => false, env: off });
      const err = await gate({ tool: getTool(t)!, args: {} }, { signal: new AbortController().signal }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolError);
      expect((err as ToolError).code).toBe("observe_off");
      expect((err as ToolError).message).toContain('"Console & network"');
      expect((err as ToolError).message).toContain("Torii options");
      // Permissive mode does not turn it on; the origin's switch does.
      expect(await code(t, {}, env({ ...defaultPolicy(), permissive: true, actMode: true }, "https://good.example/"))).toBe("observe_off");
      expect(await code(t, {}, env(allowed({ observe: true }), "https://good.example/"))).toBe("ok");
      expect(await code(t, {}, env(allowed({ observe: true }), "https://evil.example/"))).toBe("origin_not_allowed");
    }
  });
  it("handoff withholds the tab", async () => {
    const e = env(allowed(), "https://good.example/", { inHandoff: () => true });
    for (const t of ["snapshot", "read_text", "click", "handoff"]) {
      expect(await code(t, t === "click" ? { selector: "#b" } : t === "handoff" ? { reason: "mfa" } : {}, e)).toBe("handoff_active");
    }
  });
  it("approvals: ask → approved / denied / timeout; deny without asking", async () => {
    const ask = (o: "approved" | "denied" | "timeout" | "unanswerable") =>
      env({ ...allowed(), approvals: { ...defaultPolicy().approvals, destructive_click: "ask" } }, "https://good.example/", { ask: async () => o });
    expect(await code("click", { ref: "e1" }, ask("approved"))).toBe("ok");
    expect(await code("click", { ref: "e1" }, ask("denied"))).toBe("approval_denied");
    expect(await code("click", { ref: "e1" }, ask("timeout"))).toBe("approval_timeout");
    // SECURITY I-80: no one can answer: refused, never run.
    expect(await code("click", { ref: "e1" }, ask("unanswerable"))).toBe("approval_unanswerable");
    const deny = env({ ...allowed(), approvals: { ...defaultPolicy().approvals, destructive_click: "deny" } }, "https://good.example/");
    expect(await code("click", { ref: "e1" }, deny)).toBe("approval_denied");
  });
  it("screenshot with a blocked frame", async () => {
    expect(await code("screenshot", {}, env(allowed(), "https://good.example/", { allFramesAllowed: async () => false }))).toBe("origin_not_allowed");
  });
});

// The gate decides from a tool's declared traits alone: a new tool with the same traits as an
// existing one gets exactly the same gates, whatever its name (SECURITY I-48).
describe("gate: traits, not names", () => {
  const tool = (traits: Traits, name = "brand_new_tool") =>
    defineTool({ name, description: "x", inputSchema: { type: "object", properties: {} }, traits, handler: async () => ({ text: "" }) });
  const writer: Traits = { target: "tab", reads: "page", effects: ["click"], switch: "act", dialog: "blocked", handoff: "refused" };
  const run = async (t: AnyTool, args: Record<string, unknown>, e: PolicyEnv): Promise<string> => {
    setGateState({ paused: () => false, env: e });
    try {
      await gate({ tool: t, args }, { signal: new AbortController().signal });
      return "ok";
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      return err.code;
    }
  };

  it("a renamed copy of a tool is gated like the original", async () => {
    for (const name of ["click", "type", "evaluate", "fetch_in_page", "navigate", "screenshot", "handle_dialog"]) {
      const orig = getTool(name)!;
      const copy = tool(orig.traits, `copy_of_${name}`);
      for (const [policy, url] of [
        [allowed({}, false), "https://good.example/"],
        [allowed({}, true), "https://good.example/"],
        [allowed({ evalExpression: true, fetch: true }, true), "https://good.example/"],
        [allowed({}, true), "https://evil.example/"],
      ] as const) {
        const args = name === "navigate" || name === "fetch_in_page" ? { tabId: 7, url: "https://good.example/x" } : name === "evaluate" ? { expression: "1" } : { ref: "e1" };
        const e = env(policy, url);
        expect(await run(copy, { ...args }, e), `${name} on ${url}`).toBe(await run(orig, { ...args }, e));
      }
    }
  });

  it("act mode, the code switches, handoff and dialogs come from the traits", async () => {
    const on = env(allowed({}, true), "https://good.example/");
    expect(await run(tool(writer), { ref: "e1" }, env(allowed({}, false), "https://good.example/"))).toBe("act_mode_off");
    expect(await run(tool({ ...writer, switch: "evaluate", effects: ["code"] }), {}, on)).toBe("eval_not_allowed");
    expect(await run(tool({ ...writer, switch: "fetch", effects: ["code"] }), {}, on)).toBe("eval_not_allowed");
    expect(await run(tool(writer), { ref: "e1" }, env(allowed({}, true), "https://good.example/", { inHandoff: () => true }))).toBe("handoff_active");
    expect(await run(tool({ ...writer, handoff: "allowed" }), { ref: "e1" }, env(allowed({}, true), "https://good.example/", { inHandoff: () => true }))).toBe("ok");
    const dialogOpen = env(allowed({}, true), "https://good.example/", {
      checkNoDialog: () => {
        throw new ToolError("dialog_blocking", "a dialog is open");
      },
    });
    expect(await run(tool(writer), { ref: "e1" }, dialogOpen)).toBe("dialog_blocking");
    expect(await run(tool({ ...writer, dialog: "answers", effects: ["dialog"] }), {}, dialogOpen)).toBe("ok");
    // A destination is judged before going, with act mode for the destination too.
    const nav = tool({ ...writer, target: "tab-or-new", effects: ["navigation"], destination: (a) => String(a.url) });
    expect(await run(nav, { url: "https://evil.example/" }, on)).toBe("origin_not_allowed");
    expect(await run(nav, { url: "https://good.example/" }, on)).toBe("ok");
  });

  it("a definition with a missing or unknown trait is refused when it is defined", () => {
    expect(() => tool(undefined as unknown as Traits)).toThrow(/traits/);
    expect(() => tool({ ...writer, effects: ["teleport" as Effect] })).toThrow(/traits.effects/);
    expect(() => tool({ ...writer, switch: "none" })).toThrow(/traits.switch/);
    expect(() => tool({ ...writer, dialog: undefined as unknown as Traits["dialog"] })).toThrow(/traits.dialog/);
    expect(() => tool({ ...writer, target: "tab-or-new", effects: ["navigation"], switch: "evaluate" })).toThrow(/traits.switch/);
    // readOnly is derived, never declared.
    expect(tool({ ...writer, effects: [], switch: "none" }).readOnly).toBe(true);
    expect(tool(writer).readOnly).toBe(false);
  });
});

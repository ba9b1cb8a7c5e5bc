// The gate's approvals judged by effect (SECURITY I-19, I-37, I-38): whichever tool sends the input,
// a predicted submit / destructive click / new origin goes through the person's choice, and what
// they approved travels to the effect guard.
import { afterEach, describe, expect, it } from "vitest";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { getTool } from "../../src/tools/registry.js";
import { defaultPolicy, type Choice, type Policy } from "../../src/policy/policy.js";
import { ToolError } from "../../src/tools/errors.js";
import type { ElementFacts, InputFacts } from "../../src/tools/predict.js";

const NONE = { submit: false, destructive: false };
const FIELD: ElementFacts = { label: 'textbox "Query"', click: NONE, enter: { submit: true, destructive: false }, space: NONE };
const DANGER: ElementFacts = { label: 'button "Delete"', click: { submit: false, destructive: true }, enter: { submit: false, destructive: true }, space: { submit: false, destructive: true } };

function policy(submit: Choice, destructive: Choice): Policy {
  return { ...defaultPolicy(), actMode: true, approvals: { ...defaultPolicy().approvals, submit, destructive_click: destructive }, rules: [{ pattern: "good.example" }] };
}

function env(p: Policy, facts: (args: Record<string, unknown>) => Omit<InputFacts, "origin">, asked: string[]): PolicyEnv {
  return {
    policy: async () => p,
    tab: async (id) => ({ tabId: id ?? 7, url: "https://good.example/form" }),
    inHandoff: () => false,
    checkNoDialog: () => undefined,
    allFramesAllowed: async () => true,
    risk: async () => undefined,
    inputFacts: async (_t, origin, _e, args) => ({ origin, ...facts(args) }),
    ask: async (req) => {
      asked.push(`${req.tool}:${req.kind}`);
      return "approved";
    },
  };
}

async function run(tool: string, args: Record<string, unknown>, e: PolicyEnv): Promise<{ code: string; ctx: GateContext }> {
  setGateState({ paused: () => false, env: e });
  const ctx: GateContext = { signal: new AbortController().signal };
  try {
    await gate({ tool: getTool(tool)!, args }, ctx);
    return { code: "ok", ctx };
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    return { code: err.code, ctx };
  }
}

afterEach(() => setGateState({ paused: () => false }));

describe("approvals by effect", () => {
  const onTarget = (args: Record<string, unknown>) => (args.ref === "e-danger" ? { target: DANGER } : args.ref ? { target: FIELD } : { focus: FIELD });
  const evasions: [string, Record<string, unknown>, string][] = [
    ["press_key", { key: "Enter" }, "submit"],
    ["press_key", { ref: "e-field", key: "Enter" }, "submit"],
    ["type", { ref: "e-field", text: "hi\n", keys: true }, "submit"],
    ["type", { text: "hi", submit: true }, "submit"],
    ["press_key", { ref: "e-danger", key: "a" }, "destructive_click"],
    ["type", { ref: "e-danger", text: "x" }, "destructive_click"],
    ["click", { ref: "e-danger" }, "destructive_click"],
    ["mouse_click", { ref: "e-danger" }, "destructive_click"],
  ];
  for (const [tool, args, kind] of evasions) {
    it(`${tool} ${JSON.stringify(args)}: deny refuses, ask asks about ${kind} and arms the guard with it`, async () => {
      const asked: string[] = [];
      expect((await run(tool, args, env(policy("deny", "deny"), onTarget, asked))).code).toBe("approval_denied");
      expect(asked).toEqual([]);
      const r = await run(tool, args, env(policy("ask", "ask"), onTarget, asked));
      expect(r.code).toBe("ok");
      expect(asked).toEqual([`${tool}:${kind}`]);
      expect(r.ctx.guard?.approved).toEqual([kind]);
    });
  }
  it("an input call with nothing risky arms the guard with no approvals; a read arms nothing", async () => {
    const asked: string[] = [];
    const r = await run("press_key", { key: "a" }, env(policy("ask", "ask"), onTarget, asked));
    expect(r.code).toBe("ok");
    expect(r.ctx.guard).toEqual({ approved: [] });
    expect((await run("fill", { ref: "e-field", value: "x" }, env(policy("ask", "ask"), onTarget, asked))).ctx.guard).toEqual({ approved: [] });
    expect((await run("snapshot", {}, env(policy("ask", "ask"), onTarget, asked))).ctx.guard).toBeUndefined();
    expect(asked).toEqual([]);
  });
});

describe("the page is read for a prediction only when it can change the outcome", () => {
  const allowAll = (): Policy => ({ ...policy("allow", "allow"), approvals: { ...policy("allow", "allow").approvals, new_origin: "allow" } });
  const counting = (p: Policy, probes: string[], asked: string[]): PolicyEnv => {
    const e = env(p, () => ({ target: DANGER, focus: DANGER }), asked);
    return { ...e, inputFacts: async (t, origin, effects, args, signal) => (probes.push(String(args.ref ?? "focus")), e.inputFacts(t, origin, effects, args, signal)) };
  };
  it("every effect kind allowed outright: no probe, nothing asked, the guard armed with no approvals", async () => {
    const probes: string[] = [];
    const asked: string[] = [];
    for (const [tool, args] of [["click", { ref: "e-danger" }], ["press_key", { key: "Enter" }], ["type", { ref: "e-danger", text: "x" }]] as const) {
      const r = await run(tool, { ...args }, counting(allowAll(), probes, asked));
      expect(r.code).toBe("ok");
      expect(r.ctx.guard).toEqual({ approved: [] });
    }
    expect(probes).toEqual([]);
    expect(asked).toEqual([]);
  });
  it("one kind left to ask (or deny): the page is probed and the choice applied", async () => {
    const probes: string[] = [];
    const asked: string[] = [];
    const ask = { ...allowAll(), approvals: { ...allowAll().approvals, new_origin: "ask" as Choice } };
    expect((await run("click", { ref: "e-danger" }, counting(ask, probes, asked))).code).toBe("ok");
    const deny = { ...allowAll(), approvals: { ...allowAll().approvals, destructive_click: "deny" as Choice } };
    expect((await run("click", { ref: "e-danger" }, counting(deny, probes, asked))).code).toBe("approval_denied");
    expect(probes).toEqual(["e-danger", "e-danger"]);
  });
});

describe("what a block fails the call with", () => {
  it("the most serious block wins; codes only, no page detail", async () => {
    const { blockError } = await import("../../src/tools/effects.js");
    expect(blockError([])).toBeUndefined();
    expect(blockError([{ code: "approval_denied", kind: "submit" }, { code: "origin_not_allowed" }])?.code).toBe("origin_not_allowed");
    expect(blockError([{ code: "navigation_failed" }, { code: "password_field" }])?.code).toBe("password_field");
    const sub = blockError([{ code: "approval_denied", kind: "submit" }]);
    expect(sub?.message).toMatch(/needs the person's approval.*nothing was submitted/);
    expect(blockError([{ code: "origin_not_allowed" }])?.message).toMatch(/was not delivered/);
  });
});

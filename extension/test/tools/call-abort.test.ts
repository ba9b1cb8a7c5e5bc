// One abort controller per call: the caller's cancellation and a pause both reach whatever the
// call is waiting on (here the person's approval in the gate), and the call ends with their code.
import { afterEach, describe, expect, it } from "vitest";
import { abortAll, callTool } from "../../src/tools/registry.js";
import { setGateState, type PolicyEnv } from "../../src/tools/gate.js";
import { toolError } from "../../src/tools/errors.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";

const NONE = { submit: false, destructive: false };
const DELETE = { label: 'button "Delete"', click: { submit: false, destructive: true }, enter: NONE, space: NONE };
const POLICY: Policy = { ...defaultPolicy(), actMode: true, approvals: { ...defaultPolicy().approvals, destructive_click: "ask" }, rules: [{ pattern: "good.example" }] };

/** A gate whose approval waits until the call's signal aborts; `asking` resolves once it waits. */
function waitingEnv(): { env: PolicyEnv; asking: Promise<void> } {
  let told: () => void = () => undefined;
  const asking = new Promise<void>((r) => (told = r));
  const env: PolicyEnv = {
    policy: async () => POLICY,
    tab: async (id) => ({ tabId: id ?? 7, url: "https://good.example/" }),
    inHandoff: () => false,
    checkNoDialog: () => undefined,
    allFramesAllowed: async () => true,
    risk: async () => undefined,
    inputFacts: async (_t, origin) => ({ origin, target: DELETE }),
    ask: (_req, _ms, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => resolve("cancelled"), { once: true });
        told();
      }),
  };
  return { env, asking };
}

const code = (r: { structuredContent?: Record<string, unknown> }) => (r.structuredContent?.error as { code?: string } | undefined)?.code;

afterEach(() => setGateState({ paused: () => false }));

describe("one abort controller per call", () => {
  it("the caller's cancel reaches the approval wait: cancelled", async () => {
    const { env, asking } = waitingEnv();
    setGateState({ paused: () => false, env });
    const outer = new AbortController();
    const call = callTool("click", { ref: "e1" }, outer.signal);
    await asking;
    outer.abort(toolError("cancelled", "cancelled by the client"));
    expect(code(await call)).toBe("cancelled");
  });

  it("a pause reaches it too: paused", async () => {
    const { env, asking } = waitingEnv();
    setGateState({ paused: () => false, env });
    const call = callTool("click", { ref: "e1" }, new AbortController().signal);
    await asking;
    abortAll(toolError("paused", "Torii was paused by the person while this call ran"));
    expect(code(await call)).toBe("paused");
  });

  it("a call cancelled before it starts runs nothing", async () => {
    const { env } = waitingEnv();
    let asked = false;
    setGateState({ paused: () => false, env: { ...env, ask: async () => ((asked = true), "approved") } });
    const outer = new AbortController();
    outer.abort(toolError("cancelled", "cancelled by the client"));
    const r = await callTool("click", { ref: "e1" }, outer.signal);
    expect(code(r)).toBe("cancelled");
    expect(asked).toBe(false);
  });
});

// The gate with a fake environment: each of the person's gates refuses with its own code, the
// refusal never names a blocked host, and approvals wait for the person (SECURITY I-14…I-22).
import { afterEach, describe, expect, it } from "vitest";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { getTool } from "../../src/tools/registry.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";
import { ToolError } from "../../src/tools/errors.js";

function env(policy: Policy, url: string, o: Partial<PolicyEnv> = {}): PolicyEnv {
  return {
    policy: async () => policy,
    tab: async (id) => ({ tabId: id ?? 7, url }),
    inHandoff: () => false,
    allFramesAllowed: async () => true,
    risk: async () => ({ label: 'button "Delete"', isPassword: false, submit: false, destructive: true }),
    focusInForm: async () => false,
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
  it("handoff withholds the tab", async () => {
    const e = env(allowed(), "https://good.example/", { inHandoff: () => true });
    for (const t of ["snapshot", "read_text", "click", "handoff"]) {
      expect(await code(t, t === "click" ? { selector: "#b" } : t === "handoff" ? { reason: "mfa" } : {}, e)).toBe("handoff_active");
    }
  });
  it("approvals: ask → approved / denied / timeout; deny without asking", async () => {
    const ask = (o: "approved" | "denied" | "timeout") =>
      env({ ...allowed(), approvals: { ...defaultPolicy().approvals, destructive_click: "ask" } }, "https://good.example/", { ask: async () => o });
    expect(await code("click", { ref: "e1" }, ask("approved"))).toBe("ok");
    expect(await code("click", { ref: "e1" }, ask("denied"))).toBe("approval_denied");
    expect(await code("click", { ref: "e1" }, ask("timeout"))).toBe("approval_timeout");
    const deny = env({ ...allowed(), approvals: { ...defaultPolicy().approvals, destructive_click: "deny" } }, "https://good.example/");
    expect(await code("click", { ref: "e1" }, deny)).toBe("approval_denied");
  });
  it("screenshot with a blocked frame", async () => {
    expect(await code("screenshot", {}, env(allowed(), "https://good.example/", { allFramesAllowed: async () => false }))).toBe("origin_not_allowed");
  });
});

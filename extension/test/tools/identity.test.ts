// proxy_switch and set_user_agent behind the gate, and the worker's switch against a fake
// chrome.proxy: the person's switch is checked before anything else happens, an unknown or
// malformed profile changes nothing, and a switch Chrome did not take is an error (SECURITY I-72).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { callTool, getTool, setAuditSink } from "../../src/tools/registry.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";
import { ToolError } from "../../src/tools/errors.js";

function env(policy: Policy, o: Partial<PolicyEnv> = {}): PolicyEnv {
  return {
    policy: async () => policy,
    tab: async (id) => ({ tabId: id ?? 7, url: "https://good.example/" }),
    inHandoff: () => false,
    checkNoDialog: () => undefined,
    allFramesAllowed: async () => true,
    risk: async () => undefined,
    inputFacts: async (_t, origin) => ({ origin }),
    ask: async () => "approved",
    ...o,
  };
}

const allowed = (actMode: boolean): Policy => ({ ...defaultPolicy(), actMode, rules: [{ pattern: "good.example" }] });

async function gateCode(tool: string, args: Record<string, unknown>, e: PolicyEnv, paused = false): Promise<string> {
  setGateState({ paused: () => paused, env: e });
  const ctx: GateContext = { signal: new AbortController().signal };
  try {
    await gate({ tool: getTool(tool)!, args }, ctx);
    return "ok";
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    return err.code;
  }
}

afterEach(() => setGateState({ paused: () => false }));

describe("gate: identity tools", () => {
  it("proxy_switch needs the person's switch, named in the refusal with where to set it", async () => {
    setGateState({ paused: () => false, env: env(allowed(true), { proxySwitchAllowed: async () => false }) });
    const r = await callTool("proxy_switch", { name: "direct" });
    expect(r.isError).toBe(true);
    const err = r.structuredContent?.error as { code: string; message: string; hint: string };
    expect(err.code).toBe("proxy_switch_off");
    expect(err.message).toMatch(/"Let agents switch the proxy profile" in the Torii options \(Proxy profiles\)/);
    expect(err.hint).toMatch(/only they can, in the Torii options/);
    // An environment that cannot say is off; act mode and permissive mode do not stand in for it.
    expect(await gateCode("proxy_switch", { name: "direct" }, env({ ...allowed(true), permissive: true }))).toBe("proxy_switch_off");
    expect(await gateCode("proxy_switch", { name: "direct" }, env(allowed(true), { proxySwitchAllowed: async () => true }))).toBe("ok");
    expect(await gateCode("proxy_switch", { name: "direct" }, env(allowed(true), { proxySwitchAllowed: async () => true }), true)).toBe("paused");
    // Listing needs no switch.
    expect(await gateCode("proxy_profiles", {}, env(allowed(false)))).toBe("ok");
  });

  it("set_user_agent acts on its tab: allowlist and act mode apply", async () => {
    expect(await gateCode("set_user_agent", { userAgent: "A/1" }, env(allowed(false)))).toBe("act_mode_off");
    expect(await gateCode("set_user_agent", { userAgent: "A/1" }, env(allowed(true)))).toBe("ok");
    expect(await gateCode("set_user_agent", { userAgent: "A/1" }, env(allowed(true), { tab: async () => ({ tabId: 7, url: "https://evil.example/" }) }))).toBe("origin_not_allowed");
  });

  it("set_user_agent: a string over 1 KB or with a line break is invalid_argument naming userAgent, before any CDP", async () => {
    setGateState({ paused: () => false, env: env(allowed(true)) });
    const long = await callTool("set_user_agent", { tabId: 7, userAgent: "A".repeat(1025) });
    expect(long.structuredContent?.error).toMatchObject({ code: "invalid_argument", field: "userAgent" });
    // No chrome here: reaching CDP would fail with another code.
    const nl = await callTool("set_user_agent", { tabId: 7, userAgent: "A/1\r\nX-Injected: 1" });
    expect(nl.structuredContent?.error).toMatchObject({ code: "invalid_argument", field: "userAgent" });
    expect((nl.structuredContent?.error as { message: string }).message).toMatch(/line break/);
    const both = await callTool("set_user_agent", { tabId: 7, userAgent: "A/1", reset: true });
    expect(both.structuredContent?.error).toMatchObject({ code: "invalid_argument" });
  });
});

// ---------- the worker's switch, against a fake chrome.storage.local / chrome.proxy ----------

interface FakeProxy {
  store: Record<string, unknown>;
  sets: unknown[];
  clears: number;
  level: string;
}

function installChrome(): FakeProxy {
  const f: FakeProxy = { store: {}, sets: [], clears: 0, level: "controllable_by_this_extension" };
  (globalThis as { chrome?: unknown }).chrome = {
    storage: {
      local: {
        get: async (k: string) => (k in f.store ? { [k]: structuredClone(f.store[k]) } : {}),
        set: async (items: Record<string, unknown>) => Object.assign(f.store, structuredClone(items)),
      },
      onChanged: { addListener: () => undefined },
    },
    runtime: { sendMessage: async () => undefined },
    proxy: {
      settings: {
        get: async () => ({ value: {}, levelOfControl: f.level }),
        set: async (d: { value: unknown }) => {
          f.sets.push(d.value);
          if (f.level === "controllable_by_this_extension") f.level = "controlled_by_this_extension";
        },
        clear: async () => {
          f.clears++;
          if (f.level === "controlled_by_this_extension") f.level = "controllable_by_this_extension";
        },
      },
    },
  };
  return f;
}

describe("switchProfile", () => {
  let f: FakeProxy;
  let audit: { tool: string; detail?: string; outcome: string; code?: string }[];
  beforeEach(async () => {
    f = installChrome();
    audit = [];
    setAuditSink((e) => audit.push(e));
    // A fresh module per test: the settings cache starts empty.
    const { vi } = await import("vitest");
    vi.resetModules();
  });
  afterEach(() => {
    delete (globalThis as { chrome?: unknown }).chrome;
  });

  async function load() {
    return import("../../src/tools/proxystore.js");
  }

  it("switches, stores the active profile, and Chrome reports this extension in control", async () => {
    f.store.proxy = { profiles: [{ name: "work", kind: "fixed", scheme: "http", host: "proxy.example.com", port: 3128, bypass: ["<local>"] }], active: "system", agentMaySwitch: true };
    const { switchProfile } = await load();
    const r = await switchProfile("work");
    expect(r.from).toBe("system");
    expect(f.sets).toEqual([{ mode: "fixed_servers", rules: { singleProxy: { scheme: "http", host: "proxy.example.com", port: 3128 }, bypassList: ["<local>"] } }]);
    expect((f.store.proxy as { active: string }).active).toBe("work");
    await switchProfile("system");
    expect(f.clears).toBe(1);
    expect((f.store.proxy as { active: string }).active).toBe("system");
  });

  it("an unknown name: invalid_argument listing the person's profiles; nothing applied", async () => {
    const { switchProfile } = await load();
    await expect(switchProfile("nope")).rejects.toMatchObject({ code: "invalid_argument", data: { field: "name" }, message: expect.stringMatching(/no proxy profile named "nope"; the person's profiles are: system, direct/) });
    expect(f.sets).toEqual([]);
    expect(f.clears).toBe(0);
  });

  it("a malformed PAC URL stored somehow is refused, and the proxy stays as it was", async () => {
    f.store.proxy = { profiles: [{ name: "evil", kind: "pac", pacUrl: "file:///etc/evil.pac" }], active: "system", agentMaySwitch: true };
    const { switchProfile } = await load();
    await expect(switchProfile("evil")).rejects.toMatchObject({ code: "profile_invalid", message: expect.stringMatching(/"evil" is invalid \(pacUrl: a PAC URL must be http:, https: or data:, not file:\)/) });
    expect(f.sets).toEqual([]);
    expect((f.store.proxy as { active: string }).active).toBe("system");
  });

  it("an agent's switch through callTool is audited with both profiles' names", async () => {
    f.store.proxy = { profiles: [], active: "system", agentMaySwitch: true };
    const reg = await import("../../src/tools/registry.js");
    const g = await import("../../src/tools/gate.js");
    const { proxySwitchAllowed } = await load();
    const seen: { tool: string; outcome: string; detail?: string }[] = [];
    reg.setAuditSink((e) => seen.push(e));
    g.setGateState({ paused: () => false, env: env(allowed(false), { proxySwitchAllowed }) });
    const r = await reg.callTool("proxy_switch", { name: "direct" });
    expect(r.isError).toBeFalsy();
    expect(r.content[0]).toMatchObject({ text: expect.stringMatching(/"direct" \(no proxy\) is now active for the whole browser/) });
    expect(seen).toEqual([expect.objectContaining({ tool: "proxy_switch", outcome: "ok", detail: "proxy system -> direct" })]);
    // The person turns the switch off: the next call is refused, and audited as such.
    f.store.proxy = { ...(f.store.proxy as object), agentMaySwitch: false };
    const { vi } = await import("vitest");
    vi.resetModules();
    const reg2 = await import("../../src/tools/registry.js");
    const g2 = await import("../../src/tools/gate.js");
    const ps2 = await import("../../src/tools/proxystore.js");
    const seen2: { code?: string }[] = [];
    reg2.setAuditSink((e) => seen2.push(e));
    g2.setGateState({ paused: () => false, env: env(allowed(false), { proxySwitchAllowed: ps2.proxySwitchAllowed }) });
    const off = await reg2.callTool("proxy_switch", { name: "system" });
    expect(off.structuredContent?.error).toMatchObject({ code: "proxy_switch_off" });
    expect(seen2).toEqual([expect.objectContaining({ code: "proxy_switch_off" })]);
    expect(f.clears).toBe(0);
  });

  it("another extension in control: proxy_controlled_elsewhere, nothing stored", async () => {
    f.level = "controlled_by_other_extensions";
    const { switchProfile } = await load();
    await expect(switchProfile("direct")).rejects.toMatchObject({ code: "proxy_controlled_elsewhere" });
    expect(f.store.proxy).toBeUndefined();
  });
});

// The managed browser's launch policy (SECURITY I-47): strict checks of what `torii launch` sends
// (the same refusals as internal/cli/launchpolicy.go), the connect page's fragment, and when the
// worker applies it: after the managed connect, once per browser run, right after the start, in a
// profile whose first connection was a managed launch in an unpacked extension — never otherwise.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { checkLaunchPolicy, decodeLaunchPolicy, LaunchPolicyError } from "../../src/policy/launch.js";
import { parseLaunchHash } from "../../src/connect/hash.js";
import { parseRequest, type LinkState } from "../../src/shared/messages.js";

const b64 = (o: unknown) => Buffer.from(typeof o === "string" ? o : JSON.stringify(o)).toString("base64url");

describe("checkLaunchPolicy", () => {
  it("keeps a valid policy whole", () => {
    const p = checkLaunchPolicy({
      version: 1,
      rules: [
        { pattern: "127.0.0.1:8080", act: true, evalExpression: true, approvals: { submit: "deny" } },
        { pattern: "*.example.org", fetch: true, allowPassword: true, observe: true },
      ],
      actMode: false,
      approvals: { new_origin: "deny" },
      approvalTimeoutMs: 30_000,
    });
    expect(p.rules).toHaveLength(2);
    expect(p.rules[0]).toMatchObject({ pattern: "127.0.0.1:8080", act: true, evalExpression: true, approvals: { submit: "deny" } });
    expect(p.rules[1]).toMatchObject({ observe: true });
    expect(p.approvals.new_origin).toBe("deny");
    expect(p.approvals.submit).toBe("ask"); // the default for what it does not name
    expect(p.permissive).toBe(false);
    expect(checkLaunchPolicy({ rules: [] }).rules).toEqual([]);
  });

  const bad: [unknown, string][] = [
    [null, "JSON object"],
    [[], "JSON object"],
    [{ extra: 1 }, "extra: unknown field"],
    [{ version: 2 }, "version: must be 1"],
    [{ permissive: true }, "permissive: a launch policy cannot switch the permissive policy on"],
    [{ actMode: "yes" }, "actMode: must be true or false"],
    [{ approvalTimeoutMs: 10 }, "approvalTimeoutMs"],
    [{ approvalTimeoutMs: 2000.5 }, "approvalTimeoutMs"],
    [{ approvals: { submit: "maybe" } }, "approvals.submit"],
    [{ approvals: { teleport: "allow" } }, "approvals.teleport: unknown approval kind"],
    [{ rules: {} }, "rules: must be an array"],
    [{ rules: ["example.com"] }, "rules[0]: a rule must be an object"],
    [{ rules: [{ act: true }] }, "rules[0].pattern: missing"],
    [{ rules: [{ pattern: "example.com", act: "true" }] }, "rules[0].act: must be true or false"],
    [{ rules: [{ pattern: "example.com", colour: "red" }] }, "rules[0].colour: unknown field"],
    [{ rules: [{ pattern: "*" }] }, "rules[0].pattern: a bare *"],
    [{ rules: [{ pattern: "example.com" }, { pattern: "*.com" }] }, "rules[1].pattern: a wildcard must cover"],
    [{ rules: [{ pattern: "https://example.com/?q=1" }] }, "rules[0].pattern: a pattern has no query"],
    [{ rules: [{ pattern: "ftp://example.com" }] }, "rules[0].pattern: scheme ftp"],
    [{ rules: [{ pattern: "example.com" }, { pattern: "example.com" }] }, "rules[1].pattern: listed twice"],
    [{ rules: [{ pattern: "example.com", approvals: { upload: "sometimes" } }] }, "rules[0].approvals.upload"],
  ];
  it.each(bad)("refuses %j", (raw, want) => {
    expect(() => checkLaunchPolicy(raw)).toThrow(LaunchPolicyError);
    expect(() => checkLaunchPolicy(raw)).toThrow(want);
  });

  it("decodes base64url JSON only, bounded", () => {
    expect(decodeLaunchPolicy(b64({ rules: [] }))).toEqual({ rules: [] });
    expect(() => decodeLaunchPolicy("not base64!")).toThrow("not base64url");
    expect(() => decodeLaunchPolicy(b64("{not json"))).toThrow("not JSON");
    expect(() => decodeLaunchPolicy("A")).toThrow(LaunchPolicyError);
    expect(() => decodeLaunchPolicy("A".repeat(50_000))).toThrow("too large");
  });
});

describe("the connect page's fragment and message", () => {
  it("carries a launch policy, checked before anything is paired", () => {
    const p = parseLaunchHash(`#daemon=ws%3A%2F%2Fh%3A1%2Facp&launch=${b64({ rules: [{ pattern: "example.com", act: true }] })}&otp=s`);
    expect(p).toEqual({ daemonUrl: "ws://h:1/acp", otp: "s", launchPolicy: { rules: [{ pattern: "example.com", act: true }] } });
    expect(() => parseLaunchHash(`#daemon=x&otp=s&launch=${b64({ rules: [{ pattern: "*.com" }] })}`)).toThrow("rules[0].pattern");
    expect(() => parseLaunchHash(`#daemon=x&otp=s&policy=permissive&launch=${b64({})}`)).toThrow("permissive");
    expect(parseLaunchHash("#daemon=x&otp=s&policy=permissive")).toEqual({ daemonUrl: "x", otp: "s", policy: "permissive" });
    expect(parseLaunchHash("#daemon=x&headless=1&otp=s")).toEqual({ daemonUrl: "x", otp: "s", headless: true });
    expect(parseLaunchHash("#daemon=x&headless=0&otp=s")).toEqual({ daemonUrl: "x", otp: "s" });
  });

  it("torii.connect takes an object policy, never with permissive", () => {
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", launchPolicy: { rules: [] } })).toEqual({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", launchPolicy: { rules: [] } });
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", launchPolicy: "permissive" })).toBeNull();
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", launchPolicy: [] })).toBeNull();
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", policy: "permissive", launchPolicy: {} })).toBeNull();
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", policy: "permissive", headless: true })).toEqual({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", policy: "permissive", headless: true });
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", headless: "yes" })).toBeNull();
  });
});

describe("when the worker applies it (background/managed.ts)", () => {
  const applied: unknown[] = [];
  let local: Record<string, unknown>;
  let session: Record<string, unknown>;
  let installType = "development";
  const connected = { status: "connected" } as LinkState;

  async function worker() {
    vi.resetModules();
    vi.doMock("../../src/tools/safety.js", () => ({ applyLaunchPolicy: async (p: unknown) => void applied.push(p) }));
    vi.stubGlobal("chrome", {
      storage: {
        local: { get: async (k: string) => (k in local ? { [k]: local[k] } : {}), set: async (o: Record<string, unknown>) => void Object.assign(local, o) },
        session: { get: async (k: string) => (k in session ? { [k]: structuredClone(session[k]) } : {}), set: async (o: Record<string, unknown>) => void Object.assign(session, structuredClone(o)) },
      },
      management: { getSelf: async () => ({ installType }) },
    });
    const m = await import("../../src/background/managed.js");
    await m.noteBrowserRun();
    return m;
  }
  const policy = { rules: [{ pattern: "127.0.0.1:8080", act: true }] };

  beforeEach(() => {
    applied.length = 0;
    local = {};
    session = {};
    installType = "development";
  });

  it("a fresh managed profile takes it once connected; a second connect in the same run changes nothing", async () => {
    const m = await worker();
    await m.launchRequested({ launchPolicy: policy });
    expect(applied).toEqual([]); // not before the link is up
    await m.linkChanged(connected);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ rules: [{ pattern: "127.0.0.1:8080", act: true }], permissive: false });
    expect(local.torii_managed_profile).toBe(true);

    // A second `torii launch` (or anyone with a fresh secret) against the running browser.
    await m.launchRequested({ policy: "permissive" });
    await m.linkChanged(connected);
    expect(applied).toHaveLength(1);

    // The same browser run after a worker restart: still taken.
    const again = await worker();
    await again.launchRequested({ launchPolicy: policy });
    await again.linkChanged(connected);
    expect(applied).toHaveLength(1);
  });

  it("a managed profile started again takes its new policy; not one that comes a minute after the start", async () => {
    local.torii_managed_profile = true;
    const m = await worker();
    await m.launchRequested({ policy: "permissive" });
    await m.linkChanged(connected);
    expect(applied).toEqual(["permissive"]);

    session = {}; // a new browser run
    const late = await worker();
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 61_000);
    try {
      await late.launchRequested({ launchPolicy: policy });
      await late.linkChanged(connected);
    } finally {
      vi.restoreAllMocks();
    }
    expect(applied).toEqual(["permissive"]);
  });

  it("the person's own Chrome never takes one: its first connection was not a managed launch, or its extension is from the store", async () => {
    const m = await worker();
    await m.linkChanged(connected); // the person's pairing (or reconnect) comes first
    expect(local.torii_managed_profile).toBe(false);
    session = {};
    const next = await worker();
    await next.launchRequested({ launchPolicy: policy });
    await next.linkChanged(connected);
    expect(applied).toEqual([]);

    local = {};
    session = {};
    installType = "normal";
    const store = await worker();
    await store.launchRequested({ policy: "permissive" });
    await store.linkChanged(connected);
    expect(applied).toEqual([]);
    expect(local.torii_managed_profile).toBe(false);
  });

  it("SECURITY I-80: a headless launch is recorded for the browser run, only as a launch policy is taken", async () => {
    const m = await worker();
    await m.launchRequested({ headless: true });
    expect(session.torii_headless_run).toBeUndefined(); // not before the link is up
    await m.linkChanged(connected);
    expect(session.torii_headless_run).toBe(true);
    expect(applied).toEqual([]);

    // The person's own Chrome: a connect page that says headless changes nothing.
    local = { torii_managed_profile: false };
    session = {};
    const own = await worker();
    await own.launchRequested({ headless: true });
    await own.linkChanged(connected);
    expect(session.torii_headless_run).toBeUndefined();
  });

  it("a policy that cannot be used is refused before the connect (nothing is paired)", async () => {
    const m = await worker();
    await expect(m.launchRequested({ launchPolicy: { rules: [{ pattern: "*" }] } })).rejects.toThrow("rules[0].pattern");
    await expect(m.launchRequested({ launchPolicy: { rules: [], permissive: true } })).rejects.toThrow("permissive");
  });
});

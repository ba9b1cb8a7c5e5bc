// frames, cookies, storage and set_viewport as pure logic: the per-origin store switches (off by
// default, never from permissive mode, HttpOnly values only beside Cookies), the gate's refusal
// naming the switch, the frame inventory naming no frame off the list, cookie shaping, and the
// viewport's presets and bad inputs (SECURITY I-68).
import { afterEach, describe, expect, it } from "vitest";
import { defaultPolicy, normalizePolicy, permissivePolicy, judgeUrl, storeAllowed, type Policy } from "../../src/policy/policy.js";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { callTool, getTool } from "../../src/tools/registry.js";
import { ToolError } from "../../src/tools/errors.js";
import { inventory } from "../../src/tools/frames.js";
import { boundAreas, shapeCookies } from "../../src/tools/storage.js";
import { PRESETS, resolveViewport } from "../../src/tools/viewport.js";

const rule = (r: Record<string, unknown> = {}): Policy => normalizePolicy({ ...defaultPolicy(), actMode: true, rules: [{ pattern: "good.example", ...r }, { pattern: "cdn.good.example" }] });

function env(policy: Policy, url = "https://good.example/"): PolicyEnv {
  return {
    policy: async () => policy,
    tab: async (id) => ({ tabId: id ?? 7, url }),
    inHandoff: () => false,
    checkNoDialog: () => undefined,
    allFramesAllowed: async () => true,
    risk: async () => undefined,
    inputFacts: async (_t, origin) => ({ origin }),
    ask: async () => "approved",
  };
}

async function gateCode(tool: string, p: Policy, url?: string): Promise<{ code: string; err?: ToolError }> {
  setGateState({ paused: () => false, env: env(p, url) });
  const ctx: GateContext = { signal: new AbortController().signal };
  try {
    await gate({ tool: getTool(tool)!, args: {} }, ctx);
    return { code: "ok" };
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    return { code: e.code, err: e };
  }
}

afterEach(() => setGateState({ paused: () => false }));

describe("store switches (SECURITY I-68)", () => {
  it("are off by default, kept when set, and never granted by permissive mode", () => {
    const v = judgeUrl(rule(), "https://good.example/");
    for (const s of ["cookies", "cookiesHttpOnly", "storage"] as const) expect(storeAllowed(v, s), s).toBe(false);
    const on = rule({ cookies: true, cookiesHttpOnly: true, storage: true, junk: true });
    expect(on.rules[0]).toMatchObject({ cookies: true, cookiesHttpOnly: true, storage: true });
    expect(on.rules[0]).not.toHaveProperty("junk");
    const vo = judgeUrl(on, "https://good.example/");
    for (const s of ["cookies", "cookiesHttpOnly", "storage"] as const) expect(storeAllowed(vo, s), s).toBe(true);
    const perm = judgeUrl(permissivePolicy(), "https://anything.example/");
    expect(perm.allowed).toBe(true);
    for (const s of ["cookies", "cookiesHttpOnly", "storage"] as const) expect(storeAllowed(perm, s), s).toBe(false);
    // A string "true" is not a switch turned on.
    expect(normalizePolicy({ rules: [{ pattern: "good.example", cookies: "true" }] }).rules[0]).not.toHaveProperty("cookies");
  });

  it("HttpOnly values need the Cookies switch too", () => {
    expect(storeAllowed(judgeUrl(rule({ cookiesHttpOnly: true }), "https://good.example/"), "cookiesHttpOnly")).toBe(false);
    expect(storeAllowed(judgeUrl(rule({ cookies: true }), "https://good.example/"), "cookiesHttpOnly")).toBe(false);
  });

  it("the gate refuses cookies and storage with the switch off, naming it and where to set it", async () => {
    for (const [tool, sw, label] of [
      ["cookies", "cookies", "Cookies"],
      ["storage", "storage", "Storage"],
    ] as const) {
      const off = await gateCode(tool, rule());
      expect(off.code, tool).toBe("storage_not_allowed");
      expect(off.err?.message).toContain(`"${label}"`);
      expect(off.err?.hint).toMatch(/Torii options/);
      expect(off.err?.data).toEqual({ switch: sw });
      // One switch does not open the other store.
      expect((await gateCode(tool, rule(tool === "cookies" ? { storage: true } : { cookies: true }))).code, tool).toBe("storage_not_allowed");
      expect((await gateCode(tool, rule({ [sw]: true }))).code, tool).toBe("ok");
      // Another origin's switch is not this one's; a blocked page is refused as blocked.
      expect((await gateCode(tool, rule({ [sw]: true }), "https://cdn.good.example/")).code, tool).toBe("storage_not_allowed");
      expect((await gateCode(tool, rule({ [sw]: true }), "https://evil.example/")).code, tool).toBe("origin_not_allowed");
      expect((await gateCode(tool, permissivePolicy(), "https://evil.example/")).code, tool).toBe("storage_not_allowed");
    }
  });

  it("set_viewport needs act mode; frames needs no switch", async () => {
    expect((await gateCode("set_viewport", { ...rule(), actMode: false })).code).toBe("act_mode_off");
    expect((await gateCode("set_viewport", rule())).code).toBe("ok");
    expect((await gateCode("frames", { ...rule(), actMode: false })).code).toBe("ok");
    expect((await gateCode("frames", rule(), "https://evil.example/")).code).toBe("origin_not_allowed");
  });
});

describe("frames inventory", () => {
  const p = rule();
  const tree = [
    { frameId: 0, parentFrameId: -1 },
    { frameId: 3, parentFrameId: 0 },
    { frameId: 4, parentFrameId: 0 },
    { frameId: 5, parentFrameId: 0 },
    { frameId: 6, parentFrameId: 0 },
    { frameId: 7, parentFrameId: 5 },
  ];
  const reports = [
    { frameId: 0, origin: "https://good.example", url: "https://good.example/page", title: "Top" },
    { frameId: 3, origin: "https://good.example", url: "about:srcdoc", title: "" },
    { frameId: 4, origin: "https://cdn.good.example", url: "https://cdn.good.example/w", title: "Widget" },
    { frameId: 5, origin: "https://evil.example", url: "https://evil.example/secret?token=1", title: "Evil title" },
    // 6 does not answer; 7 is a sandboxed (opaque) document inside the evil frame.
    { frameId: 7, origin: "null", url: "https://good.example/sandboxed", title: "Sandboxed" },
  ];

  it("names allowed frames by their own report and frames off the list by id only", () => {
    const list = inventory(p, tree, reports);
    expect(list.map((f) => f.frameId)).toEqual([0, 3, 4, 5, 6, 7]);
    expect(list[0]).toEqual({ frameId: 0, parentFrameId: -1, readable: true, kind: "main", origin: "https://good.example", url: "https://good.example/page", title: "Top" });
    // A srcdoc is named by its origin, not by an about: URL.
    expect(list[1]).toMatchObject({ readable: true, kind: "same-origin", url: "https://good.example/" });
    expect(list[2]).toMatchObject({ readable: true, kind: "cross-origin", origin: "https://cdn.good.example" });
    expect(list[3]).toEqual({ frameId: 5, parentFrameId: 0, readable: false, reason: "origin_not_allowed" });
    expect(list[4]).toEqual({ frameId: 6, parentFrameId: 0, readable: false, reason: "no_answer" });
    expect(list[5]).toEqual({ frameId: 7, parentFrameId: 5, readable: false, reason: "origin_not_allowed" });
    expect(JSON.stringify(list)).not.toMatch(/evil|Evil|Sandboxed/);
  });
});

describe("cookies and storage shaping", () => {
  const c = (name: string, value: string, httpOnly: boolean) => ({ name, value, domain: "good.example", path: "/", expires: -1, secure: false, httpOnly, session: true });
  it("withholds HttpOnly values without the switch, naming the cookie", () => {
    const out = shapeCookies([c("plain", "v1", false), c("sid", "SECRET", true)], false);
    expect(out[0]).toMatchObject({ name: "plain", value: "v1" });
    expect(out[1]).toMatchObject({ name: "sid", httpOnly: true, withheld: "httpOnly" });
    expect(out[1]).not.toHaveProperty("value");
    expect(JSON.stringify(out)).not.toContain("SECRET");
    expect(shapeCookies([c("sid", "SECRET", true)], true)[0]).toMatchObject({ value: "SECRET" });
    expect(shapeCookies([c("big", "x".repeat(5000), false)], false)[0]).toMatchObject({ truncated: true });
  });
  it("bounds keys and values in all", () => {
    const a = { count: 3, items: [{ key: "a", value: "x".repeat(40) }, { key: "b", value: "y".repeat(40) }, { key: "c", value: "z" }] };
    expect(boundAreas([a], 60)).toBe(true);
    expect(a.items.map((i) => i.key)).toEqual(["a"]);
  });
});

describe("set_viewport arguments", () => {
  it("presets, orientation, explicit sizes", () => {
    expect(resolveViewport({ preset: "mobile" })).toEqual({ width: 393, height: 852, deviceScaleFactor: 3, mobile: true, touch: true, orientation: "portrait", preset: "mobile" });
    expect(resolveViewport({ preset: "mobile-small", orientation: "landscape" })).toMatchObject({ width: 667, height: 375, orientation: "landscape" });
    expect(resolveViewport({ preset: "desktop" })).toMatchObject({ width: 1280, height: 800, mobile: false, touch: false, orientation: "landscape" });
    expect(resolveViewport({ preset: "tablet", deviceScaleFactor: 1, touch: false })).toMatchObject({ width: 820, height: 1180, deviceScaleFactor: 1, touch: false });
    expect(resolveViewport({ width: 500, height: 300, mobile: true })).toMatchObject({ width: 500, height: 300, deviceScaleFactor: 1, mobile: true, touch: true });
    expect(resolveViewport({ reset: true })).toBe("reset");
    expect(Object.keys(PRESETS)).toEqual(["mobile-small", "mobile", "tablet", "desktop", "desktop-wide"]);
    expect(PRESETS["desktop-wide"]).toMatchObject({ width: 1920, height: 1080 });
  });

  it("bad combinations are invalid_argument naming the field", () => {
    const field = (a: Parameters<typeof resolveViewport>[0]) => {
      try {
        resolveViewport(a);
        return "ok";
      } catch (e) {
        expect((e as ToolError).code).toBe("invalid_argument");
        return (e as ToolError).data?.field;
      }
    };
    expect(field({})).toBe("width");
    expect(field({ width: 400 })).toBe("height");
    expect(field({ preset: "mobile", width: 400 })).toBe("width");
    expect(field({ reset: true, preset: "mobile" })).toBe("preset");
  });

  it("a scale of 4, a width of 0 or 100000 and an unknown preset are refused before the tab is touched", async () => {
    for (const [args, f] of [
      [{ preset: "mobile", deviceScaleFactor: 4 }, "deviceScaleFactor"],
      [{ width: 0, height: 600 }, "width"],
      [{ width: 100000, height: 600 }, "width"],
      [{ width: 800, height: 0 }, "height"],
      [{ preset: "phablet" }, "preset"],
    ] as const) {
      // No gate state: had validation not refused it, the gate would answer origin_not_allowed.
      const r = await callTool("set_viewport", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(r.structuredContent?.error, JSON.stringify(args)).toMatchObject({ code: "invalid_argument", field: f });
    }
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { ANSWER_MARGIN_MS, auditOf, callDeadline, callTool, handlerEnd, listTools, MAX_CALL_MS, META_AUDIT, setAuditSink, TOOLS } from "../../src/tools/registry.js";
import { setGateState, type PolicyEnv } from "../../src/tools/gate.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";
import { validate, wireSchema } from "../../src/tools/schema.js";
import { defineTool, MAX_ARG_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from "../../src/tools/define.js";
import { DESTRUCTIVE_EFFECTS, type Effect } from "../../src/tools/traits.js";

const NO_EFFECT = { submit: false, destructive: false };
/** The target the fake page describes: a button the page marks destructive. */
const DELETE_BUTTON = { label: 'button "Delete"', click: { submit: false, destructive: true }, enter: NO_EFFECT, space: NO_EFFECT };

// Every tool; a tool cannot be listed without a handler, nor the reverse.
const EXPECTED = [
  "tabs", "snapshot", "find", "read_text", "get_state", "screenshot", "wait_for", "settle",
  "navigate", "history", "reload", "close_tab", "click", "mouse_click", "hover", "drag", "fill", "type",
  "press_key", "select_option", "fill_form", "upload", "scroll", "reveal", "handle_dialog",
  // code execution (own switches) and human handoff
  "evaluate", "fetch_in_page", "invoke", "handoff",
  // identity: the browser's proxy profile (the person's switch), one tab's user agent
  "proxy_profiles", "proxy_switch", "set_user_agent",
  // the person's secrets, names only
  "secrets",
  // files in the session's download sandbox
  "print_to_pdf", "save_to_file",
  // network capture
  "capture_start", "capture_stop", "capture_list", "capture_export",
  // frames, the browser's stores (own switches), device emulation
  "frames", "cookies", "storage", "set_viewport",
  // what the page does (the person's "Console & network" switch)
  "console_tail", "network_tail",
];

describe("registry → tools/list", () => {
  it("lists every tool once with annotations, or none where MCP's defaults say it", () => {
    const list = listTools();
    expect(list.map((t) => t.name)).toEqual(EXPECTED);
    for (const t of list) {
      expect(t.name).toMatch(/^[a-z][a-z0-9_]*$/);
      // One sentence: conventions shared by every tool are in the server instructions.
      expect(t.description.length, t.name).toBeLessThanOrEqual(100);
      expect(t.description, t.name).not.toMatch(/\. [A-Z]/);
      expect(t.inputSchema.type).toBe("object");
      if (!t.annotations) continue;
      expect(typeof t.annotations.readOnlyHint).toBe("boolean");
      // The fields the daemon's Go SDK writes anyway, so the served size is the registry's.
      expect(typeof t.annotations.idempotentHint).toBe("boolean");
      if (!t.annotations.readOnlyHint) expect(t.annotations.destructiveHint).toBe(false);
    }
    // Not read-only, destructive, not idempotent: MCP's defaults, so no annotations.
    expect(list.find((t) => t.name === "close_tab")?.annotations).toBeUndefined();
    expect(list.find((t) => t.name === "fill")?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(list.find((t) => t.name === "snapshot")?.annotations).toEqual({ readOnlyHint: true, idempotentHint: true });
    expect(list.find((t) => t.name === "scroll")?.annotations).toEqual({ readOnlyHint: true, idempotentHint: false });
    expect(list.find((t) => t.name === "save_to_file")?.annotations).toEqual({ readOnlyHint: true, idempotentHint: false });
  });

  it("destructiveHint says whether a write tool may submit, delete, leave the page, run code, upload or close", () => {
    const cls = (t: { annotations?: { readOnlyHint: boolean; destructiveHint?: boolean } }) =>
      !t.annotations ? "destructive" : t.annotations.readOnlyHint ? "read" : t.annotations.destructiveHint === false ? "write" : "?";
    expect(Object.fromEntries(listTools().map((t) => [t.name, cls(t)]))).toEqual({
      tabs: "read", snapshot: "read", find: "read", read_text: "read", get_state: "read", screenshot: "read", wait_for: "read", settle: "read",
      scroll: "read", reveal: "read", handoff: "read", secrets: "read", frames: "read", cookies: "read", storage: "read", console_tail: "read", network_tail: "read",
      // They change no page; each call writes a new file of the session's sandbox (not idempotent).
      print_to_pdf: "read", save_to_file: "read",
      capture_start: "read", capture_stop: "read", capture_list: "read", capture_export: "read",
      // Navigating away (unsaved work), clicks and keys (submit, delete buttons, Enter), answering a
      // dialog (confirm), uploads, closing tabs and running code.
      navigate: "destructive", history: "destructive", reload: "destructive", close_tab: "destructive",
      click: "destructive", mouse_click: "destructive", type: "destructive", press_key: "destructive",
      upload: "destructive", handle_dialog: "destructive", evaluate: "destructive", fetch_in_page: "destructive",
      drag: "destructive", invoke: "destructive",
      // Set values or move the pointer without activating anything.
      hover: "write", fill: "write", select_option: "write", fill_form: "write",
      // How the browser or a tab shows itself: taken back by reset or another switch.
      proxy_profiles: "read", proxy_switch: "write", set_user_agent: "write",
      // Emulation lays the page out again; reset undoes it.
      set_viewport: "write",
    });
  });

  it("a new tool's hints come from its effects, not from a flag someone must remember", () => {
    const mk = (effects: Effect[]) =>
      defineTool({
        name: "probe",
        description: "x",
        inputSchema: { type: "object", properties: {} },
        traits: { target: "tab", reads: "page", effects, switch: effects.includes("code") ? "evaluate" : "act", dialog: "blocked", handoff: "refused" },
        handler: async () => ({ text: "" }),
      });
    for (const e of Object.keys(DESTRUCTIVE_EFFECTS) as Effect[]) {
      if (e === "navigation") continue; // needs act mode and is checked below
      expect(mk([e]).destructive, e).toBe(e !== "input" && e !== "identity" && e !== "emulate");
      expect(mk([e]).readOnly, e).toBe(false);
    }
    expect(mk(["navigation"]).destructive).toBe(true);
    expect(mk(["input", "keys"]).destructive).toBe(true);
    expect(mk([]).readOnly).toBe(true);
    expect(mk([]).destructive).toBe(false);
  });

  it("code of unknowable effect is declared only on a code tool", () => {
    const mk = (effects: Effect[], sw: "invoke" | "act", anyEffect: unknown) => () =>
      defineTool({
        name: "probe",
        description: "x",
        inputSchema: { type: "object", properties: {} },
        traits: { target: "tab", reads: "page", effects, switch: sw, anyEffect: anyEffect as true, dialog: "blocked", handoff: "refused" },
        handler: async () => ({ text: "" }),
      });
    expect(mk(["code"], "invoke", true)).not.toThrow();
    for (const bad of [mk(["click"], "invoke", true), mk([], "invoke", true), mk(["code"], "invoke", "yes"), mk(["code"], "invoke", false)]) {
      expect(bad).toThrow(/traits\.anyEffect/);
    }
  });

  // The whole tools/list ≤ 12,600 characters (hard); the compact wire form aims at ≤ 10,000
  // with the daemon's status tool (docs/tools.md states the served total, the e2e test pins it).
  // A tool of a group is served only when the person turned the group on (docs/tools.md).
  it("fits the catalogue budget (≤ 12,600 characters)", () => {
    const size = JSON.stringify({ tools: listTools().filter((t) => !t._meta) }).length;
    const full = JSON.stringify({ tools: TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })) }).length;
    const largest = listTools()
      .map((t) => [t.name, JSON.stringify(t).length] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3);
    console.log(`tools/list: ${TOOLS.length} tools, ${size} characters (full schemas: ${full}); largest: ${largest.map(([n, c]) => `${n} ${c}`).join(", ")}`);
    expect(size).toBeLessThanOrEqual(12_600);
  });

  it("the wire form is derived from the full schema, which alone validates", () => {
    for (const t of TOOLS) {
      const w = listTools().find((x) => x.name === t.name)!.inputSchema as { properties?: Record<string, unknown> };
      // Same properties and required fields; nothing the full schema lacks.
      expect(Object.keys(w.properties ?? {}), t.name).toEqual(Object.keys(t.inputSchema.properties ?? {}));
      expect(w, t.name).toEqual(wireSchema(t.inputSchema));
      expect(JSON.stringify(w), t.name).not.toMatch(/"additionalProperties":false|"minimum"|"maximum"|"doc"|"wire"/);
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
    }
    const click = listTools().find((t) => t.name === "click")!.inputSchema as { properties: Record<string, unknown> };
    expect(click.properties.waitFor).toEqual({ type: "object", properties: {} });
    expect(click.properties.observe).toEqual({ type: "string" });
    // The full schema still checks waitFor's fields and the bounds.
    const nav = TOOLS.find((t) => t.name === "navigate")!.inputSchema;
    expect(() => validate(nav, { url: "x", waitFor: { selector: "a", nope: 1 } })).toThrow(/waitFor\.nope: unknown property/);
    expect(() => validate(nav, { url: "x", waitFor: { selectr: "a" } })).toThrow(/waitFor\.selectr: unknown property \(did you mean "selector"\?\)/);
    expect(() => validate(nav, { url: "x", waitFor: { zzzzzzzzzz: "a" } })).toThrow(/waitFor\.zzzzzzzzzz: unknown property$/);
    expect(() => validate(nav, { url: "x", waitFor: { timeoutMs: 40_000 } })).toThrow(/waitFor\.timeoutMs: must be ≤ 30000/);
    expect(() => validate(nav, { url: "x", observe: "all" })).toThrow(/observe: must be one of/);
    expect(() => validate(nav, { url: "x", timeoutMs: 70_000 })).toThrow(/timeoutMs: must be ≤ 45000/);
  });

  it("every action takes waitFor and observe", () => {
    for (const t of listTools()) {
      if (t.annotations?.readOnlyHint || ["close_tab", "evaluate", "fetch_in_page", "invoke", "set_viewport"].includes(t.name)) continue;
      // Changing how the browser or tab shows itself acts on no page: nothing to wait for or observe.
      if (TOOLS.find((x) => x.name === t.name)!.traits.effects.every((e) => e === "identity")) continue;
      const props = (t.inputSchema as { properties: Record<string, unknown> }).properties;
      expect(props.waitFor, t.name).toBeDefined();
      expect(props.observe, t.name).toBeDefined();
    }
  });
});

describe("callTool", () => {
  it("unknown tool and bad arguments are isError results naming the field", async () => {
    const u = await callTool("nope", {});
    expect(u.isError).toBe(true);
    expect(u.structuredContent).toMatchObject({ error: { code: "tool_not_found" } });
    const b = await callTool("navigate", { url: 5 });
    expect(b.structuredContent).toMatchObject({ error: { code: "invalid_argument", field: "url" } });
    expect(b.content[0]).toMatchObject({ type: "text" });
    expect((b.content[0] as { text: string }).text).toMatch(/^invalid_argument: url: expected string.*\nhint: /);
    const x = await callTool("close_tab", { tabId: 1, extra: 1 });
    expect(x.structuredContent).toMatchObject({ error: { code: "invalid_argument", field: "extra" } });
    // Unknown properties inside waitFor too, though tools/list publishes it as a bare object.
    const w = await callTool("click", { ref: "e1", waitFor: { selector: "a", extra: 1 } });
    expect(w.structuredContent).toMatchObject({ error: { code: "invalid_argument", field: "waitFor.extra" } });
  });

  it("the gate refuses while paused, before the handler runs", async () => {
    setGateState({ paused: () => true });
    try {
      const r = await callTool("tabs", {});
      expect(r.structuredContent).toMatchObject({ error: { code: "paused" } });
    } finally {
      setGateState({ paused: () => false });
    }
  });
});

// What the daemon's audit learns from the extension: _meta["torii/audit"] = {origin, approval}, set
// in one place (callTool), with the same origin as the extension's own audit entry.
describe("audit metadata", () => {
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
  const policy = (click: "allow" | "ask" | "deny"): Policy => ({
    ...defaultPolicy(),
    actMode: true,
    approvals: { ...defaultPolicy().approvals, destructive_click: click },
    rules: [{ pattern: "good.example" }],
  });
  const meta = (r: unknown) => (r as { _meta?: Record<string, unknown> })._meta?.[META_AUDIT];

  afterEach(() => {
    setGateState({ paused: () => false });
    setAuditSink(() => undefined);
  });

  it("origin of the tab; the person's answer when asked; 'blocked' for a page off the allowlist", async () => {
    const entries: { tool: string; origin: string; approval?: string; code?: string }[] = [];
    setAuditSink((e) => entries.push(e));
    const cases: [Policy, string, "approved" | "denied" | "timeout", string, Record<string, string>][] = [
      [policy("ask"), "https://good.example/a", "approved", "click", { origin: "https://good.example", approval: "approved" }],
      [policy("ask"), "https://good.example/a", "denied", "click", { origin: "https://good.example", approval: "denied" }],
      [policy("ask"), "https://good.example/a", "timeout", "click", { origin: "https://good.example", approval: "timeout" }],
      // Allowed by the policy without asking: no approval to report.
      [policy("allow"), "https://good.example/a", "approved", "click", { origin: "https://good.example" }],
      [policy("allow"), "https://evil.example/secret", "approved", "click", { origin: "blocked" }],
    ];
    for (const [p, url, answer, tool, want] of cases) {
      setGateState({ paused: () => false, env: env(p, url, { ask: async () => answer }) });
      const r = await callTool(tool, { ref: "e1" });
      expect(meta(r), `${url} ${answer}`).toEqual(want);
      expect(JSON.stringify(r)).not.toContain("evil.example");
    }
    expect(entries.map((e) => e.origin)).toEqual(["https://good.example", "https://good.example", "https://good.example", "https://good.example", "blocked"]);
    expect(entries[1]).toMatchObject({ code: "approval_denied", approval: "denied" });
    expect(entries[2]).toMatchObject({ code: "approval_timeout", approval: "timeout" });
    expect(entries[4]).toMatchObject({ code: "origin_not_allowed" });
    expect(JSON.stringify(entries)).not.toContain("evil.example");
  });

  it("a navigation refused for its destination names no host either", async () => {
    setGateState({ paused: () => false, env: env(policy("allow"), "https://good.example/") });
    const r = await callTool("navigate", { url: "https://evil.example/x" });
    expect(r.structuredContent).toMatchObject({ error: { code: "origin_not_allowed" } });
    expect(meta(r)).toEqual({ origin: "blocked" });
  });

  it("a URL that is not one is invalid_argument naming url, audited as such, whatever the tab's page", async () => {
    const entries: { tool: string; origin: string; code?: string }[] = [];
    setAuditSink((e) => entries.push(e));
    const got: Record<string, unknown>[] = [];
    const want: Record<string, unknown>[] = [];
    // The tab's page off the allowlist, or on it: the argument is judged first either way.
    for (const page of ["https://evil.example/secret", "https://good.example/a"]) {
      setGateState({ paused: () => false, env: env(policy("allow"), page) });
      for (const [tool, args] of [
        ["navigate", { url: "notaurl" }],
        ["navigate", { url: "notaurl", tabId: 7 }],
        ["navigate", { url: "localhost:3000/x", tabId: 7 }],
        // "localhost:8080/x" parses as the scheme localhost:, which nothing can fetch.
        ["fetch_in_page", { url: "localhost:8080/x", tabId: 7 }],
        ["fetch_in_page", { url: "javascript:alert(1)", tabId: 7 }],
      ] as const) {
        const r = await callTool(tool, { ...args });
        const err = (r.structuredContent as { error: { code: string; field?: string; hint?: string } }).error;
        got.push({ call: `${tool} ${JSON.stringify(args)} on ${page}`, code: err.code, field: err.field, hint: /URL/.test(String(err.hint)), meta: meta(r) });
        want.push({ call: `${tool} ${JSON.stringify(args)} on ${page}`, code: "invalid_argument", field: "url", hint: true, meta: undefined });
      }
    }
    expect(got).toEqual(want);
    expect(entries.map((e) => [e.code, e.origin])).toEqual(want.map(() => ["invalid_argument", ""]));
  });

  it("no origin and no approval: no _meta for the audit", async () => {
    const r = await callTool("nope", {});
    expect(meta(r)).toBeUndefined();
    expect(auditOf({ origin: "https://a.example", approval: "auto" }, undefined)).toEqual({ origin: "https://a.example" });
    expect(auditOf({ origin: "https://a.example", approval: "cancelled" }, "cancelled")).toEqual({ origin: "https://a.example" });
    expect(auditOf({ origin: "https://evil.example" }, "origin_not_allowed")).toEqual({ origin: "blocked" });
    // The secrets a call used reach the daemon's audit by name, never by value.
    expect(auditOf({ origin: "https://a.example" }, undefined, "bank on https://a.example")).toEqual({ origin: "https://a.example", secrets: "bank on https://a.example" });
  });
});

// SECURITY I-80: every wait ends before the 60 s request timeout of the common MCP clients.
describe("a call's deadline", () => {
  it("is one absolute time: the caller's, capped 55 s from arrival, under a client's 60 s", () => {
    expect(MAX_CALL_MS).toBeLessThan(60_000);
    expect(callDeadline(1_000)).toBe(1_000 + MAX_CALL_MS);
    expect(callDeadline(1_000, 20_000)).toBe(20_000);
    expect(callDeadline(1_000, 1_000_000)).toBe(1_000 + MAX_CALL_MS);
  });

  it("caps a tool's own deadline at 50 s from its start, whatever its entry says", () => {
    expect(MAX_TOOL_TIMEOUT_MS).toBe(50_000);
    const far = 10_000_000;
    expect(handlerEnd(far, 0)).toBe(50_000);
    expect(handlerEnd(far, 0, 90_000)).toBe(MAX_TOOL_TIMEOUT_MS);
    expect(handlerEnd(far, 0, 15_000)).toBe(15_000);
    // After the person's answer: what the call's one deadline leaves, less the answer's margin.
    expect(handlerEnd(55_000, 44_000)).toBe(55_000 - ANSWER_MARGIN_MS);
  });

  it("every registry entry's handler ends within 50 s, and every timeoutMs argument is bounded by 45 s", () => {
    for (const t of TOOLS) {
      for (const waited of [0, 20_000, 45_000]) {
        const end = handlerEnd(callDeadline(0), waited, t.timeoutMs);
        expect(end - waited, `${t.name} ${waited}`).toBeLessThanOrEqual(MAX_TOOL_TIMEOUT_MS);
        // The person's answer and the work after it: never past the call's one deadline.
        expect(end, t.name).toBeLessThanOrEqual(MAX_CALL_MS - ANSWER_MARGIN_MS);
      }
      const arg = (t.inputSchema.properties as Record<string, { maximum?: number } | undefined>).timeoutMs;
      if (arg) expect(arg.maximum, t.name).toBeLessThanOrEqual(MAX_ARG_TIMEOUT_MS);
    }
    // The page-load and waiting tools are among them (a renamed argument would pass unseen).
    const withArg = TOOLS.filter((t) => (t.inputSchema.properties as Record<string, unknown>).timeoutMs).map((t) => t.name);
    expect(withArg).toEqual(expect.arrayContaining(["navigate", "history", "reload", "handoff", "wait_for", "evaluate"]));
  });

  it("a tool entry cannot name a deadline or a timeoutMs argument past the caps", () => {
    const mk = (timeoutMs: number | undefined, argMax: number | undefined) => () =>
      defineTool({
        name: "probe",
        description: "x",
        inputSchema: { type: "object", properties: argMax === undefined ? {} : { timeoutMs: { type: "integer", minimum: 0, maximum: argMax } } },
        traits: { target: "none", reads: "none", effects: [], switch: "none", dialog: "ignores", handoff: "refused" },
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        handler: async () => ({ text: "" }),
      });
    expect(mk(MAX_TOOL_TIMEOUT_MS, MAX_ARG_TIMEOUT_MS)).not.toThrow();
    expect(mk(undefined, undefined)).not.toThrow();
    expect(mk(90_000, undefined)).toThrow(/timeoutMs must be from 1 to 50000/);
    expect(mk(0, undefined)).toThrow(/timeoutMs must be from 1 to 50000/);
    expect(mk(undefined, 60_000)).toThrow(/at most 45000/);
    expect(() =>
      defineTool({
        name: "probe",
        description: "x",
        inputSchema: { type: "object", properties: { timeoutMs: { type: "integer" } } },
        traits: { target: "none", reads: "none", effects: [], switch: "none", dialog: "ignores", handoff: "refused" },
        handler: async () => ({ text: "" }),
      }),
    ).toThrow(/at most 45000/);
  });

  it("never runs past the daemon's deadline (less a margin for the answer)", () => {
    expect(handlerEnd(57_000, 0)).toBe(50_000);
    expect(handlerEnd(20_000, 0)).toBe(20_000 - ANSWER_MARGIN_MS);
    expect(handlerEnd(12_000, 0, 30_000)).toBe(12_000 - ANSWER_MARGIN_MS);
  });
});

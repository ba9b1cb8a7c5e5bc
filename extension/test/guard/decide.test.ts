// The effect guard's decisions (SECURITY I-18, I-36…I-39): what a frame may receive while an
// agent's call is armed on its tab, from its own origin and the person's policy.
import { describe, expect, it } from "vitest";
import { decide, GUARDED_EVENTS, rightsFor, settlePending, SUBMIT_KEY_EVENTS, type ArmSpec, type Rights } from "../../src/guard/decide.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";

const policy = (approvals: Partial<Policy["approvals"]> = {}, rule: Record<string, unknown> = {}): Policy => ({
  ...defaultPolicy(),
  actMode: true,
  approvals: { ...defaultPolicy().approvals, ...approvals },
  rules: [{ pattern: "good.example", ...rule }, { pattern: "https://paths.example/app/*" }],
});
const spec = (p: Policy, o: Partial<ArmSpec> = {}): ArmSpec => ({ token: "t", expires: Date.now() + 10_000, policy: p, approved: [], allowPassword: false, ...o });
const ALLOWED: Rights = { allowed: true, effects: [], allowPassword: false };
const OFF: Rights = { allowed: false, effects: [], allowPassword: false };

describe("rightsFor: a frame judged by its own origin", () => {
  it("an allowed origin, an origin off the list, an opaque origin", () => {
    expect(rightsFor(spec(policy()), "https://good.example", "https://good.example/x").allowed).toBe(true);
    expect(rightsFor(spec(policy()), "https://evil.example", "https://evil.example/").allowed).toBe(false);
    expect(rightsFor(spec(policy()), "null", "about:srcdoc").allowed).toBe(false);
    expect(rightsFor(spec({ ...policy(), permissive: true }), "null", "about:blank").allowed).toBe(false);
  });
  it("a blank or srcdoc document is its creator's origin, judged bare (a path rule never lets it through)", () => {
    expect(rightsFor(spec(policy()), "https://good.example", "about:blank").allowed).toBe(true);
    expect(rightsFor(spec(policy()), "https://evil.example", "about:srcdoc").allowed).toBe(false);
    expect(rightsFor(spec(policy()), "https://paths.example", "https://paths.example/app/x").allowed).toBe(true);
    expect(rightsFor(spec(policy()), "https://paths.example", "about:blank").allowed).toBe(false);
    // A blob: document is judged by its bare origin; file: has no origin a rule can match.
    expect(rightsFor(spec(policy()), "https://good.example", "blob:https://good.example/uuid").allowed).toBe(true);
    expect(rightsFor(spec(policy()), "https://paths.example", "blob:https://paths.example/app/x").allowed).toBe(false);
    expect(rightsFor(spec({ ...policy(), permissive: true }), "file://", "file:///etc/passwd").allowed).toBe(false);
  });
  it("effects: allowed by the origin's choice or approved for this call; passwords need both switches", () => {
    const r = rightsFor(spec(policy({ submit: "allow", destructive_click: "ask", new_origin: "deny" }), { approved: ["destructive_click"] }), "https://good.example", "https://good.example/");
    expect(r.effects.sort()).toEqual(["destructive_click", "submit"]);
    expect(rightsFor(spec(policy(), { allowPassword: true }), "https://good.example", "https://good.example/").allowPassword).toBe(false);
    expect(rightsFor(spec(policy({}, { allowPassword: true }), { allowPassword: true }), "https://good.example", "https://good.example/").allowPassword).toBe(true);
    expect(rightsFor(spec(policy({}, { allowPassword: true })), "https://good.example", "https://good.example/").allowPassword).toBe(false);
  });
});

describe("decide: one event", () => {
  it("idle: nothing is touched", () => {
    for (const type of GUARDED_EVENTS) expect(decide("idle", undefined, undefined, { type, trusted: true })).toBeNull();
  });
  it("a frame off the list gets no trusted input of any kind, and no submit at all", () => {
    for (const type of GUARDED_EVENTS) expect(decide("armed", OFF, undefined, { type, trusted: true })).toEqual({ code: "origin_not_allowed" });
    expect(decide("armed", OFF, undefined, { type: "keydown", trusted: false })).toBeNull();
    expect(decide("armed", OFF, undefined, { type: "submit", trusted: false })).toEqual({ code: "origin_not_allowed" });
  });
  it("a document that has not heard from the worker blocks input (and in a frame, focus) but not pointer moves", () => {
    expect(decide("pending", undefined, undefined, { type: "keydown", trusted: true })).toEqual({ code: "navigation_failed" });
    expect(decide("pending", undefined, undefined, { type: "mousedown", trusted: true })).toEqual({ code: "navigation_failed" });
    expect(decide("pending", undefined, undefined, { type: "mousemove", trusted: true })).toBeNull();
    // The keyup of the Enter that brought this document: stopped, but no failure of the call.
    expect(decide("pending", undefined, undefined, { type: "keyup", trusted: true })).toEqual({ code: "navigation_failed", quiet: true });
    expect(decide("pending", undefined, undefined, { type: "keypress", trusted: true })).toEqual({ code: "navigation_failed" });
    expect(decide("pending", undefined, undefined, { type: "focus", trusted: true })).toBeNull();
    expect(decide("pending", undefined, undefined, { type: "focus", trusted: true, subframe: true })).toEqual({ code: "navigation_failed", quiet: true });
    expect(settlePending([{ code: "navigation_failed" }], OFF)).toEqual([{ code: "origin_not_allowed" }]);
    expect(settlePending([{ code: "navigation_failed" }], ALLOWED)).toEqual([{ code: "navigation_failed" }]);
  });
  it("a key while a password field has focus, unless passwords are allowed", () => {
    for (const type of ["keydown", "keypress", "beforeinput", "textInput", "paste"]) {
      expect(decide("armed", ALLOWED, undefined, { type, trusted: true, password: true })).toEqual({ code: "password_field" });
      expect(decide("armed", { ...ALLOWED, allowPassword: true }, undefined, { type, trusted: true, password: true })).toBeNull();
    }
    expect(decide("armed", ALLOWED, undefined, { type: "keydown", trusted: true, password: false })).toBeNull();
  });
  it("an effect the call was not allowed is blocked; an allowed one passes", () => {
    expect(decide("armed", ALLOWED, undefined, { type: "submit", trusted: true, effects: ["submit"] })).toEqual({ code: "approval_denied", kind: "submit" });
    expect(decide("armed", ALLOWED, undefined, { type: "click", trusted: false, effects: ["destructive_click"] })).toEqual({ code: "approval_denied", kind: "destructive_click" });
    expect(decide("armed", { ...ALLOWED, effects: ["submit"] }, undefined, { type: "submit", trusted: true, effects: ["submit"] })).toBeNull();
    expect(decide("armed", { ...ALLOWED, effects: ["submit"] }, undefined, { type: "click", trusted: true, effects: ["submit", "new_origin"] })).toEqual({ code: "approval_denied", kind: "new_origin" });
  });
  it("after a block, the rest of the trusted input in that frame is not delivered either", () => {
    const b = { code: "password_field" as const };
    expect(decide("armed", ALLOWED, b, { type: "keydown", trusted: true, password: false })).toBe(b);
    expect(decide("armed", ALLOWED, b, { type: "mousedown", trusted: true })).toBe(b);
    expect(decide("armed", ALLOWED, b, { type: "focus", trusted: true })).toBeNull();
  });
});

describe("requests off the list", () => {
  it("a form action, link or ping to an origin off the list is blocked in an allowed frame, whatever was approved", async () => {
    const { sendsOffList } = await import("../../src/guard/decide.js");
    expect(sendsOffList(policy(), ["https://good.example/done"])).toBe(false);
    expect(sendsOffList(policy(), ["https://good.example/x", "https://evil.example/collect"])).toBe(true);
    expect(sendsOffList(policy(), ["javascript:void 0", ""])).toBe(false);
    const all: Rights = { allowed: true, effects: ["submit", "destructive_click", "new_origin"], allowPassword: true };
    expect(decide("armed", all, undefined, { type: "submit", trusted: true, effects: ["submit"], offList: true })).toEqual({ code: "origin_not_allowed" });
  });
});

describe("a secret's submit key (SECURITY I-18, I-69)", () => {
  it("only the Enter's keydown, keypress and line break pass into the password field, never text", () => {
    for (const type of ["keydown", "keypress", "beforeinput"]) {
      expect(decide("armed", ALLOWED, undefined, { type, trusted: true, password: true, submitKey: true })).toBeNull();
    }
    for (const type of ["textInput", "paste"]) {
      expect(SUBMIT_KEY_EVENTS.has(type)).toBe(false);
      expect(decide("armed", ALLOWED, undefined, { type, trusted: true, password: true, submitKey: true })).toEqual({ code: "password_field" });
    }
    // Without the grant (another field, another frame, a second Enter), the key is refused as before.
    expect(decide("armed", ALLOWED, undefined, { type: "keydown", trusted: true, password: true })).toEqual({ code: "password_field" });
  });
  it("the grant never lifts another block: a frame off the list, a latched block, an effect not approved", () => {
    expect(decide("armed", OFF, undefined, { type: "keydown", trusted: true, password: true, submitKey: true })).toEqual({ code: "origin_not_allowed" });
    const b = { code: "password_field" as const };
    expect(decide("armed", ALLOWED, b, { type: "keydown", trusted: true, password: true, submitKey: true })).toBe(b);
    expect(decide("armed", ALLOWED, undefined, { type: "keydown", trusted: true, password: true, submitKey: true, effects: ["submit"] })).toEqual({
      code: "approval_denied",
      kind: "submit",
    });
  });
  it("a document holding a secret submits nothing to an origin it is not bound to, whatever was approved or allowed (I-76)", () => {
    const all: Rights = { allowed: true, effects: ["submit", "destructive_click", "new_origin"], allowPassword: true };
    expect(decide("armed", all, undefined, { type: "submit", trusted: true, effects: ["submit"], secretElsewhere: true })).toEqual({ code: "secret_origin_mismatch" });
    expect(decide("armed", all, undefined, { type: "submit", trusted: false, secretElsewhere: true })).toEqual({ code: "secret_origin_mismatch" });
    expect(decide("armed", all, undefined, { type: "keydown", trusted: true, submitKey: true, password: true, secretElsewhere: true })).toEqual({
      code: "secret_origin_mismatch",
    });
    // A key on a password field the secret did not go into is refused as such (I-18) first.
    expect(decide("armed", ALLOWED, undefined, { type: "keydown", trusted: true, password: true, secretElsewhere: true })).toEqual({ code: "password_field" });
  });
});

// The sensitive-capture switch: off unless the origin's own entry turns it on (permissive mode
// included), kept through normalisation, and never given by another switch.
import { describe, expect, it } from "vitest";
import { captureSensitiveAllowed, defaultPolicy, judgeUrl, normalizePolicy, permissivePolicy, withRule } from "../../src/policy/policy.js";

describe("capture headers/bodies switch", () => {
  it("is off by default, in permissive mode, and with every other switch on", () => {
    expect(captureSensitiveAllowed(judgeUrl(defaultPolicy(), "https://a.example/"))).toBe(false);
    expect(captureSensitiveAllowed(judgeUrl(permissivePolicy(), "https://a.example/"))).toBe(false);
    const all = withRule(defaultPolicy(), { pattern: "a.example", act: true, evalExpression: true, evalProgram: true, fetch: true, allowPassword: true });
    expect(captureSensitiveAllowed(judgeUrl(all, "https://a.example/x"))).toBe(false);
  });
  it("is on only for the origin whose entry has it, and survives storage normalisation", () => {
    const p = normalizePolicy(JSON.parse(JSON.stringify(withRule(defaultPolicy(), { pattern: "a.example", captureSensitive: true }))));
    expect(p.rules[0]?.captureSensitive).toBe(true);
    expect(captureSensitiveAllowed(judgeUrl(p, "https://a.example/api"))).toBe(true);
    expect(captureSensitiveAllowed(judgeUrl(p, "https://b.example/api"))).toBe(false);
    expect(normalizePolicy({ rules: [{ pattern: "a.example", captureSensitive: "yes" }] }).rules[0]?.captureSensitive).toBeUndefined();
  });
});

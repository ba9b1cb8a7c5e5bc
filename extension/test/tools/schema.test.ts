import { describe, expect, it } from "vitest";
import { SchemaError, validate, type JsonSchema } from "../../src/tools/schema.js";

const s: JsonSchema = {
  type: "object",
  properties: {
    url: { type: "string", minLength: 1 },
    n: { type: "integer", minimum: 1, maximum: 5 },
    x: { type: "number" },
    mode: { type: "string", enum: ["a", "b"] },
    list: { type: "array", items: { type: "integer", minimum: 0 }, maxItems: 2 },
    w: { type: "object", properties: { t: { type: "string" } }, additionalProperties: false },
  },
  required: ["url"],
  additionalProperties: false,
};

function field(v: unknown): string | undefined {
  try {
    validate(s, v);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(SchemaError);
    return (e as SchemaError).field;
  }
}

describe("validate", () => {
  it("accepts a fitting object", () => {
    expect(field({ url: "u", n: 3, x: 1.5, mode: "a", list: [0, 1], w: { t: "z" } })).toBeUndefined();
  });
  it("names the offending field", () => {
    expect(field({})).toBe("url");
    expect(field({ url: 5 })).toBe("url");
    expect(field({ url: "" })).toBe("url");
    expect(field({ url: "u", n: 1.5 })).toBe("n");
    expect(field({ url: "u", n: 9 })).toBe("n");
    expect(field({ url: "u", x: Number.NaN })).toBe("x");
    expect(field({ url: "u", mode: "c" })).toBe("mode");
    expect(field({ url: "u", list: [0, -1] })).toBe("list.1");
    expect(field({ url: "u", list: [0, 1, 2] })).toBe("list");
    expect(field({ url: "u", w: { q: 1 } })).toBe("w.q");
    expect(field({ url: "u", extra: true })).toBe("extra");
    expect(field([])).toBe("");
    expect(field(null)).toBe("");
  });
});

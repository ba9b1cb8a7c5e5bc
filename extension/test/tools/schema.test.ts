import { describe, expect, it } from "vitest";
import { SchemaError, validate, wireSchema, type JsonSchema } from "../../src/tools/schema.js";

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

describe("anyOf and maps", () => {
  const m: JsonSchema = {
    type: "object",
    properties: {
      v: { anyOf: [{ type: "string" }, { type: "boolean" }, { type: "array", items: { type: "string" }, minItems: 1 }] },
      h: { type: "object", properties: {}, additionalProperties: { type: "string" } },
    },
    additionalProperties: false,
  };
  const err = (v: unknown) => {
    try {
      validate(m, v);
      return "";
    } catch (e) {
      return (e as Error).message;
    }
  };
  it("a value fits one of its alternatives; a map's values their schema", () => {
    for (const v of ["x", true, ["a"]]) expect(err({ v })).toBe("");
    expect(err({ v: 5 })).toBe("v: expected a string, a boolean or a non-empty list of strings");
    expect(err({ v: [] })).toMatch(/^v: expected/);
    expect(err({ v: [1] })).toMatch(/^v: expected/);
    expect(err({ h: { Accept: "text/html", "X-A": "1" } })).toBe("");
    expect(err({ h: { "X-A": 1 } })).toBe("h.X-A: expected string, got integer");
  });
  it("the wire form keeps enum types, empty properties, anyOf and a map's value schema", () => {
    expect(wireSchema({ type: "string", enum: ["a"] })).toEqual({ type: "string", enum: ["a"] });
    expect(wireSchema({ type: "object", properties: {}, additionalProperties: false })).toEqual({ type: "object", properties: {} });
    expect(wireSchema(m)).toEqual({
      type: "object",
      properties: {
        v: { anyOf: [{ type: "string" }, { type: "boolean" }, { type: "array", items: { type: "string" } }] },
        h: { type: "object", properties: {}, additionalProperties: { type: "string" } },
      },
    });
  });
});

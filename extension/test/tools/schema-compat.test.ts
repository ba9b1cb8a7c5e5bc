// Clients hand tool schemas to their model's converter (OpenAI's function schema, Gemini's
// OpenAPI subset, Copilot's validator), and those refuse constructs plain JSON Schema allows: an
// enum without its type, an object without `properties`, an array without `items`, a value
// without a type, a type list, `properties` on a non-object, keywords outside the common subset
// ($ref, oneOf, allOf, not, const, pattern, format …), anyOf at the root. Every tool's wire form
// (what tools/list publishes) and full schema (what validates, and docs/tools.md shows) is walked.
import { describe, expect, it } from "vitest";
import { listTools, TOOLS } from "../../src/tools/registry.js";

const TYPES = new Set(["object", "string", "number", "integer", "boolean", "array"]);
const KEYWORDS = new Set([
  "type", "description", "properties", "required", "items", "enum", "anyOf", "additionalProperties",
  "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "default",
]);
/** The registry's own annotations on a full schema, never published (wireSchema drops them). */
const FULL_ONLY = new Set(["doc", "wire"]);

function problems(s: unknown, at: string, full: boolean): string[] {
  if (typeof s !== "object" || s === null || Array.isArray(s)) return [`${at}: not a schema`];
  const o = s as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(o)) {
    if (!KEYWORDS.has(k) && !(full && FULL_ONLY.has(k))) out.push(`${at}: keyword ${k}`);
  }
  if (o.anyOf !== undefined) {
    if (o.type !== undefined || o.enum !== undefined) out.push(`${at}: anyOf beside type or enum`);
    if (!Array.isArray(o.anyOf) || o.anyOf.length < 2) out.push(`${at}: anyOf needs two alternatives or more`);
    else o.anyOf.forEach((a, i) => out.push(...problems(a, `${at}.anyOf[${i}]`, full)));
  } else if (typeof o.type !== "string" || !TYPES.has(o.type)) {
    out.push(`${at}: type ${JSON.stringify(o.type)} is not one type name`);
  }
  if (o.enum !== undefined) {
    const want = o.type === "integer" ? "number" : o.type;
    if (!Array.isArray(o.enum) || o.enum.length === 0) out.push(`${at}: enum is not a non-empty list`);
    else if (o.type === undefined) out.push(`${at}: enum without type`);
    else if (!o.enum.every((v) => typeof v === want)) out.push(`${at}: enum values not all ${String(o.type)}`);
  }
  if (o.type === "object") {
    const props = o.properties;
    if (typeof props !== "object" || props === null || Array.isArray(props)) {
      out.push(`${at}: object without properties`);
    } else {
      for (const [k, p] of Object.entries(props)) out.push(...problems(p, `${at}.${k}`, full));
      if (o.required !== undefined) {
        if (!Array.isArray(o.required) || !o.required.every((r) => typeof r === "string" && r in props)) out.push(`${at}: required names a property it does not have`);
      }
    }
    const ap = o.additionalProperties;
    if (ap !== undefined && typeof ap !== "boolean") out.push(...problems(ap, `${at}.additionalProperties`, full));
  } else {
    for (const k of ["properties", "required", "additionalProperties"]) if (o[k] !== undefined) out.push(`${at}: ${k} on a non-object`);
  }
  if (o.type === "array") {
    if (o.items === undefined) out.push(`${at}: array without items`);
    else out.push(...problems(o.items, `${at}.items`, full));
  } else if (o.items !== undefined) {
    out.push(`${at}: items on a non-array`);
  }
  if (full && o.wire !== undefined) out.push(...problems(o.wire, `${at}.wire`, false));
  return out;
}

function rootProblems(s: unknown, full: boolean): string[] {
  const o = s as Record<string, unknown>;
  const out = problems(s, "inputSchema", full);
  if (o.type !== "object") out.push("inputSchema: the root is not an object");
  return out;
}

describe("tool schemas pass clients' schema converters", () => {
  it("the check finds what converters refuse", () => {
    const bad: [unknown, RegExp][] = [
      [{ enum: ["a"] }, /enum without type/],
      [{ type: "object" }, /object without properties/],
      [{ type: "array" }, /array without items/],
      [{}, /type undefined/],
      [{ type: ["string", "null"] }, /is not one type name/],
      [{ type: "string", properties: {} }, /properties on a non-object/],
      [{ $ref: "#/x", type: "string" }, /keyword \$ref/],
      [{ type: "string", enum: [1] }, /enum values not all string/],
      [{ anyOf: [{ type: "string" }, {}] }, /anyOf\[1\]: type undefined/],
      [{ type: "object", properties: {}, additionalProperties: { enum: ["x"] } }, /additionalProperties: enum without type/],
      [{ type: "object", properties: {}, required: ["x"] }, /required names a property/],
    ];
    for (const [s, re] of bad) expect(problems(s, "s", false).join("\n"), JSON.stringify(s)).toMatch(re);
    expect(problems({ type: "string", wire: { type: "object" } }, "s", true).join("\n")).toMatch(/s\.wire: object without properties/);
    expect(problems({ type: "string", doc: "x" }, "s", false).join("\n")).toMatch(/keyword doc/);
    expect(problems({ type: "object", properties: { a: { type: "string", enum: ["x"] } } }, "s", false)).toEqual([]);
  });

  it("every tool's wire form", () => {
    const found = listTools().flatMap((t) => rootProblems(t.inputSchema, false).map((p) => `${t.name}: ${p}`));
    expect(found).toEqual([]);
  });

  it("every tool's full schema, with the wire forms it declares", () => {
    const found = TOOLS.flatMap((t) => rootProblems(t.inputSchema, true).map((p) => `${t.name}: ${p}`));
    expect(found).toEqual([]);
  });
});

// A small validator for the subset of JSON Schema the tool schemas use: type, properties,
// required, enum, minimum/maximum, minLength/maxLength, minItems/maxItems, items,
// additionalProperties (false, or the schema of every other property's value), anyOf (of typed
// alternatives). One place validates every call; a failure names the offending field.
// wireSchema derives the compact form tools/list publishes from the same schema.

import { didYouMean } from "../shared/suggest.js";

export interface JsonSchema {
  type?: "object" | "string" | "number" | "integer" | "boolean" | "array";
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  /** false: no other property; a schema: what every other property's value must be (a map). */
  additionalProperties?: boolean | JsonSchema;
  /** The value fits one of these (each with its own type). */
  anyOf?: JsonSchema[];
  enum?: readonly (string | number | boolean)[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  /** A note for docs/tools.md only (tools/list leaves it out: the name or the instructions say it). */
  doc?: string;
  /**
   * Published in tools/list instead of this schema (a shared convention the server instructions
   * describe once, e.g. waitFor). Validation and docs/tools.md use the schema itself.
   */
  wire?: JsonSchema;
}

export class SchemaError extends Error {
  override name = "SchemaError";
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(field ? `${field}: ${message}` : message);
  }
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Throws SchemaError (with the dotted path of the field) when `value` does not fit `schema`. */
export function validate(schema: JsonSchema, value: unknown, path = ""): void {
  const at = (k: string | number) => (path ? `${path}.${k}` : String(k));
  if (schema.type) {
    const t = typeOf(value);
    const ok =
      schema.type === t ||
      (schema.type === "number" && t === "integer") ||
      (schema.type === "number" && t === "number" && Number.isFinite(value as number));
    if (!ok || (typeof value === "number" && !Number.isFinite(value))) {
      throw new SchemaError(path, `expected ${schema.type}, got ${t}`);
    }
  }
  if (schema.anyOf && !schema.anyOf.some((alt) => fits(alt, value))) {
    throw new SchemaError(path, `expected ${orList(schema.anyOf.map(describe))}`);
  }
  if (schema.enum && !schema.enum.includes(value as string)) {
    throw new SchemaError(path, `must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) throw new SchemaError(path, `must be ≥ ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) throw new SchemaError(path, `must be ≤ ${schema.maximum}`);
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && value.length < schema.minLength) throw new SchemaError(path, `must have at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) throw new SchemaError(path, `must have at most ${schema.maxLength} characters`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) throw new SchemaError(path, `must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) throw new SchemaError(path, `must have at most ${schema.maxItems} items`);
    if (schema.items) value.forEach((v, i) => validate(schema.items as JsonSchema, v, at(i)));
  }
  if (schema.type === "object" && typeof value === "object" && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const r of schema.required ?? []) {
      if (obj[r] === undefined) throw new SchemaError(at(r), "is required");
    }
    const props = schema.properties ?? {};
    for (const [k, v] of Object.entries(obj)) {
      const ap = schema.additionalProperties;
      const p = props[k] ?? (typeof ap === "object" ? ap : undefined);
      if (!p) {
        if (ap === false) throw new SchemaError(at(k), `unknown property${didYouMean(k, Object.keys(props))}`);
        continue;
      }
      if (v === undefined) continue;
      validate(p, v, at(k));
    }
  }
}

function fits(schema: JsonSchema, value: unknown): boolean {
  try {
    validate(schema, value);
    return true;
  } catch (e) {
    if (e instanceof SchemaError) return false;
    throw e;
  }
}

/** "a string", "a non-empty list of strings": an anyOf alternative, for its error. */
function describe(s: JsonSchema): string {
  if (s.type === "array") {
    const of = s.items?.type ? ` of ${s.items.type}s` : "";
    return `a ${s.minItems !== undefined && s.minItems > 0 ? "non-empty " : ""}list${of}`;
  }
  if (!s.type) return "a value";
  return `${s.type === "object" || s.type === "integer" ? "an" : "a"} ${s.type}`;
}

function orList(items: string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/**
 * The compact form of a schema that tools/list publishes (every agent turn pays for it), derived
 * from the full one, which stays the one that validates and the one docs/tools.md shows: type,
 * enum, anyOf, description, items, properties, required and a map's additionalProperties schema
 * are kept; bounds (a value out of range gets invalid_argument naming the bound) and
 * additionalProperties:false (unknown properties are still refused) are left out. A property
 * with `wire` is published as that. Clients convert this for their models, and common converters
 * refuse an enum without its type and an object without `properties`, so both are always kept
 * (an empty `properties` is the same schema as none).
 */
export function wireSchema(schema: JsonSchema): JsonSchema {
  const s = schema.wire ?? schema;
  const w: JsonSchema = {};
  if (s.type !== undefined) w.type = s.type;
  if (s.enum !== undefined) w.enum = s.enum;
  if (s.anyOf !== undefined) w.anyOf = s.anyOf.map(wireSchema);
  if (s.description !== undefined) w.description = s.description;
  if (s.default !== undefined) w.default = s.default;
  if (s.items !== undefined) w.items = wireSchema(s.items);
  if (s.type === "object" || s.properties !== undefined) {
    w.properties = Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, p]) => [k, wireSchema(p)]));
  }
  if (typeof s.additionalProperties === "object") w.additionalProperties = wireSchema(s.additionalProperties);
  if (s.required !== undefined && s.required.length > 0) w.required = s.required;
  return w;
}

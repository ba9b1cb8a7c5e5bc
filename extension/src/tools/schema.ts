// A small validator for the subset of JSON Schema the tool schemas use: type, properties,
// required, enum, minimum/maximum, minLength/maxLength, minItems/maxItems, items,
// additionalProperties:false, anyOf (of required-sets, for "ref or selector").
// One place validates every call; a failure names the offending field.
// wireSchema derives the compact form tools/list publishes from the same schema.

export interface JsonSchema {
  type?: "object" | "string" | "number" | "integer" | "boolean" | "array";
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
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
      const p = props[k];
      if (!p) {
        if (schema.additionalProperties === false) throw new SchemaError(at(k), "unknown property");
        continue;
      }
      if (v === undefined) continue;
      validate(p, v, at(k));
    }
  }
}

/**
 * The compact form of a schema that tools/list publishes (every agent turn pays for it), derived
 * from the full one, which stays the one that validates and the one docs/tools.md shows: type,
 * enum, description, items, properties and required are kept; bounds (a value out of range gets
 * invalid_argument naming the bound), additionalProperties (unknown properties are still refused)
 * and a `type` beside an `enum` are left out. A property with `wire` is published as that.
 */
export function wireSchema(schema: JsonSchema): JsonSchema {
  const s = schema.wire ?? schema;
  const w: JsonSchema = {};
  if (s.type !== undefined && s.enum === undefined) w.type = s.type;
  if (s.enum !== undefined) w.enum = s.enum;
  if (s.description !== undefined) w.description = s.description;
  if (s.default !== undefined) w.default = s.default;
  if (s.items !== undefined) w.items = wireSchema(s.items);
  if (s.properties !== undefined && Object.keys(s.properties).length > 0) {
    w.properties = Object.fromEntries(Object.entries(s.properties).map(([k, p]) => [k, wireSchema(p)]));
  }
  if (s.required !== undefined && s.required.length > 0) w.required = s.required;
  return w;
}

// A small validator for the subset of JSON Schema the tool schemas use: type, properties,
// required, enum, minimum/maximum, minLength/maxLength, minItems/maxItems, items,
// additionalProperties:false, anyOf (of required-sets, for "ref or selector").
// One place validates every call; a failure names the offending field.

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

// fill_form's page side: many fields of one document checked together, then filled together.
// Every field is resolved and checked (element, kind of value, options, disabled, read-only,
// password) before the first one is touched, in one synchronous turn, so a bad field leaves the
// whole form as it was. Like fill, nothing here returns a field's value.
import { norm } from "./dom";
import { EngineError, fail } from "./errors";
import type { EngineContext } from "./context";
import * as actions from "./actions";
import { isPasswordField } from "./risk";
import { useSecrets } from "./secrets";
import { holdSecrets } from "./hold-secret";
import { onlySecret, type SecretBundle } from "../secrets/template";

export type FieldValue = string | boolean | string[];

interface FormFieldArg {
  /** The field's index in the call's list (errors name `fields.<i>`). */
  i: number;
  ref?: string;
  selector?: string;
  value: FieldValue;
}

export interface FillFormArgs {
  fields: FormFieldArg[];
  /** false: check only; true: check again, then fill. */
  apply: boolean;
  /** Filling: password fields of this document may be filled (SECURITY I-18). */
  allowPassword: boolean;
  /**
   * The values of the `{{secret:NAME}}` references in the fields (SECURITY I-69); when checking,
   * the origins only (every value empty).
   */
  secrets?: SecretBundle;
}

type FieldKind = "text" | "value" | "editable" | "select" | "multiselect" | "checkbox" | "radio";

export interface FillFormResult {
  /**
   * Checking: the password fields among them; filling: those, when the call may not touch them
   * (nothing was filled).
   */
  password?: number[];
  /** Checking: this document's own origin and URL, which the worker judges for password fields. */
  origin?: string;
  url?: string;
  /** Per field, in call order, once applied: its kind and whether the page kept the value. */
  filled?: { i: number; kind: FieldKind; applied: boolean }[];
}

/** Text-like inputs; the browser sanitizes number, date, range and color values, checked below. */
const TEXT_TYPES = new Set([
  "text", "email", "password", "search", "tel", "url", "number", "date", "time", "datetime-local",
  "month", "week", "range", "color",
]);
/** Types whose value the browser rewrites when it does not fit (sanitization). */
const SANITIZED = new Set(["number", "date", "time", "datetime-local", "month", "week", "range", "color"]);

interface Plan {
  f: FormFieldArg;
  el: Element;
  kind: FieldKind;
  /** select: the option indexes to select. */
  indexes?: number[];
}

function describeValue(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  return typeof v === "boolean" ? "a boolean" : typeof v === "string" ? "a string" : typeof v;
}

function disabled(el: Element): boolean {
  return el.matches(":disabled") || el.getAttribute("aria-disabled") === "true";
}

/** Would the browser keep `v` in this input as it is? A detached probe, so the field is untouched. */
function keepsValue(f: HTMLInputElement, v: string): boolean {
  if (v === "") return true;
  const p = f.ownerDocument.createElement("input");
  p.type = f.type;
  for (const a of ["min", "max", "step"]) {
    const x = f.getAttribute(a);
    if (x !== null) p.setAttribute(a, x);
  }
  p.value = v;
  return p.value === v;
}

/** Option indexes for each wanted string: an option's value, else its label (case and spaces aside). */
function optionIndexes(s: HTMLSelectElement, wanted: string[]): number[] {
  const opts = Array.from(s.options);
  const out: number[] = [];
  for (const w of wanted) {
    let k = opts.findIndex((o) => o.value === w);
    if (k < 0) {
      const n = norm(w).toLowerCase();
      k = opts.findIndex((o) => norm(o.label).toLowerCase() === n);
    }
    if (k < 0) {
      const avail = opts.slice(0, 20).map((o) => `"${norm(o.label).slice(0, 40)}"`).join(", ") + (opts.length > 20 ? `, … (${opts.length} options)` : "");
      fail("not_found", `no option "${w.slice(0, 80)}"; options: ${avail}`, "Give an option's value or its label.");
    }
    if ((opts[k] as HTMLOptionElement).disabled) fail("disabled", `option "${norm((opts[k] as HTMLOptionElement).label)}" is disabled`);
    if (!out.includes(k)) out.push(k);
  }
  return out;
}

function planField(engine: EngineContext, f: FormFieldArg): Plan {
  const el = engine.target(f);
  const v = f.value;
  const tag = el.localName;
  const wrong = (takes: string): never => fail("invalid_argument", `value: ${describeValue(v)}, but this ${what(el)} takes ${takes}`);
  if (tag === "input") {
    const inp = el as HTMLInputElement;
    const type = String(inp.type).toLowerCase();
    if (disabled(inp)) fail("disabled", `the ${what(el)} is disabled`);
    if (type === "checkbox" || type === "radio") {
      if (typeof v !== "boolean") wrong("true or false (checked)");
      if (type === "radio" && v === false) fail("invalid_argument", "value: false, but a radio button is unchecked only by checking another one of its group");
      return { f, el, kind: type as "checkbox" | "radio" };
    }
    if (type === "file") fail("not_editable", "a file input takes files: use upload");
    if (!TEXT_TYPES.has(type)) fail("not_editable", `an <input type=${type}> takes no value`);
    if (typeof v !== "string") wrong("a string");
    if (inp.readOnly) fail("not_editable", "the field is read-only");
    if (SANITIZED.has(type) && !keepsValue(inp, v as string)) {
      fail("invalid_argument", `value: the ${what(el)} does not take ${JSON.stringify((v as string).slice(0, 40))}`, valueHint(type));
    }
    // Range and colour take no typing (fill refuses them): their value is set as a picker would.
    return { f, el, kind: type === "range" || type === "color" ? "value" : "text" };
  }
  if (tag === "textarea") {
    const ta = el as HTMLTextAreaElement;
    if (disabled(ta)) fail("disabled", "the textarea is disabled");
    if (ta.readOnly) fail("not_editable", "the textarea is read-only");
    if (typeof v !== "string") wrong("a string");
    return { f, el, kind: "text" };
  }
  if (tag === "select") {
    const s = el as HTMLSelectElement;
    if (disabled(s)) fail("disabled", "the select is disabled");
    if (s.multiple) {
      if (!Array.isArray(v)) wrong("a list of options (values or labels)");
      return { f, el, kind: "multiselect", indexes: optionIndexes(s, v as string[]) };
    }
    if (typeof v !== "string") wrong("one option (its value or label) as a string");
    return { f, el, kind: "select", indexes: optionIndexes(s, [v as string]) };
  }
  if ((el as HTMLElement).isContentEditable) {
    if (typeof v !== "string") wrong("a string");
    return { f, el, kind: "editable" };
  }
  return fail("not_editable", `<${tag}> is not a form field or contenteditable`);
}

function what(el: Element): string {
  if (el.localName === "input") return `<input type=${(el as HTMLInputElement).type}>`;
  if (el.localName === "select") return (el as HTMLSelectElement).multiple ? "<select multiple>" : "<select>";
  return `<${el.localName}>`;
}

function valueHint(type: string): string {
  const forms: Record<string, string> = {
    number: "a number within the field's min, max and step",
    date: "YYYY-MM-DD",
    time: "HH:MM or HH:MM:SS",
    "datetime-local": "YYYY-MM-DDTHH:MM",
    month: "YYYY-MM",
    week: "YYYY-Www",
    range: "a number within the field's min, max and step",
    color: "#rrggbb in lower case",
  };
  return `Give ${forms[type] ?? "a value the field accepts"}.`;
}

/** Every field checked; the first bad one fails the whole call, named by its index. */
function planAll(engine: EngineContext, a: FillFormArgs): Plan[] {
  const plans: Plan[] = [];
  for (const f of a.fields) {
    try {
      plans.push(planField(engine, f));
    } catch (e) {
      if (e instanceof EngineError) throw new EngineError(e.code, `fields.${f.i}: ${e.message}`, e.hint);
      throw e;
    }
  }
  const seen = new Map<Element, number>();
  for (const p of plans) {
    const first = seen.get(p.el);
    if (first !== undefined) fail("invalid_argument", `fields.${p.f.i}: the same element as fields.${first}`, "Give each field once.");
    seen.set(p.el, p.f.i);
  }
  return plans;
}

/** A range or colour input's value through the native setter, with the events a picker fires. */
function setValue(el: HTMLInputElement, v: string): boolean {
  const win = (el.ownerDocument.defaultView ?? window) as unknown as { HTMLInputElement: typeof HTMLInputElement };
  const d = Object.getOwnPropertyDescriptor(win.HTMLInputElement.prototype, "value");
  if (!d?.set || !d.get) fail("not_editable", "cannot find the native value setter");
  el.focus();
  d.set.call(el, v);
  el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return d.get.call(el) === v;
}

function setChecked(el: HTMLInputElement, want: boolean): boolean {
  // The element's own click: its default action only toggles it, and frameworks listen to it.
  if (el.checked !== want) el.click();
  return el.checked === want;
}

export function fillForm(engine: EngineContext, a: FillFormArgs): FillFormResult {
  if (!Array.isArray(a.fields) || a.fields.length === 0) fail("invalid_argument", "fields: give at least one field");
  // SECURITY I-69: references become values in this document, bound to its own origin, before the
  // fields are planned; a field that is one secret of this origin may be a password field.
  const bySecret = new Set<number>();
  const fields = a.secrets
    ? a.fields.map((f) => {
        if (typeof f.value !== "string") return f;
        if (onlySecret(f.value)) bySecret.add(f.i);
        try {
          return { ...f, value: useSecrets(f.value, a.secrets, a.apply) };
        } catch (e) {
          if (e instanceof EngineError) throw new EngineError(e.code, `fields.${f.i}: ${e.message}`, e.hint);
          throw e;
        }
      })
    : a.fields;
  const plans = planAll(engine, { ...a, fields });
  // SECURITY I-18: a password field needs the call's permission and this document's origin's
  // switch (the worker judges the origin this reports); refused before anything is filled.
  const password = plans.filter((p) => isPasswordField(p.el) && !bySecret.has(p.f.i)).map((p) => p.f.i);
  if (!a.apply) return { ...(password.length ? { password } : {}), origin: self.origin, url: location.href };
  if (password.length && !a.allowPassword) return { password };
  // SECURITY I-76: the guard holds every secret of the batch before the first value lands.
  if (a.secrets) {
    for (const p of plans) {
      const orig = a.fields.find((f) => f.i === p.f.i)?.value;
      if (typeof orig === "string") holdSecrets(p.el, orig, a.secrets);
    }
  }
  const filled: NonNullable<FillFormResult["filled"]> = [];
  for (const p of plans) {
    const target = p.f.ref !== undefined ? { ref: p.f.ref } : { selector: p.f.selector };
    let applied: boolean;
    try {
      if (p.kind === "checkbox" || p.kind === "radio") applied = setChecked(p.el as HTMLInputElement, p.f.value === true);
      else if (p.kind === "value") applied = setValue(p.el as HTMLInputElement, p.f.value as string);
      else if (p.kind === "select" || p.kind === "multiselect") {
        actions.selectOption(engine, { ...target, indexes: p.indexes ?? [] });
        const sel = Array.from((p.el as HTMLSelectElement).options).flatMap((o, k) => (o.selected ? [k] : []));
        applied = sel.length === (p.indexes ?? []).length && sel.every((k) => p.indexes?.includes(k));
      } else {
        applied = actions.fill(engine, { ...target, value: p.f.value as string, mode: p.kind === "editable" ? "insertText" : "set" }).applied;
      }
    } catch (e) {
      // A handler of an earlier field changed the form under the later ones: say how far it got.
      if (e instanceof EngineError) {
        throw new EngineError(e.code, `fields.${p.f.i}: ${e.message}; ${filled.length} field(s) before it were filled, none after`, e.hint);
      }
      throw e;
    }
    filled.push({ i: p.f.i, kind: p.kind, applied });
  }
  return { filled };
}

// fill_form: many fields in one call, all or nothing. Every field is resolved to its frame and
// document and checked in the page (page/form.ts) before the first is filled; a bad field fails
// the call and names it (`fields.<i>`), with the form untouched. The gates of fill apply to each
// field: the password guard (SECURITY I-18), the frame's own origin (I-40), the effect guard armed
// around the whole fill (I-36); it never submits (no Enter, no submit click). Files are upload's.

import type { FillFormArgs, FillFormResult, FieldValue } from "../page/form.js";
import { defineTool, type ToolContext } from "./define.js";
import { toolError, ToolError } from "./errors.js";
import { callTab, engine, resolveTarget } from "./browser.js";
import { act, ACTION_PROPS, S, type ActionArgs } from "./common.js";
import { getPolicy } from "./safety.js";
import { documentAllowsPassword } from "../policy/policy.js";
import { noteUse, originsOnly, prepareSecrets, referenced, secretDocument, type Prepared } from "./secrets.js";
import type { SecretBundle } from "../secrets/template.js";

const MAX_FORM_FIELDS = 50;

interface FieldArg {
  ref?: string;
  selector?: string;
  value: FieldValue;
}

interface Group {
  frameId: number;
  docId?: string;
  fields: FillFormArgs["fields"];
  /** Its password fields may be filled (checkPasswords). */
  allowPassword?: boolean;
  /** The secrets its fields refer to, and the one document that may receive them (SECURITY I-69). */
  secretNames?: string[];
  documentId?: string;
}

function checkValue(v: unknown, i: number): void {
  const ok = typeof v === "string" || typeof v === "boolean" || (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string"));
  if (!ok) {
    throw toolError("invalid_argument", `fields.${i}.value: expected a string, a boolean or a non-empty list of strings`, undefined, { field: `fields.${i}.value` });
  }
}

/** The fields by the frame their refs came from (and its document); a selector names the top frame. */
async function groups(tabId: number, fields: FieldArg[]): Promise<Group[]> {
  const out = new Map<number, Group>();
  for (const [i, f] of fields.entries()) {
    if ((f.ref === undefined) === (f.selector === undefined)) {
      throw toolError("invalid_argument", `fields.${i}: give ref or selector (one of them)`, undefined, { field: `fields.${i}` });
    }
    checkValue(f.value, i);
    let r;
    try {
      r = await resolveTarget(tabId, f);
    } catch (e) {
      throw named(e, i);
    }
    let g = out.get(r.frameId);
    if (!g) out.set(r.frameId, (g = { frameId: r.frameId, fields: [] }));
    // A frame has one document now: refs from two of its documents mean one of them is stale.
    if (r.docId && g.docId && r.docId !== g.docId) {
      throw toolError("stale_ref", `fields.${i}: ref ${f.ref} is from another document of its frame than an earlier field's`);
    }
    if (r.docId) g.docId = r.docId;
    g.fields.push({ i, ...r.args, value: f.value });
  }
  return [...out.values()];
}

function named(e: unknown, i: number): unknown {
  return e instanceof ToolError ? toolError(e.code, `fields.${i}: ${e.message}`, e.hint, e.data) : e;
}

/** A group's secrets: values when filling, origins alone when checking, only those its fields name. */
function bundleFor(g: Group, sec: Prepared | undefined, apply: boolean): SecretBundle | undefined {
  if (!sec || !g.secretNames?.length) return undefined;
  const all = apply ? sec.bundle : originsOnly(sec);
  const b: SecretBundle = {};
  for (const n of g.secretNames) if (all[n]) b[n] = all[n];
  return b;
}

async function pageCall(tabId: number, g: Group, apply: boolean, ctx: ToolContext, sec?: Prepared): Promise<FillFormResult> {
  const secrets = bundleFor(g, sec, apply);
  const args: FillFormArgs = { fields: g.fields, apply, allowPassword: g.allowPassword === true, ...(secrets ? { secrets } : {}) };
  const r = await engine<FillFormResult>(tabId, "fillForm", args as unknown as Record<string, unknown>, {
    signal: ctx.signal,
    deadline: ctx.deadline,
    frameId: g.frameId,
    ...(g.docId ? { docId: g.docId } : {}),
    ...(secrets && g.documentId ? { documentId: g.documentId } : {}),
  });
  if (apply && secrets) noteUse(ctx, g.secretNames ?? [], r.origin);
  return r.value ?? {};
}

function passwordError(fields: number[]): ToolError {
  return toolError("password_field", `fields.${fields.join(", fields.")}: password field${fields.length > 1 ? "s" : ""}; nothing was filled`);
}

/**
 * SECURITY I-18: a group with password fields needs the call's permission (the gate: the flag and
 * the tab's origin's switch) and the switch of the origin its own document reports, so a password
 * field in another origin's frame follows that origin's choice.
 */
async function checkPasswords(g: Group, v: FillFormResult, ctx: ToolContext): Promise<void> {
  if (!v.password?.length) return;
  if (ctx.gate?.allowPassword !== true || !documentAllowsPassword(await getPolicy(), v, true)) throw passwordError(v.password);
  g.allowPassword = true;
}

export const fillForm = defineTool<ActionArgs & { fields: FieldArg[]; allowPassword?: boolean }>({
  name: "fill_form",
  description: "Fill many fields at once, all or nothing; never submits (files: upload).",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      fields: {
        type: "array",
        doc: "1–50; each: ref or selector, and value: a string; true/false for a checkbox or radio; a list of option values or labels for a multiple select",
        minItems: 1,
        maxItems: MAX_FORM_FIELDS,
        items: {
          type: "object",
          properties: {
            ref: S.ref,
            selector: S.selector,
            // What checkValue takes; each alternative typed, as converters want.
            value: { anyOf: [{ type: "string" }, { type: "boolean" }, { type: "array", items: { type: "string" }, minItems: 1 }] },
          },
          required: ["value"],
          additionalProperties: false,
        },
      },
      allowPassword: { type: "boolean" },
      ...ACTION_PROPS,
    },
    required: ["fields"],
  },
  traits: { target: "tab", reads: "page", effects: ["input"], switch: "act", typing: true, dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const names = referenced(a.fields.map((f, i) => ({ field: `fields.${i}.value`, text: f.value })));
    const tabId = await callTab(a.tabId, ctx);
    const gs = await groups(tabId, a.fields);
    return act(tabId, a, ctx, async () => {
      // SECURITY I-69: each frame's document is judged against the secrets its own fields name
      // before any value is sent, and receives those values alone.
      const sec = await prepareSecrets(names);
      if (sec) {
        for (const g of gs) {
          g.secretNames = referenced(g.fields.map((f) => ({ field: `fields.${f.i}.value`, text: f.value })));
          if (g.secretNames.length) g.documentId = await secretDocument(tabId, g.frameId, g.secretNames, sec, ctx);
        }
      }
      // Every frame's fields checked before any frame is filled; each frame checks its own again
      // in the same turn as it fills them.
      for (const g of gs) await checkPasswords(g, await pageCall(tabId, g, false, ctx, sec), ctx);
      const filled: NonNullable<FillFormResult["filled"]> = [];
      for (const g of gs) {
        const v = await pageCall(tabId, g, true, ctx, sec);
        if (v.password?.length) throw passwordError(v.password);
        filled.push(...(v.filled ?? []));
      }
      filled.sort((x, y) => x.i - y.i);
      const refused = filled.filter((f) => !f.applied).map((f) => `fields.${f.i}`);
      const n = a.fields.length;
      return {
        text: `filled ${n} field${n === 1 ? "" : "s"}${refused.length ? `; the page did not keep the value of ${refused.join(", ")}` : ""}`,
        data: { filled: filled.length, ...(refused.length ? { notKept: refused } : {}) },
      };
    });
  },
});

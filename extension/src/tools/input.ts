// Input: click (DOM), mouse_click and hover (real CDP mouse events at the element's visible
// point), fill, type, press_key, select_option.

import type { PointResult } from "../page/types.js";
import { cdp } from "../cdp/debugger.js";
import { left } from "../cdp/deadline.js";
import { defineTool, type ToolContext } from "./define.js";
import { toolError } from "./errors.js";
import { comboEvents, KeyError, MOD_ALT, MOD_CTRL, MOD_META, MOD_SHIFT, parseCombo, charKey } from "./keys.js";
import { callTab, engine, frameOffset, guarded, onNav, resolveTarget, type Target } from "./browser.js";
import { act, ACTION_PROPS, requireTarget, S, type ActionArgs } from "./common.js";
import { actEngine, armedToken, checkFocusFrame, checkNotBlocked, checkPoint, ensureArmed, guardPassword } from "./effects.js";
import { getPolicy } from "./safety.js";
import { noteUse, prepareSecrets, referenced, secretDocument } from "./secrets.js";
import { onlySecret, pieces } from "../secrets/template.js";
import { watchSubmit } from "./submitseen.js";

/** SECURITY I-18: fill/type/press_key may touch a password field only with this flag and the origin's switch. */
const ALLOW_PASSWORD = { allowPassword: { type: "boolean" } } as const;

/**
 * Refuses a password target and (checkFocus) a focused password field unless the gate allowed it
 * and the field's own document's origin allows it (SECURITY I-18); the effect guard checks the
 * focused field again at every key. Resolves to the document the target was checked in.
 */
function pw(tabId: number, t: Target, ctx: ToolContext, checkFocus: boolean, secret = false): Promise<string | undefined> {
  return guardPassword(tabId, t, ctx.gate?.allowPassword, { signal: ctx.signal, checkFocus, policy: getPolicy, secret });
}

const TARGET_PROPS = { tabId: S.tabId, ref: S.ref, selector: S.selector };

function isMac(): boolean {
  const nav = navigator as Navigator & { userAgentData?: { platform?: string } };
  return /mac/i.test(nav.userAgentData?.platform ?? nav.platform ?? "");
}

/** The call's tab; the gate has judged it and refused it behind an open dialog (traits.dialog). */
function tabFor(a: { tabId?: number }, ctx: ToolContext): Promise<number> {
  return callTab(a.tabId, ctx);
}

/** The element's visible point in tab-viewport CSS pixels; `covered` when another element is on top. */
export async function pointOf(tabId: number, t: Target, ctx: ToolContext, allowCovered = false): Promise<{ x: number; y: number; p: PointResult }> {
  const r = await resolveTarget(tabId, t);
  const e = await engine<PointResult>(tabId, "point", r.args, { signal: ctx.signal, deadline: ctx.deadline, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
  const p = e.value;
  if (p.covered && !allowCovered) {
    const c = p.covered;
    throw toolError(
      "covered",
      `${t.ref ?? t.selector} is covered by ${c.role || c.tag} "${c.name}"${c.ref ? ` [${c.ref}]` : ""}`,
      undefined,
      { coveredBy: c },
    );
  }
  const off = r.frameId === 0 ? { x: 0, y: 0 } : await frameOffset(tabId, r.frameId, ctx.deadline, ctx.signal);
  return { x: p.x + off.x, y: p.y + off.y, p };
}

export async function input(tabId: number, method: string, params: Record<string, unknown>, ctx: ToolContext): Promise<void> {
  // SECURITY I-36: trusted input goes out with every frame armed.
  await ensureArmed(tabId);
  const ms = left(ctx.deadline, 10_000);
  await guarded(tabId, method, cdp(tabId, method, params, ms, ctx.signal), { signal: ctx.signal, ms });
}

type Button = "left" | "right" | "middle";
const BUTTON_BITS: Record<Button, number> = { left: 1, right: 2, middle: 4 };

async function clickAt(tabId: number, x: number, y: number, button: Button, count: number, modifiers: number, ctx: ToolContext) {
  // SECURITY I-36: a frame off the list under the point fails here; one put there later, the guard.
  await checkPoint(tabId, x, y);
  await input(tabId, "Input.dispatchMouseEvent", { type: "mouseMoved", x, y, modifiers }, ctx);
  for (let i = 1; i <= count; i++) {
    const base = { x, y, button, clickCount: i, modifiers };
    await input(tabId, "Input.dispatchMouseEvent", { type: "mousePressed", buttons: BUTTON_BITS[button], ...base }, ctx);
    await input(tabId, "Input.dispatchMouseEvent", { type: "mouseReleased", buttons: 0, ...base }, ctx);
  }
  await checkPoint(tabId, x, y, true);
}

function modMask(mods: string[] | undefined): number {
  let m = 0;
  for (const k of mods ?? []) {
    if (k === "Alt") m |= MOD_ALT;
    else if (k === "Control") m |= MOD_CTRL;
    else if (k === "Meta") m |= MOD_META;
    else if (k === "Shift") m |= MOD_SHIFT;
    else if (k === "Mod") m |= isMac() ? MOD_META : MOD_CTRL;
  }
  return m;
}

export const click = defineTool<ActionArgs & Target>({
  name: "click",
  description: "DOM click, even if covered (mouse_click: real pointer events).",
  inputSchema: { type: "object", properties: { ...TARGET_PROPS, ...ACTION_PROPS } },
  traits: { target: "tab", reads: "page", effects: ["click"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    requireTarget(a);
    const tabId = await tabFor(a, ctx);
    return act(
      tabId,
      a,
      ctx,
      async () => {
        const r = await resolveTarget(tabId, a);
        await actEngine(tabId, "domClick", r.args, { signal: ctx.signal, deadline: ctx.deadline, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
        return { text: `clicked ${a.ref ?? a.selector}` };
      },
      { oneCall: true },
    );
  },
});

export const mouseClick = defineTool<ActionArgs & Target & { button?: Button; clickCount?: number; modifiers?: string[] }>({
  name: "mouse_click",
  description: "Real mouse click at the element's visible point; if occluded, error covered with the covering ref.",
  inputSchema: {
    type: "object",
    properties: {
      ...TARGET_PROPS,
      button: { type: "string", enum: ["left", "right", "middle"] },
      clickCount: { type: "integer", minimum: 1, maximum: 3 },
      modifiers: { type: "array", items: { type: "string", enum: ["Alt", "Control", "Meta", "Shift", "Mod"] } },
      ...ACTION_PROPS,
    },
  },
  traits: { target: "tab", reads: "page", effects: ["click"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    requireTarget(a);
    const tabId = await tabFor(a, ctx);
    return act(tabId, a, ctx, async () => {
      const { x, y } = await pointOf(tabId, a, ctx);
      await clickAt(tabId, x, y, a.button ?? "left", a.clickCount ?? 1, modMask(a.modifiers), ctx);
      return { text: `mouse-clicked ${a.ref ?? a.selector} at ${Math.round(x)},${Math.round(y)}`, data: { x, y } };
    });
  },
});

export const hover = defineTool<ActionArgs & Target>({
  name: "hover",
  description: "Move the mouse over an element.",
  inputSchema: { type: "object", properties: { ...TARGET_PROPS, ...ACTION_PROPS } },
  traits: { target: "tab", reads: "page", effects: ["input"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    requireTarget(a);
    const tabId = await tabFor(a, ctx);
    return act(tabId, a, ctx, async () => {
      const { x, y } = await pointOf(tabId, a, ctx, true);
      await checkPoint(tabId, x, y);
      await input(tabId, "Input.dispatchMouseEvent", { type: "mouseMoved", x, y }, ctx);
      return { text: `hovering ${a.ref ?? a.selector}`, data: { x, y } };
    });
  },
});

export const fill = defineTool<ActionArgs & Target & { value: string; mode?: "set" | "insertText"; allowPassword?: boolean }>({
  name: "fill",
  description: "Set a field's value so frameworks see it; insertText mode for rich editors.",
  inputSchema: {
    type: "object",
    properties: { ...TARGET_PROPS, value: { type: "string" }, mode: { type: "string", enum: ["set", "insertText"] }, ...ALLOW_PASSWORD, ...ACTION_PROPS },
    required: ["value"],
  },
  traits: { target: "tab", reads: "page", effects: ["input"], switch: "act", typing: true, dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    requireTarget(a);
    const names = referenced([{ field: "value", text: a.value }]);
    const tabId = await tabFor(a, ctx);
    return act(tabId, a, ctx, async () => {
      // SECURITY I-18: the value goes through the native setter, before the effect guard sees any
      // event. A call that may touch no password field has the engine refuse one in the same turn
      // as it sets the value (the page checked first only for insertText); else the value is set
      // only in the document whose password switch was just judged.
      const noPassword = ctx.gate?.allowPassword !== true && !onlySecret(a.value);
      const checked = noPassword && a.mode !== "insertText" ? undefined : await pw(tabId, a, ctx, a.mode === "insertText", onlySecret(a.value));
      const r = await resolveTarget(tabId, a);
      const docId = r.docId ?? checked;
      // SECURITY I-69: decrypted now, sent only to the document the frame holds once its URL is
      // judged against the secrets' origins; that document checks its own origin and substitutes.
      const sec = await prepareSecrets(names);
      const documentId = sec ? await secretDocument(tabId, r.frameId, names, sec, ctx) : undefined;
      const fillArgs = { ...r.args, value: a.value, mode: a.mode ?? "set", ...(sec ? { secrets: sec.bundle } : {}), ...(noPassword ? { noPassword: true } : {}) };
      const e = await actEngine(tabId, "fill", fillArgs, {
        signal: ctx.signal,
        deadline: ctx.deadline,
        frameId: r.frameId,
        ...(docId ? { docId } : {}),
        ...(documentId ? { documentId } : {}),
      });
      if (sec) noteUse(ctx, names, e.origin);
      return { text: `filled ${a.ref ?? a.selector} (${sec ? `secret ${names.join(", ")}` : `${[...a.value].length} chars`})` };
    }, { oneCall: true });
  },
});

async function typeText(tabId: number, text: string, keys: boolean, ctx: ToolContext): Promise<void> {
  if (!keys) {
    await input(tabId, "Input.insertText", { text }, ctx);
    return;
  }
  const nav = navigationStop(tabId);
  try {
    for (const ch of text) {
      nav.check("typing");
      // A frame's guard blocked a key (password focus, a frame off the list): the rest is not sent.
      checkNotBlocked(tabId);
      await typeChar(tabId, ch, ctx);
    }
  } finally {
    nav.off();
  }
}

/**
 * Notices the tab's top frame loading another document while a sequence of key events is sent, so
 * the rest of the sequence is not typed into the next page (same-document route changes are fine).
 */
export function navigationStop(tabId: number): { check(what: string): void; off(): void } {
  let gone: string | undefined;
  const off = onNav((ev) => {
    if (ev.tabId === tabId && ev.frameId === 0 && ev.kind === "committed") gone = ev.url ?? "another page";
  });
  return {
    check(what) {
      // SECURITY I-43: not where to: the next page may be off the allowlist.
      if (gone !== undefined) throw toolError("navigation_failed", `the page navigated during ${what}; the rest was not sent`);
    },
    off,
  };
}

async function typeChar(tabId: number, ch: string, ctx: ToolContext): Promise<void> {
  const k = charKey(ch);
  const base = { key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode, modifiers: 0 };
  if (k.text !== undefined) {
    await input(tabId, "Input.dispatchKeyEvent", { type: "keyDown", ...base, text: k.text, unmodifiedText: k.text }, ctx);
  } else {
    await input(tabId, "Input.dispatchKeyEvent", { type: "rawKeyDown", ...base }, ctx);
  }
  await input(tabId, "Input.dispatchKeyEvent", { type: "keyUp", ...base }, ctx);
}

/**
 * SECURITY I-69: the literal runs are typed as usual; each secret is never a key event: it is
 * inserted by the engine of the target's document, which must still hold the focus and be on the
 * secret's origins (the value is sent to that document alone). `submit`: the text is one reference
 * and Enter follows; that document's guard is granted the call's Enter on that field alone (a
 * password field takes no other key without allowPassword, I-18).
 */
async function typeWithSecrets(tabId: number, t: Target, text: string, keys: boolean, ctx: ToolContext, submit = false): Promise<void> {
  const r = await resolveTarget(tabId, t);
  for (const p of pieces(text)) {
    if ("text" in p) {
      await typeText(tabId, p.text, keys, ctx);
      continue;
    }
    checkNotBlocked(tabId);
    const sec = await prepareSecrets([p.secret]);
    if (!sec) continue;
    const documentId = await secretDocument(tabId, r.frameId, [p.secret], sec, ctx);
    const token = submit && onlySecret(text) ? armedToken(tabId) : undefined;
    const e = await engine(tabId, "typeSecret", { ...r.args, text: `{{secret:${p.secret}}}`, secrets: sec.bundle, ...(token ? { submitKey: token } : {}) }, {
      signal: ctx.signal,
      deadline: ctx.deadline,
      frameId: r.frameId,
      documentId,
      ...(r.docId ? { docId: r.docId } : {}),
    });
    noteUse(ctx, [p.secret], e.origin);
  }
}

async function focusTarget(tabId: number, t: Target, ctx: ToolContext): Promise<void> {
  if (t.ref === undefined && t.selector === undefined) return;
  const { x, y } = await pointOf(tabId, t, ctx);
  await clickAt(tabId, x, y, "left", 1, 0, ctx);
}

async function pressCombo(tabId: number, spec: string, ctx: ToolContext): Promise<void> {
  let combo;
  try {
    combo = parseCombo(spec, isMac());
  } catch (e) {
    if (e instanceof KeyError) throw toolError("invalid_argument", `key: ${e.message}`, "Examples: Enter, Tab, Escape, ArrowDown, Mod+A, Shift+Tab, a.");
    throw e;
  }
  for (const ev of comboEvents(combo, isMac())) {
    checkNotBlocked(tabId);
    await input(tabId, "Input.dispatchKeyEvent", { ...ev }, ctx);
  }
}

export const type = defineTool<ActionArgs & Target & { text: string; keys?: boolean; submit?: boolean; allowPassword?: boolean }>({
  name: "type",
  description: "Type into the focus (or click ref/selector first); keys: key events; submit: Enter after.",
  inputSchema: {
    type: "object",
    properties: { ...TARGET_PROPS, text: { type: "string", maxLength: 20000 }, keys: { type: "boolean" }, submit: { type: "boolean" }, ...ALLOW_PASSWORD, ...ACTION_PROPS },
    required: ["text"],
  },
  traits: { target: "tab", reads: "page", effects: ["click", "keys"], switch: "act", typing: true, dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const names = referenced([{ field: "text", text: a.text }]);
    if (names.length && a.ref === undefined && a.selector === undefined) {
      throw toolError("invalid_argument", "type with a {{secret:NAME}} needs ref or selector: the field the secret goes to", "Give the field's ref from a snapshot.");
    }
    const tabId = await tabFor(a, ctx);
    return act(tabId, a, ctx, async () => {
      const secretOnly = onlySecret(a.text);
      await pw(tabId, a, ctx, false, secretOnly);
      await focusTarget(tabId, a, ctx);
      await pw(tabId, {}, ctx, true, secretOnly);
      // SECURITY I-36: keys go to the focused frame, which must be on the list (after a focusing
      // click the point was checked instead).
      if (a.ref === undefined && a.selector === undefined) checkFocusFrame(tabId);
      // The frame typed into: the target's, else the top document (where a form's submit is counted).
      const sw = a.submit ? await watchSubmit(tabId, a.ref !== undefined ? (await resolveTarget(tabId, a)).frameId : 0) : undefined;
      try {
        if (names.length) await typeWithSecrets(tabId, a, a.text, a.keys === true, ctx, a.submit === true);
        else if (a.text !== "") await typeText(tabId, a.text, a.keys === true, ctx);
        const what = names.length ? `secret ${names.join(", ")}` : `${[...a.text].length} chars`;
        if (!sw) return { text: `typed ${what}` };
        await pressCombo(tabId, "Enter", ctx);
        const seen = await sw.outcome(ctx);
        const said = { submitted: " + Enter: the form was submitted", navigated: " + Enter: the page navigated", none: "; pressed Enter, but saw no form submission or navigation (check the page: snapshot)" }[seen];
        return { text: `typed ${what}${said}`, data: { submitted: seen !== "none", ...(seen !== "none" ? { submitSeen: seen } : {}) } };
      } finally {
        sw?.stop();
      }
    });
  },
});

export const pressKey = defineTool<ActionArgs & Target & { key: string; repeat?: number; allowPassword?: boolean }>({
  name: "press_key",
  description: "Press a key or combo: Enter, Shift+Tab, Mod+A (Mod: Cmd on macOS, else Ctrl).",
  inputSchema: {
    type: "object",
    properties: { ...TARGET_PROPS, key: { type: "string", minLength: 1 }, repeat: { type: "integer", minimum: 1, maximum: 100 }, ...ALLOW_PASSWORD, ...ACTION_PROPS },
    required: ["key"],
  },
  traits: { target: "tab", reads: "page", effects: ["click", "keys"], switch: "act", typing: true, dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    parseComboChecked(a.key);
    const tabId = await tabFor(a, ctx);
    return act(tabId, a, ctx, async () => {
      await pw(tabId, a, ctx, false);
      await focusTarget(tabId, a, ctx);
      await pw(tabId, {}, ctx, true);
      if (a.ref === undefined && a.selector === undefined) checkFocusFrame(tabId);
      const nav = navigationStop(tabId);
      try {
        for (let i = 0; i < (a.repeat ?? 1); i++) {
          nav.check(`press_key ${a.key}`);
          await pressCombo(tabId, a.key, ctx);
        }
      } finally {
        nav.off();
      }
      return { text: `pressed ${a.key}${(a.repeat ?? 1) > 1 ? ` ×${a.repeat}` : ""}` };
    });
  },
});

function parseComboChecked(spec: string): void {
  try {
    parseCombo(spec, false);
  } catch (e) {
    if (e instanceof KeyError) throw toolError("invalid_argument", `key: ${e.message}`, "Examples: Enter, Tab, Escape, ArrowDown, Mod+A, Shift+Tab, a.");
    throw e;
  }
}

export const selectOption = defineTool<ActionArgs & Target & { values?: string[]; labels?: string[]; indexes?: number[] }>({
  name: "select_option",
  description: "Select options by values, labels or indexes.",
  inputSchema: {
    type: "object",
    properties: {
      ...TARGET_PROPS,
      values: { type: "array", items: { type: "string" } },
      labels: { type: "array", items: { type: "string" } },
      indexes: { type: "array", items: { type: "integer", minimum: 0 } },
      ...ACTION_PROPS,
    },
  },
  traits: { target: "tab", reads: "page", effects: ["input"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    requireTarget(a);
    if (!a.values && !a.labels && !a.indexes) throw toolError("invalid_argument", "give values, labels or indexes");
    const tabId = await tabFor(a, ctx);
    return act(tabId, a, ctx, async () => {
      const r = await resolveTarget(tabId, a);
      const sel: Record<string, unknown> = { ...r.args };
      if (a.values) sel.values = a.values;
      if (a.labels) sel.labels = a.labels;
      if (a.indexes) sel.indexes = a.indexes;
      const e = await actEngine<unknown>(tabId, "selectOption", sel, { signal: ctx.signal, deadline: ctx.deadline, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
      return { text: `selected in ${a.ref ?? a.selector}: ${JSON.stringify(e.value)}`, data: { selected: e.value } };
    }, { oneCall: true });
  },
});

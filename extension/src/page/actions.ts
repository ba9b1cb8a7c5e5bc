// DOM-level actions the worker uses for click / fill / select_option / scroll (reveal: reveal.ts).
// None of them returns an input's value: results say what happened, never what is in a field.
import { nameOf, roleOf, SKIP } from "./aria";
import { clip, nextFrames, norm } from "./dom";
import { fail } from "./errors";
import type { EngineContext } from "./context";
import type { FillArgs, ScrollArgs, ScrollResult, SelectArgs } from "./types";
import { focusedIn, isPasswordField } from "./risk";
import { useSecrets } from "./secrets";
import { holdSecrets } from "./hold-secret";

const NON_TEXT_INPUTS = new Set(["checkbox", "radio", "file", "submit", "reset", "button", "image", "range", "color", "hidden"]);

function isDisabled(el: Element): boolean {
  return el.matches(":disabled") || el.getAttribute("aria-disabled") === "true";
}

export function domClick(engine: EngineContext, a: { ref?: string; selector?: string }) {
  const el = engine.target(a);
  if (isDisabled(el)) fail("disabled", "the element is disabled; the click would do nothing");
  const tag = el.localName;
  const role = roleOf(el, tag);
  const visible = el.checkVisibility({ visibilityProperty: true });
  if (el instanceof HTMLElement) el.click();
  else el.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, composed: true, view: el.ownerDocument.defaultView }));
  return { clicked: true, tag, role: role === SKIP || !role ? "generic" : role, name: nameOf(el, tag, role), visible };
}

/** Native value setter of the element's own prototype chain, bypassing instance overrides (React's tracker). */
export function nativeSetter(el: HTMLInputElement | HTMLTextAreaElement): (v: string) => void {
  const win = (el.ownerDocument.defaultView ?? window) as unknown as { HTMLInputElement: typeof HTMLInputElement; HTMLTextAreaElement: typeof HTMLTextAreaElement };
  const proto = el.localName === "textarea" ? win.HTMLTextAreaElement.prototype : win.HTMLInputElement.prototype;
  const d = Object.getOwnPropertyDescriptor(proto, "value");
  if (!d?.set) fail("not_editable", "cannot find the native value setter");
  const set = d.set;
  return (v: string) => set.call(el, v);
}

export function nativeGet(el: HTMLInputElement | HTMLTextAreaElement): string {
  const win = (el.ownerDocument.defaultView ?? window) as unknown as { HTMLInputElement: typeof HTMLInputElement; HTMLTextAreaElement: typeof HTMLTextAreaElement };
  const proto = el.localName === "textarea" ? win.HTMLTextAreaElement.prototype : win.HTMLInputElement.prototype;
  return Object.getOwnPropertyDescriptor(proto, "value")?.get?.call(el) as string;
}

export function fill(engine: EngineContext, a: FillArgs) {
  if (typeof a.value !== "string") fail("invalid_argument", "fill needs a string value");
  const el = engine.target(a);
  // SECURITY I-18: checked in the same turn as the value is set: before anything happens, and again
  // once the page's focus handlers have run (they may turn the field into a password field, or
  // send the focus on to one).
  const refuse = () => fail("password_field", "refused: the field is a password field and passwords are not allowed for this call; nothing was typed");
  if (a.noPassword && isPasswordField(el)) refuse();
  const tag = el.localName;
  const doc = el.ownerDocument;
  const isField = tag === "input" || tag === "textarea";
  const editableHost = (el as HTMLElement).isContentEditable;
  if (isField) {
    const f = el as HTMLInputElement;
    if (tag === "input" && NON_TEXT_INPUTS.has(f.type)) {
      fail("not_editable", `an <input type=${f.type}> takes no text`, f.type === "checkbox" || f.type === "radio" ? "Use click to toggle it." : undefined);
    }
    if (isDisabled(f)) fail("disabled", "the field is disabled");
    if (f.readOnly) fail("not_editable", "the field is read-only");
  } else if (!editableHost) {
    fail("not_editable", `<${tag}> is not a text field or contenteditable`);
  }
  // SECURITY I-69: references become values here, in the field's own document, after every check
  // above and in the same turn as the value is set. A secret goes into a password field through the
  // setter: typing events there are the effect guard's to stop.
  const value = a.secrets ? useSecrets(a.value, a.secrets) : a.value;
  // SECURITY I-76: the guard holds it before the value lands.
  if (a.secrets) holdSecrets(el, a.value, a.secrets);
  const mode = (a.mode === "insertText" || !isField) && !(a.secrets && isPasswordField(el)) ? "insertText" : "set";
  (el as HTMLElement).focus();
  if (a.noPassword && (isPasswordField(el) || isPasswordField(focusedIn(doc)))) refuse();
  if (mode === "set") {
    const f = el as HTMLInputElement;
    nativeSetter(f)(value);
    f.dispatchEvent(new InputEvent("input", { bubbles: true, composed: true, inputType: "insertReplacementText", data: value }));
    f.dispatchEvent(new Event("change", { bubbles: true }));
    return { mode, applied: nativeGet(f) === value, events: ["input", "change"] };
  }
  // insertText: select everything in the field / editing host, then let the browser edit, which
  // fires beforeinput/input as a user's typing would (rich editors listen to those).
  if (isField) (el as HTMLInputElement).select();
  else {
    const sel = doc.getSelection();
    const range = doc.createRange();
    range.selectNodeContents(el);
    sel?.removeAllRanges();
    sel?.addRange(range);
  }
  const ok = value === "" ? doc.execCommand("delete") : doc.execCommand("insertText", false, value);
  let applied: boolean;
  if (isField) applied = nativeGet(el as HTMLInputElement) === value;
  else applied = norm((el as HTMLElement).innerText) === norm(value);
  if (isField) el.dispatchEvent(new Event("change", { bubbles: true }));
  return { mode, applied: ok && applied, events: isField ? ["beforeinput", "input", "change"] : ["beforeinput", "input"] };
}

export function selectOption(engine: EngineContext, a: SelectArgs) {
  const el = engine.target(a);
  if (el.localName !== "select") fail("invalid_argument", `<${el.localName}> is not a <select>`, "For custom dropdowns, click the control and then the option.");
  const s = el as HTMLSelectElement;
  if (isDisabled(s)) fail("disabled", "the select is disabled");
  const opts = Array.from(s.options);
  const want: HTMLOptionElement[] = [];
  const missing: string[] = [];
  for (const v of a.values ?? []) {
    const o = opts.find((x) => x.value === v);
    if (o) want.push(o);
    else missing.push(`value "${v}"`);
  }
  for (const l of a.labels ?? []) {
    const n = norm(l).toLowerCase();
    const o = opts.find((x) => norm(x.label).toLowerCase() === n) ?? opts.find((x) => norm(x.label).toLowerCase().includes(n));
    if (o) want.push(o);
    else missing.push(`label "${l}"`);
  }
  for (const i of a.indexes ?? []) {
    const o = opts[i];
    if (o) want.push(o);
    else missing.push(`index ${i}`);
  }
  if (!a.values?.length && !a.labels?.length && !a.indexes?.length) fail("invalid_argument", "select_option needs values, labels or indexes");
  if (missing.length) {
    const avail = opts.slice(0, 30).map((o) => `"${clip(norm(o.label), 40)}"`).join(", ") + (opts.length > 30 ? `, … (${opts.length} options)` : "");
    fail("not_found", `no option with ${missing.join(", ")}; options: ${avail}`, "Pick one of the listed option labels.");
  }
  const disabled = want.find((o) => o.disabled);
  if (disabled) fail("disabled", `option "${norm(disabled.label)}" is disabled`);
  if (!s.multiple && want.length > 1) fail("invalid_argument", "this select takes one option; give exactly one");
  if (s.multiple) for (const o of opts) o.selected = want.includes(o);
  else (want[0] as HTMLOptionElement).selected = true;
  s.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  s.dispatchEvent(new Event("change", { bubbles: true }));
  return { selected: Array.from(s.selectedOptions).map((o) => norm(o.label)) };
}

export function isScrollable(el: Element): boolean {
  if (el === el.ownerDocument.scrollingElement) return el.scrollHeight > el.clientHeight || el.scrollWidth > el.clientWidth;
  if (el.scrollHeight <= el.clientHeight + 1 && el.scrollWidth <= el.clientWidth + 1) return false;
  const cs = getComputedStyle(el);
  return /(auto|scroll|overlay)/.test(cs.overflowY + " " + cs.overflowX);
}

function scrollParent(el: Element): Element {
  for (let p: Element | null = el; p; p = p.parentElement ?? ((p.parentNode as ShadowRoot | null)?.host ?? null)) {
    if (isScrollable(p)) return p;
  }
  return el.ownerDocument.scrollingElement ?? el.ownerDocument.documentElement;
}

function scrollInfo(engine: EngineContext, c: Element): ScrollResult {
  const page = c === c.ownerDocument.scrollingElement;
  return {
    scrollY: Math.round(c.scrollTop),
    scrollX: Math.round(c.scrollLeft),
    atBottom: c.scrollTop + c.clientHeight >= c.scrollHeight - 2,
    atTop: c.scrollTop <= 0,
    container: page ? "page" : engine.refs.refFor(c),
  };
}

export async function scroll(engine: EngineContext, a: ScrollArgs): Promise<ScrollResult> {
  const hasDelta = typeof a.dx === "number" || typeof a.dy === "number";
  if (a.to !== undefined && a.to !== "top" && a.to !== "bottom") fail("invalid_argument", 'to must be "top" or "bottom"');
  let c: Element;
  if (a.ref) {
    const el = engine.refs.resolve(a.ref);
    if (!a.to && !hasDelta) {
      el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
      await nextFrames();
      return scrollInfo(engine, scrollParent(el.parentElement ?? el));
    }
    c = scrollParent(el);
  } else c = document.scrollingElement ?? document.documentElement;
  if (a.to === "top") c.scrollTo({ top: 0, behavior: "instant" });
  else if (a.to === "bottom") c.scrollTo({ top: c.scrollHeight, behavior: "instant" });
  if (hasDelta) c.scrollBy({ left: a.dx ?? 0, top: a.dy ?? 0, behavior: "instant" });
  if (!a.to && !hasDelta) fail("invalid_argument", "scroll needs ref, to, or dx/dy");
  await nextFrames();
  return scrollInfo(engine, c);
}

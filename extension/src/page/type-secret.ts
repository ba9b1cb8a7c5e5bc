// `type` of a `{{secret:NAME}}` reference: the value is never sent as key events (the worker would
// have to hold it across a sequence of CDP events that land wherever focus is). It is inserted
// here, in the document that holds the focused target, after that document's origin is checked
// against the secret's (SECURITY I-69), at the caret, with the input event a paste would fire; its
// guard holds the secret first (I-76).
import { deepActiveElement } from "./dom";
import { fail } from "./errors";
import type { EngineContext } from "./context";
import { nativeGet, nativeSetter } from "./actions";
import { useSecrets } from "./secrets";
import { holdSecrets } from "./hold-secret";
import { onlySecret, secretRefs, type SecretBundle } from "../secrets/template";
import type { GuardApi } from "../guard/index";

const TEXT_INPUTS = new Set(["text", "email", "password", "search", "tel", "url", ""]);

/**
 * `submitKey`: the arming token of a `type` call with `submit: true` whose whole text is this one
 * reference. When the field is a password field and now holds exactly the secret, this document's
 * guard is told, in this same turn, that the call's Enter may reach that field and no other, and
 * that its form may send the secret only to the secret's origins (SECURITY I-18, I-69).
 */
export function typeSecret(
  engine: EngineContext,
  a: { ref?: string; selector?: string; text: string; secrets: SecretBundle; submitKey?: string },
): { typed: true; submitKey?: boolean } {
  if (typeof a.text !== "string") fail("invalid_argument", "typeSecret needs text");
  const el = engine.target(a);
  // The focusing click landed on it; a page that moved the focus since gets nothing.
  if (deepActiveElement() !== el) fail("not_editable", "the target does not have the focus (the page moved it); the secret was not typed");
  const tag = el.localName;
  if (tag === "input" || tag === "textarea") {
    const f = el as HTMLInputElement;
    if (tag === "input" && !TEXT_INPUTS.has(String(f.type).toLowerCase())) fail("not_editable", `an <input type=${f.type}> takes no secret`);
    if (f.disabled || f.readOnly) fail("not_editable", "the field is disabled or read-only");
    const value = useSecrets(a.text, a.secrets);
    holdSecrets(f, a.text, a.secrets);
    const cur = nativeGet(f);
    let start = cur.length;
    let end = cur.length;
    try {
      start = f.selectionStart ?? cur.length;
      end = f.selectionEnd ?? start;
    } catch {
      /* email inputs have no selection API: append */
    }
    nativeSetter(f)(cur.slice(0, start) + value + cur.slice(end));
    try {
      f.setSelectionRange(start + value.length, start + value.length);
    } catch {
      /* as above */
    }
    // Before the page's input handlers run: what they do next (move the focus, point the form
    // elsewhere) is judged by the guard at the key and at the submission.
    const granted = typeof a.submitKey === "string" && grantSubmit(a.submitKey, f, a.text, a.secrets, value);
    f.dispatchEvent(new InputEvent("input", { bubbles: true, composed: true, inputType: "insertFromPaste" }));
    return granted ? { typed: true, submitKey: true } : { typed: true };
  }
  if ((el as HTMLElement).isContentEditable) {
    const value = useSecrets(a.text, a.secrets);
    holdSecrets(el, a.text, a.secrets);
    if (!el.ownerDocument.execCommand("insertText", false, value)) fail("not_editable", "the editor refused the text");
    return { typed: true };
  }
  return fail("not_editable", `<${tag}> is not a text field or contenteditable`);
}

/** Grants the submit key when the field is a password field holding exactly the one secret. */
function grantSubmit(token: string, f: HTMLInputElement, text: string, b: SecretBundle, value: string): boolean {
  if (!onlySecret(text) || String(f.type).toLowerCase() !== "password" || nativeGet(f) !== value) return false;
  const name = secretRefs(text)[0] as string;
  const origins = Object.prototype.hasOwnProperty.call(b, name) ? (b[name]?.o ?? []) : [];
  const guard = (globalThis as { __toriiGuard?: GuardApi }).__toriiGuard;
  return !!guard && origins.includes(self.origin) && guard.grantSubmit(token, f, origins);
}

// The one key the password guard lets into a password field without allowPassword (SECURITY I-18,
// I-69): `type` of exactly one `{{secret:NAME}}` with `submit: true`. The page engine, in the same
// synchronous turn as it puts the secret into the field, grants this document's guard the call's
// Enter on that element alone. The guard then lets through one trusted, unmodified Enter (its
// keydown, keypress and the line break's beforeinput, none of which types anything into a
// single-line field) while that element still holds the focus. Everything else keeps the guard's
// ordinary rules: another field, another frame, text events, a second Enter. Where the submission
// may go is the document's secret hold's to judge, for any tool (guard/secret-hold.ts, I-76).
// Also here: where a form submission sends its request, read as the browser will.
//
// Runs in the guard's isolated world. The form's own properties are read through the prototype's
// getters: a page can shadow `form.action` with a field named "action" (`<input name=action>`).

import { SUBMIT_KEY_EVENTS } from "./decide";

export interface SubmitGrant {
  /** The call the grant belongs to (the arming token): a later call never inherits it. */
  token: string;
  /** The password field the secret was put into. */
  el: Element;
  /** Where the secret may go: its bound origins. */
  origins: string[];
  /** The key events already let through (each once). */
  spent: Set<string>;
}

const formGet = (name: "action" | "method" | "elements") =>
  Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, name)?.get as ((this: HTMLFormElement) => unknown) | undefined;
const ACTION = formGet("action");
const METHOD = formGet("method");
const ELEMENTS = formGet("elements");
const INPUT_FORM = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "form")?.get as ((this: HTMLInputElement) => HTMLFormElement | null) | undefined;

/**
 * A <form> element, told by its name rather than `instanceof`: an event another script world
 * dispatched (the page engine clicking into a same-origin frame) hands this one nodes whose
 * wrappers come from that world's realm, and `instanceof` fails across realms.
 */
export function isForm(x: unknown): x is HTMLFormElement {
  return !!x && typeof x === "object" && (x as Node).nodeType === 1 && (x as Element).localName === "form" && (x as Element).namespaceURI === "http://www.w3.org/1999/xhtml";
}

/** The form a field belongs to now (its form owner, `form=` attribute included). */
export function formOf(el: Element): HTMLFormElement | null {
  if (el.localName === "input" && INPUT_FORM) {
    try {
      return INPUT_FORM.call(el as HTMLInputElement);
    } catch {
      return null;
    }
  }
  const f = "form" in el ? (el as { form?: unknown }).form : null;
  return isForm(f) ? f : null;
}

function isSubmitButton(el: Element): el is HTMLButtonElement | HTMLInputElement {
  if (el.localName === "button") return (el.getAttribute("type") ?? "submit").toLowerCase() === "submit";
  if (el.localName === "input") return ["submit", "image"].includes((el.getAttribute("type") ?? "").toLowerCase());
  return false;
}

/** The form's default button (the submitter of an implicit submission). */
export function defaultButton(form: HTMLFormElement): HTMLButtonElement | HTMLInputElement | null {
  const els = ELEMENTS ? (ELEMENTS.call(form) as HTMLCollection) : form.querySelectorAll("*");
  for (const el of Array.from(els)) if (isSubmitButton(el)) return el;
  return null;
}

/**
 * A submitter's `formaction`, resolved against the button's own base URL (a button has no named
 * properties to shadow it; the form's `baseURI` can be shadowed like its `action`).
 */
function formActionOf(el: Element): string {
  return new URL(el.getAttribute("formaction") ?? "", el.baseURI).href;
}

/**
 * Where a submission of `form` by `submitter` sends its request, and by which method, read past
 * anything the page put in the way (clobbered properties). A URL that cannot be read is "".
 */
export function formRequest(form: HTMLFormElement, submitter: Element | null): { url: string; method: string } {
  let url = "";
  let method = "";
  try {
    url = submitter?.hasAttribute("formaction") ? formActionOf(submitter) : String(ACTION?.call(form) ?? "");
  } catch {
    url = "";
  }
  try {
    method = (submitter?.getAttribute("formmethod") ?? String(METHOD?.call(form) ?? "get")).toLowerCase();
  } catch {
    method = "get";
  }
  return { url, method };
}

/**
 * A trusted Enter with no modifier (the key `submit: true` presses), or the line break it asks
 * the field for, which carries no text.
 */
function isSubmitKey(ev: Event): boolean {
  if (!ev.isTrusted) return false;
  if (ev.type === "beforeinput") {
    const i = ev as InputEvent;
    return (i.inputType === "insertLineBreak" || i.inputType === "insertParagraph") && !i.data && !i.dataTransfer && !i.isComposing;
  }
  if (!(ev instanceof KeyboardEvent)) return false;
  return ev.key === "Enter" && !ev.shiftKey && !ev.ctrlKey && !ev.altKey && !ev.metaKey && !ev.isComposing;
}

/** This key event is the call's submit key on the granted field, not yet let through. */
export function grantCovers(g: SubmitGrant | undefined, token: string, ev: Event, focused: Element | null): boolean {
  return !!g && g.token === token && SUBMIT_KEY_EVENTS.has(ev.type) && !g.spent.has(ev.type) && focused === g.el && isSubmitKey(ev);
}

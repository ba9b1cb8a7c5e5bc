// What a document that received a secret may still send (SECURITY I-76). The page engine tells this
// document's guard, in the same synchronous turn as it puts a secret into a field and before the
// page can see it, which secret and where it may go; the guard keeps that for as long as the
// document lives, whatever tool put it there and whether or not a call is running. From then on a
// form submission or a navigation of this document whose real destination is not an origin every
// secret here is bound to is stopped at the moment it is sent:
// - the `submit` event (a click, a key, requestSubmit()), before the form's own handlers and again
//   after them (they may point it elsewhere): the form's action and method as the browser reads
//   them, the submitter's formaction and formmethod, read past fields that shadow the form's
//   properties;
// - the Navigation API's `navigate` event, which carries the URL the browser is about to request:
//   form.submit() (no submit event), a form re-pointed by a later listener, a GET form's URL with
//   the fields in it, a link, `location = …`. It is the last point in the document before the
//   request leaves.
// Any submission counts, not only the form that holds the field: the page can copy the value
// anywhere. What the page's script sends by other means (fetch, beacons, images, frames, popups)
// is refused by the worker's network rules for the tab (tools/secret-net.ts).
//
// Runs in the guard's isolated world.

import { formRequest, isForm } from "./secret-submit";

/** The secrets a document holds and the one set of origins all of them may go to. */
export class SecretHold {
  private bound: Set<string> | null = null;
  readonly names = new Set<string>();

  /** Records secrets put into this document, each with its bound origins. */
  add(names: readonly string[], origins: readonly (readonly string[])[]): void {
    names.forEach((n, i) => {
      this.names.add(n);
      const o = new Set(origins[i] ?? []);
      this.bound = this.bound ? new Set([...this.bound].filter((x) => o.has(x))) : o;
    });
  }

  get holding(): boolean {
    return this.bound !== null;
  }

  /** Where every secret here may go. */
  origins(): string[] {
    return this.bound ? [...this.bound] : [];
  }

  /** A request to `url` may carry this document's secrets: nothing is held, or its origin is bound. */
  allows(url: string): boolean {
    if (!this.bound) return true;
    try {
      return this.bound.has(new URL(url).origin);
    } catch {
      return false;
    }
  }
}

/**
 * A submit event whose submission would leave for an origin the held secrets are not bound to
 * (`method=dialog` sends nothing). A URL that cannot be read counts as elsewhere.
 */
export function submitLeaves(h: SecretHold, ev: Event): boolean {
  if (!h.holding || ev.type !== "submit") return false;
  const form = ev.composedPath()[0];
  if (!isForm(form)) return false;
  const req = formRequest(form, (ev as SubmitEvent).submitter ?? null);
  return req.method !== "dialog" && !h.allows(req.url);
}

/** The implicit submission an Enter in `form` would make (its default button), judged the same way. */
export function implicitLeaves(h: SecretHold, form: HTMLFormElement | null, submitter: Element | null): boolean {
  if (!h.holding || !form) return false;
  const req = formRequest(form, submitter);
  return req.method !== "dialog" && !h.allows(req.url);
}

/** The part of a NavigateEvent the guard reads. */
export interface NavigateLike extends Event {
  destination?: { url?: string; sameDocument?: boolean };
}

/** A navigation of this document to another document whose URL is not on a held secret's origins. */
export function navigationLeaves(h: SecretHold, ev: NavigateLike): boolean {
  if (!h.holding) return false;
  const d = ev.destination;
  if (d?.sameDocument) return false;
  return !h.allows(String(d?.url ?? ""));
}

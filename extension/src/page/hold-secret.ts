// SECURITY I-76: before a secret's value enters a document, its guard learns which secrets and
// where they may go, in the same synchronous turn and before any event lets the page's script see
// the value; from then on the guard stops any submission or navigation of that document to another
// origin (guard/secret-hold.ts). A field of a same-origin frame this engine reaches into is held by
// that frame's guard and by every document on the way up to this one (each can read it). Without a
// guard that takes it, nothing is filled.
import { fail } from "./errors";
import { secretRefs, type SecretBundle } from "../secrets/template";
import type { GuardApi } from "../guard/index";

type GuardWindow = Window & { __toriiGuard?: GuardApi };

function refuse(): never {
  // The worker reports an engine code it does not know as `internal`, with this message and hint.
  return fail("unknown_method", "this document's guard cannot hold the secret (a guard of an older build, or a frame it cannot reach); nothing was filled", "Reload the tab, then fill again.");
}

/** Tells the guards of `el`'s document and its parents up to this one that `el` is about to receive the secrets `text` refers to. */
export function holdSecrets(el: Element, text: string, b: SecretBundle): void {
  const names = secretRefs(text).filter((n) => Object.prototype.hasOwnProperty.call(b, n));
  if (names.length === 0) return;
  const origins = names.map((n) => [...(b[n]?.o ?? [])]);
  let doc: Document | null = el.ownerDocument;
  let target: Element = el;
  for (let hops = 0; doc && hops < 16; hops++) {
    const w = doc.defaultView as GuardWindow | null;
    const guard = w?.__toriiGuard;
    if (typeof guard?.holdSecret !== "function" || !guard.holdSecret(target, names, origins)) refuse();
    if (doc === document) return;
    // The frame element that holds this document, in its parent (same origin: this engine reached it).
    const frame = w?.frameElement ?? null;
    if (!frame) refuse();
    target = frame;
    doc = frame.ownerDocument;
  }
  refuse();
}

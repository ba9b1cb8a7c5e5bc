// SECURITY I-76: before a secret's value enters this document, its guard learns which secrets and
// where they may go, in the same synchronous turn and before any event lets the page's script see
// the value; from then on the guard stops any submission or navigation of this document to
// another origin (guard/secret-hold.ts). Without a guard that takes it, nothing is filled.
import { fail } from "./errors";
import { secretRefs, type SecretBundle } from "../secrets/template";
import type { GuardApi } from "../guard/index";

/** Tells this document's guard that `el` is about to receive the secrets `text` refers to. */
export function holdSecrets(el: Element, text: string, b: SecretBundle): void {
  const names = secretRefs(text).filter((n) => Object.prototype.hasOwnProperty.call(b, n));
  if (names.length === 0) return;
  const origins = names.map((n) => [...(b[n]?.o ?? [])]);
  const guard = (globalThis as { __toriiGuard?: GuardApi }).__toriiGuard;
  if (typeof guard?.holdSecret !== "function" || !guard.holdSecret(el, names, origins)) {
    // The worker reports an engine code it does not know as `internal`, with this message and hint.
    fail("unknown_method", "this document's guard cannot hold the secret (a guard of an older build, or a field of another document); nothing was filled", "Reload the tab, then fill again.");
  }
}

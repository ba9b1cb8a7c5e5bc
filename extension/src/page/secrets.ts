// The page side of secrets (SECURITY I-69): a `{{secret:NAME}}` reference becomes its value only
// here, in the document that holds the field, in the same synchronous turn as the value is set,
// and only when this document's own origin (self.origin, which the page cannot redefine in the
// isolated world) is one of the secret's origins. Every value substituted in this document is
// remembered so that no reply of its engine carries it back (read_text, snapshot, find, get_state).
import { fail } from "./errors";
import { maskDeep, substitute, SubstituteError, type SecretBundle } from "../secrets/template";

/** Values substituted in this document → their names; never sent anywhere. */
const used = new Map<string, string>();

/** `s` with its references substituted for this document; throws a typed engine error otherwise. */
export function useSecrets(s: string, b: SecretBundle | undefined, remember = true): string {
  if (!b || typeof b !== "object") return s;
  try {
    return substitute(s, b, self.origin, (n, v) => {
      if (remember && v) used.set(v, n);
    });
  } catch (e) {
    if (e instanceof SubstituteError) fail(e.code, e.message);
    throw e;
  }
}

/** A reply's value with every secret substituted here replaced by its reference. */
export function maskReply<T>(v: T): T {
  return used.size ? maskDeep(v, used) : v;
}

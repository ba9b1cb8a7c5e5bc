// The page side of secrets (SECURITY I-69): a `{{secret:NAME}}` reference becomes its value only
// here, in the document that holds the field, in the same synchronous turn as the value is set,
// and only when this document's own origin (self.origin, which the page cannot redefine in the
// isolated world) is one of the secret's origins.
//
// SECURITY I-77: this document also withholds every secret bound to its origin (the worker sends
// them with each call, as their values may come here anyway) and every value substituted here,
// in any common encoding, before anything is cut, escaped or compared: a query (find, wait_for)
// matches the masked text, never the secret's characters, and no reply carries them.
import { fail } from "./errors";
import { compileMask, type MaskEntry, type Masker } from "../secrets/mask";
import { substitute, SubstituteError, type SecretBundle } from "../secrets/template";

/** Values substituted in this document → their names; never sent anywhere. */
const used = new Map<string, string>();
/** The entries the worker sent, by the key it named them with. */
let given: { k: string; e: MaskEntry[] } | undefined;
let built: { key: string; m: Masker } | undefined;

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

/** The worker's mask entries of this call (`mask` of its arguments), when they changed. */
export function takeMask(m: unknown): void {
  const x = m as { k?: unknown; e?: unknown } | undefined;
  if (!x || typeof x.k !== "string" || !Array.isArray(x.e)) return;
  if (given?.k === x.k) return;
  const e = (x.e as { name?: unknown; values?: unknown }[])
    .filter((y) => typeof y?.name === "string" && Array.isArray(y.values))
    .map((y) => ({ name: y.name as string, values: (y.values as unknown[]).filter((v): v is string => typeof v === "string") }));
  given = { k: x.k, e };
}

function masker(): Masker | undefined {
  if (!given && used.size === 0) return undefined;
  const key = `${given?.k ?? ""}|${used.size}`;
  if (built?.key !== key) {
    const entries: MaskEntry[] = [...(given?.e ?? []), ...[...used].map(([v, name]) => ({ name, values: [v] }))];
    built = { key, m: compileMask(entries) };
  }
  return built.m;
}

/** A text read from the page, with every secret withheld: before it is cut, escaped or compared. */
export function maskHere(s: string): string {
  const m = masker();
  return m ? m.text(s) : s;
}

/** A reply's value with every secret withheld. */
export function maskReply<T>(v: T): T {
  const m = masker();
  return m ? m.deep(v) : v;
}

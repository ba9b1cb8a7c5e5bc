// `{{secret:NAME}}` references in the text an agent asks to fill or type. Shared by the worker
// (which names the secrets to resolve) and the page engine (which substitutes them, SECURITY I-69).
// Pure: no chrome.* and no DOM.

/** A secret's name: what the person typed in the options page, and what an agent writes. */
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const TOKEN = /\{\{secret:([^{}]*)\}\}/g;

/** The names a text refers to, in order, each once; a malformed name throws. */
export function secretRefs(s: string): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(TOKEN)) {
    const n = m[1] as string;
    if (!NAME_RE.test(n)) throw new TemplateError(`{{secret:${n.slice(0, 70)}}} is not a secret name (letters, digits, _ . -; up to 64)`);
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** The text is one secret reference and nothing else (what a password field may take, SECURITY I-69). */
export function onlySecret(s: unknown): boolean {
  return typeof s === "string" && /^\{\{secret:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\}\}$/.test(s);
}

export class TemplateError extends Error {
  override name = "TemplateError";
}

/** What the page engine receives for a call: each referenced secret's value and where it may go. */
export type SecretBundle = Record<string, { v: string; o: string[] }>;

/** Pieces of a text: literal runs and secret names, in order (type sends them one by one). */
export function pieces(s: string): ({ text: string } | { secret: string })[] {
  const out: ({ text: string } | { secret: string })[] = [];
  let at = 0;
  for (const m of s.matchAll(TOKEN)) {
    const i = m.index ?? 0;
    if (i > at) out.push({ text: s.slice(at, i) });
    out.push({ secret: m[1] as string });
    at = i + m[0].length;
  }
  if (at < s.length) out.push({ text: s.slice(at) });
  return out;
}

/**
 * The text with each reference replaced by its value, when `origin` (the document's own) is one of
 * the secret's origins; `check` reports the first reference that may not go there.
 */
export function substitute(s: string, b: SecretBundle, origin: string, onUse?: (name: string, value: string) => void): string {
  return s.replace(TOKEN, (_, n: string) => {
    const e = Object.prototype.hasOwnProperty.call(b, n) ? b[n] : undefined;
    if (!e) throw new SubstituteError("secret_not_found", n);
    if (!e.o.includes(origin)) throw new SubstituteError("secret_origin_mismatch", n);
    onUse?.(n, e.v);
    return e.v;
  });
}

export class SubstituteError extends Error {
  override name = "SubstituteError";
  constructor(
    readonly code: "secret_not_found" | "secret_origin_mismatch",
    readonly secret: string,
  ) {
    super(code === "secret_not_found" ? `no secret named ${secret}` : `secret ${secret} is not bound to this document's origin; nothing was filled`);
  }
}

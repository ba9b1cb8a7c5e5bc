// How captured values are cut and printed: URLs without credentials, bounded text, console
// arguments as console.* shows them, which MIME types count as text (SECURITY I-65).

const TEXT_CAP = 2_000;
const URL_CAP = 2_048;

const TEXT_MIME = /^(text\/|application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml|javascript|ecmascript|x-www-form-urlencoded|graphql)|image\/svg\+xml)/i;

export function isTextType(mime: string): boolean {
  return TEXT_MIME.test(mime.trim());
}

/** A URL without userinfo (credentials never leave) and cut to a bounded length. */
export function cleanUrl(raw: string): string {
  let u = raw;
  try {
    const p = new URL(raw);
    if (p.username || p.password) {
      p.username = "";
      p.password = "";
      u = p.href;
    }
  } catch {
    u = raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@?#]*@/i, "$1");
  }
  if (u.length <= URL_CAP) return u;
  u = maskBeforeCut(u);
  return u.length > URL_CAP ? `${u.slice(0, URL_CAP)}…` : u;
}

export function clip(s: string, cap = TEXT_CAP): string {
  if (s.length <= cap) return s;
  const m = maskBeforeCut(s);
  return m.length > cap ? `${m.slice(0, cap)}… (${s.length} chars)` : m;
}

let cutMask: ((s: string) => string) | undefined;

/** The mask a text passes before it is cut (SECURITY I-77), so no piece of a secret survives unrecognised. */
export function setCutMask(f: (s: string) => string): void {
  cutMask = f;
}

function maskBeforeCut(s: string): string {
  return cutMask ? cutMask(s) : s;
}

export function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

export function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

export function originOfUrl(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : "";
  } catch {
    return "";
  }
}

/** One RemoteObject as console.* would print it: strings bare, the rest by value or description. */
export function formatArg(o: unknown): string {
  if (!o || typeof o !== "object") return "";
  const r = o as Record<string, unknown>;
  if (r.type === "string") return str(r.value);
  if (r.type === "undefined") return "undefined";
  if (typeof r.unserializableValue === "string") return r.unserializableValue;
  if (r.value !== undefined && r.type !== "object") return String(r.value);
  if (r.subtype === "null") return "null";
  if (typeof r.description === "string") return r.description;
  return String(r.type ?? "");
}

// The one mask every text bound for the agent passes through (SECURITY I-77). A secret is matched in
// every form a browser or a page commonly produces, not only as typed: each of its characters may
// appear raw or percent-encoded (either hex case, `+` for a space, once more encoded as `%25XX`), as
// an HTML entity (named, decimal, hex), or as a JSON/JavaScript escape behind any number of
// backslashes (`\"`, `\u0022`, `\x22`, `\\\"` in JSON inside JSON); a mixture of these in one run is
// matched too, since encoders differ in which characters they leave alone. Base64 and base64url are
// matched at all three byte alignments, so the value is found inside a longer encoded run ("user:pw"
// in a Basic header, a JSON blob), with the partly determined characters at either end included in
// what is masked; so is hex of its UTF-8 bytes. Pure: no chrome.* and no DOM (the worker and the page
// engine both use it).

export interface MaskEntry {
  /** What the mask shows instead: `{{secret:NAME}}`. */
  name: string;
  /** The values to withhold (a password; a seed's recent codes). */
  values: string[];
}

export interface Masker {
  /** No value to withhold: every call returns its input. */
  readonly empty: boolean;
  text(s: string): string;
  /** Every string of a JSON-like value, keys included, masked. */
  deep<T>(v: T): T;
}

const reEsc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** A hex number matched in either case: 2f → 2[fF]. */
function hexCI(n: number, width: number): string {
  let out = "";
  for (const ch of n.toString(16).padStart(width, "0")) out += /[a-f]/.test(ch) ? `[${ch}${ch.toUpperCase()}]` : ch;
  return out;
}

const NAMED: Record<string, string[]> = {
  "&": ["amp"],
  "<": ["lt"],
  ">": ["gt"],
  '"': ["quot"],
  "'": ["apos"],
  "\u00a0": ["nbsp"],
  "/": ["sol"],
  "=": ["equals"],
  "+": ["plus"],
};
const SHORT_ESCAPE: Record<string, string> = { "\n": "n", "\t": "t", "\r": "r", "\b": "b", "\f": "f", "\v": "v", "\0": "0" };
/** One or more backslashes: an escape inside a string that was escaped again. */
const BS = "\\\\+";

const utf8 = new TextEncoder();

/** Every way one character (a code point) commonly appears in text a page or the browser wrote. */
function charPattern(c: string): string {
  const cp = c.codePointAt(0) as number;
  const alts: string[] = [reEsc(c)];
  const bytes = [...utf8.encode(c)];
  alts.push(bytes.map((b) => `%${hexCI(b, 2)}`).join(""));
  alts.push(bytes.map((b) => `%25${hexCI(b, 2)}`).join(""));
  if (c === " ") alts.push("\\+");
  alts.push(`&#0*${cp};?`, `&#[xX]0*${hexCI(cp, 1)};?`);
  for (const n of NAMED[c] ?? []) alts.push(`&${n};`);
  if (cp <= 0xffff) alts.push(`${BS}u${hexCI(cp, 4)}`);
  else {
    const hi = 0xd800 + ((cp - 0x10000) >> 10);
    const lo = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    alts.push(`${BS}u${hexCI(hi, 4)}${BS}u${hexCI(lo, 4)}`);
  }
  alts.push(`${BS}u\\{0*${hexCI(cp, 1)}\\}`);
  if (cp < 256) alts.push(`${BS}x${hexCI(cp, 2)}`);
  const short = SHORT_ESCAPE[c];
  if (short) alts.push(`${BS}${short}`);
  if (c === '"' || c === "'" || c === "/" || c === "`") alts.push(`${BS}${reEsc(c)}`);
  if (c === "\\") alts[0] = BS;
  return `(?:${alts.join("|")})`;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** Index 62 and 63 in both alphabets: base64's `+` `/` and base64url's `-` `_`. */
function b64Chars(i: number): string {
  return i < 62 ? (B64[i] as string) : i === 62 ? "+-" : "/_";
}

/** A class of the base64 characters whose 6 bits agree with `known` where `mask` has a bit set. */
function b64Class(known: number, mask: number): string {
  let s = "";
  for (let i = 0; i < 64; i++) if ((i & mask) === (known & mask)) s += b64Chars(i);
  return s.length === 1 ? reEsc(s) : `[${s.replace(/[-\]\\^]/g, "\\$&")}]`;
}

/**
 * The value's bytes base64-encoded after `k` unknown bytes, as a pattern: a character all of whose
 * bits come from the value is itself; one with some bits from its neighbours is the class of the
 * characters those bits allow; one with none is left out.
 */
function base64Pattern(bytes: Uint8Array, k: number): string {
  const totalBits = (k + bytes.length) * 8;
  const parts: string[] = [];
  for (let start = 0; start < totalBits; start += 6) {
    let known = 0;
    let mask = 0;
    for (let b = 0; b < 6; b++) {
      const bit = start + b;
      const byte = Math.floor(bit / 8) - k;
      known <<= 1;
      mask <<= 1;
      if (byte >= 0 && byte < bytes.length) {
        mask |= 1;
        known |= ((bytes[byte] as number) >> (7 - (bit % 8))) & 1;
      }
    }
    if (mask) parts.push(b64Class(known, mask));
  }
  return parts.join("");
}

const WS = /^[\s\u00a0]$/u;

/**
 * The value's characters, each in any of its forms. A run of white space is one or more white
 * space characters of any kind (text is often collapsed, and editors write U+00A0), and may be gone
 * at either end (text is often trimmed).
 */
function charsPattern(v: string): string {
  const cps = [...v];
  const blank = cps.every((c) => WS.test(c));
  let out = "";
  for (let i = 0; i < cps.length; ) {
    if (!WS.test(cps[i] as string)) {
      out += charPattern(cps[i] as string);
      i++;
      continue;
    }
    const alts = new Set<string>();
    let j = i;
    for (; j < cps.length && WS.test(cps[j] as string); j++) alts.add(charPattern(cps[j] as string));
    alts.add(charPattern(" "));
    alts.add(charPattern("\u00a0"));
    alts.add("\\s");
    out += `(?:${[...alts].join("|")})${!blank && (i === 0 || j === cps.length) ? "*" : "+"}`;
    i = j;
  }
  return out;
}

/** Every form of one value, as one alternation. */
function valuePattern(v: string): string {
  const chars = charsPattern(v);
  const bytes = utf8.encode(v);
  const alts = [chars];
  // Encoded forms of very short values would match too much ordinary text.
  if (bytes.length >= 3) {
    for (let k = 0; k < 3; k++) alts.push(base64Pattern(bytes, k));
    alts.push([...bytes].map((b) => hexCI(b, 2)).join(""));
  }
  return alts.join("|");
}

interface Compiled {
  name: string;
  re: RegExp;
}

/**
 * A long value as pieces of CHUNK code points, each matched on its own: one pattern for thousands
 * of characters would be too deep for the regular expression engine, and every piece of a long
 * value is itself secret.
 */
const CHUNK = 128;
function pieces(v: string): string[] {
  const cps = [...v];
  if (cps.length <= CHUNK * 2) return [v];
  const out: string[] = [];
  for (let i = 0; i < cps.length; i += CHUNK) out.push(cps.slice(i, i + CHUNK).join(""));
  return out;
}

export function compileMask(entries: readonly MaskEntry[]): Masker {
  const compiled: Compiled[] = [];
  // Longer values first: a value inside another is masked as part of the longer one.
  const all = entries.flatMap((e) => e.values.filter((v) => v.length > 0).flatMap((v) => pieces(v).map((p) => ({ name: e.name, v: p }))));
  all.sort((a, b) => b.v.length - a.v.length);
  for (const { name, v } of all) compiled.push({ name, re: new RegExp(valuePattern(v), "g") });
  const text = (s: string): string => {
    if (s.length === 0) return s;
    let out = s;
    for (const c of compiled) {
      c.re.lastIndex = 0;
      if (c.re.test(out)) {
        c.re.lastIndex = 0;
        out = out.replace(c.re, `{{secret:${c.name}}}`);
      }
    }
    return out;
  };
  const deep = <T>(v: T): T => {
    const walk = (x: unknown): unknown => {
      if (typeof x === "string") return text(x);
      if (Array.isArray(x)) return x.map(walk);
      if (x && typeof x === "object") {
        const o: Record<string, unknown> = {};
        for (const [k, y] of Object.entries(x)) o[text(k)] = walk(y);
        return o;
      }
      return x;
    };
    return walk(v) as T;
  };
  if (compiled.length === 0) return { empty: true, text: (s) => s, deep: (v) => v };
  return { empty: false, text, deep };
}

// The ref format, shared by the page engine and the worker. SECURITY I-63: a ref is a document's
// tag (lowercase letters, never "h" so that h1…h6 stay CSS selectors) and a number from 1
// ("b12": element 12 of the document tagged "b"). Tags count up in bijective base 25 (a … z,
// then aa, ab …) from one counter for the whole browser, so no two documents ever share one.

const ALPHABET = "abcdefgijklmnopqrstuvwxyz";
const RE = /^([a-gi-z]{1,8})([1-9][0-9]{0,8})$/;

/** "b12" → { tag: "b", n: 12 }; undefined for anything that is not a ref. */
export function parseRef(ref: unknown): { tag: string; n: number } | undefined {
  if (typeof ref !== "string") return undefined;
  const m = RE.exec(ref);
  return m ? { tag: m[1] as string, n: Number(m[2]) } : undefined;
}

export function isRef(s: unknown): boolean {
  return parseRef(s) !== undefined;
}

/** The tag of counter value i (0 → "a", 24 → "z", 25 → "aa", …). */
export function tagName(i: number): string {
  let n = Math.floor(i) + 1;
  let s = "";
  while (n > 0) {
    n -= 1;
    s = (ALPHABET[n % 25] as string) + s;
    n = Math.floor(n / 25);
  }
  return s;
}

/** Inverse of tagName; undefined for a string that is not a tag. */
export function tagIndex(tag: string): number | undefined {
  if (!/^[a-gi-z]{1,8}$/.test(tag)) return undefined;
  let n = 0;
  for (const c of tag) n = n * 25 + ALPHABET.indexOf(c) + 1;
  return n - 1;
}

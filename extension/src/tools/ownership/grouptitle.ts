// What a session's tab group looks like: its title, from the label the agent gave, and its colour.
// Pure: no chrome.* API.
//
// SECURITY I-83: the label is the agent's text shown in the person's tab strip. Control and format
// characters (bidi overrides and isolates, zero-width marks) are removed, so a title cannot
// reorder itself or the text beside it; line breaks and runs of spaces become one space; the title
// is capped at TITLE_MAX characters, so it cannot crowd the person's own tabs out of the strip.

export const TITLE_MAX = 24;
/** The title of a session whose label is empty once cleaned. */
export const UNTITLED = "agent";

/** Chrome's tab group colours; grey last, so agents' groups stand apart from a plain one. */
export const COLOURS = ["blue", "red", "yellow", "green", "pink", "purple", "cyan", "orange", "grey"] as const;
export type Colour = (typeof COLOURS)[number];

/** SECURITY I-83: a session label made safe to show as a group title. */
export function groupTitle(label: string): string {
  const clean = label
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]/gu, " ")
    .replace(/[\s\p{Zl}\p{Zp}]+/gu, " ")
    .trim();
  const chars = Array.from(clean); // code points: a cut never splits a surrogate pair
  if (chars.length === 0) return UNTITLED;
  if (chars.length <= TITLE_MAX) return clean;
  return `${chars.slice(0, TITLE_MAX - 1).join("").trimEnd()}…`;
}

export function isColour(c: unknown): c is Colour {
  return typeof c === "string" && (COLOURS as readonly string[]).includes(c);
}

/** FNV-1a: a stable, well-spread number from a session id. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * A session's colour: the one its id points at, or the next not in use by another session's
 * group, so sessions side by side differ (until all nine are taken; then the id's own).
 */
export function pickColour(sessionId: string, inUse: Iterable<string>): Colour {
  const used = new Set(inUse);
  const bright = COLOURS.length - 1; // grey only when every bright colour is taken
  const start = hash(sessionId) % bright;
  for (let i = 0; i < bright; i++) {
    const c = COLOURS[(start + i) % bright]!;
    if (!used.has(c)) return c;
  }
  return used.has("grey") ? COLOURS[start]! : "grey";
}

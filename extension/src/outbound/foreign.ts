// SECURITY I-79: no URL of an origin the agent may not see reaches it, whoever wrote the text — the
// browser's own messages (CORS, CSP, a failed WebSocket), the page, a server's answer, an error.
// Every URL found in text is judged by the person's policy, and one the policy does not allow is
// replaced by WITHHELD: the URL itself, its query and whatever the page or a server chose to put
// into it, never its host alone. Pure (no chrome.*): the registry applies it to every result, the
// capture export to its files.
//
// What counts as a URL, so that nothing spelled another way slips through:
//  - `scheme://…` with any scheme: http(s) and ws(s) are judged as http(s) by the allowlist (path
//    rules included); `torii://files/…` (this session's own files) is kept; any other scheme that
//    carries a host (ftp, file://host, chrome-extension, view-source's inner URL is found on its
//    own…) is withheld, permissive mode included (I-14/I-15 allow no other scheme);
//  - protocol-relative `//host/…` after a boundary (start, space, quote, `(`, `=`, `,`, `[`, `{`, `>`),
//    judged as http and as https: kept when either is allowed;
//  - the `://` spelled percent-encoded (once or twice), with JavaScript/JSON escapes (`\/`,
//    `\u002f`, `\x2f`) or HTML character references: the candidate is decoded the same way first;
//  - a URL inside an allowed one (`?next=https://b.test/`) is judged on its own.
// A URL ends at white space, `"`, `<`, `>`, a backtick or a backslash that starts no escape; trailing
// `.,;:!?)]}'` are left out (Chrome prints URLs in single quotes). A candidate that does not parse,
// a cut one included, is withheld: failing closed costs a link, never a leak.

import { defaultPolicy, judgeUrl, type Policy } from "../policy/policy.js";
import { parsePattern, urlParts } from "../policy/pattern.js";

/** What replaces a withheld URL. */
export const WITHHELD = "[url withheld]";

/** True when the URL (absolute, http or https) may reach the agent. */
export type UrlAllowed = (url: string) => boolean;

const SLASH = String.raw`(?:\\*\/|%(?:25)?2f|\\+u002f|\\+x2f|&#0*47;?|&#x0*2f;?|&sol;)`;
/**
 * `//` in any of the spellings above. The colon before it is looked for separately (COLON_BEFORE):
 * a regular expression that starts with an optional group scans text about ten times slower.
 */
const SEP = new RegExp(`${SLASH}${SLASH}`, "gi");
/** A colon in any spelling, right before the slashes. */
const COLON_BEFORE = /(?::|%(?:25)?3a|\\+u003a|\\+x3a|&#0*58;?|&#x0*3a;?|&colon;)$/i;
/** Cheap pre-test: text without a slash in any spelling has no URL. */
const MAYBE = /[/]|%(?:25)?2f|\\+u002f|\\+x2f|&#0*47|&#x0*2f|&sol;/i;

/** Judging looks at scheme, host, port and path: at most this much of a candidate (longer: withheld). */
const JUDGE_CAP = 2_048;

const judges = new WeakMap<Policy, UrlAllowed>();
const EMPTY = defaultPolicy();
/** Origins judged per policy, when no rule has a path: bounded, then started afresh. */
const ORIGIN_MEMO_MAX = 4_096;

/**
 * The judge of one policy: http(s) URLs by the allowlist (SECURITY I-14), path rules included.
 * Without path rules a URL is judged by its scheme and authority, and those verdicts are kept
 * for the policy (a new policy is a new object, so a change is never judged by an old verdict).
 */
export function policyJudge(p: Policy): UrlAllowed {
  const known = judges.get(p);
  if (known) return known;
  const full: UrlAllowed = (url) => urlParts(url) !== null && judgeUrl(p, url).allowed;
  const paths = p.rules.some((r) => {
    try {
      return parsePattern(r.pattern).path !== undefined;
    } catch {
      return false;
    }
  });
  let judge = full;
  if (!paths) {
    const memo = new Map<string, boolean>();
    judge = (url) => {
      // The authority ends where the URL parser ends it for http(s): at / \ ? #.
      const m = /^(https?:)\/\/([^/\\?#]+)/i.exec(url);
      if (!m) return full(url);
      const key = `${(m[1] as string).toLowerCase()}//${m[2] as string}/`;
      let v = memo.get(key);
      if (v === undefined) {
        if (memo.size >= ORIGIN_MEMO_MAX) memo.clear();
        memo.set(key, (v = full(key)));
      }
      return v;
    };
  }
  judges.set(p, judge);
  return judge;
}

const isSchemeChar = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
/** Characters before `//` that make it the start of a protocol-relative URL. */
const BOUNDARY = new Set([..." \t\n\r\f\v\"'(<=,[{>"].map((c) => c.charCodeAt(0)));
/** Trailing characters a URL in prose or in Chrome's quotes does not own. */
const TRAILING = new Set([...".,;:!?)]}'"].map((c) => c.charCodeAt(0)));

function isSpace(c: number): boolean {
  return c <= 0x20 || c === 0x7f || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200b) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Length of the escape at `j` (a run of backslashes ending in `/`, `uXXXX` or `xXX`), 0 for none. */
function escapeAt(s: string, j: number): number {
  let k = j;
  while (k < s.length && s.charCodeAt(k) === 92) k++;
  const c = s.charCodeAt(k);
  if (c === 47) return k + 1 - j;
  const hex = (from: number, n: number) => {
    for (let i = 0; i < n; i++) if (!isHex(s.charCodeAt(from + i))) return false;
    return true;
  };
  if ((c === 117 || c === 85) && hex(k + 1, 4)) return k + 5 - j;
  if ((c === 120 || c === 88) && hex(k + 1, 2)) return k + 3 - j;
  return 0;
}

/** Where the run of URL characters that starts at `from` ends. */
function runEnd(s: string, from: number): number {
  let j = from;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c === 92) {
      const n = escapeAt(s, j);
      if (n === 0) break;
      j += n;
      continue;
    }
    if (isSpace(c) || c === 34 || c === 60 || c === 62 || c === 96) break;
    j++;
  }
  return j;
}

const ENTITIES: Record<string, string> = { colon: ":", sol: "/", amp: "&", period: ".", quest: "?", num: "#", commat: "@", percnt: "%", lsqb: "[", rsqb: "]" };

/** The candidate as a URL parser should see it, undoing the spellings its separator used. */
function decode(raw: string, sep: string): string {
  let s = raw;
  if (sep.includes("&")) {
    s = s.replace(/&#x([0-9a-f]+);?|&#(\d+);?|&([a-z]+);/gi, (m, hx: string | undefined, dec: string | undefined, name: string | undefined) => {
      if (name !== undefined) return ENTITIES[name.toLowerCase()] ?? m;
      const n = hx !== undefined ? parseInt(hx, 16) : Number(dec);
      return n > 0 && n < 0x110000 ? String.fromCodePoint(n) : m;
    });
  }
  if (sep.includes("\\")) {
    s = s.replace(/\\+(?:u([0-9a-f]{4})|x([0-9a-f]{2})|(\/))/gi, (_m, u: string | undefined, x: string | undefined) =>
      u !== undefined ? String.fromCharCode(parseInt(u, 16)) : x !== undefined ? String.fromCharCode(parseInt(x, 16)) : "/",
    );
  }
  const rounds = /%25/i.test(sep) ? 2 : sep.includes("%") ? 1 : 0;
  for (let i = 0; i < rounds; i++) s = s.replace(/%([0-9a-f]{2})/gi, (m, h: string) => (parseInt(h, 16) < 0x80 ? String.fromCharCode(parseInt(h, 16)) : m));
  return s;
}

/** Where the part of a candidate that is judged ends: at its query or fragment (`?`, `#`, `%3F`, `%23`), or past the cap. */
function judgedEnd(s: string, from: number, end: number): number {
  const stop = Math.min(end, from + JUDGE_CAP + 1);
  for (let j = from; j < stop; j++) {
    const c = s.charCodeAt(j);
    if (c === 63 || c === 35) return j;
    if (c === 37) {
      const pair = s.slice(j + 1, j + 3).toLowerCase();
      if (pair === "3f" || pair === "23") return j;
    }
  }
  return stop;
}

/**
 * Whether a candidate (`scheme` lower case, "" for protocol-relative; `rest` from its `//`,
 * decoded) may reach the agent.
 */
function candidateAllowed(scheme: string, rest: string, allowed: UrlAllowed): boolean {
  // Nothing after the slashes (a bare "https://" in prose) names nothing.
  const body = rest.replace(/^[/\\]+/, "");
  if (body === "" || body.startsWith("?") || body.startsWith("#")) return true;
  if (rest.length > JUDGE_CAP) return false;
  switch (scheme) {
    case "http":
    case "https":
      return allowed(`${scheme}:${rest}`);
    case "ws":
      return allowed(`http:${rest}`);
    case "wss":
      return allowed(`https:${rest}`);
    case "":
      return allowed(`https:${rest}`) || allowed(`http:${rest}`);
    case "torii":
      // This session's own files (resource links), never a web origin.
      return /^\/\/files\//.test(rest);
    default: {
      // Any other scheme: kept only when it names no host (file:///path).
      const authority = /^\/\/([^/?#]*)/.exec(rest)?.[1] ?? "";
      return authority.replace(/^.*@/, "") === "";
    }
  }
}

/**
 * The text with every URL the judge does not allow replaced by WITHHELD (SECURITY I-79). Linear in
 * the text: a run of URL characters is measured once, however many URLs it holds.
 */
export function withholdForeignUrls(text: string, allowed: UrlAllowed): string {
  if (text.length < 3 || !MAYBE.test(text)) return text;
  SEP.lastIndex = 0;
  let out = "";
  let pos = 0;
  /** End of the last replacement: no candidate starts before it. */
  let floor = 0;
  let runFrom = -1;
  let runTo = -1;
  for (let m = SEP.exec(text); m !== null; m = SEP.exec(text)) {
    let i = m.index;
    const after = i + m[0].length;
    if (i < floor) continue;
    const colon = i > floor ? (text.charCodeAt(i - 1) === 58 ? ":" : COLON_BEFORE.exec(text.slice(Math.max(floor, i - 12), i))?.[0]) : undefined;
    const sep = (colon ?? "") + m[0];
    let start = i;
    if (colon !== undefined) {
      i -= colon.length;
      start = i;
      while (start > floor && isSchemeChar(text.charCodeAt(start - 1))) start--;
      // The letter after a backslash belongs to its escape (`\nhttps://`, `\u0041https://`).
      if (start > 0 && start < i && text.charCodeAt(start - 1) === 92) start++;
      while (start < i && !isLetter(text.charCodeAt(start))) start++;
    } else {
      // `//` counts only where a URL can begin, and before something that can be a host.
      if (i > 0 && !BOUNDARY.has(text.charCodeAt(i - 1))) continue;
      const h = text.charCodeAt(after);
      if (!(isLetter(h) || (h >= 48 && h <= 57) || h === 91 || h === 37 || h > 0x7f)) continue;
    }
    if (!(after > runFrom && after <= runTo)) {
      runFrom = after;
      runTo = runEnd(text, after);
    }
    let end = runTo;
    while (end > after && TRAILING.has(text.charCodeAt(end - 1))) end--;
    const scheme = text.slice(start, i).toLowerCase();
    const jEnd = judgedEnd(text, after, end);
    const rest = `//${decode(text.slice(after, jEnd), sep)}`;
    if (jEnd - after > JUDGE_CAP || !candidateAllowed(scheme, rest, allowed)) {
      out += text.slice(pos, start) + WITHHELD;
      pos = end;
      floor = end;
      SEP.lastIndex = Math.max(SEP.lastIndex, end);
    }
  }
  return pos === 0 ? text : out + text.slice(pos);
}

/** Deeper than this, a structured value is judged as its JSON text (nothing goes unread). */
const MAX_DEPTH = 64;

/** Every string of a JSON-like value (object keys too) through withholdForeignUrls; unchanged parts are shared. */
export function withholdDeep<T>(v: T, allowed: UrlAllowed, depth = 0): T {
  if (typeof v === "string") return withholdForeignUrls(v, allowed) as T;
  if (v === null || typeof v !== "object") return v;
  if (depth >= MAX_DEPTH) {
    const json = JSON.stringify(v);
    const clean = withholdForeignUrls(json, allowed);
    return (clean === json ? v : clean) as T;
  }
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = withholdDeep(v[i] as unknown, allowed, depth + 1);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return (out ?? v) as T;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  const clean = entries.map(([k, x]): [string, unknown] => [withholdForeignUrls(k, allowed), withholdDeep(x, allowed, depth + 1)]);
  if (clean.every(([k, x], i) => k === entries[i]?.[0] && x === entries[i]?.[1])) return v;
  return Object.fromEntries(clean) as T;
}

/** The parts of a tool result the agent reads as text: its text blocks and structured content. */
export interface TextResult {
  content: ({ type: "text"; text: string } | { type: string })[];
  structuredContent?: Record<string, unknown>;
}

/**
 * SECURITY I-79: a result (success or error) without a URL of an origin the policy does not
 * allow: text blocks, structured content (error messages and hints included). Images and
 * resource links are not text.
 */
export function withholdInResult<R extends TextResult>(r: R, p: Policy | undefined): R {
  // No policy (none loaded, or it could not be read): the empty list, so every URL is withheld.
  const allowed = policyJudge(p ?? EMPTY);
  let changed = false;
  const content = r.content.map((c) => {
    if (c.type !== "text" || !("text" in c)) return c;
    const t = withholdForeignUrls(c.text, allowed);
    if (t === c.text) return c;
    changed = true;
    return { ...c, text: t };
  });
  const sc = r.structuredContent ? withholdDeep(r.structuredContent, allowed) : undefined;
  if (!changed && sc === r.structuredContent) return r;
  return { ...r, content, ...(sc ? { structuredContent: sc } : {}) };
}

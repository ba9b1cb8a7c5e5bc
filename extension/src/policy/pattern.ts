// Origin patterns of the person's allowlist and the one function that decides whether a URL is
// covered by one. Pure: no chrome.* here, so the adversarial table in test/policy runs in node.
//
// Grammar (SECURITY I-14):
//   example.com            exactly that host, http and https, default port, any path
//   *.example.com          example.com and any subdomain of it (as Chrome match patterns)
//   example.com:8080       that port only; ":*" means any port
//   https://example.com/path/*   that scheme only; the path is a glob ("*" = any run of characters)
//   127.0.0.1:5173, [::1]:8080   IP literals
// Refused: a bare "*", a wildcard over a single label ("*.com"), "*" anywhere else in the host,
// userinfo, query, fragment, schemes other than http/https, empty labels.
//
// Hosts are compared in their canonical ASCII form (WHATWG URL parsing: lower case, IDN → punycode,
// IPv4 shorthand → dotted quad), with one trailing dot removed on both sides.

export interface OriginPattern {
  /** The text the person typed, trimmed. */
  source: string;
  schemes: readonly ("http" | "https")[];
  /** Canonical host without trailing dot; for a wildcard, the base after "*.". */
  host: string;
  wildcard: boolean;
  /** undefined: the scheme's default port; "*": any; else the port number. */
  port?: number | "*";
  /** Path glob; undefined matches every path. */
  path?: string;
}

export class PatternError extends Error {
  override name = "PatternError";
}

const DEFAULT_PORT: Record<string, number> = { http: 80, https: 443 };

/** Canonical ASCII host through the URL parser, or null when it is not a valid host. */
function canonicalHost(raw: string): string | null {
  if (raw === "" || /[\s/\\?#@]/.test(raw)) return null;
  let u: URL;
  try {
    u = new URL(`https://${raw}/`);
  } catch {
    return null;
  }
  if (u.username || u.password || u.port) return null;
  return stripDot(u.hostname);
}

function stripDot(host: string): string | null {
  const h = host.endsWith(".") ? host.slice(0, -1) : host;
  if (h === "") return null;
  if (!h.startsWith("[") && h.split(".").some((l) => l === "")) return null;
  return h;
}

/** Parses one allowlist entry; throws PatternError with a message for the person. */
export function parsePattern(input: string): OriginPattern {
  const source = input.trim();
  if (source === "") throw new PatternError("empty pattern");
  if (/^\*+$/.test(source) || source === "*://*" || /^\w+:\/\/\*\/?\*?$/.test(source)) {
    throw new PatternError("a bare * would allow every site; list the sites instead");
  }
  let rest = source;
  let schemes: OriginPattern["schemes"] = ["http", "https"];
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(rest);
  if (m) {
    const s = (m[1] as string).toLowerCase();
    if (s !== "http" && s !== "https") throw new PatternError(`scheme ${s}: is not allowed; use http or https`);
    schemes = [s];
    rest = rest.slice(m[0].length);
  } else if (/^[a-zA-Z][a-zA-Z0-9+.-]*:(?!\d|\*)/.test(rest)) {
    throw new PatternError("only http:// and https:// addresses can be allowed");
  }
  if (/[?#]/.test(rest)) throw new PatternError("a pattern has no query or fragment");
  const slash = rest.indexOf("/");
  let authority = slash < 0 ? rest : rest.slice(0, slash);
  let path: string | undefined = slash < 0 ? undefined : rest.slice(slash);
  if (path === "/*" || path === "/" || path === "") path = undefined;
  if (authority.includes("@")) throw new PatternError("a pattern has no user name or password");
  if (authority.includes("\\")) throw new PatternError("backslash in host");
  let port: OriginPattern["port"];
  const pm = /^(.*?)(?::(\d{1,5}|\*))?$/.exec(authority);
  if (!pm) throw new PatternError("bad host");
  authority = pm[1] as string;
  if (pm[2] !== undefined) {
    if (pm[2] === "*") port = "*";
    else {
      const n = Number(pm[2]);
      if (!Number.isInteger(n) || n < 1 || n > 65535) throw new PatternError("port out of range");
      port = n;
    }
  }
  let wildcard = false;
  if (authority.startsWith("*.")) {
    wildcard = true;
    authority = authority.slice(2);
  }
  if (authority.includes("*")) throw new PatternError("* is only allowed as the first label (*.example.com)");
  const host = canonicalHost(authority);
  if (!host) throw new PatternError(`not a host name: ${authority}`);
  if (wildcard) {
    if (host.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(host)) throw new PatternError("no wildcard over an IP address");
    if (!host.includes(".")) throw new PatternError("a wildcard must cover a registrable domain (*.example.com, not *.com)");
  }
  if (path !== undefined) {
    if (!path.startsWith("/")) throw new PatternError("the path must start with /");
    // Canonical form of the path the way the URL parser normalises a visited URL.
    try {
      const norm = new URL(`https://h${path.replace(/\*/g, "__STAR__")}`).pathname.replace(/__STAR__/g, "*");
      path = norm;
    } catch {
      throw new PatternError("bad path");
    }
  }
  const p: OriginPattern = { source, schemes, host, wildcard };
  if (port !== undefined) p.port = port;
  if (path !== undefined) p.path = path;
  return p;
}

/** The parts of a URL the allowlist looks at; null for every URL that has no http(s) origin. */
export interface UrlParts {
  readonly scheme: "http" | "https";
  readonly host: string;
  readonly port: number;
  readonly path: string;
}

/**
 * Recent URLs' parts: one call judges the same few URLs (its tab's, its frames') many times over,
 * once per rule and per check, and parsing them again was ~0.5 ms of every click. Long URLs
 * (data:, huge queries) are parsed each time rather than held.
 */
const partsCache = new Map<string, UrlParts | null>();
const PARTS_CACHE_MAX = 256;
const PARTS_CACHE_URL_MAX = 2_048;

/**
 * Splits a URL for matching. Only http and https have an origin the allowlist can name; blob: URLs
 * are judged by the origin inside them. data:, javascript:, file:, about:, view-source:, chrome: and
 * everything else give null (never allowed by a pattern; SECURITY I-15).
 */
export function urlParts(raw: string): UrlParts | null {
  const hit = partsCache.get(raw);
  if (hit !== undefined) return hit;
  const parts = parseParts(raw);
  if (raw.length <= PARTS_CACHE_URL_MAX) {
    if (partsCache.size >= PARTS_CACHE_MAX) partsCache.delete(partsCache.keys().next().value as string);
    partsCache.set(raw, parts);
  }
  return parts;
}

function parseParts(raw: string): UrlParts | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol === "blob:") {
    // blob:https://example.com/uuid → https://example.com (never nested further).
    let inner: URL;
    try {
      inner = new URL(u.pathname);
    } catch {
      return null;
    }
    if (inner.protocol !== "http:" && inner.protocol !== "https:") return null;
    u = inner;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  const scheme = u.protocol === "http:" ? "http" : "https";
  const host = stripDot(u.hostname);
  if (!host) return null;
  const port = u.port === "" ? (DEFAULT_PORT[scheme] as number) : Number(u.port);
  return Object.freeze({ scheme, host, port, path: u.pathname });
}

/** "https://example.com" (the serialised origin of a matchable URL), or "" when it has none. */
export function originOf(raw: string): string {
  const p = urlParts(raw);
  if (!p) return "";
  const def = DEFAULT_PORT[p.scheme] === p.port;
  return `${p.scheme}://${p.host}${def ? "" : `:${p.port}`}`;
}

function globMatch(glob: string, s: string): boolean {
  const re = new RegExp(`^${glob.split("*").map((x) => x.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return re.test(s);
}

export function matchParts(p: OriginPattern, u: UrlParts): boolean {
  if (!p.schemes.includes(u.scheme)) return false;
  if (p.wildcard) {
    if (u.host !== p.host && !u.host.endsWith(`.${p.host}`)) return false;
  } else if (u.host !== p.host) return false;
  if (p.port === undefined) {
    if (u.port !== DEFAULT_PORT[u.scheme]) return false;
  } else if (p.port !== "*" && p.port !== u.port) return false;
  if (p.path !== undefined && !globMatch(p.path, u.path)) return false;
  return true;
}

/** Higher is more specific: exact host over wildcard, longer host, explicit scheme/port, longer path. */
export function specificity(p: OriginPattern): number {
  return (p.wildcard ? 0 : 1_000_000) + p.host.length * 1000 + (p.path?.length ?? 0) * 2 + (p.schemes.length === 1 ? 1 : 0) + (typeof p.port === "number" ? 1 : 0);
}

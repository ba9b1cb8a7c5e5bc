// The person's proxy profiles: named ways for the whole browser to reach the network (direct, the
// system's settings, a fixed HTTP/HTTPS/SOCKS proxy with a bypass list, a PAC script URL), which of
// them is active, and whether agents may switch between them (off unless the person turns it on).
// Pure data and checks; the service worker stores and applies it (tools/proxystore.ts). Only the
// extension's own pages change it, never an agent or the daemon (SECURITY I-72).

export type ProxyKind = "direct" | "system" | "fixed" | "pac";
const PROXY_SCHEMES = ["http", "https", "socks4", "socks5"] as const;
export type ProxyScheme = (typeof PROXY_SCHEMES)[number];

export interface ProxyProfile {
  name: string;
  kind: ProxyKind;
  /** fixed: the proxy server. */
  scheme?: ProxyScheme;
  host?: string;
  port?: number;
  /** fixed: hosts that go direct, in Chrome's bypass syntax. */
  bypass?: string[];
  /** pac: an http(s) or data: URL of the PAC script. */
  pacUrl?: string;
}

export interface ProxySettings {
  profiles: ProxyProfile[];
  /** The name of the profile in force. */
  active: string;
  /** The person's switch: agents may call proxy_switch. Off by default. */
  agentMaySwitch: boolean;
}

/** Always present and never removable: the two profiles that need no settings. */
export const BUILTIN_PROFILES: readonly ProxyProfile[] = [
  { name: "system", kind: "system" },
  { name: "direct", kind: "direct" },
];

const MAX_PROFILES = 32;
const MAX_BYPASS = 100;
const MAX_PAC_URL = 8192;

export function defaultProxySettings(): ProxySettings {
  return { profiles: BUILTIN_PROFILES.map((p) => ({ ...p })), active: "system", agentMaySwitch: false };
}

/** A problem with a profile: the field it is in and what to fix, as the options page shows it. */
export interface ProfileProblem {
  field: "name" | "kind" | "scheme" | "host" | "port" | "bypass" | "pacUrl";
  message: string;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}$/;
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const HOSTNAME_RE = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6_RE = /^\[[0-9A-Fa-f:.]{2,45}\]$/;

/** A proxy server's host: a DNS name, an IPv4 address or a bracketed IPv6 address. */
export function hostProblem(host: unknown): string | null {
  if (typeof host !== "string" || host.trim() === "") return "the proxy host is empty: enter a host name or an IP address";
  const h = host.trim();
  if (h.length > 253) return "the proxy host is longer than 253 characters";
  if (/[\s/:@?#]/.test(h.replace(/^\[.*\]$/, "x"))) return `"${h}" is not a host: enter only the host (no scheme, port, path or user), e.g. proxy.example.com`;
  if (IPV4_RE.test(h) || IPV6_RE.test(h)) return null;
  if (/^[\d.]+$/.test(h)) return `"${h}" is not a valid IPv4 address`;
  if (!HOSTNAME_RE.test(h)) return `"${h}" is not a valid host name (letters, digits, hyphens and dots)`;
  return null;
}

function portProblem(port: unknown): string | null {
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) return "the port must be a whole number from 1 to 65535";
  return null;
}

// Chrome's bypass rules: <local>, <-loopback>, [scheme://]host-pattern[:port] where the pattern may
// hold * wildcards or start with a dot, and IP literals with an optional /prefix.
const BYPASS_HOST = "(?:\\*|\\.?(?:\\*\\.)?[A-Za-z0-9*](?:[A-Za-z0-9*-]*[A-Za-z0-9*])?(?:\\.[A-Za-z0-9*](?:[A-Za-z0-9*-]*[A-Za-z0-9*])?)*)";
const BYPASS_RE = new RegExp(`^(?:(?:https?|socks[45]?|ftp|wss?)://)?${BYPASS_HOST}(?::\\d{1,5})?$`);
const BYPASS_IP_RE = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\])(?:\/\d{1,3})?(?::\d{1,5})?$/;

/** One bypass entry in Chrome's syntax; the message names the entry. */
export function bypassProblem(entry: string): string | null {
  const e = entry.trim();
  if (e === "<local>" || e === "<-loopback>") return null;
  if (e.length > 253) return `bypass entry "${e.slice(0, 40)}…" is longer than 253 characters`;
  if (/^<.*>$/.test(e)) return `bypass entry "${e}" is unknown: only <local> and <-loopback> are special`;
  const ip = e.match(BYPASS_IP_RE);
  if (ip) {
    const prefix = /\/(\d+)/.exec(e.replace(/:\d+$/, ""));
    const max = e.startsWith("[") ? 128 : 32;
    if (prefix && Number(prefix[1]) > max) return `bypass entry "${e}": the prefix length must be at most ${max}`;
    if (!e.startsWith("[") && e.split(/[/:]/)[0]!.split(".").some((o) => Number(o) > 255)) return `bypass entry "${e}" is not a valid IPv4 address`;
    return null;
  }
  if (!BYPASS_RE.test(e)) {
    return `bypass entry "${e}" is not valid: use a host (example.com), a wildcard (*.example.com or .example.com), an IP or CIDR (10.0.0.0/8), optionally with a scheme or :port, or <local>`;
  }
  const port = /:(\d+)$/.exec(e);
  if (port && (Number(port[1]) < 1 || Number(port[1]) > 65535)) return `bypass entry "${e}": the port must be from 1 to 65535`;
  return null;
}

/** Splits what the person typed (commas, semicolons or new lines) into bypass entries. */
export function parseBypass(text: string): string[] {
  return text
    .split(/[,;\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** A PAC script URL: http(s) or data: only (never file:, javascript:, chrome: …). */
export function pacUrlProblem(url: unknown): string | null {
  if (typeof url !== "string" || url.trim() === "") return "the PAC URL is empty: enter an http(s) or data: URL of the PAC script";
  const u = url.trim();
  if (u.length > MAX_PAC_URL) return `the PAC URL is longer than ${MAX_PAC_URL} characters`;
  // A data: script may hold spaces; nothing may hold control characters (new lines included).
  if (/[\u0000-\u001f\u007f]/.test(u) || (!/^data:/i.test(u) && /\s/.test(u))) return "the PAC URL contains spaces or control characters";
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    return `"${u.slice(0, 80)}" is not a URL: enter an http(s) or data: URL, e.g. http://wpad.example.com/proxy.pac`;
  }
  if (parsed.protocol === "data:") {
    if (!/^data:[^,]*,./is.test(u)) return "the data: PAC URL has no script after the comma";
    return null;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `a PAC URL must be http:, https: or data:, not ${parsed.protocol}`;
  if (parsed.hostname === "") return "the PAC URL has no host";
  if (parsed.username || parsed.password) return "the PAC URL must not carry a user name or password";
  return null;
}

/** Every problem of a profile; empty when it can be saved and applied. */
export function profileProblems(p: unknown): ProfileProblem[] {
  const out: ProfileProblem[] = [];
  if (!p || typeof p !== "object") return [{ field: "name", message: "not a profile" }];
  const o = p as Record<string, unknown>;
  if (typeof o.name !== "string" || !NAME_RE.test(o.name)) {
    out.push({ field: "name", message: "the name must be 1 to 40 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit" });
  }
  switch (o.kind) {
    case "direct":
    case "system":
      break;
    case "fixed": {
      if (!PROXY_SCHEMES.includes(o.scheme as ProxyScheme)) out.push({ field: "scheme", message: `the scheme must be one of ${PROXY_SCHEMES.join(", ")}` });
      const h = hostProblem(o.host);
      if (h) out.push({ field: "host", message: h });
      const pp = portProblem(o.port);
      if (pp) out.push({ field: "port", message: pp });
      const by = o.bypass ?? [];
      if (!Array.isArray(by) || !by.every((b) => typeof b === "string")) out.push({ field: "bypass", message: "the bypass list must be a list of entries" });
      else if (by.length > MAX_BYPASS) out.push({ field: "bypass", message: `at most ${MAX_BYPASS} bypass entries` });
      else {
        for (const b of by as string[]) {
          const m = bypassProblem(b);
          if (m) {
            out.push({ field: "bypass", message: m });
            break;
          }
        }
      }
      break;
    }
    case "pac": {
      const m = pacUrlProblem(o.pacUrl);
      if (m) out.push({ field: "pacUrl", message: m });
      break;
    }
    default:
      out.push({ field: "kind", message: "the kind must be direct, system, fixed or pac" });
  }
  return out;
}

/** The profile with only its kind's fields, trimmed; call after profileProblems found none. */
function cleanProfile(p: ProxyProfile): ProxyProfile {
  const name = p.name.trim();
  switch (p.kind) {
    case "fixed":
      return { name, kind: "fixed", scheme: p.scheme as ProxyScheme, host: (p.host as string).trim(), port: p.port as number, bypass: (p.bypass ?? []).map((b) => b.trim()) };
    case "pac":
      return { name, kind: "pac", pacUrl: (p.pacUrl as string).trim() };
    default:
      return { name, kind: p.kind };
  }
}

export class ProxySettingsError extends Error {
  override name = "ProxySettingsError";
  constructor(
    message: string,
    readonly profile?: string,
    readonly field?: ProfileProblem["field"],
  ) {
    super(message);
  }
}

/**
 * Checks settings the person submits: every profile valid, names unique (case-insensitive), the
 * built-ins kept as they are, the active one existing. Throws ProxySettingsError naming the
 * profile and the field; a stored copy is read with readProxySettings instead.
 */
export function checkProxySettings(raw: unknown): ProxySettings {
  if (!raw || typeof raw !== "object") throw new ProxySettingsError("the proxy settings are not an object");
  const r = raw as Record<string, unknown>;
  const list = Array.isArray(r.profiles) ? r.profiles : [];
  if (list.length > MAX_PROFILES) throw new ProxySettingsError(`at most ${MAX_PROFILES} profiles`);
  const seen = new Set<string>();
  const profiles: ProxyProfile[] = [];
  for (const b of BUILTIN_PROFILES) {
    profiles.push({ ...b });
    seen.add(b.name);
  }
  for (const x of list) {
    const name = x && typeof x === "object" ? String((x as { name?: unknown }).name ?? "") : "";
    if (BUILTIN_PROFILES.some((b) => b.name === name.trim().toLowerCase())) continue; // the built-ins stay as they are
    const problems = profileProblems(x);
    if (problems.length) throw new ProxySettingsError(`profile "${name.slice(0, 40)}": ${problems[0]!.message}`, name, problems[0]!.field);
    const p = cleanProfile(x as ProxyProfile);
    const key = p.name.toLowerCase();
    if (seen.has(key)) throw new ProxySettingsError(`two profiles are named "${p.name}": names must differ`, p.name, "name");
    seen.add(key);
    profiles.push(p);
  }
  const active = typeof r.active === "string" && profiles.some((p) => p.name === r.active) ? r.active : "system";
  return { profiles, active, agentMaySwitch: r.agentMaySwitch === true };
}

/**
 * Reads the stored copy without judging it: an entry that is not even an object is dropped, the
 * rest kept as stored, so a profile that fails its checks is refused when switched to (and shown
 * as invalid in the options page) rather than silently vanishing.
 */
export function readProxySettings(raw: unknown): ProxySettings {
  const d = defaultProxySettings();
  if (!raw || typeof raw !== "object") return d;
  const r = raw as Record<string, unknown>;
  const stored = (Array.isArray(r.profiles) ? r.profiles : []).filter((x): x is ProxyProfile => !!x && typeof x === "object" && typeof (x as { name?: unknown }).name === "string");
  const profiles = [...d.profiles, ...stored.filter((p) => !BUILTIN_PROFILES.some((b) => b.name === p.name)).slice(0, MAX_PROFILES)];
  const active = typeof r.active === "string" && profiles.some((p) => p.name === r.active) ? r.active : "system";
  return { profiles, active, agentMaySwitch: r.agentMaySwitch === true };
}

/** chrome.proxy's value for a valid profile; undefined for `system`, which clears the extension's setting. */
export function chromeProxyConfig(p: ProxyProfile): chrome.proxy.ProxyConfig | undefined {
  switch (p.kind) {
    case "system":
      return undefined;
    case "direct":
      return { mode: "direct" };
    case "fixed":
      return {
        mode: "fixed_servers",
        rules: { singleProxy: { scheme: p.scheme as ProxyScheme, host: p.host as string, port: p.port as number }, bypassList: p.bypass ?? [] },
      };
    case "pac":
      return { mode: "pac_script", pacScript: { url: p.pacUrl as string, mandatory: true } };
  }
}

/** One line for the popup, the options page and proxy_profiles: what the profile does. */
export function describeProfile(p: ProxyProfile): string {
  switch (p.kind) {
    case "system":
      return "the system's proxy settings";
    case "direct":
      return "no proxy";
    case "fixed": {
      const by = p.bypass?.length ? `, bypass ${p.bypass.length} ${p.bypass.length === 1 ? "entry" : "entries"}` : "";
      return `${p.scheme}://${p.host}:${p.port}${by}`;
    }
    case "pac":
      return /^data:/i.test(p.pacUrl ?? "") ? `PAC script (data: URL, ${p.pacUrl?.length ?? 0} characters)` : `PAC script ${String(p.pacUrl).slice(0, 200)}`;
    default:
      return "unknown kind";
  }
}

// The person's policy: the origin allowlist with per-origin switches, act mode, the code-execution
// switches, the password switch and approval choices. Pure data and decisions; the service worker
// stores it in chrome.storage.local and only extension pages (options, popup) may change it — never
// the daemon, never an agent (SECURITY I-14…I-20).

import { matchParts, originOf, parsePattern, PatternError, specificity, urlParts, type OriginPattern } from "./pattern.js";

export type Choice = "allow" | "ask" | "deny";

/** Kinds of risky action the person can allow, ask about or deny, per origin. */
export const APPROVAL_KINDS = ["submit", "destructive_click", "new_origin", "evaluate", "upload", "download"] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

export const APPROVAL_LABELS: Record<ApprovalKind, string> = {
  submit: "Submit a form",
  destructive_click: "Click something the page marks destructive",
  new_origin: "Navigate to another origin",
  evaluate: "Run code (evaluate, fetch_in_page, invoke)",
  upload: "Upload a file",
  download: "Download a file",
};

export interface OriginRule {
  pattern: string;
  /** Act mode for this origin (write tools), in addition to the global switch. */
  act?: boolean;
  /** evaluate with `expression` (one expression, auto-returned). */
  evalExpression?: boolean;
  /** evaluate with `program` (an async function body: statements, side effects). */
  evalProgram?: boolean;
  /** fetch_in_page (requests with the page's cookies). */
  fetch?: boolean;
  /** fill/type/press_key may target a password field when the call also sets allowPassword. */
  allowPassword?: boolean;
  /** invoke: call a function the page already defines (SECURITY I-71). */
  invoke?: boolean;
  /** capture_start with sensitive: request headers (cookies) and bodies (SECURITY I-67). */
  captureSensitive?: boolean;
  /** cookies: names, flags and values of the origin's cookies (HttpOnly values withheld). */
  cookies?: boolean;
  /** With `cookies`, the values of cookies marked HttpOnly too (SECURITY I-68). */
  cookiesHttpOnly?: boolean;
  /** storage: localStorage/sessionStorage keys and values, IndexedDB database and store names. */
  storage?: boolean;
  approvals?: Partial<Record<ApprovalKind, Choice>>;
  /** console_tail and network_tail: the tab's console errors and fetch/XHR responses (text bodies included) are kept from the first call (SECURITY I-65). */
  observe?: boolean;
}

export interface Policy {
  version: 1;
  rules: OriginRule[];
  /** Global act mode: write tools on every allowed origin. */
  actMode: boolean;
  /**
   * Only for a dedicated profile started by `torii launch --permissive` (or a test rig): every
   * origin is allowed and act mode is on. Code execution and password fields stay off unless a
   * rule turns them on. Never set by the daemon after start-up.
   */
  permissive: boolean;
  approvals: Record<ApprovalKind, Choice>;
  approvalTimeoutMs: number;
}

const DEFAULT_APPROVALS: Record<ApprovalKind, Choice> = {
  submit: "ask",
  destructive_click: "ask",
  new_origin: "ask",
  evaluate: "ask",
  upload: "ask",
  download: "ask",
};

/**
 * How long a call waits for the person's answer. Kept well under the 60 s request timeout the
 * common MCP clients (the official SDKs, the Inspector) use by default, so the agent gets Torii's
 * own approval_timeout rather than its client's bare timeout; the rest of the call then has what
 * its one deadline leaves (tools/registry.ts callDeadline). SECURITY I-80.
 */
const DEFAULT_APPROVAL_TIMEOUT_MS = 30_000;
export const MAX_APPROVAL_TIMEOUT_MS = 45_000;

export function defaultPolicy(): Policy {
  return { version: 1, rules: [], actMode: false, permissive: false, approvals: { ...DEFAULT_APPROVALS }, approvalTimeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS };
}

/** The policy `torii launch --permissive` starts a dedicated profile with. */
export function permissivePolicy(): Policy {
  const allow = Object.fromEntries(APPROVAL_KINDS.map((k) => [k, "allow"])) as Record<ApprovalKind, Choice>;
  return { ...defaultPolicy(), actMode: true, permissive: true, approvals: allow };
}

function bool(v: unknown): boolean | undefined {
  return typeof v === "boolean" ? v : undefined;
}

function choice(v: unknown): Choice | undefined {
  return v === "allow" || v === "ask" || v === "deny" ? v : undefined;
}

/** Normalises stored or submitted data; drops rules whose pattern does not parse (fail closed). */
export function normalizePolicy(raw: unknown): Policy {
  const p = defaultPolicy();
  if (!raw || typeof raw !== "object") return p;
  const r = raw as Record<string, unknown>;
  p.actMode = r.actMode === true;
  p.permissive = r.permissive === true;
  if (typeof r.approvalTimeoutMs === "number" && Number.isFinite(r.approvalTimeoutMs)) {
    p.approvalTimeoutMs = Math.min(MAX_APPROVAL_TIMEOUT_MS, Math.max(1_000, Math.round(r.approvalTimeoutMs)));
  }
  const ap = (r.approvals ?? {}) as Record<string, unknown>;
  for (const k of APPROVAL_KINDS) p.approvals[k] = choice(ap[k]) ?? p.approvals[k];
  const seen = new Set<string>();
  for (const x of Array.isArray(r.rules) ? r.rules : []) {
    const rule = normalizeRule(x);
    if (!rule || seen.has(rule.pattern)) continue;
    seen.add(rule.pattern);
    p.rules.push(rule);
  }
  return p;
}

export function normalizeRule(x: unknown): OriginRule | null {
  if (!x || typeof x !== "object") return null;
  const o = x as Record<string, unknown>;
  if (typeof o.pattern !== "string") return null;
  try {
    parsePattern(o.pattern);
  } catch {
    return null;
  }
  const rule: OriginRule = { pattern: o.pattern.trim() };
  for (const k of ["act", "evalExpression", "evalProgram", "fetch", "allowPassword", "invoke", "captureSensitive", "observe", ...STORE_SWITCHES] as const) {
    const b = bool(o[k]);
    if (b !== undefined) rule[k] = b;
  }
  if (o.approvals && typeof o.approvals === "object") {
    const a: Partial<Record<ApprovalKind, Choice>> = {};
    for (const k of APPROVAL_KINDS) {
      const c = choice((o.approvals as Record<string, unknown>)[k]);
      if (c) a[k] = c;
    }
    if (Object.keys(a).length) rule.approvals = a;
  }
  return rule;
}

/** Validates a pattern typed by the person: the canonical error message, or null when it is fine. */
export function patternProblem(s: string): string | null {
  try {
    parsePattern(s);
    return null;
  } catch (e) {
    return e instanceof PatternError ? e.message : String(e);
  }
}

/** What the policy says about one URL. `rule` is undefined when the URL is not allowed. */
export interface Verdict {
  allowed: boolean;
  rule?: OriginRule;
  /** True when only the permissive switch let it through. */
  permissive?: boolean;
}

const compiled = new WeakMap<Policy, { rule: OriginRule; pat: OriginPattern }[]>();

function compile(p: Policy): { rule: OriginRule; pat: OriginPattern }[] {
  let c = compiled.get(p);
  if (!c) {
    c = [];
    for (const rule of p.rules) {
      try {
        c.push({ rule, pat: parsePattern(rule.pattern) });
      } catch {
        // an unparsable stored rule allows nothing
      }
    }
    c.sort((a, b) => specificity(b.pat) - specificity(a.pat));
    compiled.set(p, c);
  }
  return c;
}

const PERMISSIVE_SCHEMES = /^(https?|blob|data|about|file):/i;

/**
 * SECURITY I-15, I-36, I-40: a document judged by the origin it reports itself (`self.origin`): an
 * http(s) origin only (opaque "null", file:, data: never); its own URL when that URL is of the same
 * origin (so path rules apply), else the bare origin (about:blank, srcdoc, blob: documents), which a
 * path rule never matches. The worker's document checks and the effect guard use this one rule.
 */
export function judgeDocument(p: Policy, origin: string, url: string): Verdict {
  if (!/^https?:\/\/[^/?#]+$/.test(origin) || originOf(`${origin}/`) !== origin) return { allowed: false };
  const own = url !== "" && !/^blob:/i.test(url) && originOf(url) === origin ? url : `${origin}/`;
  return judgeUrl(p, own);
}

/**
 * SECURITY I-14/I-15: the most specific rule covering the URL, or not allowed. URLs without an
 * http(s) origin (data:, javascript:, file:, view-source:, about: …) are never allowed by a rule;
 * about:blank/srcdoc documents are judged by the origin they inherit (the caller resolves that).
 */
export function judgeUrl(p: Policy, url: string): Verdict {
  const parts = urlParts(url);
  if (parts) {
    for (const { rule, pat } of compile(p)) if (matchParts(pat, parts)) return { allowed: true, rule };
  }
  if (p.permissive && PERMISSIVE_SCHEMES.test(url) && !/^about:(?!blank|srcdoc)/i.test(url)) {
    return { allowed: true, rule: { pattern: "(permissive)" }, permissive: true };
  }
  return { allowed: false };
}

/** SECURITY I-16: write tools need act mode, globally or for the origin's rule. */
export function actAllowed(p: Policy, v: Verdict): boolean {
  if (!v.allowed) return false;
  return p.actMode || v.rule?.act === true;
}

export type EvalKind = "expression" | "program" | "fetch";

/** SECURITY I-17: code execution needs the origin's own switch, even in permissive mode. */
export function evalAllowed(v: Verdict, kind: EvalKind): boolean {
  if (!v.allowed || !v.rule) return false;
  if (kind === "expression") return v.rule.evalExpression === true;
  if (kind === "program") return v.rule.evalProgram === true;
  return v.rule.fetch === true;
}

/** SECURITY I-71: invoke needs the origin's own switch, even in permissive mode; evaluate's switches do not grant it. */
export function invokeAllowed(v: Verdict): boolean {
  return v.allowed && v.rule?.invoke === true;
}

/** The per-origin switches of the browser's stores; each is off unless the person sets it. */
const STORE_SWITCHES = ["cookies", "cookiesHttpOnly", "storage"] as const;
export type StoreSwitch = (typeof STORE_SWITCHES)[number];

/**
 * SECURITY I-68: reading an origin's cookies or storage needs that origin's own switch, even in
 * permissive mode (the permissive rule sets none); HttpOnly values need `cookiesHttpOnly` beside `cookies`.
 */
export function storeAllowed(v: Verdict, s: StoreSwitch): boolean {
  if (!v.allowed || !v.rule) return false;
  if (s === "cookiesHttpOnly") return v.rule.cookies === true && v.rule.cookiesHttpOnly === true;
  return v.rule[s] === true;
}

/** SECURITY I-65: console and network capture need the origin's own switch, even in permissive mode. */
export function observeAllowed(v: Verdict): boolean {
  return v.allowed && v.rule?.observe === true;
}

/** SECURITY I-18: a password field needs both the call's allowPassword and the origin's switch. */
export function passwordAllowed(v: Verdict, askedByCall: boolean): boolean {
  return askedByCall && v.allowed && v.rule?.allowPassword === true;
}

/**
 * SECURITY I-18: the password switch of the document that holds the field, judged by the origin
 * and URL that document reports itself (`self.origin`), never by its tab's: a frame of another
 * origin follows its own entry. False when the report is missing.
 */
export function documentAllowsPassword(p: Policy, doc: { origin?: unknown; url?: unknown }, askedByCall: boolean): boolean {
  if (typeof doc.origin !== "string" || typeof doc.url !== "string") return false;
  return passwordAllowed(judgeDocument(p, doc.origin, doc.url), askedByCall);
}

/** SECURITY I-67: a sensitive capture needs the origin's own switch, even in permissive mode. */
export function captureSensitiveAllowed(v: Verdict): boolean {
  return v.allowed && v.rule?.captureSensitive === true;
}

/** What a sensitive capture may keep of one request, by its destination's own entry. */
export interface CaptureKeeps {
  /** On the allowlist: its URL may be shown. */
  allowed: boolean;
  /** The capture switch: request headers (and, with the switches below, credentials and body). */
  sensitive: boolean;
  /** The request body: the switch network_tail's bodies need ("Console & network") beside the capture switch. */
  bodies: boolean;
  /** Cookie values: every one ("all", with HttpOnly values), those the page's script can read, or none (not even names). */
  cookies: "all" | "readable" | "none";
  /** Authorization values: a credential the page's script may never have seen (HTTP auth the browser adds), so the HttpOnly values switch. */
  credentials: boolean;
}

/**
 * SECURITY I-75: a capture honours every switch the matching read tool honours, judged by the
 * request's own URL: cookie values as `cookies` gives them (Cookies, HttpOnly values), bodies as
 * `network_tail` gives them (Console & network), Authorization with the HttpOnly values switch.
 */
export function captureKeeps(v: Verdict): CaptureKeeps {
  const sensitive = captureSensitiveAllowed(v);
  const httpOnly = sensitive && storeAllowed(v, "cookiesHttpOnly");
  return {
    allowed: v.allowed,
    sensitive,
    bodies: sensitive && observeAllowed(v),
    cookies: httpOnly ? "all" : sensitive && storeAllowed(v, "cookies") ? "readable" : "none",
    credentials: httpOnly,
  };
}

/** SECURITY I-19: the person's choice for a risky action on this origin. */
export function approvalChoice(p: Policy, v: Verdict, kind: ApprovalKind): Choice {
  if (!v.allowed) return "deny";
  return v.rule?.approvals?.[kind] ?? p.approvals[kind];
}

/** Adds (or replaces) a rule; throws PatternError for a bad pattern. */
export function withRule(p: Policy, rule: OriginRule): Policy {
  parsePattern(rule.pattern);
  const clean = normalizeRule(rule);
  if (!clean) throw new PatternError("bad rule");
  const rules = p.rules.filter((r) => r.pattern !== clean.pattern);
  rules.push(clean);
  return { ...p, rules };
}

export function withoutRule(p: Policy, pattern: string): Policy {
  return { ...p, rules: p.rules.filter((r) => r.pattern !== pattern) };
}

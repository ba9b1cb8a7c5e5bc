// The policy `torii launch` gives the dedicated profile it starts (--allow/--act/--code/--passwords/
// --approve or --policy FILE; SECURITY I-47), as the connect page receives it: base64url JSON in
// the fragment's `launch` parameter. Checked strictly — known fields only, each of its type, every
// pattern valid, no permissive switch — then normalised by normalizePolicy, which must keep every
// rule: a launch policy is used whole or not at all. The daemon's CLI makes the same checks
// (internal/cli/launchpolicy.go) so the person sees a bad file at once. Pure: no chrome.* here.

import { APPROVAL_KINDS, MAX_APPROVAL_TIMEOUT_MS, normalizePolicy, type Policy } from "./policy.js";
import { parsePattern, PatternError } from "./pattern.js";

/** The largest policy file the CLI sends (its JSON, before base64). */
const MAX_LAUNCH_POLICY_BYTES = 32 * 1024;
const MAX_RULES = 500;

export class LaunchPolicyError extends Error {
  override name = "LaunchPolicyError";
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(field ? `${field}: ${message}` : message);
  }
}

const TOP = new Set(["version", "rules", "actMode", "approvals", "approvalTimeoutMs", "permissive"]);
const RULE_BOOLS = ["act", "evalExpression", "evalProgram", "fetch", "allowPassword", "invoke", "observe"] as const;
const RULE = new Set<string>(["pattern", "approvals", ...RULE_BOOLS]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkApprovals(at: string, v: unknown): void {
  if (!isObject(v)) throw new LaunchPolicyError(at, 'must be an object of KIND: "allow" | "ask" | "deny"');
  for (const [k, c] of Object.entries(v)) {
    if (!(APPROVAL_KINDS as readonly string[]).includes(k)) throw new LaunchPolicyError(`${at}.${k}`, `unknown approval kind; one of ${APPROVAL_KINDS.join(", ")}`);
    if (c !== "allow" && c !== "ask" && c !== "deny") throw new LaunchPolicyError(`${at}.${k}`, 'must be "allow", "ask" or "deny"');
  }
}

/** Checks a launch policy and returns it normalised; throws LaunchPolicyError naming the field. */
export function checkLaunchPolicy(raw: unknown): Policy {
  if (!isObject(raw)) throw new LaunchPolicyError("", "the policy must be a JSON object");
  for (const k of Object.keys(raw)) if (!TOP.has(k)) throw new LaunchPolicyError(k, "unknown field");
  if (raw.version !== undefined && raw.version !== 1) throw new LaunchPolicyError("version", "must be 1");
  if (raw.permissive !== undefined && raw.permissive !== false) {
    throw new LaunchPolicyError("permissive", "a launch policy cannot switch the permissive policy on (that is --permissive)");
  }
  if (raw.actMode !== undefined && typeof raw.actMode !== "boolean") throw new LaunchPolicyError("actMode", "must be true or false");
  if (raw.approvalTimeoutMs !== undefined) {
    const ms = raw.approvalTimeoutMs;
    if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1_000 || ms > MAX_APPROVAL_TIMEOUT_MS) {
      throw new LaunchPolicyError("approvalTimeoutMs", `must be a whole number of milliseconds from 1000 to ${MAX_APPROVAL_TIMEOUT_MS}`);
    }
  }
  if (raw.approvals !== undefined) checkApprovals("approvals", raw.approvals);
  const rules = raw.rules ?? [];
  if (!Array.isArray(rules)) throw new LaunchPolicyError("rules", "must be an array of rules");
  if (rules.length > MAX_RULES) throw new LaunchPolicyError("rules", `at most ${MAX_RULES} rules`);
  const seen = new Set<string>();
  rules.forEach((r: unknown, i) => {
    const at = `rules[${i}]`;
    if (!isObject(r)) throw new LaunchPolicyError(at, "a rule must be an object with a pattern");
    for (const k of Object.keys(r)) if (!RULE.has(k)) throw new LaunchPolicyError(`${at}.${k}`, "unknown field");
    if (typeof r.pattern !== "string") throw new LaunchPolicyError(`${at}.pattern`, "missing, or not a string");
    try {
      parsePattern(r.pattern);
    } catch (e) {
      throw new LaunchPolicyError(`${at}.pattern`, e instanceof PatternError ? e.message : String(e));
    }
    const p = r.pattern.trim();
    if (seen.has(p)) throw new LaunchPolicyError(`${at}.pattern`, "listed twice");
    seen.add(p);
    for (const k of RULE_BOOLS) if (r[k] !== undefined && typeof r[k] !== "boolean") throw new LaunchPolicyError(`${at}.${k}`, "must be true or false");
    if (r.approvals !== undefined) checkApprovals(`${at}.approvals`, r.approvals);
  });
  const p = normalizePolicy(raw);
  // Belt and braces: normalisation drops what it cannot use; a launch policy must lose nothing.
  if (p.rules.length !== rules.length || p.permissive) throw new LaunchPolicyError("rules", "a rule could not be used");
  return p;
}

/** Decodes the fragment's `launch` parameter (base64url of the JSON); throws LaunchPolicyError. */
export function decodeLaunchPolicy(b64: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(b64) || b64.length > Math.ceil((MAX_LAUNCH_POLICY_BYTES * 4) / 3) + 4) {
    throw new LaunchPolicyError("", "the launch policy is not base64url, or too large");
  }
  let text: string;
  try {
    const bin = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((b64.length + 3) % 4));
    text = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    throw new LaunchPolicyError("", "the launch policy is not base64url UTF-8");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new LaunchPolicyError("", "the launch policy is not JSON");
  }
}

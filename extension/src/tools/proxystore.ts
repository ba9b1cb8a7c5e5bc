// The service worker's side of the proxy profiles: the stored settings (chrome.storage.local, key
// "proxy"), applying a profile with chrome.proxy (browser-wide: every tab, the person's own too),
// the audit record of each switch, and the messages the options page and the popup send. Agents
// reach only proxySettings (to list) and switchProfile (through proxy_switch, behind the person's
// switch the gate checks); nothing here lets them define or edit a profile (SECURITY I-72).

import { checkProxySettings, chromeProxyConfig, describeProfile, profileProblems, ProxySettingsError, readProxySettings, type ProxyProfile, type ProxySettings } from "../policy/proxy.js";
import { toolError, ToolError } from "./errors.js";
import { recordAudit } from "./auditlog.js";

export const PROXY_KEY = "proxy";

let cached: ProxySettings | undefined;
let loading: Promise<ProxySettings> | undefined;
// Switches and saves run one at a time, so the stored active profile is the one last applied.
let queue: Promise<unknown> = Promise.resolve();

function serial<T>(f: () => Promise<T>): Promise<T> {
  const run = queue.then(f, f);
  queue = run.catch(() => undefined);
  return run;
}

export async function proxySettings(): Promise<ProxySettings> {
  if (cached) return cached;
  loading ??= chrome.storage.local.get(PROXY_KEY).then((r) => {
    cached = readProxySettings(r[PROXY_KEY]);
    loading = undefined;
    return cached;
  });
  return loading;
}

/** SECURITY I-72: the person's switch, read by the gate for every proxy_switch call. */
export async function proxySwitchAllowed(): Promise<boolean> {
  return (await proxySettings()).agentMaySwitch === true;
}

async function store(s: ProxySettings): Promise<void> {
  await chrome.storage.local.set({ [PROXY_KEY]: s });
  cached = s;
}

/** Who can control the browser's proxy now, as chrome.proxy reports it. */
export type ProxyControl = "this_extension" | "available" | "other_extension" | "policy";

async function control(): Promise<ProxyControl> {
  const d = await chrome.proxy.settings.get({ incognito: false });
  switch (d.levelOfControl) {
    case "controlled_by_this_extension":
      return "this_extension";
    case "controllable_by_this_extension":
      return "available";
    case "controlled_by_other_extensions":
      return "other_extension";
    default:
      return "policy";
  }
}

/** Sets the browser's proxy to the profile and checks that Chrome took it. */
async function apply(p: ProxyProfile): Promise<void> {
  const before = await control();
  if (before === "other_extension" || before === "policy") throw controlledElsewhere(before);
  const value = chromeProxyConfig(p);
  // `system` hands the setting back: the browser uses what it would without Torii.
  if (value === undefined) await chrome.proxy.settings.clear({ scope: "regular" });
  else await chrome.proxy.settings.set({ value, scope: "regular" });
  const after = await control();
  if (value !== undefined && after !== "this_extension") throw controlledElsewhere(after);
}

function controlledElsewhere(c: ProxyControl): ToolError {
  const who = c === "policy" ? "the browser's enterprise policy" : "another extension";
  return toolError("proxy_controlled_elsewhere", `${who} controls this browser's proxy; Torii cannot change it`);
}

export interface SwitchResult {
  from: string;
  to: ProxyProfile;
}

/**
 * Makes the named profile the active one, for the whole browser. The profile is checked again
 * here, whatever the options page let through: a stored profile that fails its checks is refused
 * (profile_invalid) and the proxy stays as it was.
 */
export function switchProfile(name: string): Promise<SwitchResult> {
  return serial(async () => {
    const s = await proxySettings();
    const p = s.profiles.find((x) => x.name === name);
    if (!p) {
      throw toolError("invalid_argument", `no proxy profile named ${JSON.stringify(name.slice(0, 64))}; the person's profiles are: ${s.profiles.map((x) => x.name).join(", ")}`, "Call proxy_profiles and pass one of the names it lists.", { field: "name" });
    }
    const problems = profileProblems(p);
    if (problems.length) {
      throw toolError("profile_invalid", `proxy profile "${p.name}" is invalid (${problems[0]!.field}: ${problems[0]!.message}); nothing was changed`);
    }
    await apply(p);
    await store({ ...s, active: p.name });
    broadcast();
    return { from: s.active, to: p };
  });
}

/** The audit's words for a switch: profile names only, which the person chose (never an address). */
export function switchNote(from: string, to: string): string {
  return `proxy ${from} -> ${to}`;
}

function broadcast(): void {
  chrome.runtime.sendMessage({ type: "torii.proxy.changed" }).catch(() => undefined);
}

// ---------- messages from the extension's own pages ----------

export type ProxyRequest = { type: "torii.proxy.get" } | { type: "torii.proxy.save"; settings: unknown } | { type: "torii.proxy.switch"; name: string };

export interface ProxyView {
  settings: ProxySettings;
  /** Per profile name: what is wrong with it, for a stored profile that fails its checks. */
  invalid: Record<string, string>;
  descriptions: Record<string, string>;
  control: ProxyControl;
}

async function view(): Promise<ProxyView> {
  const settings = await proxySettings();
  const invalid: Record<string, string> = {};
  const descriptions: Record<string, string> = {};
  for (const p of settings.profiles) {
    const pr = profileProblems(p);
    if (pr.length) invalid[p.name] = `${pr[0]!.field}: ${pr[0]!.message}`;
    descriptions[p.name] = describeProfile(p);
  }
  return { settings, invalid, descriptions, control: await control() };
}

async function save(raw: unknown): Promise<void> {
  await serial(async () => {
    // Throws ProxySettingsError naming the profile and field: nothing is stored.
    const next = checkProxySettings(raw);
    const cur = await proxySettings();
    const was = cur.profiles.find((p) => p.name === cur.active);
    const now = next.profiles.find((p) => p.name === cur.active);
    if (!now) throw new ProxySettingsError(`"${cur.active}" is the active profile: switch to another one before removing it`, cur.active, "name");
    next.active = cur.active;
    // The active profile edited: the browser follows the new definition at once.
    if (was && JSON.stringify(was) !== JSON.stringify(now)) await apply(now);
    await store(next);
  });
  broadcast();
}

async function personSwitch(name: string): Promise<void> {
  const t0 = Date.now();
  try {
    const r = await switchProfile(name);
    recordAudit({ ts: t0, tool: "proxy_switch", session: "person", origin: "", outcome: "ok", ms: Date.now() - t0, detail: switchNote(r.from, r.to.name) });
  } catch (e) {
    recordAudit({ ts: t0, tool: "proxy_switch", session: "person", origin: "", outcome: "error", ...(e instanceof ToolError ? { code: e.code } : {}), ms: Date.now() - t0 });
    throw e;
  }
}

async function handle(m: ProxyRequest): Promise<unknown> {
  switch (m.type) {
    case "torii.proxy.get":
      return view();
    case "torii.proxy.save":
      await save(m.settings);
      return view();
    case "torii.proxy.switch":
      await personSwitch(String(m.name));
      return view();
  }
}

let installed = false;

export function installProxy(): void {
  if (installed) return;
  installed = true;
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && changes[PROXY_KEY]) cached = readProxySettings(changes[PROXY_KEY].newValue);
  });
  chrome.runtime.onMessage.addListener((msg: unknown, sender, sendResponse: (r: unknown) => void) => {
    const type = msg && typeof msg === "object" ? (msg as { type?: unknown }).type : undefined;
    if (type !== "torii.proxy.get" && type !== "torii.proxy.save" && type !== "torii.proxy.switch") return false;
    // SECURITY I-72: only the extension's own pages (options, popup); never a content script, a
    // web page, another extension or the link.
    if (sender.id !== chrome.runtime.id || !sender.url?.startsWith(self.location.origin + "/")) return false;
    handle(msg as ProxyRequest).then(
      (r) => sendResponse({ ok: true, ...(r as object) }),
      (e: unknown) =>
        sendResponse({
          ok: false,
          error: e instanceof Error ? e.message : String(e),
          ...(e instanceof ProxySettingsError ? { profile: e.profile, field: e.field } : {}),
        }),
    );
    return true;
  });
}

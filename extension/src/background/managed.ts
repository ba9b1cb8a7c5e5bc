// The managed browser's start-up policy: `torii launch --permissive`, or `--allow …`/`--policy FILE`
// (SECURITY I-14, I-47). The connect page hands it over with the one-time secret; it is applied
// only when all of these hold:
// - the connect that request started has connected (the managed pairing with the secret, or the
//   signed reconnect of a managed profile torii just started again);
// - the request came within the first LAUNCH_WINDOW_MS of this browser run, and is the first one:
//   a connect page opened later in a running browser (a second `torii launch`, anything holding a
//   fresh secret) changes nothing — the running browser keeps its policy;
// - the profile is a managed one: its first connection was such a managed launch, in an unpacked
//   extension (how `torii launch` loads it). The person's own Chrome, whose first connection was
//   the person pairing (or whose extension comes from the store), never takes a launch policy; its
//   policy changes only in the extension's own pages.

import type { LinkState } from "../shared/messages.js";
import { checkLaunchPolicy } from "../policy/launch.js";
import type { Policy } from "../policy/policy.js";
import { applyLaunchPolicy } from "../tools/safety.js";
import { markHeadlessRun } from "./unattended.js";
import { markLaunchViewport, type Viewport } from "./viewport.js";

/** chrome.storage.local: true once the profile's first connection was a managed launch, false when it was not. */
const MANAGED_KEY = "torii_managed_profile";
/** chrome.storage.session (this browser run): when it started, and whether its launch policy was taken. */
const RUN_KEY = "torii_browser_run";
/** The one-time secret's lifetime: a launch policy comes with the browser's start, or never. */
const LAUNCH_WINDOW_MS = 60_000;

interface Run {
  startedAt: number;
  taken: boolean;
}

interface Pending {
  policy: "permissive" | Policy | undefined;
  /** `torii launch` started this run headless (SECURITY I-80). */
  headless: boolean;
  /** The agent tabs' viewport the launch asked for (viewport.ts). */
  viewport: Viewport | undefined;
  until: number;
}

let pending: Pending | undefined;
let run: Promise<Run> | undefined;

/** This browser run's record: created by the first worker that runs in it (storage.session ends with the browser). */
function browserRun(): Promise<Run> {
  run ??= chrome.storage.session.get(RUN_KEY).then(async (r) => {
    const v = r[RUN_KEY] as Run | undefined;
    if (v && typeof v.startedAt === "number") return v;
    const fresh: Run = { startedAt: Date.now(), taken: false };
    await chrome.storage.session.set({ [RUN_KEY]: fresh });
    return fresh;
  });
  return run;
}

/**
 * Called at the worker's start, so the browser run is dated from then, not from the first request.
 * Resolves once it is recorded (the worker need not wait).
 */
export function noteBrowserRun(): Promise<void> {
  return browserRun().then(
    () => undefined,
    () => undefined,
  );
}

/**
 * The connect page's torii.connect. Throws LaunchPolicyError for a policy that cannot be used
 * (then nothing is paired); otherwise remembers what to apply once the link connects.
 */
export async function launchRequested(req: { policy?: "permissive"; launchPolicy?: unknown; headless?: true; viewport?: Viewport }): Promise<void> {
  pending = undefined;
  const policy = req.launchPolicy !== undefined ? checkLaunchPolicy(req.launchPolicy) : req.policy;
  const r = await browserRun();
  const now = Date.now();
  // Only the first managed connect of a browser run, right after it started, may bring a policy.
  const first = !r.taken && now - r.startedAt <= LAUNCH_WINDOW_MS;
  if (first) {
    r.taken = true;
    await chrome.storage.session.set({ [RUN_KEY]: r });
  } else if (policy !== undefined) {
    console.warn("torii: a launch policy came after this browser started; the policy stays as it is");
  }
  pending = { policy: first ? policy : undefined, headless: first && req.headless === true, viewport: first ? req.viewport : undefined, until: now + LAUNCH_WINDOW_MS };
}

/** Every link state change: applies a pending launch policy once connected; dates the profile's first connection. Resolves when that is done. */
export function linkChanged(state: LinkState): Promise<void> {
  if (state.status !== "connected") return Promise.resolve();
  const p = pending;
  pending = undefined;
  return settle(p).catch((e: unknown) => console.warn("torii: launch policy not applied", e));
}

async function settle(p: Pending | undefined): Promise<void> {
  const launching = p !== undefined && Date.now() < p.until;
  const managed = await managedProfile(launching);
  if (!launching || (!p.policy && !p.headless && !p.viewport)) return;
  if (!managed) {
    console.warn("torii: launch settings (a policy, headless, a window size) were offered to a profile torii did not create; ignored");
    return;
  }
  // SECURITY I-80: recorded before the policy lands, so a call the policy lets through already
  // finds it; it can only make approvals refuse at once, never let one through.
  if (p.headless) await markHeadlessRun();
  if (p.viewport) await markLaunchViewport(p.viewport);
  if (p.policy) await applyLaunchPolicy(p.policy);
}

/** Whether this profile is a managed one; its first connection decides, once. */
async function managedProfile(launching: boolean): Promise<boolean> {
  const r = await chrome.storage.local.get(MANAGED_KEY);
  const v: unknown = r[MANAGED_KEY];
  if (typeof v === "boolean") return v;
  const self = launching ? await chrome.management.getSelf().catch(() => undefined) : undefined;
  const managed = launching && self?.installType === "development";
  await chrome.storage.local.set({ [MANAGED_KEY]: managed });
  return managed;
}

/** Whether this profile is one torii launched (its first connection was a managed launch). */
export async function isManagedProfile(): Promise<boolean> {
  const r = await chrome.storage.local.get(MANAGED_KEY);
  return r[MANAGED_KEY] === true;
}

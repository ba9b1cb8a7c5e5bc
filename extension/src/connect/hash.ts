// Parses the managed-launch fragment `#daemon=<ws url>&otp=<secret>[&policy=permissive | &launch=<policy>][&headless=1][&viewport=WxH]`.

import { parseViewport, type Viewport } from "../background/viewport.js";
import { checkLaunchPolicy, decodeLaunchPolicy, LaunchPolicyError } from "../policy/launch.js";

export interface LaunchParams {
  daemonUrl: string;
  otp: string;
  /** `torii launch --permissive`: a dedicated profile starts with the permissive policy. */
  policy?: "permissive";
  /**
   * `torii launch --allow …` or `--policy FILE`: the policy the dedicated profile starts with, as
   * sent (the worker checks it strictly before anything is paired; SECURITY I-47).
   */
  launchPolicy?: unknown;
  /** `torii launch` started this browser headless: no one can see an approval window (SECURITY I-80). */
  headless?: true;
  /** `torii launch --window-size W,H` (1280×720 headless by default): the agent tabs' viewport. */
  viewport?: Viewport;
}

/** The fragment's parameters; null without a daemon and secret. Throws LaunchPolicyError for a policy that cannot be used. */
export function parseLaunchHash(hash: string): LaunchParams | null {
  const p = new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash);
  const daemonUrl = p.get("daemon") ?? "";
  const otp = p.get("otp") ?? "";
  if (daemonUrl === "" || otp === "") return null;
  const out: LaunchParams = { daemonUrl, otp };
  if (p.get("policy") === "permissive") out.policy = "permissive";
  if (p.get("headless") === "1") out.headless = true;
  const viewport = parseViewport(p.get("viewport"));
  if (viewport) out.viewport = viewport;
  const launch = p.get("launch");
  if (launch !== null) {
    if (out.policy) throw new LaunchPolicyError("", "a launch policy and the permissive policy at once");
    const raw = decodeLaunchPolicy(launch);
    checkLaunchPolicy(raw); // refused here already, so nothing is paired for a policy that cannot be used
    out.launchPolicy = raw;
  }
  return out;
}

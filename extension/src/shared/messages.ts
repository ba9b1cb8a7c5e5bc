// Messages between extension pages (popup, connect page) and the service worker, over
// chrome.runtime messaging. Pages send a Request and get a Response; the worker broadcasts
// every state change as a StateMessage.

import { isViewport, type Viewport } from "../background/viewport.js";

export type LinkStatus = "disconnected" | "connecting" | "pairing" | "authenticating" | "connected" | "paused" | "error";

export interface LinkState {
  status: LinkStatus;
  /** Human-readable why, e.g. "revoked — pair again"; empty when there is nothing to say. */
  reason: string;
  deviceName: string;
  /** Empty when not paired. */
  deviceId: string;
  daemonUrl: string;
  /** The 6-digit code while status is "pairing" and the person has to compare it; else empty. */
  pairingCode: string;
  paused: boolean;
  paired: boolean;
}

export type Request =
  | { type: "torii.getState" }
  | { type: "torii.pair"; daemonUrl?: string }
  | { type: "torii.unpair" }
  | { type: "torii.setPaused"; paused: boolean }
  | { type: "torii.setDeviceName"; name: string }
  | { type: "torii.setDaemonUrl"; url: string }
  | { type: "torii.connect"; daemonUrl: string; otp: string; policy?: "permissive"; launchPolicy?: unknown; headless?: true; viewport?: Viewport };

export type Response = { ok: true; state: LinkState } | { ok: false; error: string; state?: LinkState };

export interface StateMessage {
  type: "torii.state";
  state: LinkState;
}

const REQUEST_TYPES: ReadonlySet<string> = new Set([
  "torii.getState",
  "torii.pair",
  "torii.unpair",
  "torii.setPaused",
  "torii.setDeviceName",
  "torii.setDaemonUrl",
  "torii.connect",
]);

/** Narrows an untrusted runtime message to a well-formed Request, or returns null. */
export function parseRequest(msg: unknown): Request | null {
  if (typeof msg !== "object" || msg === null) return null;
  const m = msg as Record<string, unknown>;
  if (typeof m.type !== "string" || !REQUEST_TYPES.has(m.type)) return null;
  switch (m.type) {
    case "torii.getState":
    case "torii.unpair":
      return { type: m.type };
    case "torii.pair":
      if (m.daemonUrl === undefined) return { type: "torii.pair" };
      return typeof m.daemonUrl === "string" ? { type: "torii.pair", daemonUrl: m.daemonUrl } : null;
    case "torii.setPaused":
      return typeof m.paused === "boolean" ? { type: "torii.setPaused", paused: m.paused } : null;
    case "torii.setDeviceName":
      return typeof m.name === "string" ? { type: "torii.setDeviceName", name: m.name } : null;
    case "torii.setDaemonUrl":
      return typeof m.url === "string" ? { type: "torii.setDaemonUrl", url: m.url } : null;
    case "torii.connect": {
      if (typeof m.daemonUrl !== "string" || typeof m.otp !== "string") return null;
      // A launch policy is an object (checked strictly by the worker, SECURITY I-47); not with permissive.
      const lp = m.launchPolicy;
      if (lp !== undefined && (typeof lp !== "object" || lp === null || Array.isArray(lp) || m.policy !== undefined)) return null;
      if (m.headless !== undefined && m.headless !== true) return null;
      if (m.viewport !== undefined && !isViewport(m.viewport)) return null;
      const launch = {
        ...(lp !== undefined ? { launchPolicy: lp } : {}),
        ...(m.headless === true ? { headless: true as const } : {}),
        ...(m.viewport !== undefined ? { viewport: { width: m.viewport.width, height: m.viewport.height } } : {}),
      };
      if (m.policy === "permissive") return { type: "torii.connect", daemonUrl: m.daemonUrl, otp: m.otp, policy: "permissive", ...launch };
      return m.policy === undefined ? { type: "torii.connect", daemonUrl: m.daemonUrl, otp: m.otp, ...launch } : null;
    }
    default:
      return null;
  }
}

export function isStateMessage(msg: unknown): msg is StateMessage {
  return typeof msg === "object" && msg !== null && (msg as { type?: unknown }).type === "torii.state";
}

export class InvalidDaemonUrlError extends Error {
  override name = "InvalidDaemonUrlError";
}

/** The daemon is reached only over ws:// or wss://; anything else is refused before a socket opens. */
export function validateDaemonUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    throw new InvalidDaemonUrlError(`not a URL: ${url}`);
  }
  if (u.protocol !== "ws:" && u.protocol !== "wss:") {
    throw new InvalidDaemonUrlError("the daemon address must start with ws:// or wss://");
  }
  if (u.username || u.password) throw new InvalidDaemonUrlError("the daemon address must not carry credentials");
  // SECURITY I-99: off this machine the link carries the pairing and every agent's call; only
  // TLS keeps them from the network, so plaintext is for loopback alone.
  if (u.protocol === "ws:" && !isLoopbackHost(u.hostname)) {
    throw new InvalidDaemonUrlError(
      `ws:// is only for this machine (localhost, 127.x.x.x, ::1); a gateway on ${u.hostname} needs wss://${u.host}${u.pathname}`,
    );
  }
  u.hash = "";
  return u.toString();
}

/** localhost, 127.0.0.0/8 and ::1, as URL parsing leaves them (IPv6 in brackets). */
function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost" || h === "[::1]") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m.slice(1).every((x) => Number(x) <= 255);
}

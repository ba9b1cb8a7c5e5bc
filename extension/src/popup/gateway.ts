// The popup's gateway line: which daemon or team gateway this browser is linked to (or trying to
// reach), always shown, so a person can tell their browser answers to the gateway they expect.

import type { LinkState } from "../shared/messages.js";

/** One line naming the gateway's host (SECURITY I-99). */
export function gatewayLine(s: Pick<LinkState, "status" | "daemonUrl">): string {
  let host: string;
  try {
    host = new URL(s.daemonUrl).host;
  } catch {
    host = "";
  }
  if (host === "") return "Gateway: none set";
  switch (s.status) {
    case "connected":
      return `Connected to ${host}`;
    case "paused":
      return `Connected to ${host} (paused)`;
    case "connecting":
    case "authenticating":
    case "pairing":
      return `Connecting to ${host}`;
    default:
      return `Gateway: ${host} (not connected)`;
  }
}

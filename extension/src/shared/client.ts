// Page side of the worker messaging: typed request/response and state subscription.

import { isStateMessage, type LinkState, type Request, type Response } from "./messages.js";

class WorkerError extends Error {
  override name = "WorkerError";
}

export async function send(req: Request): Promise<LinkState> {
  const res = (await chrome.runtime.sendMessage(req)) as Response | undefined;
  if (!res) throw new WorkerError("the extension's service worker did not answer");
  if (!res.ok) throw new WorkerError(res.error);
  return res.state;
}

export function onState(fn: (s: LinkState) => void): void {
  chrome.runtime.onMessage.addListener((msg: unknown) => {
    if (isStateMessage(msg)) fn(msg.state);
    return false;
  });
}

export const STATUS_WORDS: Record<LinkState["status"], string> = {
  disconnected: "Not connected",
  connecting: "Connecting…",
  pairing: "Pairing…",
  authenticating: "Authenticating…",
  connected: "Connected",
  paused: "Paused",
  error: "Error",
};

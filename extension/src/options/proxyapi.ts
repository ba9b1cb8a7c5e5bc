// Page side of the proxy-profile messages (options page, popup); the worker answers only the
// extension's own pages (tools/proxystore.ts, SECURITY I-72).

import type { ProfileProblem, ProxySettings } from "../policy/proxy.js";

export interface ProxyView {
  settings: ProxySettings;
  invalid: Record<string, string>;
  descriptions: Record<string, string>;
  control: "this_extension" | "available" | "other_extension" | "policy";
}

/** A refusal from the worker, with the field to fix when a profile was at fault. */
class ProxyPageError extends Error {
  constructor(
    message: string,
    readonly field?: ProfileProblem["field"],
  ) {
    super(message);
  }
}

async function call(msg: Record<string, unknown>): Promise<ProxyView> {
  const r = (await chrome.runtime.sendMessage(msg)) as ({ ok: boolean; error?: string; field?: ProfileProblem["field"] } & ProxyView) | undefined;
  if (!r) throw new ProxyPageError("the extension's service worker did not answer");
  if (!r.ok) throw new ProxyPageError(r.error ?? "failed", r.field);
  return { settings: r.settings, invalid: r.invalid, descriptions: r.descriptions, control: r.control };
}

export const getProxy = (): Promise<ProxyView> => call({ type: "torii.proxy.get" });
export const saveProxy = (settings: ProxySettings): Promise<ProxyView> => call({ type: "torii.proxy.save", settings });
export const switchProxy = (name: string): Promise<ProxyView> => call({ type: "torii.proxy.switch", name });

export function onProxyChanged(fn: () => void): void {
  chrome.runtime.onMessage.addListener((msg: unknown) => {
    if (msg && typeof msg === "object" && (msg as { type?: unknown }).type === "torii.proxy.changed") fn();
    return false;
  });
}

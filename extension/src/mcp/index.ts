// Loads the browser tools into the service worker: registers the link's torii/tools/* handlers (the
// daemon's direct calls) and the mcp/* adapter for foreign ACP hosts on the link's JSON-RPC
// registry, and wires the tools' chrome.* listeners and gate. Imported once by
// background/index.ts; every listener is registered synchronously at import (MV3 wake-up rule).

import { isManagedProfile } from "../background/managed.js";
import { registerHandler } from "../background/rpc.js";
import { installDebugger } from "../cdp/debugger.js";
import { installEmulation } from "../cdp/emulation.js";
import { installBrowser } from "../tools/browser.js";
import { setGateState } from "../tools/gate.js";
import { toolError } from "../tools/errors.js";
import { abortAll, callTool, listTools, setAuditSink } from "../tools/registry.js";
import { approvals, getPolicy, installSafety, policyEnv } from "../tools/safety.js";
import { recordAudit } from "../tools/auditlog.js";
import { installDownloads } from "../tools/downloads.js";
import { installProxy } from "../tools/proxystore.js";
import { installPreload } from "../tools/preload.js";
import { installGuardLink } from "../tools/effects.js";
import { daemonConnected, installOwnership, sessionEnded } from "../tools/ownership/lifecycle.js";
import { installSessionMessages } from "../tools/ownership/popup.js";
import { McpProvider } from "./provider.js";
import { ToolCalls } from "../background/toolcalls.js";
import { witnessCallDone } from "../background/auditwitness.js";
import { installSecrets } from "../tools/secrets.js";
import { installSecretNet } from "../tools/secret-net.js";
import { endSessionCaptures, installCapture } from "../tools/capture/listen.js";
import { installObserve, stopAllCaptures, stopSessionCaptures } from "../tools/observe/capture.js";

installDebugger();
installEmulation();
installBrowser();
installSafety();
installGuardLink();
installSecrets();
installSecretNet();
installOwnership();
installDownloads({ policy: getPolicy, ask: (req, ms) => approvals.ask(req, ms) });
installPreload(getPolicy);
installSessionMessages();
installProxy();
setAuditSink((e) => {
  recordAudit(e);
  witnessCallDone();
});
installCapture(getPolicy);
installObserve();

// Paused state and the declared serverId live in chrome.storage.local (background/state.ts).
let paused: boolean | undefined;
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && changes.paused) {
    paused = changes.paused.newValue === true;
    // SECURITY I-20: pausing stops every call in flight at once, not only the next ones.
    if (paused) abortAll(toolError("paused", "Torii was paused by the person while this call ran"));
  }
});
setGateState({
  paused: async () => {
    if (paused === undefined) paused = (await chrome.storage.local.get("paused")).paused === true;
    return paused;
  },
  env: policyEnv,
});

const serverId = async () => {
  const v = (await chrome.storage.local.get("serverId")).serverId;
  return typeof v === "string" ? v : "";
};

new ToolCalls({
  listTools,
  callTool,
  sessionEnded: (id, closeTabs, closeManagedTabs) => {
    // SECURITY I-65: what was captured for a session ends with it.
    stopSessionCaptures(id);
    // An agent's tabs in a browser torii launched close with its session unless the person keeps
    // them (broker.keepManagedTabs); in the person's own browser only broker.closeTabsOnEnd does.
    const close = closeTabs ? true : closeManagedTabs ? isManagedProfile() : false;
    void sessionEnded(id, close);
    // SECURITY I-67: nothing a session captured outlives it.
    void endSessionCaptures(id);
  },
  connected: () => {
    stopAllCaptures();
    void daemonConnected();
  },
}).install(registerHandler);

new McpProvider({ serverId, version: chrome.runtime.getManifest().version, listTools, callTool }).install(registerHandler);

// Service worker entry: wires the link to Chrome (storage, IndexedDB, alarms, messaging).
// Every listener is registered synchronously at top level so a worker woken by an event
// (alarm, message, start-up) receives it.

import { parseRequest, type LinkState, type Request, type Response, type StateMessage } from "../shared/messages.js";
import { IndexedDbIdentityStore } from "./identity.js";
import { Link } from "./link.js";
import { setFileRequester } from "../tools/files.js";
import { browserSocket } from "./socket.js";
import { SettingsStore, TicketStore, type KV } from "./state.js";
import "../mcp/index.js"; // the browser tools: the daemon's direct calls on the link, and the MCP-over-ACP adapter
import { launchRequested, linkChanged, noteBrowserRun } from "./managed.js";
import { installPanel } from "./panel.js";
import { witnessConnected } from "./auditwitness.js";

const KEEPALIVE_ALARM = "torii.keepalive";

const storage: KV = {
  get: (keys) => chrome.storage.local.get(keys),
  set: (items) => chrome.storage.local.set(items),
  remove: (keys) => chrome.storage.local.remove(keys),
};

// The reconnect ticket's area (SECURITY I-57): survives a stopped worker, ends with the browser, and
// stays out of content scripts' reach (its default access level, which we never widen).
const sessionArea: KV = {
  get: (keys) => chrome.storage.session.get(keys),
  set: (items) => chrome.storage.session.set(items),
  remove: (keys) => chrome.storage.session.remove(keys),
};

type UAData = { platform?: string };
const platform = (navigator as Navigator & { userAgentData?: UAData }).userAgentData?.platform ?? navigator.platform;

// `torii launch --permissive` / `--allow …` / `--policy FILE`: applied only once the managed connect
// with its one-time secret has connected, in a managed profile, right after the browser started
// (SECURITY I-14, I-47; background/managed.ts).
void noteBrowserRun();

function broadcast(state: LinkState): void {
  void linkChanged(state);
  const msg: StateMessage = { type: "torii.state", state };
  // No page open is the common case; the rejection only says so.
  chrome.runtime.sendMessage(msg).catch(() => undefined);
}

export const link = new Link({
  settings: new SettingsStore(storage, platform),
  tickets: new TicketStore(sessionArea),
  identity: new IndexedDbIdentityStore(),
  openSocket: browserSocket,
  origin: self.location.origin,
  clientInfo: { name: "torii-extension", version: chrome.runtime.getManifest().version },
  onState: broadcast,
  log: (m) => console.info(m),
  onConnected: (daemonId) => witnessConnected(daemonId, (m, p) => link.request(m, p)),
});

// The side panel's port (torii.panel) bridged to the link.
installPanel(link);

// Tools hand the bytes they save to the daemon over the link (tools/files.ts, SECURITY I-66).
setFileRequester((method, params, ms) => link.request(method, params, ms));

// Start resuming the link at once; the listeners below wait for this before touching it.
const started = link.start().catch((e: unknown) => {
  console.error("torii: link failed to start", e);
});

async function handle(req: Request): Promise<LinkState> {
  switch (req.type) {
    case "torii.getState":
      return link.state();
    case "torii.pair":
      return link.pair(req.daemonUrl);
    case "torii.unpair":
      return link.unpair();
    case "torii.setPaused":
      return link.setPaused(req.paused);
    case "torii.setDeviceName":
      return link.setDeviceName(req.name);
    case "torii.setDaemonUrl":
      return link.setDaemonUrl(req.url);
    case "torii.connect":
      await launchRequested(req);
      return link.connectManaged(req.daemonUrl, req.otp);
  }
}

chrome.runtime.onMessage.addListener((msg: unknown, sender, sendResponse: (r: Response) => void) => {
  // Only our own pages may drive the link; content scripts and other extensions may not.
  if (sender.id !== chrome.runtime.id || (sender.url !== undefined && !sender.url.startsWith(self.location.origin + "/"))) {
    return false;
  }
  const req = parseRequest(msg);
  if (!req) return false; // not ours (e.g. our own torii.state broadcast)
  started
    .then(() => handle(req))
    .then(
      (state) => sendResponse({ ok: true, state }),
      (e: unknown) => sendResponse({ ok: false, error: e instanceof Error ? e.message : String(e), state: link.state() }),
    );
  return true; // the response is sent asynchronously
});

// Backstop: wakes a worker Chrome killed and reconnects; the 20 s pings keep a live one awake.
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === KEEPALIVE_ALARM) void started.then(() => link.kick());
});
void chrome.alarms.get(KEEPALIVE_ALARM).then((a) => {
  if (!a) void chrome.alarms.create(KEEPALIVE_ALARM, { periodInMinutes: 0.5 });
});

chrome.runtime.onStartup.addListener(() => void started.then(() => link.kick()));

// Managed launch opens connect.html from the browser's command line, which Chrome blocks
// (ERR_BLOCKED_BY_CLIENT) because it navigates before a --load-extension extension is enabled.
// Reloading our own connect tabs once the worker runs loads the page with its #daemon=…&otp=…
// fragment intact; connect.ts clears the fragment after reading it, so a second reload is inert.
void chrome.tabs.query({ url: chrome.runtime.getURL("connect.html") }).then((tabs) => {
  for (const t of tabs) if (t.id !== undefined) void chrome.tabs.reload(t.id);
});

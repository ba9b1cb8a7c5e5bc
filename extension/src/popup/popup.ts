// Popup: shows the link state and drives pairing, pause and settings through the worker.
// Also works as a normal tab (chrome-extension://<id>/popup.html), which the e2e tests use.

import { onState, send, STATUS_WORDS } from "../shared/client.js";
import type { LinkState, Request } from "../shared/messages.js";
import { gatewayLine } from "./gateway.js";

function el<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`popup.html lacks #${id}`);
  return e as T;
}

const statusEl = el("status");
const dotEl = el("dot");
const reasonEl = el("reason");
const gatewayEl = el("gateway");
const pairingEl = el("pairing");
const codeEl = el("code");
const pairBtn = el<HTMLButtonElement>("pair");
const repairBtn = el<HTMLButtonElement>("repair");
const cancelBtn = el<HTMLButtonElement>("cancel-pair");
const openPanelBtn = el<HTMLButtonElement>("open-panel");
const unpairBtn = el<HTMLButtonElement>("unpair");
const pauseBox = el<HTMLInputElement>("pause");
const nameInput = el<HTMLInputElement>("device-name");
const urlInput = el<HTMLInputElement>("daemon-url");
const errorEl = el("error");

function render(s: LinkState): void {
  statusEl.textContent = STATUS_WORDS[s.status];
  dotEl.dataset.status = s.status;
  document.body.dataset.status = s.status;
  reasonEl.textContent = s.reason;
  gatewayEl.textContent = gatewayLine(s);
  gatewayEl.title = s.daemonUrl;
  const showCode = s.status === "pairing" && s.pairingCode !== "";
  pairingEl.hidden = !showCode;
  codeEl.textContent = showCode ? s.pairingCode : "";
  pauseBox.checked = s.paused;
  unpairBtn.disabled = !s.paired && s.status !== "pairing";
  // One primary action for the state: pair when unpaired, the chat once connected; re-pairing
  // and unpairing stay in the settings, never the first thing offered to a connected browser.
  const pairing = s.status === "pairing";
  const connected = s.status === "connected" || (s.status === "paused" && s.paired);
  pairBtn.hidden = pairing || connected;
  pairBtn.textContent = s.paired ? "Pair again" : "Pair with the daemon";
  pairBtn.className = s.paired ? "secondary" : "primary";
  cancelBtn.hidden = !pairing;
  openPanelBtn.hidden = !connected;
  repairBtn.hidden = !s.paired || !pairBtn.hidden || pairing;
  // Don't overwrite what the person is typing.
  if (document.activeElement !== nameInput) nameInput.value = s.deviceName;
  if (document.activeElement !== urlInput) urlInput.value = s.daemonUrl;
}

async function run(req: Request): Promise<void> {
  errorEl.textContent = "";
  try {
    render(await send(req));
  } catch (e) {
    errorEl.textContent = e instanceof Error ? e.message : String(e);
  }
}

pairBtn.addEventListener("click", () => void run({ type: "torii.pair" }));
repairBtn.addEventListener("click", () => void run({ type: "torii.pair" }));
cancelBtn.addEventListener("click", () => void run({ type: "torii.unpair" }));
unpairBtn.addEventListener("click", () => void run({ type: "torii.unpair" }));
openPanelBtn.addEventListener("click", () => {
  // The click is the user gesture sidePanel.open needs; the popup closes once the panel shows.
  void chrome.windows
    .getCurrent()
    .then((w) => (w.id !== undefined ? chrome.sidePanel.open({ windowId: w.id }) : undefined))
    .then(() => window.close())
    .catch((e: unknown) => (errorEl.textContent = e instanceof Error ? e.message : String(e)));
});
pauseBox.addEventListener("change", () => void run({ type: "torii.setPaused", paused: pauseBox.checked }));

function commitOnChange(input: HTMLInputElement, make: (v: string) => Request): void {
  input.addEventListener("change", () => void run(make(input.value)));
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") input.blur(); // blur fires change
  });
}
commitOnChange(nameInput, (name) => ({ type: "torii.setDeviceName", name }));
commitOnChange(urlInput, (url) => ({ type: "torii.setDaemonUrl", url }));

onState(render);
void run({ type: "torii.getState" });

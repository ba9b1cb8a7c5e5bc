// Managed launch page: `torii launch` opens connect.html#daemon=…&otp=…; we hand both to the
// worker, which pairs with an otpProof and no clicks, then show progress.

import { onState, send, STATUS_WORDS } from "../shared/client.js";
import type { LinkState } from "../shared/messages.js";
import { parseLaunchHash, type LaunchParams } from "./hash.js";

const statusEl = document.getElementById("status")!;
const dotEl = document.getElementById("dot")!;
const reasonEl = document.getElementById("reason")!;
const doneEl = document.getElementById("done")!;
const errorEl = document.getElementById("error")!;

// SECURITY I-5/I-10: read the one-time secret once and drop it from the URL and history at once.
let params: LaunchParams | null = null;
let bad = "";
try {
  params = parseLaunchHash(location.hash);
} catch (e) {
  bad = e instanceof Error ? e.message : String(e);
}
history.replaceState(null, "", location.pathname);

function render(s: LinkState): void {
  statusEl.textContent = STATUS_WORDS[s.status];
  dotEl.dataset.status = s.status;
  document.body.dataset.status = s.status;
  reasonEl.textContent = s.reason;
  doneEl.hidden = s.status !== "connected";
}

onState(render);

if (!params) {
  // A launch policy that cannot be read pairs nothing (SECURITY I-47): the browser stays unpaired.
  errorEl.textContent = bad ? `The launch policy cannot be used (${bad}); nothing was paired.` : "This page is opened by `torii launch`; it needs #daemon=…&otp=… in its address.";
  void send({ type: "torii.getState" }).then(render, () => undefined);
} else {
  const policy = { ...(params.policy ? { policy: params.policy } : {}), ...(params.launchPolicy !== undefined ? { launchPolicy: params.launchPolicy } : {}), ...(params.headless ? { headless: true as const } : {}), ...(params.viewport ? { viewport: params.viewport } : {}) };
  send({ type: "torii.connect", daemonUrl: params.daemonUrl, otp: params.otp, ...policy }).then(render, (e: unknown) => {
    errorEl.textContent = e instanceof Error ? e.message : String(e);
  });
}

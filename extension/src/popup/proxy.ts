// The popup's proxy line: the profile the whole browser uses now, always shown, and whether agents
// may switch it (the person's switch, in the options page). Separate from popup/policy.ts.

import { el } from "../options/api.js";
import { getProxy, onProxyChanged } from "../options/proxyapi.js";

const activeEl = el("proxy-active");
const descEl = el("proxy-desc");
const agentsEl = el("proxy-agents");

async function refresh(): Promise<void> {
  try {
    const v = await getProxy();
    const s = v.settings;
    activeEl.textContent = s.active;
    const elsewhere = v.control === "other_extension" || v.control === "policy";
    descEl.textContent = elsewhere ? `(overridden: ${v.control === "policy" ? "a policy" : "another extension"} controls the proxy)` : `(${v.descriptions[s.active] ?? ""})`;
    agentsEl.textContent = s.agentMaySwitch ? "· agents may switch it" : "";
  } catch (e) {
    activeEl.textContent = "unknown";
    descEl.textContent = e instanceof Error ? e.message : String(e);
  }
}

onProxyChanged(() => void refresh());
void refresh();

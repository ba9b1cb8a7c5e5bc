// The roster's DOM: one chip per agent (state, browser access, connect/disconnect). The state
// decisions stay in main.ts; this file only draws them and reports clicks.

import { hue, initial } from "./view.js";

export type Access = "act" | "read" | "none";
export type AgentState =
  | "off"
  | "connecting"
  | "ready"
  | "busy"
  | "crashed"
  | "exited"
  | "not_responding"
  | "error"
  | "unavailable";

export const UNHEALTHY: readonly AgentState[] = ["crashed", "exited", "not_responding", "error"];

const STATE_LABEL: Record<AgentState, string> = {
  off: "off",
  connecting: "connecting",
  ready: "connected",
  busy: "working",
  crashed: "crashed",
  exited: "exited",
  not_responding: "not responding",
  error: "error",
  unavailable: "not installed",
};
const ACCESS_LABEL: Record<Access, string> = { act: "act", read: "read", none: "none" };
export const NEXT_ACCESS: Record<Access, Access> = { read: "act", act: "none", none: "read" };

export interface ChipModel {
  name: string;
  state: AgentState;
  access: Access;
  detail: string;
  connected: boolean;
  available: boolean;
}

export interface ChipActions {
  main(name: string): void;
  access(name: string): void;
  power(name: string): void;
}

export function chip(a: ChipModel, on: ChipActions): HTMLElement {
  const st = a.state;
  const el = document.createElement("div");
  el.className = "chip";
  el.dataset.testid = "agent-chip";
  el.dataset.agent = a.name;
  el.dataset.state = st;
  el.dataset.access = a.access;
  el.style.setProperty("--hue", String(hue(a.name)));
  const unhealthy = UNHEALTHY.includes(st);

  const main = document.createElement("button");
  main.type = "button";
  main.className = "chip-main";
  main.dataset.testid = "chip-main";
  const av = document.createElement("span");
  av.className = "avatar";
  av.textContent = initial(a.name);
  av.setAttribute("aria-hidden", "true");
  const name = document.createElement("span");
  name.className = "chip-name";
  name.textContent = a.name;
  const badge = document.createElement("span");
  badge.className = `badge b-${st}`;
  badge.dataset.testid = "chip-state";
  badge.textContent = STATE_LABEL[st];
  main.append(av, name, badge);
  main.title = unhealthy
    ? `${a.name}: ${STATE_LABEL[st]}${a.detail ? ` (${a.detail})` : ""} — click to restart`
    : a.connected
      ? `${a.name}: ${STATE_LABEL[st]} — click to mention`
      : `${a.name}: click to connect`;
  main.setAttribute("aria-label", main.title);
  main.addEventListener("click", () => on.main(a.name));

  const access = document.createElement("button");
  access.type = "button";
  access.className = `access a-${a.access}`;
  access.dataset.testid = "access-toggle";
  access.textContent = ACCESS_LABEL[a.access];
  access.title = `Browser access: ${a.access} (press for ${NEXT_ACCESS[a.access]})`;
  access.setAttribute("aria-label", `${a.name} browser access: ${a.access}; press to change to ${NEXT_ACCESS[a.access]}`);
  access.addEventListener("click", () => on.access(a.name));

  const power = document.createElement("button");
  power.type = "button";
  power.className = "power";
  power.dataset.testid = "connect-toggle";
  power.textContent = a.connected ? "×" : "+";
  power.setAttribute("aria-pressed", String(a.connected));
  power.setAttribute("aria-label", a.connected ? `Disconnect ${a.name}` : `Connect ${a.name}`);
  power.title = power.getAttribute("aria-label") ?? "";
  power.disabled = !a.connected && !a.available;
  power.addEventListener("click", () => on.power(a.name));
  el.append(main, access, power);
  return el;
}

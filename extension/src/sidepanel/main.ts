// The side panel: one multi-agent room per Chrome window (docs/gateway.md, docs/sidepanel.md).
// It talks to the service worker over the `torii.panel` port; the worker forwards to the link.
// Room decisions (routing, relays, loop guard, transcript) are the pure modules in src/room.

import type { LinkState, StateMessage } from "../shared/messages.js";
import { relayTargets, routePersonMessage, type RoomAgent, type RoomMode } from "../room/mentions.js";
import type { PanelToWorker, RpcErrorShape, WorkerToPanel } from "../room/port.js";
import { LoopGuard, wrapRelay } from "../room/relay.js";
import { Transcript } from "../room/transcript.js";
import { newAgent, type Agent } from "./agent.js";
import { Composer } from "./composer.js";
import { emptyState } from "./empty.js";
import { onCopyClick } from "./markdown.js";
import { chip, NEXT_ACCESS, UNHEALTHY, type Access, type AgentState } from "./roster.js";
import { PanelCallError, WorkerPort } from "./rpc.js";
import { RoomStore } from "./store.js";
import { View } from "./view.js";

const DEFAULT_RELAY_LIMIT = 4;
const HEARTBEAT_MS = 15_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;
const SESSION_UNKNOWN = -32002;

const $ = <T extends HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`sidepanel.html lacks #${id}`);
  return e as T;
};

const ui = {
  link: $<HTMLSpanElement>("link-status"),
  roster: $<HTMLDivElement>("roster"),
  mode: $<HTMLButtonElement>("mode"),
  clear: $<HTMLButtonElement>("clear"),
  scroller: $<HTMLElement>("log-wrap"),
  log: $<HTMLOListElement>("log"),
  earlier: $<HTMLButtonElement>("show-earlier"),
  jump: $<HTMLButtonElement>("jump"),
  guard: $<HTMLDivElement>("guard"),
  empty: $<HTMLDivElement>("empty"),
  form: $<HTMLFormElement>("composer"),
  input: $<HTMLTextAreaElement>("input"),
  send: $<HTMLButtonElement>("send"),
  menu: $<HTMLUListElement>("mention-menu"),
};

let windowId = -1;
let transcript = new Transcript();
let mode: RoomMode = "mention";
let relayLimit = DEFAULT_RELAY_LIMIT;
const guard = new LoopGuard(DEFAULT_RELAY_LIMIT);
const agents = new Map<string, Agent>();
let defaultAgent = "";
let linkState: LinkState | null = null;
let daemonAlive = true;
let roomEmpty = true;

const port = new WorkerPort(
  () => ({ t: "hello", windowId, sessions: [...agents.values()].map((a) => a.sessionId).filter(Boolean) }),
  (m) => onWorker(m),
);
const call = <T = unknown>(method: string, params: unknown, timeoutMs?: number): Promise<T> => port.call<T>(method, params, timeoutMs);
const postPort = (m: PanelToWorker): void => port.post(m);

const view = new View(() => transcript, ui.log, ui.scroller, ui.earlier, ui.jump, {
  permission: (requestId, optionId) => answerPermission(requestId, optionId),
  retry: (entryId) => retry(entryId),
  empty: (isEmpty) => {
    roomEmpty = isEmpty;
    renderEmpty();
  },
});

const composer = new Composer(ui.form, ui.input, ui.send, ui.menu, {
  names: () => [...agents.values()].filter((a) => a.available || a.sessionId).map((a) => a.name),
  busy: () => [...agents.values()].some((a) => a.inTurn || a.queue.length > 0),
  send: (text) => void sendPerson(text),
  stop: () => stopAll(),
});

// ---------------------------------------------------------------- persistence

let store: RoomStore | null = null;
const save = (): void => store?.save();

async function load(): Promise<void> {
  const saved = await store?.load(guard);
  if (!saved) return;
  mode = saved.mode;
  transcript = saved.transcript;
  for (const a of saved.agents) agents.set(a.name, a);
}

// ---------------------------------------------------------------- worker messages

function onWorker(m: WorkerToPanel): void {
  switch (m.t) {
    case "ready":
      // Permission prompts from before are no longer answerable unless the worker re-offers them.
      for (const e of transcript.entries) {
        if (e.kind === "permission" && !e.decided) {
          e.decided = "expired";
          view.touch([e.id]);
        }
      }
      for (const a of agents.values()) {
        a.inTurn = a.sessionId !== "" && m.busy.includes(a.sessionId);
        if (a.inTurn) a.state = "busy";
      }
      void syncRoom();
      return;
    case "result":
    case "error":
      return; // answers are settled by the port
    case "update":
      onUpdate(m.params);
      return;
    case "status":
      onStatus(m.params);
      return;
    case "permission":
      onPermission(m.requestId, m.params);
      return;
    case "permission_done": {
      const e = transcript.findPermission(m.requestId);
      if (e && !e.decided) {
        e.decided = m.why ?? "cancelled";
        view.touch([e.id]);
        save();
      }
      return;
    }
    case "turn_end":
      onTurnEnd(m.sessionId, m.stopReason, m.error);
      return;
  }
}

// ---------------------------------------------------------------- agents and sessions

function bySession(sessionId: string): Agent | undefined {
  for (const a of agents.values()) if (a.sessionId === sessionId && sessionId) return a;
  return undefined;
}

function roomAgents(): RoomAgent[] {
  return [...agents.values()]
    .filter((a) => a.available || a.sessionId)
    .map((a) => ({ name: a.name, connected: a.sessionId !== "" && a.enabled !== false }));
}

function note(text: string, level: "info" | "warn" | "error" = "info"): void {
  const e = transcript.notice(text, level);
  view.touch([e.id]);
  save();
}

function errMsg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

let syncing: Promise<void> | null = null;
/** Agents whose missing command this panel has already reported. */
const notedMissing = new Set<string>();

/** Link up and port ready: learn the agents, re-attach every session, start the default agent. */
function syncRoom(): Promise<void> {
  if (!port.ready || linkState?.status !== "connected") return Promise.resolve();
  syncing ??= doSync().finally(() => (syncing = null));
  return syncing;
}

async function doSync(): Promise<void> {
  try {
    const r = await call<{ agents?: unknown; defaultAgent?: unknown; relayLimit?: unknown }>("torii/agents", {});
    defaultAgent = typeof r.defaultAgent === "string" ? r.defaultAgent : "";
    if (typeof r.relayLimit === "number" && r.relayLimit > 0) relayLimit = r.relayLimit;
    guard.limit = relayLimit;
    const seen = new Set<string>();
    for (const x of Array.isArray(r.agents) ? r.agents : []) {
      const o = x as { name?: unknown; available?: unknown; detail?: unknown };
      if (typeof o.name !== "string") continue;
      seen.add(o.name);
      const a = agents.get(o.name) ?? newAgent(o.name);
      a.available = o.available !== false;
      if (!a.available && !a.sessionId) a.state = "unavailable";
      // The daemon names the config key to fix; say it once for the default agent, which
      // would otherwise just never start.
      if (!a.available && typeof o.detail === "string" && o.name === defaultAgent && !notedMissing.has(o.name)) {
        notedMissing.add(o.name);
        note(`The default agent ${o.name} is not installed: ${o.detail}`, "warn");
      }
      agents.set(o.name, a);
    }
    for (const a of agents.values()) {
      if (!seen.has(a.name)) {
        a.available = false;
        if (!a.sessionId) a.state = "unavailable";
      }
    }
  } catch (e) {
    note(`Could not list the daemon's agents: ${errMsg(e)}`, "error");
    renderRoster();
    return;
  }
  renderRoster();
  const work: Promise<unknown>[] = [];
  for (const a of agents.values()) {
    if (a.sessionId && a.enabled !== false) work.push(resume(a));
    else if (!a.sessionId && a.name === defaultAgent && a.enabled === null && a.available) work.push(connect(a));
  }
  await Promise.all(work);
  save();
  // Every session re-attached: what the chips say now is the daemon's word (tests wait for this).
  document.body.dataset.syncs = String(Number(document.body.dataset.syncs ?? "0") + 1);
}

async function resume(a: Agent): Promise<void> {
  const sid = a.sessionId;
  if (a.state !== "busy") a.state = "connecting";
  renderRoster();
  try {
    // The access travels so the worker re-records the person's window grant (SECURITY I-29).
    const seen = a.statusSeq;
    await call("session/resume", { sessionId: sid, cwd: "/", mcpServers: [], _meta: { torii: { room: `window-${windowId}`, browserAccess: a.access } } });
    if (a.sessionId !== sid) return;
    // The daemon says the session's real status as it re-attaches (before this answer): a crashed agent
    // stays crashed, and its chip keeps offering a restart. Only without that word is it assumed well.
    if (a.statusSeq === seen && (a.state === "connecting" || UNHEALTHY.includes(a.state))) {
      a.state = a.inTurn ? "busy" : "ready";
      a.detail = "";
    }
  } catch (e) {
    if (a.sessionId !== sid) return;
    if (e instanceof PanelCallError && e.code === SESSION_UNKNOWN) {
      note(`${a.name}'s session ${sid} is gone (the daemon restarted?); starting a new one.`, "warn");
      postPort({ t: "forget", sessionId: sid });
      a.sessionId = "";
      await connect(a);
      return;
    }
    a.state = "error";
    a.detail = errMsg(e);
  }
  renderRoster();
}

/** Starts the agent's session; callers that arrive while it starts share the one attempt. */
function connect(a: Agent): Promise<boolean> {
  if (a.sessionId) return Promise.resolve(true);
  a.starting ??= startSession(a).finally(() => (a.starting = undefined));
  return a.starting;
}

async function startSession(a: Agent): Promise<boolean> {
  a.state = "connecting";
  a.detail = "";
  renderRoster();
  try {
    const r = await call<{ sessionId?: unknown }>("session/new", {
      cwd: "/",
      mcpServers: [],
      _meta: { torii: { agent: a.name, room: `window-${windowId}`, windowId, browserAccess: a.access } },
    });
    if (typeof r.sessionId !== "string" || !r.sessionId) throw new Error("session/new answered no sessionId");
    a.sessionId = r.sessionId;
    if (a.state === "connecting") a.state = "ready";
    if (a.enabled === null && a.name !== defaultAgent) a.enabled = true;
    save();
    renderRoster();
    return true;
  } catch (e) {
    a.state = "error";
    a.detail = errMsg(e);
    note(`Could not start ${a.name}: ${a.detail}`, "error");
    renderRoster();
    return false;
  }
}

async function disconnect(a: Agent): Promise<void> {
  const sid = a.sessionId;
  dropQueue(a, "Not sent");
  a.inTurn = false;
  a.enabled = false;
  a.sessionId = "";
  a.state = "off";
  renderRoster();
  save();
  if (!sid) return;
  postPort({ t: "cancel", sessionId: sid });
  try {
    await call("torii/session/close", { sessionId: sid });
  } catch {
    // already gone
  }
  postPort({ t: "forget", sessionId: sid });
}

async function restart(a: Agent): Promise<void> {
  if (!a.sessionId) {
    a.enabled = true;
    await connect(a);
    return;
  }
  a.state = "connecting";
  renderRoster();
  try {
    await call("torii/session/restart", { sessionId: a.sessionId });
    a.state = "ready";
    a.detail = "";
    note(`${a.name} restarted.`);
  } catch (e) {
    if (e instanceof PanelCallError && e.code === SESSION_UNKNOWN) {
      postPort({ t: "forget", sessionId: a.sessionId });
      a.sessionId = "";
      await connect(a);
      return;
    }
    a.state = "error";
    a.detail = errMsg(e);
    note(`Could not restart ${a.name}: ${a.detail}`, "error");
  }
  renderRoster();
  runNext(a);
}

async function setAccess(a: Agent, access: Access): Promise<void> {
  const before = a.access;
  a.access = access;
  renderRoster();
  save();
  if (!a.sessionId) return;
  try {
    await call("torii/session/set_access", { sessionId: a.sessionId, browserAccess: access });
  } catch (e) {
    a.access = before;
    note(`Could not change ${a.name}'s browser access: ${errMsg(e)}`, "error");
    renderRoster();
    save();
  }
}

// ---------------------------------------------------------------- turns, relays, loop guard

function enqueue(a: Agent, text: string, from?: string): void {
  a.queue.push(from ? { text, from } : { text });
  runNext(a);
}

/** The person's message did not reach this agent: the message says so and offers Retry. */
function undelivered(entryId: string | undefined, agent: string, reason: string): void {
  const e = entryId ? transcript.get(entryId) : undefined;
  if (e?.kind !== "user") return;
  const agents = e.undelivered?.agents ?? [];
  if (!agents.includes(agent)) agents.push(agent);
  e.undelivered = { agents, reason };
  view.touch([e.id]);
  save();
}

function retry(entryId: string): void {
  const e = transcript.get(entryId);
  if (e?.kind !== "user" || !e.undelivered) return;
  const targets = e.undelivered.agents;
  delete e.undelivered;
  view.touch([e.id]);
  void sendPerson(e.text, targets);
  ui.input.focus();
}

function runNext(a: Agent): void {
  if (a.inTurn || !a.sessionId || a.queue.length === 0) return;
  if (a.state !== "ready") return;
  const { text, from } = a.queue.shift() ?? { text: "" };
  a.state = "busy";
  a.inTurn = true;
  a.turnFrom = from;
  transcript.beginTurn(a.sessionId);
  renderRoster();
  updateControls();
  // The outcome arrives as turn_end (also after a reload); the call's own answer is not needed.
  call("session/prompt", { sessionId: a.sessionId, prompt: [{ type: "text", text }] }).catch(() => undefined);
}

function onTurnEnd(sessionId: string, stopReason: string, error?: RpcErrorShape): void {
  const a = bySession(sessionId);
  const { reply, changed } = transcript.endTurn(sessionId, stopReason);
  view.touch(changed);
  if (!a) return;
  a.inTurn = false;
  if (error || stopReason !== "end_turn") undelivered(a.turnFrom, a.name, error ? "Failed" : stopReason === "cancelled" ? "Stopped" : `Stopped: ${stopReason}`);
  a.turnFrom = undefined;
  if (a.state === "busy" || a.state === "not_responding") a.state = "ready";
  // The daemon's message names its method for clients; the person's way to the same is the chip.
  if (error) note(`${a.name}: the turn failed — ${error.message.replace(/call torii\/session\/restart/, "click its chip to restart it")}`, "error");
  else if (stopReason === "cancelled") note(`${a.name} stopped.`, "info");
  else if (stopReason !== "end_turn") note(`${a.name} stopped: ${stopReason}.`, "warn");
  if (!error && stopReason === "end_turn" && reply.trim()) relay(a, reply);
  renderRoster();
  updateControls();
  save();
  runNext(a);
}

function relay(from: Agent, reply: string): void {
  const targets = relayTargets(from.name, reply, mode, roomAgents());
  for (const name of targets) {
    const to = agents.get(name);
    if (!to) continue;
    if (!guard.allow()) {
      if (!ui.guard.dataset.shown) {
        note(`Loop guard: agent-to-agent relays paused after ${guard.limit}. Say something to resume.`, "warn");
      }
      showGuard();
      return;
    }
    note(`${from.name} → ${name}`, "info");
    enqueue(to, wrapRelay(from.name, reply));
  }
}

function showGuard(): void {
  ui.guard.hidden = !guard.tripped;
  if (guard.tripped) {
    ui.guard.dataset.shown = "1";
    ui.guard.textContent = `Loop guard tripped after ${guard.limit} relays — agents wait for you.`;
  } else {
    delete ui.guard.dataset.shown;
  }
}

async function sendPerson(text: string, fixedTargets?: string[]): Promise<void> {
  const route = fixedTargets ? { targets: fixedTargets, unknown: [] } : routePersonMessage(text, mode, roomAgents());
  const e = transcript.user(text, route.targets);
  view.touch([e.id]);
  view.toBottom();
  guard.reset(); // the person spoke
  showGuard();
  for (const u of route.unknown) note(`No agent named @${u} in this room — not sent to it.`, "warn");
  if (route.targets.length === 0) {
    if (route.unknown.length === 0) note("No agent is connected: connect one from the roster above.", "warn");
    save();
    return;
  }
  save();
  for (const name of route.targets) {
    const a = agents.get(name);
    if (!a) continue;
    if (!a.sessionId) {
      a.enabled = true;
      if (!(await connect(a))) {
        undelivered(e.id, a.name, "Not sent");
        continue;
      }
    }
    enqueue(a, text, e.id);
  }
  updateControls();
}

function dropQueue(a: Agent, reason: string): void {
  for (const q of a.queue) undelivered(q.from, a.name, reason);
  a.queue = [];
}

function stopAll(): void {
  for (const a of agents.values()) {
    dropQueue(a, "Stopped");
    if (a.inTurn && a.sessionId) postPort({ t: "cancel", sessionId: a.sessionId });
  }
}

// ---------------------------------------------------------------- daemon events

function onUpdate(params: unknown): void {
  const p = params as { sessionId?: unknown; update?: unknown } | null;
  const sid = typeof p?.sessionId === "string" ? p.sessionId : "";
  const a = bySession(sid);
  if (!a) return;
  const changed = transcript.apply(sid, a.name, p?.update);
  if (changed.length) {
    view.touch(changed);
    save();
  }
  if (a.state === "not_responding") {
    a.state = "busy";
    renderRoster();
  }
}

function onStatus(params: unknown): void {
  const p = params as { sessionId?: unknown; status?: unknown; detail?: unknown } | null;
  const a = bySession(typeof p?.sessionId === "string" ? p.sessionId : "");
  if (!a) return;
  const detail = typeof p?.detail === "string" ? p.detail : "";
  const before = a.state;
  a.statusSeq++;
  switch (p?.status) {
    case "starting":
      a.state = "connecting";
      break;
    case "ready":
      a.state = a.inTurn ? "busy" : "ready";
      break;
    case "busy":
      a.state = "busy";
      break;
    case "crashed":
    case "exited":
    case "not_responding":
      a.state = p.status;
      break;
    default:
      return;
  }
  a.detail = detail;
  if (a.state === "crashed" || a.state === "exited") {
    // Nobody can answer for an agent that ended: its open prompts say so instead of offering buttons.
    const changed = transcript.withdrawPermissions(a.sessionId, `withdrawn: ${a.name} ${a.state}`);
    if (changed.length) {
      view.touch(changed);
      save();
    }
  }
  if (before !== a.state) {
    if (a.state === "crashed") note(`${a.name} crashed${detail ? `: ${detail}` : ""}. Click its chip to restart it.`, "error");
    if (a.state === "exited") note(`${a.name} exited${detail ? `: ${detail}` : ""}. Click its chip to restart it.`, "warn");
    if (a.state === "not_responding") note(`${a.name} is not responding${detail ? ` (${detail})` : ""}. The room keeps working; click its chip to restart it.`, "warn");
  }
  renderRoster();
  updateControls();
  if (a.state === "ready") runNext(a);
}

function onPermission(requestId: string, params: unknown): void {
  const sid = (params as { sessionId?: unknown } | null)?.sessionId;
  const a = bySession(typeof sid === "string" ? sid : "");
  const existing = transcript.findPermission(requestId);
  if (existing) {
    existing.decided = "";
    view.touch([existing.id]);
    return;
  }
  const e = transcript.permission(typeof sid === "string" ? sid : "", a?.name ?? "agent", requestId, params);
  view.touch([e.id]);
  save();
  view.toBottom();
  // Keyboard users land on the decision.
  requestAnimationFrame(() => document.querySelector<HTMLButtonElement>(`#entry-${e.id} .approve`)?.focus());
}

function answerPermission(requestId: string, optionId: string | null): void {
  const e = transcript.findPermission(requestId);
  if (!e || e.decided) return;
  const opt = e.options.find((o) => o.optionId === optionId);
  e.decided = opt ? (opt.kind.startsWith("allow") ? `approved: ${opt.name}` : `denied: ${opt.name}`) : "denied";
  postPort({
    t: "permission",
    requestId,
    outcome: optionId ? { outcome: "selected", optionId } : { outcome: "cancelled" },
  });
  view.touch([e.id]);
  save();
  ui.input.focus();
}

// ---------------------------------------------------------------- link state and heartbeat

function onLinkState(s: LinkState): void {
  const was = linkState?.status;
  linkState = s;
  const text =
    s.status === "connected"
      ? "connected"
      : !s.paired
        ? "not paired — pair from the Torii toolbar popup"
        : `${s.status}${s.reason ? ` — ${s.reason}` : ""}`;
  ui.link.textContent = text;
  ui.link.dataset.status = s.status;
  if (s.status === "connected" && was !== "connected") void syncRoom();
  if (s.status !== "connected" && was === "connected") {
    for (const a of agents.values()) if (a.sessionId && a.state !== "off") a.state = "connecting";
    renderRoster();
  }
  renderEmpty();
}

async function heartbeat(): Promise<void> {
  if (!port.ready || linkState?.status !== "connected") return;
  let alive: boolean;
  try {
    await call("torii/ping", {}, HEARTBEAT_TIMEOUT_MS);
    alive = true;
  } catch (e) {
    // "method not found" still proves the daemon answers.
    alive = e instanceof PanelCallError && e.code === -32601;
  }
  if (alive !== daemonAlive) {
    daemonAlive = alive;
    if (!alive) note("The daemon is not answering; agents are shown as not responding.", "warn");
    else void syncRoom();
    renderRoster();
  }
}

// ---------------------------------------------------------------- roster and controls

function shownState(a: Agent): AgentState {
  if (!daemonAlive && a.sessionId) return "not_responding";
  return a.state;
}

function onChipMain(name: string): void {
  const a = agents.get(name);
  if (!a) return;
  if (UNHEALTHY.includes(shownState(a))) void (daemonAlive ? restart(a) : syncRoom());
  else if (!a.sessionId && a.available) {
    a.enabled = true;
    void connect(a);
  } else composer.mention(a.name);
}

function onChipPower(name: string): void {
  const a = agents.get(name);
  if (!a) return;
  if (a.sessionId) void disconnect(a);
  else {
    a.enabled = true;
    void connect(a);
  }
}

function renderRoster(): void {
  const chips: HTMLElement[] = [];
  for (const a of agents.values()) {
    chips.push(
      chip(
        { name: a.name, state: shownState(a), access: a.access, detail: a.detail, connected: a.sessionId !== "", available: a.available },
        {
          main: onChipMain,
          access: (n) => {
            const x = agents.get(n);
            if (x) void setAccess(x, NEXT_ACCESS[x.access]);
          },
          power: onChipPower,
        },
      ),
    );
  }
  ui.roster.hidden = chips.length === 0;
  // Keep keyboard focus on the same control across re-renders.
  const active = document.activeElement as HTMLElement | null;
  const focusKey = active && ui.roster.contains(active) ? `${active.closest<HTMLElement>(".chip")?.dataset.agent}|${active.dataset.testid}` : "";
  ui.roster.replaceChildren(...chips);
  if (focusKey) {
    const [agent, testid] = focusKey.split("|");
    ui.roster.querySelector<HTMLElement>(`.chip[data-agent="${CSS.escape(agent ?? "")}"] [data-testid="${testid}"]`)?.focus();
  }
  renderEmpty();
  updateControls();
}

/** The empty room's one next step (shown while the transcript is empty). */
function renderEmpty(): void {
  ui.empty.hidden = !roomEmpty;
  document.body.dataset.empty = String(roomEmpty);
  if (!roomEmpty) return;
  ui.empty.replaceChildren(
    ...emptyState({
      linked: linkState?.status === "connected",
      paired: linkState?.paired ?? false,
      agents: [...agents.values()].map((a) => ({ name: a.name, available: a.available })),
      defaultAgent,
    }),
  );
}

function updateControls(): void {
  const busy = [...agents.values()].some((a) => a.inTurn || a.queue.length > 0);
  composer.update();
  ui.mode.textContent = mode === "mention" ? "@ mention" : "ambient";
  ui.mode.setAttribute("aria-pressed", String(mode === "ambient"));
  ui.mode.title = mode === "mention" ? "Messages go to the agents you @mention (all when none). Press for ambient." : "Every message goes to every agent. Press for @mention mode.";
  document.body.dataset.mode = mode;
  document.body.dataset.busy = String(busy);
}

// ---------------------------------------------------------------- wiring

function wire(): void {
  ui.mode.addEventListener("click", () => {
    mode = mode === "mention" ? "ambient" : "mention";
    updateControls();
    save();
  });
  ui.clear.addEventListener("click", () => {
    transcript.clear();
    view.reset();
    save();
    ui.input.focus();
  });
  ui.log.addEventListener("click", onCopyClick);
  chrome.runtime.onMessage.addListener((msg: unknown) => {
    const m = msg as StateMessage | null;
    if (m && m.type === "torii.state" && m.state) onLinkState(m.state);
    return false;
  });
  setInterval(() => void heartbeat(), HEARTBEAT_MS);
  addEventListener("pagehide", () => store?.flush());
}

async function main(): Promise<void> {
  const q = new URLSearchParams(location.search).get("window");
  windowId = q && /^\d+$/.test(q) ? Number(q) : ((await chrome.windows.getCurrent()).id ?? -1);
  store = new RoomStore(`torii.room.${windowId}`, () => ({ mode, guard, transcript, agents: agents.values() }));
  document.body.dataset.window = String(windowId);
  await load();
  showGuard();
  renderRoster();
  view.reset();
  view.flush();
  wire();
  port.connect();
  try {
    const r = (await chrome.runtime.sendMessage({ type: "torii.getState" })) as { state?: LinkState } | undefined;
    if (r?.state) onLinkState(r.state);
  } catch {
    // the worker answers state broadcasts too
  }
  ui.input.focus();
  document.body.dataset.ready = "true";
}

void main();

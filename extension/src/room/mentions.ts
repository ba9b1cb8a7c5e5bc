// @mention parsing and message routing for the multi-agent room (docs/gateway.md "The side panel").
// Pure: the panel passes in the room's agents and gets back who a message goes to.

export type RoomMode = "mention" | "ambient";

export interface RoomAgent {
  name: string;
  /** The agent has a live session in this room. */
  connected: boolean;
}

export interface Mentions {
  /** Agents named, canonical spelling, in order of first mention, no duplicates. */
  known: string[];
  /** Names that match no agent, as written. */
  unknown: string[];
  /** `@all` / `@everyone` was written. */
  all: boolean;
}

// An @ that starts a word: not part of an e-mail address (a@b.c) or a path.
const MENTION = /(^|[^\w@./\\-])@([A-Za-z0-9][\w.-]{0,63})/g;
const ALL = new Set(["all", "everyone"]);

export function parseMentions(text: string, agents: readonly string[]): Mentions {
  const byLower = new Map(agents.map((a) => [a.toLowerCase(), a]));
  const known: string[] = [];
  const unknown: string[] = [];
  let all = false;
  for (const m of text.matchAll(MENTION)) {
    const raw = (m[2] ?? "").replace(/[.-]+$/, ""); // "@claude." ends a sentence
    if (raw === "") continue;
    const lower = raw.toLowerCase();
    const name = byLower.get(lower);
    if (name !== undefined) {
      if (!known.includes(name)) known.push(name);
    } else if (ALL.has(lower)) {
      all = true;
    } else if (!unknown.some((u) => u.toLowerCase() === lower)) {
      unknown.push(raw);
    }
  }
  return { known, unknown, all };
}

export interface Route {
  /** Agents the message is sent to (some may need connecting first). */
  targets: string[];
  /** Mentions of agents that do not exist: shown to the person, never broadcast. */
  unknown: string[];
}

/**
 * Where a person's message goes. Mention mode: the agents named; all connected agents when none
 * is named; nobody when only unknown names were mentioned (an unknown mention is not a broadcast).
 * Ambient mode: every connected agent, plus any named one.
 */
export function routePersonMessage(text: string, mode: RoomMode, agents: readonly RoomAgent[]): Route {
  const m = parseMentions(
    text,
    agents.map((a) => a.name),
  );
  const connected = agents.filter((a) => a.connected).map((a) => a.name);
  if (mode === "ambient" || m.all) {
    return { targets: unique([...connected, ...m.known]), unknown: m.unknown };
  }
  if (m.known.length > 0) return { targets: m.known, unknown: m.unknown };
  if (m.unknown.length > 0) return { targets: [], unknown: m.unknown };
  return { targets: connected, unknown: [] };
}

/**
 * Who an agent's finished reply is relayed to. Mention mode: the other connected agents it names
 * (everyone else on @all). Ambient mode: every other connected agent.
 */
export function relayTargets(from: string, reply: string, mode: RoomMode, agents: readonly RoomAgent[]): string[] {
  const others = agents.filter((a) => a.connected && a.name !== from).map((a) => a.name);
  if (mode === "ambient") return others;
  const m = parseMentions(
    reply,
    agents.map((a) => a.name),
  );
  if (m.all) return others;
  return m.known.filter((n) => others.includes(n));
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** The `@name` being typed at the caret: where its `@` is and what follows it (the composer's autocomplete). */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  // The same word start as MENTION: not inside an e-mail address or a path.
  const m = /(^|[^\w@./\\-])@([\w.-]{0,64})$/.exec(before);
  if (!m) return null;
  const query = m[2] ?? "";
  return { start: caret - query.length - 1, query };
}

/** Agent names (and `all` for a room of several) that complete `query`: prefix matches first. */
export function mentionChoices(query: string, names: readonly string[]): string[] {
  const q = query.toLowerCase();
  const pool = names.length > 1 ? [...names, "all"] : [...names];
  const prefix = pool.filter((n) => n.toLowerCase().startsWith(q));
  const inner = pool.filter((n) => !n.toLowerCase().startsWith(q) && n.toLowerCase().includes(q));
  return [...prefix, ...inner];
}

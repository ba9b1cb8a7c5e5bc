// One agent of the room as the panel tracks it: the person's choices about it (enabled, access),
// its daemon session and what the daemon last said of it, and the messages waiting for it.

import type { Access, AgentState } from "./roster.js";

/** A message waiting for an agent, and the person's message it answers (none for a relay). */
interface Queued {
  text: string;
  from?: string;
}

export interface Agent {
  name: string;
  available: boolean;
  /** null: never chosen (the default agent connects by itself); false: the person disconnected it. */
  enabled: boolean | null;
  sessionId: string;
  access: Access;
  state: AgentState;
  detail: string;
  queue: Queued[];
  /** A session/prompt is in flight (whatever the agent's reported state). */
  inTurn: boolean;
  /** Counts the daemon's torii/agent_status words, so an answer that raced one does not overwrite it. */
  statusSeq: number;
  /** The person's message the turn in flight answers. */
  turnFrom?: string;
  /** session/new in flight. */
  starting?: Promise<boolean>;
}

/** An agent the panel has just learned of: not chosen, no session, read access. */
export function newAgent(name: string, known: Partial<Agent> = {}): Agent {
  return {
    name,
    available: true,
    enabled: null,
    sessionId: "",
    access: "read",
    state: "off",
    detail: "",
    queue: [],
    inTurn: false,
    statusSeq: 0,
    ...known,
  };
}

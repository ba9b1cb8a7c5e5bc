// What an empty room says: the one next step, whichever is missing (the daemon link, an agent in
// the daemon's config, an installed agent, or just a first message).

export interface EmptyInfo {
  linked: boolean;
  paired: boolean;
  agents: { name: string; available: boolean }[];
  defaultAgent: string;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

const CONFIG_EXAMPLE = '{ "agents": [{ "name": "claude", "preset": "claude-agent-acp" }] }';

export function emptyState(i: EmptyInfo): Node[] {
  if (!i.linked) {
    return [
      el("h2", i.paired ? "Waiting for the Torii daemon" : "Connect Torii first"),
      el(
        "p",
        i.paired
          ? "The extension is paired but the daemon is not answering. Start it with `torii serve`; this room reconnects by itself."
          : "Open the Torii button in the toolbar and pair this browser with the daemon (`torii pair` in a terminal).",
      ),
    ];
  }
  if (i.agents.length === 0) {
    const pre = el("pre", CONFIG_EXAMPLE, "config-example");
    return [
      el("h2", "Add an agent to chat with"),
      el("p", "The daemon runs the agents. Name one in its config.json (in the torii config folder); the daemon applies it within a second or two, no restart, and it shows up here:"),
      pre,
      el("p", "Presets: claude-agent-acp, gemini, codex-acp, opencode — or any ACP agent as a command.", "muted"),
    ];
  }
  const ready = i.agents.filter((a) => a.available).map((a) => a.name);
  if (ready.length === 0) {
    return [
      el("h2", "No agent is installed"),
      el("p", `The daemon knows ${i.agents.map((a) => a.name).join(", ")}, but none of their commands is on its PATH. Install one, then press its chip above.`),
    ];
  }
  const first = ready.includes(i.defaultAgent) ? i.defaultAgent : (ready[0] ?? "");
  return [
    el("h2", "Say hello"),
    el("p", ready.length > 1 ? `Messages go to every connected agent; type @ to address one (${ready.join(", ")}).` : `Messages go to ${first}.`),
    el("p", "Agents see and use this window's tabs only as the chip above allows: read, act or none.", "muted"),
  ];
}

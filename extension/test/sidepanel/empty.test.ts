// @vitest-environment jsdom
// The empty room's next step is true: a new agent in config.json applies at once (the daemon
// re-reads it), so the copy never sends the person to restart anything.
import { expect, test } from "vitest";
import { emptyState } from "../../src/sidepanel/empty.js";

const text = (ns: Node[]) => ns.map((n) => n.textContent ?? "").join("\n");

test("no agent configured: name one in config.json, no restart", () => {
  const t = text(emptyState({ linked: true, paired: true, agents: [], defaultAgent: "" }));
  expect(t).toContain("config.json");
  expect(t).toContain("no restart");
  expect(t).not.toMatch(/restart `torii serve`/);
});

import { describe, expect, it } from "vitest";
import { callTool, listTools, TOOLS } from "../../src/tools/registry.js";
import { setGateState } from "../../src/tools/gate.js";

// Every tool of issue 3; a tool cannot be listed without a handler, nor the reverse.
const EXPECTED = [
  "tabs", "snapshot", "find", "read_text", "get_state", "screenshot", "wait_for", "settle",
  "navigate", "history", "reload", "close_tab", "click", "mouse_click", "hover", "fill", "type",
  "press_key", "select_option", "scroll", "reveal", "handle_dialog",
  // issue 4: code execution (own switches) and human handoff
  "evaluate", "fetch_in_page", "handoff",
];

describe("registry → tools/list", () => {
  it("lists every tool once with annotations", () => {
    const list = listTools();
    expect(list.map((t) => t.name)).toEqual(EXPECTED);
    for (const t of list) {
      expect(t.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(t.description.length).toBeLessThanOrEqual(200);
      expect(t.inputSchema.type).toBe("object");
      expect(t.inputSchema.additionalProperties).toBe(false);
      expect(typeof t.annotations.readOnlyHint).toBe("boolean");
      if (!t.annotations.readOnlyHint) expect(typeof t.annotations.destructiveHint).toBe("boolean");
    }
    expect(list.find((t) => t.name === "close_tab")?.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
    expect(list.find((t) => t.name === "snapshot")?.annotations).toEqual({ readOnlyHint: true });
  });

  // Issue 4 added evaluate, fetch_in_page, handoff and allowPassword (~1.3k): the budget grew with them.
  it("fits the catalogue budget (≤ 13,500 characters)", () => {
    const size = JSON.stringify({ tools: listTools() }).length;
    console.log(`tools/list: ${TOOLS.length} tools, ${size} characters`);
    expect(size).toBeLessThanOrEqual(13_500);
  });

  it("every action takes waitFor and observe", () => {
    for (const t of listTools()) {
      if (t.annotations.readOnlyHint || ["close_tab", "evaluate", "fetch_in_page"].includes(t.name)) continue;
      const props = (t.inputSchema as { properties: Record<string, unknown> }).properties;
      expect(props.waitFor, t.name).toBeDefined();
      expect(props.observe, t.name).toBeDefined();
    }
  });
});

describe("callTool", () => {
  it("unknown tool and bad arguments are isError results naming the field", async () => {
    const u = await callTool("nope", {});
    expect(u.isError).toBe(true);
    expect(u.structuredContent).toMatchObject({ error: { code: "unknown_tool" } });
    const b = await callTool("navigate", { url: 5 });
    expect(b.structuredContent).toMatchObject({ error: { code: "invalid_argument", field: "url" } });
    expect(b.content[0]).toMatchObject({ type: "text" });
    expect((b.content[0] as { text: string }).text).toMatch(/^invalid_argument: url: expected string.*\nhint: /);
    const x = await callTool("close_tab", { tabId: 1, extra: 1 });
    expect(x.structuredContent).toMatchObject({ error: { code: "invalid_argument", field: "extra" } });
  });

  it("the gate refuses while paused, before the handler runs", async () => {
    setGateState({ paused: () => true });
    try {
      const r = await callTool("tabs", {});
      expect(r.structuredContent).toMatchObject({ error: { code: "paused" } });
    } finally {
      setGateState({ paused: () => false });
    }
  });
});

import { describe, expect, test } from "vitest";
import { MAX_ENTRIES, Transcript, touchedOf } from "../../src/room/transcript.js";

const chunk = (text: string) => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

describe("Transcript", () => {
  test("chunks stream into one bubble; a tool call splits it; endTurn returns the whole reply", () => {
    const t = new Transcript(() => 1);
    t.beginTurn("s1");
    const [a] = t.apply("s1", "claude", chunk("Hel"));
    t.apply("s1", "claude", chunk("lo"));
    expect(t.get(a!)).toMatchObject({ kind: "agent", text: "Hello", streaming: true });
    const ids = t.apply("s1", "claude", { sessionUpdate: "tool_call", toolCallId: "c1", title: "torii.click", kind: "other", status: "pending", rawInput: { ref: "e12", tabId: 7, text: "secret" } });
    expect(ids).toContain(a);
    expect(t.get(a!)).toMatchObject({ streaming: false });
    const tool = t.get(ids[1]!);
    expect(tool).toMatchObject({ kind: "tool", status: "pending", touched: ["tab 7", "ref e12"] });
    t.apply("s1", "claude", { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" });
    expect(tool).toMatchObject({ status: "running" });
    t.apply("s1", "claude", { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed", content: [{ type: "content", content: { type: "text", text: "clicked" } }] });
    expect(tool).toMatchObject({ status: "done", detail: "clicked" });
    const [b] = t.apply("s1", "claude", chunk(" world"));
    expect(b).not.toBe(a);
    const end = t.endTurn("s1", "end_turn");
    expect(end.reply).toBe("Hello world");
    expect(t.get(b!)).toMatchObject({ streaming: false });
  });

  test("plans update in place within a turn", () => {
    const t = new Transcript();
    t.beginTurn("s");
    const [p] = t.apply("s", "a", { sessionUpdate: "plan", entries: [{ content: "one", status: "pending" }] });
    const [q] = t.apply("s", "a", { sessionUpdate: "plan", entries: [{ content: "one", status: "completed" }, { content: "two", status: "bogus" }] });
    expect(q).toBe(p);
    expect(t.get(p!)).toMatchObject({ items: [{ content: "one", status: "completed" }, { content: "two", status: "pending" }] });
  });

  test("a cancelled turn leaves no spinning tool card", () => {
    const t = new Transcript();
    t.beginTurn("s");
    const [id] = t.apply("s", "a", { sessionUpdate: "tool_call", toolCallId: "x", title: "t", status: "in_progress" });
    t.endTurn("s", "cancelled");
    expect(t.get(id!)).toMatchObject({ status: "failed" });
  });

  test("permission requests and decisions", () => {
    const t = new Transcript();
    const p = t.permission("s", "a", "r1", { toolCall: { title: "navigate", rawInput: { url: "https://x.example" } }, options: [{ optionId: "ok", name: "Allow", kind: "allow_once" }, { optionId: "no", name: "Deny", kind: "reject_once" }, { bogus: 1 }] });
    expect(p.options).toHaveLength(2);
    expect(p.touched).toEqual(["url https://x.example"]);
    expect(t.findPermission("r1")).toBe(p);
  });

  test("bounded: oldest entries drop and are reported removed", () => {
    const t = new Transcript();
    for (let i = 0; i < MAX_ENTRIES + 5; i++) t.notice(`n${i}`);
    expect(t.entries).toHaveLength(MAX_ENTRIES);
    expect(t.drainRemoved()).toHaveLength(5);
  });

  test("persist and restore; streaming bubbles come back finished; clear keeps nothing", () => {
    const t = new Transcript();
    t.user("hi", ["a"]);
    t.beginTurn("s");
    t.apply("s", "a", chunk("yo"));
    const r = Transcript.restore(JSON.parse(JSON.stringify(t.persist())));
    expect(r.entries.map((e) => e.kind)).toEqual(["user", "agent"]);
    expect(r.entries[1]).toMatchObject({ streaming: false, text: "yo" });
    expect(r.user("next", []).id).toBe("e3");
    r.clear();
    expect(r.entries).toHaveLength(0);
    expect(Transcript.restore({ v: 9 }).entries).toEqual([]);
  });

  test("touchedOf ignores typed text", () => {
    expect(touchedOf({ text: "password", selector: "#q" }, [{ path: "/tmp/x" }])).toEqual(["selector #q", "/tmp/x"]);
  });
});

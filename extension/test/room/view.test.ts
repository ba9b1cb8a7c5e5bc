// @vitest-environment jsdom
// The transcript view caps what it renders ("show earlier"), updates only what changed, and keeps
// hostile text inert whatever the entry kind.
import { beforeEach, describe, expect, test } from "vitest";
import { Transcript } from "../../src/room/transcript.js";
import { RENDER_STEP, View } from "../../src/sidepanel/view.js";

let t: Transcript;
let view: View;
let log: HTMLOListElement;
let earlier: HTMLButtonElement;
const answered: [string, string | null][] = [];

beforeEach(() => {
  document.body.innerHTML = "";
  const scroller = document.createElement("main");
  log = document.createElement("ol");
  earlier = document.createElement("button");
  const jump = document.createElement("button");
  scroller.append(earlier, log);
  document.body.append(scroller, jump);
  t = new Transcript();
  view = new View(() => t, log, scroller, earlier, jump, { permission: (r, o) => answered.push([r, o]), retry: () => undefined, empty: () => undefined });
});

describe("View", () => {
  // Hundreds of entries through the DOM emulation take seconds on a busy machine.
  test("renders at most RENDER_STEP entries; show earlier adds more", { timeout: 30_000 }, () => {
    for (let i = 0; i < RENDER_STEP + 60; i++) t.notice(`n${i}`);
    view.flush();
    expect(log.children).toHaveLength(RENDER_STEP);
    expect(earlier.hidden).toBe(false);
    expect(earlier.textContent).toBe("Show earlier (60)");
    expect(log.lastElementChild?.textContent).toContain(`n${RENDER_STEP + 59}`);
    earlier.click();
    view.flush();
    expect(log.children).toHaveLength(RENDER_STEP + 60);
    expect(earlier.hidden).toBe(true);
  });

  test("only touched entries are re-rendered; streaming text grows in place", () => {
    t.beginTurn("s");
    const [id] = t.apply("s", "claude", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "**a" } });
    const other = t.notice("keep me");
    view.flush();
    const otherNode = document.getElementById(`entry-${other.id}`);
    t.apply("s", "claude", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "b**" } });
    view.touch([id!]);
    view.flush();
    expect(document.getElementById(`entry-${other.id}`)).toBe(otherNode);
    const msg = document.getElementById(`entry-${id}`);
    expect(msg?.querySelector("strong")?.textContent).toBe("ab");
    expect(msg?.dataset.streaming).toBe("true");
    expect(msg?.querySelector(".avatar")?.textContent).toBe("C");
  });

  test("tool names, plan items, permission titles and notices are text, never markup", () => {
    const evil = '<img src=x onerror="alert(1)">';
    t.beginTurn("s");
    t.apply("s", evil, { sessionUpdate: "tool_call", toolCallId: "1", title: evil, status: "failed", rawInput: { url: evil } });
    t.apply("s", evil, { sessionUpdate: "plan", entries: [{ content: evil, status: "pending" }] });
    t.permission("s", evil, "r1", { toolCall: { title: evil }, options: [{ optionId: "ok", name: evil, kind: "allow_once" }] });
    t.notice(evil, "error");
    view.flush();
    expect(log.querySelector("img")).toBeNull();
    expect(log.textContent).toContain(evil);
    (log.querySelector('[data-testid="perm-allow"]') as HTMLButtonElement).click();
    expect(answered).toEqual([["r1", "ok"]]);
  });

  test("entries dropped from the transcript leave the DOM", () => {
    const a = t.notice("a");
    t.notice("b");
    view.flush();
    t.clear();
    view.reset();
    view.flush();
    expect(document.getElementById(`entry-${a.id}`)).toBeNull();
    expect(log.children).toHaveLength(0);
  });
});

// Agents' tab groups, the pure parts (SECURITY I-83): the title an agent's label becomes, the
// colour a session gets, and the decisions that leave the person's tabs and the person's word on
// a group alone. The Chrome side is in e2e/tests/tabgroups.test.ts.
import { describe, expect, it } from "vitest";
import {
  created,
  emptyBook,
  endedGrants,
  groupRemoved,
  groupSeen,
  joined,
  lookOf,
  membersOf,
  planGrant,
  planOwned,
  releaseGrant,
  restoreBook,
  tabGone,
  tabMoved,
  type Book,
  type TabFacts,
} from "../../src/tools/ownership/groupbook.js";
import { COLOURS, TITLE_MAX, UNTITLED, groupTitle, pickColour } from "../../src/tools/ownership/grouptitle.js";

describe("group title (SECURITY I-83)", () => {
  it("keeps a plain label as it is", () => {
    expect(groupTitle("research-bot")).toBe("research-bot");
    expect(groupTitle("Ünïcødé 漢字 ✓")).toBe("Ünïcødé 漢字 ✓");
  });

  it("removes bidi overrides and isolates, zero-width and control characters", () => {
    // U+202E would show "gnp.exe" as "exe.png"-like reversed text; U+2066..2069 isolate, U+200B/U+200D zero width.
    expect(groupTitle("bank\u202Egnp.exe")).toBe("bank gnp.exe");
    expect(groupTitle("\u2066a\u2069\u200Bb\u200Dc\u200E\u200F\u061C")).toBe("a b c");
    expect(groupTitle("line1\nline2\r\tx\u0000y\u007F\u0085z")).toBe("line1 line2 x y z");
    expect(groupTitle("a\u2028b\u2029c\uFEFFd")).toBe("a b c d");
    for (const t of [groupTitle("x\u202A\u202B\u202C\u202D\u202Ey"), groupTitle("\u00ADsoft")]) expect(t).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  });

  it("collapses runs of spaces and trims", () => {
    expect(groupTitle("   two    words  ")).toBe("two words");
  });

  it("caps the length, cutting between code points and marking the cut", () => {
    const long = "a".repeat(200);
    const t = groupTitle(long);
    expect(Array.from(t)).toHaveLength(TITLE_MAX);
    expect(t.endsWith("…")).toBe(true);
    const emoji = groupTitle("😀".repeat(40));
    expect(Array.from(emoji)).toHaveLength(TITLE_MAX);
    expect(Buffer.from(emoji).toString(), "no half of a surrogate pair left (UTF-8 would replace it)").toBe(emoji);
    expect(groupTitle("b".repeat(TITLE_MAX))).toBe("b".repeat(TITLE_MAX));
  });

  it("an empty or invisible label gets a plain word", () => {
    expect(groupTitle("")).toBe(UNTITLED);
    expect(groupTitle("\u202E\u200B \n")).toBe(UNTITLED);
  });
});

describe("group colour", () => {
  it("is stable for a session", () => {
    expect(pickColour("s-1", [])).toBe(pickColour("s-1", []));
  });

  it("differs from the colours other sessions' groups use", () => {
    const used: string[] = [];
    for (let i = 0; i < COLOURS.length; i++) {
      const c = pickColour(`session-${i}`, used);
      expect(used).not.toContain(c);
      used.push(c);
    }
    expect(new Set(used).size).toBe(COLOURS.length);
    // Grey comes last: only once every bright colour is taken.
    expect(used.indexOf("grey")).toBe(COLOURS.length - 1);
    // All taken: still a real colour, the session's own.
    expect(COLOURS).toContain(pickColour("one-more", used));
  });
});

const tab = (id: number, o: Partial<TabFacts> = {}): TabFacts => ({ id, windowId: 1, groupId: -1, pinned: false, normalWindow: true, ...o });

/** Carries a plan out the way groups.ts does, with made-up group ids. */
let nextGroup = 100;
function carry(b: Book, sessionId: string, label: string, t: TabFacts, grant = false): number | undefined {
  const p = grant ? planGrant(b, sessionId, label, t) : planOwned(b, sessionId, label, t);
  if (p.do === "none") return undefined;
  if (p.do === "join") {
    joined(b, p.groupId, t.id);
    return p.groupId;
  }
  const groupId = nextGroup++;
  created(b, { groupId, sessionId, windowId: p.windowId, title: p.title, color: p.color, ...(grant ? { grantTab: t.id } : {}) }, t.id);
  return groupId;
}

describe("the book: which tabs Torii groups (SECURITY I-83)", () => {
  it("a session's tabs share one group per window, titled with the cleaned label", () => {
    const b = emptyBook();
    const p = planOwned(b, "s1", "alpha\u202E", tab(1));
    expect(p).toMatchObject({ do: "create", windowId: 1, title: "alpha" });
    const g = carry(b, "s1", "alpha", tab(1))!;
    expect(planOwned(b, "s1", "alpha", tab(2))).toEqual({ do: "join", groupId: g });
    expect(planOwned(b, "s1", "alpha", tab(3, { windowId: 2 }))).toMatchObject({ do: "create", windowId: 2 });
  });

  it("two sessions get two groups of different colours", () => {
    const b = emptyBook();
    const g1 = carry(b, "s1", "one", tab(1))!;
    const g2 = carry(b, "s2", "two", tab(2))!;
    expect(g1).not.toBe(g2);
    expect(b.groups[g1]!.color).not.toBe(b.groups[g2]!.color);
    expect(lookOf(b, "s1", "ignored").color).toBe(b.groups[g1]!.color);
  });

  it("leaves alone a tab in a group already, a pinned tab, and a tab in a popup window", () => {
    const b = emptyBook();
    expect(planOwned(b, "s1", "a", tab(1, { groupId: 7 }))).toMatchObject({ do: "none" });
    expect(planOwned(b, "s1", "a", tab(1, { pinned: true }))).toMatchObject({ do: "none" });
    expect(planOwned(b, "s1", "a", tab(1, { normalWindow: false }))).toMatchObject({ do: "none" });
    expect(planGrant(b, "s1", "a", tab(9, { groupId: 7 }))).toMatchObject({ do: "none", why: "the tab is in a group already" });
  });

  it("a granted tab gets a group of its own where it stands, never the session's group elsewhere", () => {
    const b = emptyBook();
    const own = carry(b, "s1", "a", tab(1))!;
    const p = planGrant(b, "s1", "a", tab(50, { windowId: 1 }));
    expect(p).toMatchObject({ do: "create", windowId: 1, title: "a", color: b.groups[own]!.color });
    const gg = carry(b, "s1", "a", tab(50), true)!;
    expect(b.groups[gg]!.grantTab).toBe(50);
    // The session's next own tab still joins its own group, not the grant's.
    expect(planOwned(b, "s1", "a", tab(2))).toEqual({ do: "join", groupId: own });
  });

  it("a grant that ends takes its tab out only while it is still in Torii's group", () => {
    const b = emptyBook();
    const gg = carry(b, "s1", "a", tab(50), true)!;
    expect(endedGrants(b, [{ sessionId: "s1", tabId: 50 }])).toEqual([]);
    expect(endedGrants(b, []).map((g) => g.groupId)).toEqual([gg]);
    expect(releaseGrant(b, gg, gg)).toBe(gg);
    expect(b.groups[gg]).toBeUndefined();
    // The person moved it to a group of theirs meanwhile: it stays there.
    const g2 = carry(b, "s1", "a", tab(51), true)!;
    expect(releaseGrant(b, g2, 999)).toBeUndefined();
    expect(releaseGrant(b, g2, g2)).toBeUndefined(); // forgotten already: never twice
  });
});

describe("the book: the person's word stands (SECURITY I-83)", () => {
  it("a renamed or recoloured group keeps the person's look, and later groups take it", () => {
    const b = emptyBook();
    const g = carry(b, "s1", "alpha", tab(1))!;
    const { title, color } = b.groups[g]!;
    groupSeen(b, g, title, color); // Torii's own update coming back: nothing changes
    expect(b.looks.s1!.edited).toBeUndefined();
    groupSeen(b, g, "mine", "green");
    expect(b.looks.s1).toMatchObject({ title: "mine", color: "green", edited: true });
    expect(planOwned(b, "s1", "alpha", tab(2))).toEqual({ do: "join", groupId: g });
    expect(planOwned(b, "s1", "alpha", tab(3, { windowId: 2 }))).toMatchObject({ do: "create", title: "mine", color: "green" });
    groupSeen(b, 12345, "x", "red"); // not Torii's group
    expect(b.looks.s1!.title).toBe("mine");
  });

  it("a group ungrouped while its tabs stay open ends grouping for that session only", () => {
    const b = emptyBook();
    const g = carry(b, "s1", "a", tab(1))!;
    carry(b, "s1", "a", tab(2));
    carry(b, "s2", "b", tab(3));
    // Chrome reports the tabs' new group (none) once the group is gone: left to groupRemoved.
    tabMoved(b, 1, -1, () => false);
    tabMoved(b, 2, -1, () => false);
    expect(membersOf(b, g)).toEqual([1, 2]);
    expect(groupRemoved(b, g, [1, 2])).toBe(true);
    expect(b.looks.s1!.declined).toBe(true);
    expect(planOwned(b, "s1", "a", tab(4))).toMatchObject({ do: "none", why: "the person removed this session's group" });
    expect(planGrant(b, "s1", "a", tab(60))).toMatchObject({ do: "none" });
    expect(planOwned(b, "s2", "b", tab(5))).toMatchObject({ do: "join" });
    // A new session (a new id, even with the same label) is grouped again.
    expect(planOwned(b, "s9", "a", tab(6))).toMatchObject({ do: "create" });
  });

  it("a group that went because its tabs closed is only forgotten", () => {
    const b = emptyBook();
    const g = carry(b, "s1", "a", tab(1))!;
    tabGone(b, 1);
    expect(groupRemoved(b, g, [])).toBe(false);
    expect(b.looks.s1!.declined).toBeUndefined();
    expect(planOwned(b, "s1", "a", tab(2))).toMatchObject({ do: "create" });
    expect(groupRemoved(b, 4242, [1])).toBe(false); // not Torii's
  });

  it("a tab the person takes out of a group that stays is left out, the group kept", () => {
    const b = emptyBook();
    const g = carry(b, "s1", "a", tab(1))!;
    carry(b, "s1", "a", tab(2));
    tabMoved(b, 2, -1, (id) => id === g);
    expect(b.out).toEqual([2]);
    expect(membersOf(b, g)).toEqual([1]);
    expect(planOwned(b, "s1", "a", tab(2))).toMatchObject({ do: "none", why: "the person took this tab out of its group" });
    // Torii's own join reported back: not a move out.
    tabMoved(b, 1, g, () => true);
    expect(b.out).toEqual([2]);
    // Later the group goes with its last tab closed: not a removal by the person, though tab 2 is open.
    tabGone(b, 1);
    expect(groupRemoved(b, g, [])).toBe(false);
    expect(b.looks.s1!.declined).toBeUndefined();
    tabGone(b, 2);
    expect(b.out).toEqual([]);
  });

  it("a granted tab the person ungroups while the grant lasts ends grouping for that session", () => {
    const b = emptyBook();
    const gg = carry(b, "s1", "a", tab(50), true)!;
    tabMoved(b, 50, -1, () => false);
    expect(groupRemoved(b, gg, [50])).toBe(true);
    expect(planGrant(b, "s1", "a", tab(50))).toMatchObject({ do: "none" });
  });

  it("survives a worker restart through storage, and drops malformed records", () => {
    const b = emptyBook();
    const g = carry(b, "s1", "a", tab(1))!;
    b.out.push(5);
    const back = restoreBook(structuredClone(b));
    expect(back).toEqual(b);
    expect(restoreBook(undefined)).toEqual(emptyBook());
    expect(restoreBook({ looks: { x: { title: 1, color: "red" } }, groups: { 1: { groupId: "no" } }, out: ["7", 8] })).toEqual({ looks: {}, groups: {}, out: [8] });
    expect(back.groups[g]!.tabs).toEqual([1]);
  });
});

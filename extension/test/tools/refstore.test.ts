import { describe, expect, it } from "vitest";
import { lookupTag, MAX_DOCS, parseRef, recordTag, RefStore, TAG_BLOCK, type TabRefs } from "../../src/tools/refstore.js";
import { tagIndex, tagName } from "../../src/shared/refname.js";

function memKV() {
  const mem = new Map<string, unknown>();
  return { mem, kv: { get: async (k: string) => mem.get(k), set: async (k: string, v: unknown) => void mem.set(k, v), remove: async (k: string) => void mem.delete(k) } };
}

describe("ref format", () => {
  it("parses tag and number; refuses the rest", () => {
    expect(parseRef("b12")).toEqual({ tag: "b", n: 12 });
    expect(parseRef("ab3")).toEqual({ tag: "ab", n: 3 });
    for (const bad of ["e0", "12", "b1x", "B12", "h1", "h2", "ah3", "b", "", "b012", "ref=b1"]) expect(parseRef(bad), bad).toBeUndefined();
  });
  it("tags count in bijective base 25 without h, and round-trip", () => {
    expect([0, 1, 6, 7, 24, 25, 26, 649, 650].map(tagName)).toEqual(["a", "b", "g", "i", "z", "aa", "ab", "zz", "aaa"]);
    for (let i = 0; i < 20000; i += 7) {
      const t = tagName(i);
      expect(t.includes("h"), t).toBe(false);
      expect(tagIndex(t)).toBe(i);
    }
  });
});

describe("refstore", () => {
  it("records each tag once, bound to its frame and document", () => {
    let t: TabRefs = { docs: [] };
    t = recordTag(t, 0, "docA", "a");
    const same = recordTag(t, 0, "docA", "a");
    expect(same).toBe(t);
    t = recordTag(t, 5, "docB", "b");
    expect(lookupTag(t, "a")).toMatchObject({ frameId: 0, docId: "docA" });
    expect(lookupTag(t, "b")).toMatchObject({ frameId: 5, docId: "docB" });
    expect(lookupTag(t, "c")).toBeUndefined();
    for (let i = 0; i < MAX_DOCS; i++) t = recordTag(t, 0, `d${i}`, tagName(10 + i));
    expect(t.docs.length).toBe(MAX_DOCS);
    expect(lookupTag(t, "a")).toBeUndefined(); // forgotten: stale, never another document
  });

  it("a recorded binding is known at once and written after", async () => {
    const { kv, mem } = memKV();
    const s = new RefStore(kv);
    const t = await s.offer();
    await s.record(3, 2, "docZ", t);
    expect(await s.lookup(3, `${t}1`)).toMatchObject({ frameId: 2, docId: "docZ" });
    await s.flushed();
    expect(mem.get("torii.refs.3")).toEqual({ docs: [{ tag: t, frameId: 2, docId: "docZ" }] });
  });

  it("offers a tag to one call only; a tag given back is offered again, one taken never", async () => {
    const { kv } = memKV();
    const s = new RefStore(kv);
    const a = await s.offer();
    const b = await s.offer(); // a concurrent call on another tab
    expect(a).not.toBe(b);
    s.release(a); // its document already had a tag
    expect(await s.offer()).toBe(a);
    await s.record(1, 0, "docA", a); // now taken
    const c = await s.offer();
    expect([a, b]).not.toContain(c);
  });

  it("a restarted worker starts above every tag it may have offered, and still knows the tab's tags", async () => {
    const { kv, mem } = memKV();
    const s = new RefStore(kv);
    const offered: string[] = [];
    for (let i = 0; i < 3 * TAG_BLOCK + 3; i++) {
      offered.push(await s.offer());
      // Whatever was offered is below the written mark before the call could use it.
      expect(mem.get("torii.refs.tag") as number).toBeGreaterThan(i);
    }
    await s.record(7, 0, "d", offered[2] as string);
    await s.flushed();
    const r = new RefStore(kv);
    const next = await r.offer();
    expect(offered).not.toContain(next);
    expect(await r.lookup(7, `${offered[2]}3`)).toMatchObject({ docId: "d", frameId: 0 });
    expect(await r.lookup(8, `${offered[2]}3`)).toBeUndefined(); // another tab: never its refs
    await r.drop(7);
    expect(await new RefStore(kv).lookup(7, `${offered[2]}3`)).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { lookupRange, parseRef, recordRange, RefStore, type TabRefs } from "../../src/tools/refstore.js";

describe("ref ranges", () => {
  it("records issued ranges, merges contiguous ones and never lowers the counter", () => {
    let t: TabRefs = { next: 1, ranges: [] };
    t = recordRange(t, 0, "docA", 1, 10);
    t = recordRange(t, 0, "docA", 10, 12);
    t = recordRange(t, 5, "docB", 12, 20);
    t = recordRange(t, 0, "docA", 20, 20); // nothing issued
    expect(t.next).toBe(20);
    expect(t.ranges).toEqual([
      { from: 1, to: 12, frameId: 0, docId: "docA" },
      { from: 12, to: 20, frameId: 5, docId: "docB" },
    ]);
    expect(lookupRange(t, 11)?.docId).toBe("docA");
    expect(lookupRange(t, 12)?.frameId).toBe(5);
    expect(lookupRange(t, 20)).toBeUndefined();
    expect(recordRange(t, 0, "x", 3, 4).next).toBe(20);
  });
  it("parses refs strictly", () => {
    expect(parseRef("e12")).toBe(12);
    expect(parseRef("e0")).toBeUndefined();
    expect(parseRef("12")).toBeUndefined();
    expect(parseRef("e1x")).toBeUndefined();
  });
  it("persists through a new store (worker restart)", async () => {
    const mem = new Map<string, unknown>();
    const kv = { get: async (k: string) => mem.get(k), set: async (k: string, v: unknown) => void mem.set(k, v), remove: async (k: string) => void mem.delete(k) };
    const a = new RefStore(kv);
    await a.record(7, 0, "d", 1, 5);
    const b = new RefStore(kv);
    expect((await b.get(7)).next).toBe(5);
    expect(await b.lookup(7, "e3")).toMatchObject({ docId: "d", frameId: 0 });
    expect(await b.lookup(8, "e3")).toBeUndefined();
    await b.drop(7);
    expect((await new RefStore(kv).get(7)).next).toBe(1);
  });
});

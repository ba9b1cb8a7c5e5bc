import { describe, expect, it } from "vitest";
import { addLink, AuditWitness, WITNESS_MAX, WITNESS_METHOD, type WitnessState } from "../../src/policy/auditwitness.js";

const h = (c: string) => c.repeat(64);

function memStore(init?: unknown) {
  let v: unknown = init;
  return {
    load: async () => v,
    save: async (s: WitnessState) => {
      v = JSON.parse(JSON.stringify(s));
    },
    get: () => v as WitnessState | undefined,
  };
}

describe("audit witness (SECURITY I-70)", () => {
  it("keeps the heads it was shown and hands them back on the next check", async () => {
    const store = memStore();
    const w = new AuditWitness(store, () => 1000);
    const sent: unknown[] = [];
    let head = { seq: 3, hash: h("a") };
    const request = async (m: string, p: unknown) => {
      expect(m).toBe(WITNESS_METHOD);
      sent.push(p);
      return { head, checked: (p as { witnesses: unknown[] }).witnesses.length };
    };
    await w.check("d1", request);
    expect(sent[0]).toEqual({ witnesses: [] });
    head = { seq: 7, hash: h("b") };
    await w.check("d1", request, false); // a refresh after calls sends none
    expect(sent[1]).toEqual({ witnesses: [] });
    const r = await w.check("d1", request);
    expect(sent[2]).toEqual({ witnesses: [{ seq: 3, hash: h("a") }, { seq: 7, hash: h("b") }] });
    expect(r.mismatch).toBeUndefined();
    expect(store.get()?.checkedAt).toBe(1000);
  });

  it("on a mismatch keeps it, and the links it holds, for every later check", async () => {
    const store = memStore({ daemonId: "d1", links: [{ seq: 3, hash: h("a") }] });
    const w = new AuditWitness(store);
    const sent: unknown[] = [];
    const request = async (_m: string, p: unknown) => {
      sent.push(p);
      return { head: { seq: 9, hash: h("c") }, checked: 1, mismatch: "record 3 in the store is not the one the browser saw" };
    };
    const r = await w.check("d1", request);
    expect(r.mismatch).toContain("record 3");
    expect(store.get()?.mismatch).toContain("record 3");
    await w.check("d1", request);
    expect(sent[1]).toEqual({ witnesses: [{ seq: 3, hash: h("a") }] }); // frozen: the evidence is sent again
    await w.clear();
    expect(store.get()).toEqual({ daemonId: "d1", links: [] });
  });

  it("starts afresh for another daemon and rejects a malformed answer or stored state", async () => {
    const store = memStore({ daemonId: "old", links: [{ seq: 3, hash: h("a") }, { seq: "x", hash: "zz" }] });
    const w = new AuditWitness(store);
    const sent: unknown[] = [];
    await w.check("new", async (_m, p) => {
      sent.push(p);
      return { head: { seq: 1, hash: h("d") } };
    });
    expect(sent[0]).toEqual({ witnesses: [] });
    expect(store.get()).toMatchObject({ daemonId: "new", links: [{ seq: 1, hash: h("d") }] });
    await expect(w.check("new", async () => ({ head: { seq: 1, hash: "nothex" } }))).rejects.toThrow(/no chain head/);
    expect((await new AuditWitness(memStore({ daemonId: "d", links: [{ seq: -1, hash: h("a") }] })).state())?.links).toEqual([]);
  });

  it("bounds the links, newest kept, and ignores an empty chain's head", () => {
    let links: { seq: number; hash: string }[] = [];
    for (let i = 1; i <= WITNESS_MAX + 5; i++) links = addLink(links, { seq: i, hash: h("e") });
    expect(links.length).toBe(WITNESS_MAX);
    expect(links[0]?.seq).toBe(6);
    expect(addLink([], { seq: 0, hash: h("0") })).toEqual([]);
  });
});

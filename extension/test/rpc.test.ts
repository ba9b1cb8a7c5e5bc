import { afterEach, describe, expect, it, vi } from "vitest";
import { METHOD_NOT_FOUND, PARSE_ERROR, RpcClosedError, RpcError, RpcPeer, RpcTimeoutError, registerHandler } from "../src/background/rpc.js";

function pair() {
  const out: unknown[] = [];
  const peer = new RpcPeer({ send: (t) => out.push(JSON.parse(t)) }, new Map());
  return { peer, out };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

afterEach(() => {
  vi.useRealTimers();
});

describe("RpcPeer", () => {
  it("answers an unknown method with -32601 and keeps going", async () => {
    const { peer, out } = pair();
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "mcp/nothing", params: {} }));
    await tick();
    expect(out).toEqual([{ jsonrpc: "2.0", id: 7, error: { code: METHOD_NOT_FOUND, message: "method not found: mcp/nothing" } }]);
    peer.receive(JSON.stringify({ jsonrpc: "2.0", method: "mcp/nothing" })); // notification: no reply
    await tick();
    expect(out).toHaveLength(1);
  });

  it("answers a non-JSON frame with -32700 and id null", () => {
    const { peer, out } = pair();
    peer.receive("{nope");
    expect(out).toEqual([{ jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: "parse error" } }]);
  });

  it("dispatches to handlers and turns RpcError into an error reply", async () => {
    const { peer, out } = pair();
    peer.handle("echo", (p) => p);
    peer.handle("fail", () => {
      throw new RpcError(-32602, "bad params", { field: "x" });
    });
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: "a", method: "echo", params: { x: 1 } }));
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: "b", method: "fail" }));
    await tick();
    expect(out).toHaveLength(2);
    expect(out).toContainEqual({ jsonrpc: "2.0", id: "a", result: { x: 1 } });
    expect(out).toContainEqual({ jsonrpc: "2.0", id: "b", error: { code: -32602, message: "bad params", data: { field: "x" } } });
  });

  it("uses the global registry by default (the hook later issues register mcp/* on)", async () => {
    const off = registerHandler("test/global", () => ({ ok: true }));
    const out: unknown[] = [];
    const peer = new RpcPeer({ send: (t) => out.push(JSON.parse(t)) });
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "test/global" }));
    await tick();
    off();
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "test/global" }));
    await tick();
    expect(out).toEqual([
      { jsonrpc: "2.0", id: 1, result: { ok: true } },
      { jsonrpc: "2.0", id: 2, error: { code: METHOD_NOT_FOUND, message: "method not found: test/global" } },
    ]);
  });

  it("correlates results and errors by id", async () => {
    const { peer, out } = pair();
    const a = peer.request("a", { n: 1 });
    const b = peer.request("b");
    expect(out).toEqual([
      { jsonrpc: "2.0", id: 1, method: "a", params: { n: 1 } },
      { jsonrpc: "2.0", id: 2, method: "b" },
    ]);
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 2, error: { code: -32003, message: "pairing_denied" } }));
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { ok: 1 } }));
    await expect(a).resolves.toEqual({ ok: 1 });
    await expect(b).rejects.toMatchObject({ name: "RpcError", code: -32003 });
  });

  it("times out a request that gets no reply and ignores the late reply", async () => {
    vi.useFakeTimers();
    const { peer } = pair();
    const p = peer.request("slow", {}, 1000);
    const seen = expect(p).rejects.toBeInstanceOf(RpcTimeoutError);
    vi.advanceTimersByTime(999);
    expect(peer.pendingCount).toBe(1);
    vi.advanceTimersByTime(1);
    await seen;
    expect(peer.pendingCount).toBe(0);
    peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} }));
  });

  it("fails pending requests when closed, and later ones at once", async () => {
    const { peer } = pair();
    const p = peer.request("x");
    peer.close();
    await expect(p).rejects.toBeInstanceOf(RpcClosedError);
    await expect(peer.request("y")).rejects.toBeInstanceOf(RpcClosedError);
  });
});

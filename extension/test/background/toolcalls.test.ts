// Replays the golden link transcripts (testdata/link at the repository root, shared with the Go
// test internal/browserlink/transcript_test.go) against the worker's side: the test plays the
// daemon, frame by frame, and the worker must answer with exactly the transcript's frames.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RpcPeer, type Handler, type HandlerContext } from "../../src/background/rpc.js";
import { METHOD_CALL, ToolCalls } from "../../src/background/toolcalls.js";
import { asToolError, errorResult, type CallToolResult } from "../../src/tools/errors.js";
import type { McpTool } from "../../src/tools/registry.js";

interface Step {
  daemon?: Record<string, unknown>;
  extension?: Record<string, unknown>;
  do?: "call" | "cancel" | "close" | "connect" | "finish";
  answer?: CallToolResult;
}
interface Transcript {
  description: string;
  tools: McpTool[];
  call: { tool: string; arguments: unknown; deadlineMs: number };
  steps: Step[];
}

const dir = new URL("../../../testdata/link/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".json"));

function substitute(v: unknown, deadline: number): unknown {
  if (v === "$deadline") return deadline;
  if (Array.isArray(v)) return v.map((x) => substitute(x, deadline));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, deadline)]));
  return v;
}

/** The worker's side on one socket: every frame it sends, awaited in order. */
function socket(handlers: ReadonlyMap<string, Handler>) {
  const sent: unknown[] = [];
  const waiting: ((f: unknown) => void)[] = [];
  const peer = new RpcPeer(
    {
      send: (t) => {
        const f = JSON.parse(t) as unknown;
        const w = waiting.shift();
        if (w) w(f);
        else sent.push(f);
      },
    },
    handlers,
  );
  const next = () => (sent.length ? Promise.resolve(sent.shift()) : new Promise<unknown>((r) => waiting.push(r)));
  return { peer, next, sent };
}

describe("link transcripts: the worker's side", () => {
  it("finds every transcript", () => {
    expect(files.sort()).toEqual(["call.json", "cancel.json", "deadline.json", "disconnect.json", "error.json", "reconnect.json"]);
  });

  for (const file of files) {
    it(file, async () => {
      const tr = JSON.parse(readFileSync(new URL(file, dir), "utf8")) as Transcript;
      const deadline = Date.now() + tr.call.deadlineMs;
      const seen: { name: unknown; args: unknown; deadline: number }[] = [];
      let finish: ((r: CallToolResult) => void) | undefined;
      let connected = 0;
      const calls = new ToolCalls({
        listTools: () => tr.tools,
        // The runtime's callTool as far as the link sees it: it runs until the tool ends or is aborted.
        callTool: (name, args, signal, _meta, d) => {
          seen.push({ name, args, deadline: d });
          return new Promise<CallToolResult>((resolve) => {
            finish = resolve;
            signal.addEventListener("abort", () => resolve(errorResult(asToolError(signal.reason))), { once: true });
          });
        },
        sessionEnded: () => undefined,
        connected: () => connected++,
      });
      const handled: Promise<unknown>[] = [];
      const handlers = new Map<string, Handler>();
      calls.install((m, fn) =>
        handlers.set(m, (p: unknown, ctx: HandlerContext) => {
          const r = Promise.resolve(fn(p, ctx));
          handled.push(r.catch(() => undefined));
          return r;
        }),
      );
      let s = socket(handlers);
      for (const st of tr.steps) {
        if (st.daemon) s.peer.receive(JSON.stringify(substitute(st.daemon, deadline)));
        else if (st.extension) expect(await s.next()).toEqual(st.extension);
        else if (st.do === "close") s.peer.close();
        else if (st.do === "connect") s = socket(handlers);
        else if (st.do === "finish") finish?.(st.answer as CallToolResult);
      }
      await Promise.all(handled);
      await new Promise((r) => setTimeout(r, 0)); // the peer's reply follows its handler by a task
      // Nothing the transcript does not have: after a drop, the answer has nowhere to go.
      expect(s.sent).toEqual([]);
      expect(calls.inflightCount).toBe(0);
      // The call ran under the daemon's one deadline, as sent.
      const sentCall = tr.steps.some((x) => x.daemon?.method === METHOD_CALL);
      expect(seen).toEqual(sentCall ? [{ name: tr.call.tool, args: tr.call.arguments, deadline }] : []);
      expect(connected).toBe(tr.steps.filter((x) => x.daemon?.method === "torii/tools/list").length);
    });
  }
});

describe("torii/tools/call refuses what is not a call", () => {
  it("answers -32602 for a missing callId, tool or deadline, and a callId already running", async () => {
    const calls = new ToolCalls({
      listTools: () => [],
      callTool: () => new Promise<CallToolResult>(() => undefined),
      sessionEnded: () => undefined,
      connected: () => undefined,
    });
    const handlers = new Map<string, Handler>();
    calls.install((m, fn) => handlers.set(m, fn as Handler));
    const s = socket(handlers);
    const bad = [
      { tool: "click", deadline: Date.now() + 1_000 },
      { callId: "c1", deadline: Date.now() + 1_000 },
      { callId: "c1", tool: "click" },
      { callId: "c1", tool: "click", deadline: "soon" },
      { callId: "x".repeat(65), tool: "click", deadline: Date.now() + 1_000 },
    ];
    bad.forEach((params, i) => s.peer.receive(JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: METHOD_CALL, params })));
    for (let i = 0; i < bad.length; i++) expect(await s.next()).toMatchObject({ error: { code: -32602 } });
    const ok = { callId: "c1", tool: "click", deadline: Date.now() + 1_000 };
    s.peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 10, method: METHOD_CALL, params: ok }));
    s.peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 11, method: METHOD_CALL, params: ok }));
    expect(await s.next()).toMatchObject({ id: 11, error: { code: -32602, message: expect.stringContaining("already running") } });
  });

  it("a cancel from another socket leaves the call alone", async () => {
    let aborted = false;
    const calls = new ToolCalls({
      listTools: () => [],
      callTool: (_n, _a, signal) =>
        new Promise<CallToolResult>(() => {
          signal.addEventListener("abort", () => (aborted = true));
        }),
      sessionEnded: () => undefined,
      connected: () => undefined,
    });
    const handlers = new Map<string, Handler>();
    calls.install((m, fn) => handlers.set(m, fn as Handler));
    const a = socket(handlers);
    const b = socket(handlers);
    a.peer.receive(JSON.stringify({ jsonrpc: "2.0", id: 1, method: METHOD_CALL, params: { callId: "c1", tool: "click", deadline: Date.now() + 1_000 } }));
    b.peer.receive(JSON.stringify({ jsonrpc: "2.0", method: "torii/tools/cancel", params: { callId: "c1" } }));
    expect(aborted).toBe(false);
    a.peer.receive(JSON.stringify({ jsonrpc: "2.0", method: "torii/tools/cancel", params: { callId: "c1" } }));
    expect(aborted).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { RpcPeer, type Handler } from "../../src/background/rpc.js";
import { McpProvider } from "../../src/mcp/provider.js";
import type { CallToolResult } from "../../src/tools/errors.js";
import { errorResult, toolError } from "../../src/tools/errors.js";

const SERVER = "11111111-2222-3333-4444-555555555555";

function setup() {
  const out: Record<string, unknown>[] = [];
  const handlers = new Map<string, Handler>();
  const calls: { name: unknown; args: unknown }[] = [];
  const provider = new McpProvider({
    serverId: () => SERVER,
    version: "9.9.9",
    listTools: () => [{ name: "echo", description: "d", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }],
    callTool: (name, args, signal) => {
      calls.push({ name, args });
      if (name === "slow") {
        return new Promise<CallToolResult>((resolve) => {
          signal.addEventListener("abort", () => resolve(errorResult(toolError("cancelled", "cancelled"))));
        });
      }
      return Promise.resolve({ content: [{ type: "text", text: JSON.stringify(args) }] });
    },
    newId: () => "conn-1",
  });
  provider.install((m, fn) => handlers.set(m, fn as Handler));
  const peer = new RpcPeer({ send: (t) => out.push(JSON.parse(t)) }, handlers);
  const send = (msg: object) => peer.receive(JSON.stringify({ jsonrpc: "2.0", ...msg }));
  const tick = () => new Promise((r) => setTimeout(r, 0));
  return { out, send, tick, calls, provider, handlers };
}

describe("MCP-over-ACP provider", () => {
  it("connects only to the declared server (Gen A acpId, Gen B serverId)", async () => {
    const { out, send, tick } = setup();
    send({ id: 1, method: "mcp/connect", params: { acpId: "other" } });
    send({ id: 2, method: "mcp/connect", params: { acpId: SERVER } });
    send({ id: 3, method: "mcp/connect", params: { serverId: SERVER } });
    send({ id: 4, method: "mcp/connect", params: {} });
    await tick();
    expect(out[0]).toMatchObject({ id: 1, error: { code: -32602 } });
    expect(out[1]).toEqual({ jsonrpc: "2.0", id: 2, result: { connectionId: "conn-1" } });
    expect(out[2]).toMatchObject({ id: 3, result: { connectionId: "conn-1" } });
    expect(out[3]).toMatchObject({ id: 4, error: { code: -32602 } });
  });

  it("speaks flattened inner MCP: initialize, initialized, tools/list, tools/call, ping", async () => {
    const { out, send, tick } = setup();
    send({ id: 1, method: "mcp/connect", params: { serverId: SERVER } });
    await tick();
    send({ id: 2, method: "mcp/message", params: { connectionId: "conn-1", method: "tools/list", params: {} } });
    await tick();
    expect(out[1]).toMatchObject({ id: 2, error: { code: -32600 } });
    send({ id: 3, method: "mcp/message", params: { connectionId: "conn-1", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } } });
    await tick();
    expect(out[2]).toMatchObject({
      id: 3,
      result: { protocolVersion: "2025-06-18", capabilities: { tools: { listChanged: false } }, serverInfo: { name: "torii-extension", version: "9.9.9" } },
    });
    send({ method: "mcp/message", params: { connectionId: "conn-1", method: "notifications/initialized" } });
    await tick();
    expect(out).toHaveLength(3); // notification: no reply
    send({ id: 4, method: "mcp/message", params: { connectionId: "conn-1", method: "tools/list", params: {} } });
    send({ id: 5, method: "mcp/message", params: { connectionId: "conn-1", method: "tools/call", params: { name: "echo", arguments: { a: 1 } } } });
    send({ id: 6, method: "mcp/message", params: { connectionId: "conn-1", method: "ping" } });
    send({ id: 7, method: "mcp/message", params: { connectionId: "conn-1", method: "resources/list" } });
    send({ id: 8, method: "mcp/message", params: { connectionId: "nope", method: "ping" } });
    await tick();
    await tick();
    const byId = new Map(out.map((m) => [m.id, m]));
    expect(byId.get(4)).toMatchObject({ result: { tools: [{ name: "echo" }] } });
    expect(byId.get(5)).toMatchObject({ result: { content: [{ type: "text", text: '{"a":1}' }] } });
    expect(byId.get(6)).toMatchObject({ result: {} });
    expect(byId.get(7)).toMatchObject({ error: { code: -32601 } });
    expect(byId.get(8)).toMatchObject({ error: { code: -32602 } });
  });

  it("answers an unsupported protocol version with its latest", async () => {
    const { out, send, tick } = setup();
    send({ id: 1, method: "mcp/connect", params: { serverId: SERVER } });
    await tick();
    send({ id: 2, method: "mcp/message", params: { connectionId: "conn-1", method: "initialize", params: { protocolVersion: "2024-11-05" } } });
    await tick();
    expect(out[1]).toMatchObject({ result: { protocolVersion: "2025-11-25" } });
  });

  it("mcp/cancel aborts the in-flight call by outer id; disconnect forgets the connection", async () => {
    const { out, send, tick } = setup();
    send({ id: 1, method: "mcp/connect", params: { serverId: SERVER } });
    await tick();
    send({ id: 2, method: "mcp/message", params: { connectionId: "conn-1", method: "initialize", params: { protocolVersion: "2025-11-25" } } });
    send({ id: 3, method: "mcp/message", params: { connectionId: "conn-1", method: "tools/call", params: { name: "slow", arguments: {} } } });
    await tick();
    expect(out.find((m) => m.id === 3)).toBeUndefined();
    send({ method: "mcp/cancel", params: { requestId: 3 } });
    await tick();
    expect(out.find((m) => m.id === 3)).toMatchObject({ result: { isError: true, structuredContent: { error: { code: "cancelled" } } } });
    send({ id: 4, method: "mcp/disconnect", params: { connectionId: "conn-1" } });
    send({ id: 5, method: "mcp/message", params: { connectionId: "conn-1", method: "ping" } });
    await tick();
    expect(out.find((m) => m.id === 4)).toMatchObject({ result: {} });
    expect(out.find((m) => m.id === 5)).toMatchObject({ error: { code: -32602 } });
  });

  it("refuses a connectionId minted on another socket", async () => {
    const { send, tick, handlers } = setup();
    send({ id: 1, method: "mcp/connect", params: { serverId: SERVER } });
    await tick();
    const out2: Record<string, unknown>[] = [];
    const other = new RpcPeer({ send: (t) => out2.push(JSON.parse(t)) }, handlers);
    other.receive(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "mcp/message", params: { connectionId: "conn-1", method: "ping" } }));
    await tick();
    expect(out2[0]).toMatchObject({ id: 9, error: { code: -32602 } });
  });
});

// An agent's side of Torii: the official MCP TypeScript SDK client speaking stdio to a spawned
// `torii mcp` (pointed at a test daemon through TORII_STATE_DIR / TORII_CONFIG_DIR).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { toriiBin } from "./env.ts";
import type { Torii } from "./torii.ts";
import { Tail, pollUntil } from "./util.ts";

/**
 * SECURITY I-78: the first line of a text block that carries what a page wrote, and the value of
 * structuredContent.untrusted beside it (extension/src/tools/define.ts PAGE_DATA_MARK).
 */
export const PAGE_DATA_MARK = "[page data]";

export interface ToolResult {
  isError: boolean;
  /** The first text block, without the page-data line (`pageData` says whether it had one). */
  text: string;
  /** A text block started with the page-data line; structuredContent, when present, said so too (checked). */
  pageData: boolean;
  /** structuredContent ({} when absent). */
  data: Record<string, unknown>;
  images: { data: string; mimeType: string }[];
  /** For an error: structuredContent.error. */
  error?: { code: string; message: string; hint?: string; [k: string]: unknown };
  /** Wall time of the round trip, ms. */
  ms: number;
}

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
}

export class Mcp {
  readonly log = new Tail();
  private constructor(
    readonly client: Client,
    private readonly transport: StdioClientTransport,
    private readonly torii: Torii,
  ) {}

  /**
   * Spawns `torii mcp` for this daemon (with extra flags, e.g. --browser) and completes MCP initialize.
   * `command` is what runs torii (default the built binary; e.g. an installed npm package's bin).
   */
  static async connect(torii: Torii, label = "e2e", extraArgs: string[] = [], command = toriiBin): Promise<Mcp> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(torii.env)) if (v !== undefined) env[k] = v;
    const transport = new StdioClientTransport({ command, args: ["mcp", "--session-label", label, ...extraArgs], env, stderr: "pipe" });
    const client = new Client({ name: "torii-e2e", version: "0.0.0" });
    const m = new Mcp(client, transport, torii);
    transport.stderr?.on("data", (d: Buffer) => m.log.push(d.toString("utf8")));
    await client.connect(transport);
    return m;
  }

  async listTools(): Promise<ListedTool[]> {
    const r = await this.client.listTools();
    return r.tools as ListedTool[];
  }

  /**
   * Waits until the extension's tool server is attached, then returns tools/list. (The list alone
   * says nothing: before any browser the daemon lists the catalogue built into the binary.)
   */
  async waitForCatalogue(timeoutMs = 20_000): Promise<ListedTool[]> {
    await pollUntil("the extension's tool server to attach", async () => {
      const r = await this.torii.cli(["tools"]);
      return r.code === 0 && !r.stderr.includes("not connected") ? true : undefined;
    }, { timeoutMs, intervalMs: 100 });
    return this.listTools();
  }

  /** One tools/call; never throws for a tool error (isError), only for a protocol failure. */
  async call(name: string, args: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<ToolResult> {
    const t0 = performance.now();
    const r = (await this.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })) as {
      isError?: boolean;
      content?: { type: string; text?: string; data?: string; mimeType?: string }[];
      structuredContent?: Record<string, unknown>;
    };
    const ms = performance.now() - t0;
    const content = r.content ?? [];
    const data = r.structuredContent ?? {};
    const marked = (t: string) => t === PAGE_DATA_MARK || t.startsWith(`${PAGE_DATA_MARK}\n`);
    const texts = content.filter((c) => c.type === "text").map((c) => c.text ?? "");
    const pageData = texts.some(marked);
    // A client reading only the text and one reading only structuredContent must be told the same.
    if (r.structuredContent && (data.untrusted === "page") !== pageData) {
      throw new Error(`${name}: the text ${pageData ? "is" : "is not"} marked as page data, structuredContent.untrusted is ${JSON.stringify(data.untrusted)}`);
    }
    const first = texts[0] ?? "";
    const out: ToolResult = {
      isError: r.isError === true,
      text: marked(first) ? first.slice(PAGE_DATA_MARK.length + 1) : first,
      pageData,
      data,
      images: content.filter((c) => c.type === "image").map((c) => ({ data: c.data ?? "", mimeType: c.mimeType ?? "" })),
      ms,
    };
    if (out.isError) {
      const e = data.error as ToolResult["error"] | undefined;
      // The typed code is also the text's prefix: "<code>: <message>\nhint: …".
      out.error = e ?? { code: /^([a-z_]+):/.exec(out.text)?.[1] ?? "", message: out.text };
    }
    return out;
  }

  /** A call that must succeed; throws with the tool's own error text otherwise. */
  async ok(name: string, args: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<ToolResult> {
    const r = await this.call(name, args, timeoutMs);
    if (r.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${r.text}`);
    return r;
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => {});
  }
}

/** `button "Save" [b12]` lines → the ref of the first line matching role and name. */
export function refOf(snapshot: string, role: string, name: string | RegExp): string {
  // Also inside compact table rows: `row: Alice | 42 | button "Edit" [b5] | …`.
  const re = /(?:^|\s|\|)([a-z]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s+\[([a-gi-z]+\d+)\]/g;
  for (const line of snapshot.split("\n")) {
    for (const m of line.matchAll(re)) {
      if (m[1] !== role) continue;
      const n = (m[2] ?? "").replace(/\\(.)/g, "$1");
      if (typeof name === "string" ? n === name : name.test(n)) return m[3] as string;
    }
  }
  throw new Error(`no ${role} ${String(name)} with a ref in:\n${snapshot.slice(0, 4000)}`);
}

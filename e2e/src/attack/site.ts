// The attack site: three loopback origins serving the same routes. A (the one the person allows),
// B (another port on the same host: same site, cross origin, same renderer process) and C (another
// loopback address: cross site, so Chromium puts its frames out of process). Every server logs the
// requests that reach it, and the pages beacon what they observe (keys, clicks, focus, input,
// submissions, dialog answers) back to their own server, so "what reached the attacker" is read from
// the log, never from Torii's own report.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { Ctx, Reply } from "./html.ts";
import { routeFor } from "./pages.ts";
import { type Role, ROLES } from "./secrets.ts";

interface LogEntry {
  role: Role;
  method: string;
  path: string;
  query: string;
  body: string;
  headers: Record<string, string>;
  at: number;
}

/** A page's observation, posted to its own server's /beacon. */
export interface Beacon {
  role: Role;
  kind: string;
  data: string;
  url: string;
}

/** What a willing attacker answers to any cross-origin request: whatever was asked, with credentials. */
function cors(req: IncomingMessage): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": String(req.headers.origin ?? "*"),
    "Access-Control-Allow-Credentials": "true",
    "Access-Control-Allow-Methods": String(req.headers["access-control-request-method"] ?? "GET, HEAD, POST, PUT, PATCH, DELETE"),
    "Access-Control-Allow-Headers": String(req.headers["access-control-request-headers"] ?? "*"),
    Vary: "Origin",
  };
}

const KEPT_HEADERS = ["referer", "origin", "content-type", "x-agent-secret", "ping-from", "ping-to", "cookie"];

export class AttackSite {
  readonly log: LogEntry[] = [];
  /** Tags of the pages the running test opened; beacons of other tests' pages are ignored. */
  tags = new Set<string>();
  /** Per-key request counters for routes that answer differently the second time. */
  readonly counters = new Map<string, number>();
  private constructor(
    private readonly servers: Server[],
    readonly origin: Record<Role, string>,
  ) {}

  static async start(): Promise<AttackSite> {
    const origin = {} as Record<Role, string>;
    const servers: Server[] = [];
    const site = new AttackSite(servers, origin);
    const hosts: Record<Role, string> = { a: "127.0.0.1", b: "127.0.0.1", c: "127.0.0.2" };
    for (const role of ROLES) {
      const s = createServer((req, res) => site.handle(role, req, res));
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, hosts[role], () => resolve());
      });
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      origin[role] = `http://${hosts[role]}:${ad.port}`;
    }
    return site;
  }

  host(role: Role): string {
    return this.origin[role].replace("http://", "");
  }
  port(role: Role): number {
    return Number(this.origin[role].split(":")[2]);
  }
  /** The allowlist pattern of A. */
  get aPattern(): string {
    return this.host("a");
  }

  url(role: Role, path: string, query: Record<string, string | number> = {}): string {
    const u = new URL(path, this.origin[role]);
    for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
    return u.href;
  }

  /** Lets a gated page (/nav-later?gate=K) start its countdown. */
  openGate(k: string): void {
    this.counters.set(`gate:${k}`, 1);
  }

  clear(): void {
    this.log.length = 0;
    this.tags = new Set();
  }

  requests(role: Role, pathPrefix = "/"): LogEntry[] {
    return this.log.filter((e) => e.role === role && e.path.startsWith(pathPrefix) && e.path !== "/beacon");
  }

  beacons(role: Role, kinds?: readonly string[]): Beacon[] {
    const out: Beacon[] = [];
    for (const e of this.log) {
      if (e.role !== role || e.path !== "/beacon") continue;
      let b: { k?: string; d?: string; u?: string; g?: string } = {};
      try {
        b = JSON.parse(e.body) as typeof b;
      } catch {
        continue;
      }
      const kind = b.k ?? "";
      if (b.g && !this.tags.has(b.g)) continue;
      if (kind === "flush" || (kinds && !kinds.includes(kind))) continue;
      out.push({ role, kind, data: b.d ?? "", url: b.u ?? "" });
    }
    return out;
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }

  private handle(role: Role, req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const u = new URL(req.url ?? "/", this.origin[role]);
      const body = Buffer.concat(chunks).toString("utf8");
      const headers: Record<string, string> = {};
      for (const h of KEPT_HEADERS) {
        const v = req.headers[h];
        if (v !== undefined) headers[h] = Array.isArray(v) ? v.join(", ") : v;
      }
      this.log.push({ role, method: req.method ?? "GET", path: u.pathname, query: u.search, body, headers, at: Date.now() });
      // An attacker answers every cross-origin request, preflights included, so a request the
      // browser was allowed to make arrives with its body.
      if (req.method === "OPTIONS") {
        res.writeHead(204, cors(req)).end();
        return;
      }
      if (u.pathname === "/beacon") {
        res.writeHead(204, { "Access-Control-Allow-Origin": "*", "Cache-Control": "no-store" }).end();
        return;
      }
      const ctx: Ctx = { role, url: u, method: req.method ?? "GET", body, origin: this.origin, counters: this.counters };
      const route = routeFor(u.pathname);
      const reply: Reply = route ? route(ctx) : { status: 404, body: "not found" };
      if (reply.destroy) {
        req.socket.destroy();
        return;
      }
      if (reply.hang) {
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
        res.write(reply.body ?? "");
        return;
      }
      res.writeHead(reply.status ?? 200, {
        "Content-Type": reply.type ?? "text/html; charset=utf-8",
        "Cache-Control": "no-store",
        ...(u.pathname.startsWith("/api/") ? cors(req) : {}),
        ...(reply.headers ?? {}),
      });
      res.end(reply.body ?? "");
    });
  }
}

// Loopback fixture servers, one per host asked for, each keeping a log of the requests it got: a
// test decides a leak from what reached a page's own server as much as from what reached the agent.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";

export interface Hit {
  method: string;
  path: string;
  query: string;
  body: string;
}

/** The page for a URL, or undefined for a 404. */
export type Route = (u: URL) => string | undefined;

export class LoggedSites {
  readonly log = new Map<string, Hit[]>();
  protected constructor(
    private readonly servers: Server[],
    readonly origins: string[],
  ) {}

  /** Starts one server per host (repeat a host for another origin of the same site). */
  protected static async serve(hosts: string[], route: Route): Promise<{ servers: Server[]; origins: string[]; logs: Hit[][] }> {
    const servers: Server[] = [];
    const origins: string[] = [];
    const logs: Hit[][] = [];
    for (const host of hosts) {
      const list: Hit[] = [];
      const s = createServer((req, res) => void handle(req, res, list, route));
      await new Promise<void>((resolve) => s.listen(0, host, () => resolve()));
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      origins.push(`http://${host}:${ad.port}`);
      logs.push(list);
    }
    return { servers, origins, logs };
  }

  protected adopt(logs: Hit[][]): this {
    this.origins.forEach((o, i) => this.log.set(o, logs[i] as Hit[]));
    return this;
  }

  /** The first origin as an allowlist pattern (host:port). */
  get aPattern(): string {
    return (this.origins[0] as string).replace("http://", "");
  }

  hits(origin: string, path?: string): Hit[] {
    return (this.log.get(origin) ?? []).filter((h) => path === undefined || h.path === path);
  }

  clear(): void {
    for (const l of this.log.values()) l.length = 0;
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }
}

async function handle(req: IncomingMessage, res: ServerResponse, log: Hit[], route: Route): Promise<void> {
  const u = new URL(req.url ?? "/", "http://x");
  let body = "";
  for await (const c of req) body += String(c);
  if (u.pathname !== "/favicon.ico") log.push({ method: req.method ?? "", path: u.pathname, query: u.search, body });
  const html = route(u);
  if (html === undefined) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
  res.end(html);
}

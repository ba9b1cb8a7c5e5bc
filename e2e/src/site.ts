// The fixture pages (testdata/pages) served on loopback from two ports, so a page can embed a
// cross-origin iframe (iframes.html?x=PORT), plus a few server-side routes the fixtures cannot
// express as files: a redirect chain (/r1 → /r2 → /final), a page that never finishes loading, and
// an attachment whose file name the query chooses (/attachment?name=…, for download names).
import { readFile } from "node:fs/promises";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { repoRoot } from "./env.ts";

const PAGES = join(repoRoot, "testdata", "pages");
const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css" };

export class Site {
  private constructor(
    private readonly servers: Server[],
    readonly port: number,
    readonly crossPort: number,
  ) {}

  /** Two listeners on free loopback ports serving the same routes. */
  static async start(): Promise<Site> {
    const servers: Server[] = [];
    const ports: number[] = [];
    for (let i = 0; i < 2; i++) {
      const s = createServer((req, res) => void handle(req, res));
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, "127.0.0.1", () => resolve());
      });
      const a = s.address();
      if (a === null || typeof a === "string") throw new Error("no port");
      servers.push(s);
      ports.push(a.port);
    }
    return new Site(servers, ports[0] as number, ports[1] as number);
  }

  /** http://127.0.0.1:PORT/PATH on the main origin. */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}/${path.replace(/^\//, "")}`;
  }
  /** The same path on the second (cross) origin. */
  crossUrl(path: string): string {
    return `http://127.0.0.1:${this.crossPort}/${path.replace(/^\//, "")}`;
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const u = new URL(req.url ?? "/", "http://x");
  const p = u.pathname;
  res.setHeader("Cache-Control", "no-store");
  if (p === "/r1" || p === "/r2") {
    res.writeHead(302, { Location: p === "/r1" ? `/r2${u.search}` : `/final${u.search}` }).end();
    return;
  }
  if (p === "/final") {
    res.writeHead(200, { "Content-Type": TYPES[".html"] });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Final</title></head><body><h1 id="final">Redirected here</h1></body></html>`);
    return;
  }
  if (p === "/slow") {
    // Headers at once, the body never: a load that does not finish.
    res.writeHead(200, { "Content-Type": TYPES[".html"] });
    res.write(`<!doctype html><html><head><title>Slow</title></head><body><p id="slow">partial</p>`);
    return;
  }
  if (p === "/attachment") {
    const name = u.searchParams.get("name") ?? "attachment.txt";
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Disposition": `attachment; filename="${name.replace(/["\\\r\n]/g, "")}"` });
    res.end(`attachment ${name}\n`);
    return;
  }
  const rel = normalize(decodeURIComponent(p === "/" ? "/index.html" : p)).replace(/^(\.\.[/\\])+/, "");
  try {
    const body = await readFile(join(PAGES, rel));
    res.writeHead(200, { "Content-Type": TYPES[extname(rel)] ?? "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
  }
}

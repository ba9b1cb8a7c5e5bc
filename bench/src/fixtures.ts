// The fixture pages, served on loopback to all three servers alike: the repository's shared test
// pages (testdata/pages) and the benchmark's realistic pages (bench/pages). Two origins (two ports)
// so pages can embed a cross-origin iframe (?x=PORT).
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { extname, join, normalize } from "node:path";
import { benchDir, repoRoot } from "./env.ts";

const ROOTS = [join(benchDir, "pages"), join(repoRoot, "testdata", "pages")];
const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml" };

/** A page the benchmark snapshots. `path` may carry a query; `{x}` becomes the second origin's port. */
export interface Page {
  id: string;
  title: string;
  path: string;
  /** Fixed snapshot repetitions (huge pages: a peer takes over a minute per snapshot), no warm-up. */
  reps?: number;
}

export const TABLE_PAGES: Page[] = [
  { id: "rows-100", title: "table, 100 rows", path: "/table.html?rows=100" },
  { id: "rows-1000", title: "table, 1,000 rows", path: "/table.html?rows=1000" },
  { id: "rows-10000", title: "table, 10,000 rows", path: "/table.html?rows=10000", reps: 3 },
];

export const REALISTIC_PAGES: Page[] = [
  { id: "article", title: "long article", path: "/longread.html" },
  { id: "checkout", title: "complex form", path: "/checkout.html" },
  { id: "dashboard", title: "dashboard + data table", path: "/dashboard.html" },
  { id: "app", title: "app: shadow DOM + iframes", path: "/app.html?x={x}" },
];

/** Small pages of the kind agents visit most, for the navigate → snapshot → click round. */
export const SMALL_PAGES: Page[] = [
  { id: "login", title: "sign-in page", path: "/login.html" },
  { id: "contact", title: "contact form", path: "/contact.html" },
  { id: "product", title: "product page", path: "/product.html" },
];

export class Fixtures {
  private servers: Server[] = [];
  ports: number[] = [];

  async start(): Promise<void> {
    for (let i = 0; i < 2; i++) {
      const srv = createServer((req, res) => {
        const u = new URL(req.url ?? "/", "http://x");
        const rel = normalize(decodeURIComponent(u.pathname)).replace(/^(\.\.[/\\])+/, "");
        for (const root of ROOTS) {
          const f = join(root, rel);
          if (f.startsWith(root) && existsSync(f) && statSync(f).isFile()) {
            res.writeHead(200, { "content-type": TYPES[extname(f)] ?? "application/octet-stream", "cache-control": "no-store" });
            createReadStream(f).pipe(res);
            return;
          }
        }
        res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      });
      await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
      const a = srv.address();
      if (a === null || typeof a === "string") throw new Error("fixture server: no port");
      this.servers.push(srv);
      this.ports.push(a.port);
    }
  }

  /** The page's URL on the first origin; `{x}` is the second origin's port. */
  url(p: Page | string, extra = ""): string {
    const path = typeof p === "string" ? p : p.path;
    const withX = path.replace("{x}", String(this.ports[1]));
    const sep = withX.includes("?") ? "&" : "?";
    return `http://127.0.0.1:${this.ports[0]}${withX}${extra ? sep + extra : ""}`;
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(r))));
    this.servers = [];
  }
}

// The credentials site for the capture attacks: three loopback origins on one host (A and A2 on
// the person's list, B off it), so the browser sends the same cookie jar to each (cookies do not
// keep ports apart). A's /login sets an HttpOnly session cookie in its response; the page sets a
// readable one itself, and its script sends Authorization headers and bodies to any of the three.
// Every server logs what reached it, so a test can show the page really sent each value.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";

/** Values that must never reach the agent while their switch is off (each unique in the run). */
export const CRED = {
  /** The HttpOnly session cookie A's /login sets. */
  httpOnly: "HTTPONLY-c00kie-7e41d2",
  /** A cookie the page's script sets (not HttpOnly). */
  readable: "READABLE-c00kie-19af0c",
  /** The bearer token the page's fetches send. */
  token: "AUTH-t0ken-5b7c33",
} as const;

export type CapRole = "a" | "a2" | "b";
const ROLES: readonly CapRole[] = ["a", "a2", "b"];

export interface Seen {
  role: CapRole;
  method: string;
  path: string;
  body: string;
  cookie: string;
  authorization: string;
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Capture credentials</title></head>
<body><h1>capture credentials</h1><script>
  // The page's own requests: the agent never sends them.
  window.login = async () => (await fetch("/login", { method: "POST", credentials: "include" })).status;
  window.setReadable = (v) => { document.cookie = "pref=" + v + "; path=/"; return document.cookie; };
  window.send = async (url, body, token) => {
    const headers = { "Content-Type": "text/plain" };
    if (token) headers.Authorization = "Bearer " + token;
    const r = await fetch(url, { method: "POST", credentials: "include", headers, body });
    return r.status;
  };
</script></body></html>`;

export class CaptureSite {
  readonly seen: Seen[] = [];
  private constructor(
    private readonly servers: Server[],
    readonly origin: Record<CapRole, string>,
  ) {}

  static async start(): Promise<CaptureSite> {
    const origin = {} as Record<CapRole, string>;
    const servers: Server[] = [];
    const site = new CaptureSite(servers, origin);
    for (const role of ROLES) {
      const s = createServer((req, res) => site.handle(role, req, res));
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, "127.0.0.1", () => resolve());
      });
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      origin[role] = `http://127.0.0.1:${ad.port}`;
    }
    return site;
  }

  /** The allowlist pattern of one origin. */
  pattern(role: CapRole): string {
    return this.origin[role].replace("http://", "");
  }

  /** What reached `role`'s server at `path` with `method`. */
  got(role: CapRole, method: string, path: string): Seen[] {
    return this.seen.filter((s) => s.role === role && s.method === method && s.path === path);
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }

  private handle(role: CapRole, req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const u = new URL(req.url ?? "/", this.origin[role]);
      const body = Buffer.concat(chunks).toString("utf8");
      this.seen.push({ role, method: req.method ?? "GET", path: u.pathname, body, cookie: String(req.headers.cookie ?? ""), authorization: String(req.headers.authorization ?? "") });
      // Cross-origin fetches with credentials and an Authorization header: a willing server.
      const cors: Record<string, string> = {
        "Access-Control-Allow-Origin": String(req.headers.origin ?? "*"),
        "Access-Control-Allow-Credentials": "true",
        "Access-Control-Allow-Methods": "POST, GET",
        "Access-Control-Allow-Headers": "authorization, content-type",
        "Cache-Control": "no-store",
      };
      if (req.method === "OPTIONS") return void res.writeHead(204, cors).end();
      if (u.pathname === "/page") return void res.writeHead(200, { ...cors, "Content-Type": "text/html; charset=utf-8" }).end(PAGE);
      if (u.pathname === "/login") {
        return void res
          .writeHead(200, { ...cors, "Content-Type": "application/json", "Set-Cookie": `hsid=${CRED.httpOnly}; HttpOnly; Path=/; SameSite=Lax` })
          .end('{"ok":true}');
      }
      if (u.pathname === "/api/echo") return void res.writeHead(200, { ...cors, "Content-Type": "application/json" }).end(JSON.stringify({ got: body.length }));
      res.writeHead(404, { ...cors, "Content-Type": "text/plain" }).end("not found");
    });
  }
}

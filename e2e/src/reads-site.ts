// Fixture for the read gates: three loopback origins with a request log each. A is the one the
// tests allow; B is another port of the same host (cross-origin, same site); C is the same server
// as B under "localhost" (cross-site, so its frames run out of process). B's and C's pages carry a
// marker, a distinctive solid colour and a title the agent must never see.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";

/** Text only the blocked origins' pages contain (body, title, dialogs, URLs). */
export const B_MARK = "FORBIDDEN-B-7c1e";
/** The blocked page's colour (magenta): no returned pixel may be close to it. */
export const B_RGB: [number, number, number] = [255, 0, 255];

export interface Hit {
  method: string;
  path: string;
  body: string;
}

function page(title: string, body: string, extra = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${extra}</head><body>${body}</body></html>`;
}

export class ReadsSite {
  /** Requests each server saw, by its origin (B and C share one server: one log). */
  readonly hits = new Map<string, Hit[]>();
  /** While true, /bounce pages flip between A and B; false ends the bounce on A. */
  bouncing = true;

  private constructor(
    private readonly servers: Server[],
    readonly a: string,
    readonly b: string,
    readonly c: string,
  ) {}

  static async start(): Promise<ReadsSite> {
    const servers: Server[] = [];
    const ports: number[] = [];
    let site: ReadsSite | undefined;
    for (let i = 0; i < 2; i++) {
      const s = createServer((req, res) => void handle(site as ReadsSite, i === 0 ? "a" : "b", req, res));
      await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      ports.push(ad.port);
    }
    site = new ReadsSite(servers, `http://127.0.0.1:${ports[0]}`, `http://127.0.0.1:${ports[1]}`, `http://localhost:${ports[1]}`);
    site.hits.set("a", []);
    site.hits.set("b", []);
    return site;
  }

  get aPattern(): string {
    return this.a.replace("http://", "");
  }

  /** Every way the blocked origins could be named: hosts with ports, the bare port, the marker. */
  get forbidden(): string[] {
    return [this.b.replace("http://", ""), this.c.replace("http://", ""), `:${this.b.split(":")[2]}`, B_MARK];
  }

  /** Requests the blocked server (B and C) saw whose path starts with `prefix`. */
  blockedHits(prefix: string): Hit[] {
    return (this.hits.get("b") ?? []).filter((h) => h.path.startsWith(prefix));
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }
}

function handle(site: ReadsSite, which: "a" | "b", req: IncomingMessage, res: ServerResponse): void {
  const u = new URL(req.url ?? "/", "http://x");
  let body = "";
  req.on("data", (d: Buffer) => (body += d.toString("utf8")));
  req.on("end", () => {
    site.hits.get(which)?.push({ method: req.method ?? "GET", path: u.pathname + u.search, body });
    route(site, which, u, req, res);
  });
}

function route(site: ReadsSite, which: "a" | "b", u: URL, req: IncomingMessage, res: ServerResponse): void {
  const html = (s: string) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    res.end(s);
  };
  const q = (k: string) => u.searchParams.get(k) ?? "";
  // The blocked frame to embed: B (same site) or C (cross site, out of process).
  const other = q("site") === "c" ? site.c : site.b;
  if (which === "b") {
    switch (u.pathname) {
      case "/color":
        // Solid magenta, edge to edge.
        return html(page(`${B_MARK} colour`, `<p style="color:#f0f">${B_MARK}</p>`, `<style>html,body{margin:0;height:100%;background:rgb(${B_RGB.join(",")})}</style>`));
      case "/bounce":
        // Back to A after a moment: the tab flips between the two origins.
        return html(page(`${B_MARK} title`, `<p>${B_MARK}</p><script>setTimeout(() => location.replace(${JSON.stringify(`${site.a}/bounce`)}), 30)</script>`, `<style>html,body{background:rgb(${B_RGB.join(",")})}</style>`));
      case "/writer":
        // A frame of A's page that, when A asks, opens a blank popup and a blank child frame and
        // writes its own content into both (a srcdoc frame and a button included).
        return html(
          page(
            "writer",
            `<p>${B_MARK}</p>
<script>
const content = '<title>${B_MARK} popup</title><h1>${B_MARK}</h1><button onclick="document.title=\\'clicked-${B_MARK}\\'">Go ${B_MARK}</button><iframe srcdoc="<p>${B_MARK} srcdoc</p>"></iframe>';
window.addEventListener("message", (e) => {
  if (e.data === "popup") { const w = window.open("about:blank", "_blank"); w.document.write(content); w.document.close(); }
  if (e.data === "frame") { const f = document.createElement("iframe"); document.body.append(f); f.contentDocument.write(content); f.contentDocument.close(); }
  if (e.data === "alert") alert("${B_MARK} alert");
  if (e.data === "prompt") prompt("${B_MARK} prompt", "${B_MARK} default");
});
</script>`,
          ),
        );
      case "/empty":
        // No response at all: the load ends in net::ERR_EMPTY_RESPONSE.
        req.socket.destroy();
        return;
      case "/data":
        // Readable by whoever asked, credentials included: only the extension's own check can drop it.
        res.writeHead(200, { "Content-Type": "text/plain", "Access-Control-Allow-Origin": req.headers.origin ?? "*", "Access-Control-Allow-Credentials": "true" });
        res.end(`${B_MARK} data`);
        return;
      default:
        return html(page(`${B_MARK} title`, `<h1>${B_MARK}</h1><p>${B_MARK}</p><input aria-label="B field">`));
    }
  }
  switch (u.pathname) {
    case "/writer-host":
      // A's page with B's writer frame; A's buttons ask B to act (B acts by itself: no click reaches B).
      return html(
        page(
          "Writer host",
          `<h1>Writer host</h1>
<iframe id="w" title="Writer" src="${other}/writer" width="300" height="120"></iframe>
<button id="popup" onclick="document.getElementById('w').contentWindow.postMessage('popup', '*')">Ask popup</button>
<button id="frame" onclick="document.getElementById('w').contentWindow.postMessage('frame', '*')">Ask frame</button>
<button id="alert" onclick="document.getElementById('w').contentWindow.postMessage('alert', '*')">Ask alert</button>
<button id="prompt" onclick="document.getElementById('w').contentWindow.postMessage('prompt', '*')">Ask prompt</button>
<button id="own" onclick="alert('own dialog of A')">Own alert</button>
<iframe title="Own srcdoc" srcdoc="<p>A srcdoc content</p>"></iframe>`,
        ),
      );
    case "/flash":
      // Shows a full-viewport B frame for a few ms at a time, over and over.
      return html(
        page(
          "Flash",
          `<h1>Flash</h1><script>
const src = ${JSON.stringify(`${other}/color`)};
function flash() {
  const f = document.createElement("iframe");
  f.src = src;
  f.style.cssText = "position:fixed;inset:0;width:100vw;height:100vh;border:0";
  document.body.append(f);
  f.onload = () => setTimeout(() => { f.remove(); setTimeout(flash, 15); }, 15);
}
flash();
</script>`,
          `<style>html,body{margin:0;background:#fff}</style>`,
        ),
      );
    case "/bounce":
      // A for a moment, then B (which comes back).
      if (!site.bouncing) return html(page("A still", `<h1>A still</h1>`));
      return html(page("A bounce", `<h1>A bounce</h1><script>setTimeout(() => location.replace(${JSON.stringify(`${site.b}/bounce?q=${B_MARK}`)}), 30)</script>`, `<style>html,body{background:#fff}</style>`));
    case "/leave": {
      // Goes to B (with a query): `delay` ms after load, at the `keys`-th key typed into the field,
      // or when the heading is clicked.
      const to = JSON.stringify(`${site.b}/secret-path?token=${B_MARK}`);
      const delay = Number(q("delay") || "0");
      const keys = Number(q("keys") || "0");
      return html(
        page(
          "Leave",
          `<h1 onclick="setTimeout(() => location.href = ${to.replace(/"/g, "&quot;")}, 50)">Leave</h1><input id="f" aria-label="Field"><script>
${delay ? `setTimeout(() => location.href = ${to}, ${delay});` : ""}
let n = 0;
document.getElementById("f").addEventListener("keydown", () => { if (${keys} && ++n === ${keys}) location.href = ${to}; });
</script>`,
        ),
      );
    }
    case "/redir-empty":
      res.writeHead(302, { Location: `${site.b}/empty?token=${B_MARK}` }).end();
      return;
    case "/to-b":
      // A request that is redirected to B, body and all (307 keeps the method and body).
      res.writeHead(307, { Location: `${site.b}/data?token=${B_MARK}`, "Access-Control-Allow-Origin": "*" }).end();
      return;
    case "/based":
      // Relative URLs on this page resolve against B.
      return html(page("Based", `<h1>Based</h1>`, `<base href="${site.b}/">`));
    case "/api":
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("A api ok");
      return;
    default:
      return html(page("Allowed", `<h1>Allowed page</h1><button id="b">Button</button><a id="re" href="/redir-empty">Redirected link</a>`));
  }
}

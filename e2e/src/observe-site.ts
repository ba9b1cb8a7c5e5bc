// A two-origin fixture for console_tail and network_tail: a page on A that logs, throws and
// fetches (JSON, plain text, a binary, a body over the cap, a flood of tiny ones) with a secret in
// its request headers and cookie, and a frame of B (left off the list) that logs and fetches too.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";

/** Text only B's frame logs or puts in its request URLs. */
export const B_FRAME_MARK = "B-FRAME-MARK-3c9d";
/** Sent in a request header, a cookie and a response cookie; never returned by any tool. */
export const OBS_SECRET = "S3ntinel-Secret-obs-77a2";
export const BIG_BODY_BYTES = 100 * 1024;
/** What the load page logs and the path it fetches (a 404) while it loads. */
export const LOAD_ERROR = "LOAD-ERROR-5e1f";
export const LOAD_MISSING = "/api/missing-on-load";
/** The e2e burst: twenty times the 500 entries kept, fired by 64 fetch loops at once. */
export const FLOOD = 10_000;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
}

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5dd7e2c0000000049454e44ae426082", "hex");

export class ObserveSite {
  /** Requests that carried the secret in their Authorization header and cookie (proof it was sent). */
  sawSecret = 0;
  tiny = 0;

  private constructor(
    private readonly servers: Server[],
    readonly a: string,
    readonly b: string,
  ) {}

  static async start(): Promise<ObserveSite> {
    const servers: Server[] = [];
    const origins: string[] = [];
    let site: ObserveSite | undefined;
    for (let i = 0; i < 2; i++) {
      const s = createServer((req, res) => site?.handle(req, res, origins));
      s.keepAliveTimeout = 30_000;
      await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      origins.push(`http://127.0.0.1:${ad.port}`);
    }
    site = new ObserveSite(servers, origins[0] as string, origins[1] as string);
    return site;
  }

  get aPattern(): string {
    return this.a.replace("http://", "");
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse, origins: string[]): void {
    const u = new URL(req.url ?? "/", "http://x");
    const self = `http://${req.headers.host ?? ""}`;
    const a = origins[0] as string;
    const b = origins[1] as string;
    const send = (type: string, body: string | Buffer, extra: Record<string, string> = {}) => {
      res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-store", "Access-Control-Allow-Origin": "*", ...extra });
      res.end(body);
    };
    switch (u.pathname) {
      case "/page":
        return send(
          "text/html; charset=utf-8",
          page(
            "Observe",
            `<h1>Observe</h1>
<button id="log">Log</button> <button id="fetch">Fetch</button> <button id="flood">Flood</button> <button id="alert">Alert</button> <button id="work">Work</button> <button id="hide">Hide</button>
<p id="out"></p>
<iframe id="bf" title="B frame" src="${b}/frame" width="300" height="80"></iframe>
<script>
  document.cookie = "sid=${OBS_SECRET}; path=/";
  console.error("EARLY-LOG before any call");
  const out = document.getElementById("out");
  const bf = () => document.getElementById("bf").contentWindow.postMessage("go", "*");
  document.getElementById("log").onclick = () => {
    console.error("E2E-ERROR", 42);
    console.warn("E2E-WARN");
    console.log("E2E-CHATTER");
    setTimeout(() => { throw new Error("E2E-THROWN"); }, 0);
    bf();
    out.textContent = "logged";
  };
  document.getElementById("fetch").onclick = async () => {
    bf();
    const h = { Authorization: "Bearer ${OBS_SECRET}", "X-Secret": "${OBS_SECRET}" };
    const r = await Promise.all([
      fetch("/api/json", { headers: h, credentials: "include" }).then((x) => x.text()),
      fetch("/api/bin").then((x) => x.arrayBuffer()),
      fetch("/api/big").then((x) => x.text()),
      new Promise((ok) => { const x = new XMLHttpRequest(); x.open("GET", "/api/text"); x.onload = () => ok(x.responseText); x.send(); }),
    ]);
    out.textContent = "fetched " + r.length;
  };
  document.getElementById("flood").onclick = async () => {
    const t0 = performance.now();
    let next = 0;
    const worker = async () => { while (next < ${FLOOD}) { const i = next++; await fetch("/api/tiny?i=" + i).then((x) => x.text()); } };
    await Promise.all(Array.from({ length: 64 }, worker));
    out.textContent = "flood done in " + Math.round(performance.now() - t0) + " ms";
  };
  document.getElementById("alert").onclick = () => alert("observe alert");
  // A page that keeps its timings to itself: the timeline emptied and no room left in it.
  document.getElementById("hide").onclick = async () => {
    performance.clearResourceTimings();
    performance.setResourceTimingBufferSize(0);
    await fetch("/api/json?hidden=1").then((x) => x.text());
    out.textContent = "hidden";
  };
  let works = 0;
  document.getElementById("work").onclick = async () => {
    console.error("work error", ++works);
    const j = await fetch("/api/json?w=" + works).then((x) => x.json());
    out.textContent = "work " + works + " " + j.items.length;
  };
</script>`,
          ),
        );
      case "/load":
        // Logs and fetches while it loads, before anyone could call console_tail or network_tail.
        return send(
          "text/html; charset=utf-8",
          page(
            "Load",
            `<h1>Load</h1><p id="out"></p><script>
  console.error("${LOAD_ERROR}", location.search);
  fetch("${LOAD_MISSING}").then((r) => { document.getElementById("out").textContent = "fetched " + r.status; });
</script>`,
          ),
        );
      case "/frame":
        return send(
          "text/html; charset=utf-8",
          page(
            "B frame",
            `<p>frame</p><script>
  addEventListener("message", () => {
    console.error("${B_FRAME_MARK} error");
    fetch("${a}/api/json?from=${B_FRAME_MARK}").catch(() => {});
    fetch("/api/json?own=${B_FRAME_MARK}").catch(() => {});
  });
</script>`,
          ),
        );
      case "/favicon.ico":
        // Kept from the load on, a missing icon's 404 would be one more line in every console.
        res.writeHead(204, { "Cache-Control": "max-age=3600" }).end();
        return;
      case "/api/json":
        if (String(req.headers.authorization ?? "").includes(OBS_SECRET) && String(req.headers.cookie ?? "").includes(OBS_SECRET)) this.sawSecret++;
        return send("application/json", JSON.stringify({ ok: true, items: [1, 2, 3], from: self === b ? "b" : "a" }), { "Set-Cookie": `resp=${OBS_SECRET}; Path=/` });
      case "/api/bin":
        return send("image/png", PNG);
      case "/api/big":
        return send("text/plain; charset=utf-8", "x".repeat(BIG_BODY_BYTES));
      case "/api/text":
        return send("text/plain; charset=utf-8", "hello text");
      case "/api/tiny":
        this.tiny++;
        return send("text/plain", "t");
      default:
        res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
    }
  }
}

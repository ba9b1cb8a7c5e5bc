// Fixture for frames, cookies, storage and set_viewport: three loopback origins. A is the page the
// person allows; B another allowed origin of the same site (another port: Chromium gives a
// cross-site frame no storage while third-party cookies are blocked); C, on another address (cross
// site, out of process, its own cookies), is off the list. Each page sets cookies (an HttpOnly one holding the sentinel on A), localStorage,
// sessionStorage and an IndexedDB database, and says when it is done (window.__ready).
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";

export type Role = "a" | "b" | "c";
const HOSTS: Record<Role, string> = { a: "127.0.0.1", b: "127.0.0.1", c: "127.0.0.3" };

/** Only C's pages hold it: in a cookie, in its storage and in its title. */
export const C_SECRET = "C-0ff-list-Secret-51d2";

function page(title: string, head: string, body: string, script = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}<script>${script}</script></body></html>`;
}

/** Sets local/session storage and an IndexedDB database with stores, then window.__ready. */
function storesScript(local: Record<string, string>, session: Record<string, string>, db: string, stores: string[]): string {
  return `(async () => {
    try {
      for (const [k, v] of Object.entries(${JSON.stringify(local)})) localStorage.setItem(k, v);
      for (const [k, v] of Object.entries(${JSON.stringify(session)})) sessionStorage.setItem(k, v);
      await new Promise((res, rej) => {
        const r = indexedDB.open(${JSON.stringify(db)}, 2);
        r.onupgradeneeded = () => { for (const s of ${JSON.stringify(stores)}) if (!r.result.objectStoreNames.contains(s)) r.result.createObjectStore(s); };
        r.onsuccess = () => { r.result.close(); res(); };
        r.onerror = () => rej(r.error);
      });
    } catch (e) {
      window.__storeError = String(e);
    }
    window.__ready = true;
  })();`;
}

export class InspectSite {
  private constructor(
    private readonly servers: Server[],
    readonly origin: Record<Role, string>,
    readonly sentinel: string,
  ) {}

  static async start(sentinel: string): Promise<InspectSite> {
    const origin = {} as Record<Role, string>;
    const servers: Server[] = [];
    const site = new InspectSite(servers, origin, sentinel);
    for (const role of ["a", "b", "c"] as Role[]) {
      const s = createServer((req, res) => site.handle(role, req, res));
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, HOSTS[role], () => resolve());
      });
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      origin[role] = `http://${HOSTS[role]}:${ad.port}`;
    }
    return site;
  }

  /** The allowlist pattern of a role's origin. */
  pattern(role: Role): string {
    return this.origin[role].replace("http://", "");
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }

  private handle(role: Role, req: IncomingMessage, res: ServerResponse): void {
    const u = new URL(req.url ?? "/", "http://x");
    const html = (s: string, cookies: string[] = []) => {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", ...(cookies.length ? { "Set-Cookie": cookies } : {}) });
      res.end(s);
    };
    const { a, b, c } = this.origin;
    if (role === "a" && u.pathname === "/inspect") {
      return html(
        page(
          "Inspect top",
          "",
          `<h1>Inspect top</h1>
           <iframe id="same" title="Same" src="/child" width="200" height="80"></iframe>
           <iframe id="cross" title="Cross" src="${b}/widget" width="200" height="80"></iframe>
           <iframe id="off" title="Off" src="${c}/evil" width="200" height="80"></iframe>`,
          storesScript({ alpha: "one", long: "L".repeat(3000) }, { tab: "two" }, "shop", ["carts", "orders"]),
        ),
        ["plain=visible-A; Path=/", `sid=${this.sentinel}; Path=/; HttpOnly; SameSite=Lax`],
      );
    }
    if (role === "a" && u.pathname === "/child") return html(page("Child", "", "<p>same-origin child</p>"));
    if (role === "b" && u.pathname === "/widget") {
      return html(page("Widget", "", "<p>widget</p>", storesScript({ widget: "b-value" }, {}, "widgetdb", ["w"])));
    }
    if (role === "c" && u.pathname === "/evil") {
      return html(
        page(`Evil ${C_SECRET}`, "", `<p>${C_SECRET}</p>`, storesScript({ evil: C_SECRET }, { evil: C_SECRET }, `db-${C_SECRET}`, ["s"])),
        [`evil=${C_SECRET}; Path=/`],
      );
    }
    if (u.pathname === "/vp") {
      // A responsive page (device-width), with a button whose clicks it counts.
      return html(
        page(
          `Viewport ${role}`,
          `<meta name="viewport" content="width=device-width, initial-scale=1">`,
          `<h1>Viewport ${role}</h1><button id="b" onclick="window.__clicks = (window.__clicks || 0) + 1">Press</button>`,
          "window.__ready = true;",
        ),
      );
    }
    res.writeHead(404).end();
  }
}

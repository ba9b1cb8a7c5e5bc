// Helpers for the safety tests: the person's policy set from an extension page, the
// extension's audit copy, and a two-origin fixture server with the routes the gates need
// (cross-origin redirects, popups, frames, password fields in shadow roots and iframes, forms).
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { Page } from "playwright-core";

type Send = (m: unknown) => Promise<unknown>;

async function ext<T>(page: Page, msg: Record<string, unknown>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Bounded, so a worker or page that stops answering fails the step that asked, by name.
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${String(msg.type)}: no answer from the extension in 20 s`)), 20_000);
  });
  const asked = page.evaluate(async (m) => {
    const c = (globalThis as unknown as { chrome: { runtime: { sendMessage: Send } } }).chrome;
    return (await c.runtime.sendMessage(m)) as Record<string, unknown> | undefined;
  }, msg);
  const r = await Promise.race([asked, late]).finally(() => clearTimeout(timer));
  if (!r || r.ok !== true) throw new Error(`${String(msg.type)}: ${JSON.stringify(r)}`);
  return r as T;
}

export interface RuleIn {
  pattern: string;
  act?: boolean;
  evalExpression?: boolean;
  evalProgram?: boolean;
  fetch?: boolean;
  allowPassword?: boolean;
  invoke?: boolean;
  captureSensitive?: boolean;
  cookies?: boolean;
  cookiesHttpOnly?: boolean;
  storage?: boolean;
  approvals?: Record<string, "allow" | "ask" | "deny">;
  observe?: boolean;
}

const ALLOW_ALL = { submit: "allow", destructive_click: "allow", new_origin: "allow", evaluate: "allow", upload: "allow", download: "allow" };

/** Replaces the person's policy (as the options page does). */
export async function setPolicy(
  page: Page,
  p: { rules?: RuleIn[]; actMode?: boolean; permissive?: boolean; approvals?: Record<string, string>; approvalTimeoutMs?: number },
): Promise<void> {
  await ext(page, {
    type: "torii.policy.set",
    policy: { version: 1, rules: p.rules ?? [], actMode: p.actMode ?? false, permissive: p.permissive ?? false, approvals: { ...ALLOW_ALL, ...(p.approvals ?? {}) }, approvalTimeoutMs: p.approvalTimeoutMs ?? 60_000 },
  });
}

export interface AuditRow {
  ts: number;
  tool: string;
  origin: string;
  outcome: string;
  code?: string;
  approval?: string;
  session?: string;
  ms: number;
}

export async function auditRows(page: Page): Promise<AuditRow[]> {
  return (await ext<{ entries: AuditRow[] }>(page, { type: "torii.audit.list" })).entries;
}

export interface DownloadRow {
  id: number;
  url: string;
  state: string;
  exists: boolean;
}

/** The browser's downloads as chrome.downloads.search reports them to an extension page. */
export async function downloadRows(page: Page): Promise<DownloadRow[]> {
  return page.evaluate(async () => {
    const c = (globalThis as unknown as { chrome: { downloads: { search(q: object): Promise<{ id: number; url: string; state: string; exists: boolean }[]> } } }).chrome;
    return (await c.downloads.search({})).map((d) => ({ id: d.id, url: d.url, state: d.state, exists: d.exists }));
  });
}

export async function rawAuditStorage(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const c = (globalThis as unknown as { chrome: { storage: { local: { get(k: null): Promise<unknown> } } } }).chrome;
    return JSON.stringify(await c.storage.local.get(null));
  });
}

/** Marker text only the blocked origin's pages contain. */
export const BLOCKED_MARK = "BLOCKED-ORIGIN-CONTENT-7f3a";

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
}

/** Two loopback origins (ports) serving the same routes; `b` is the one tests leave off the list. */
export class TwoOrigins {
  private constructor(
    private readonly servers: Server[],
    readonly a: string,
    readonly b: string,
  ) {}

  static async start(): Promise<TwoOrigins> {
    const servers: Server[] = [];
    const origins: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = createServer((req, res) => handle(req, res, origins));
      await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      origins.push(`http://127.0.0.1:${ad.port}`);
    }
    return new TwoOrigins(servers, origins[0] as string, origins[1] as string);
  }

  get aPattern(): string {
    return this.a.replace("http://", "");
  }
  get bHost(): string {
    return this.b.replace("http://", "");
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }
}

function handle(req: IncomingMessage, res: ServerResponse, origins: string[]): void {
  const u = new URL(req.url ?? "/", "http://x");
  const self = `http://${req.headers.host ?? ""}`;
  const other = origins.find((o) => o !== self) ?? self;
  const isB = self === origins[1];
  const html = (s: string) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    res.end(s);
  };
  const mark = isB ? `<p>${BLOCKED_MARK}</p>` : "";
  switch (u.pathname) {
    case "/redir": {
      // A chain: /redir?n=2 → /redir?n=1 → the other origin's /secret.
      const n = Number(u.searchParams.get("n") ?? "2");
      res.writeHead(302, { Location: n > 1 ? `/redir?n=${n - 1}` : `${other}/secret` }).end();
      return;
    }
    case "/secret":
      return html(page("Secret", `<h1>Secret page</h1>${mark}`));
    case "/popup":
      return html(page("Opener", `<h1>Opener</h1><button id="open" onclick="window.open('${other}/secret', '_blank')">Open popup</button>${mark}`));
    case "/frame":
      return html(page("Framed", `<h1>Has a frame</h1><iframe title="Embedded" src="${other}/secret" width="300" height="200"></iframe>${mark}`));
    case "/pw":
      return html(
        page(
          "Passwords",
          `<h1>Sign in</h1>
<label>User <input id="user" aria-label="User name"></label>
<input id="plain-pw" type="password" aria-label="Plain password">
<div id="host"></div>
<iframe id="inner" title="Inner" src="/pw-inner" width="300" height="120"></iframe>
<script>
  const root = document.getElementById("host").attachShadow({ mode: "open" });
  root.innerHTML = '<input id="shadow-pw" type="password" aria-label="Shadow password">';
</script>${mark}`,
        ),
      );
    case "/pw-inner":
      return html(page("Inner", `<input id="frame-pw" type="password" aria-label="Frame password">`));
    case "/form":
      return html(
        page(
          "Form",
          `<h1>Order</h1>
<form id="f" action="/done" method="get"><input name="q" aria-label="Query"><button id="submit" type="submit">Place order</button></form>
<button id="danger" data-destructive onclick="document.getElementById('out').textContent='deleted'">Delete account</button>
<button id="plain" onclick="document.getElementById('out').textContent='clicked'">Plain</button>
<p id="out"></p>${mark}`,
        ),
      );
    case "/done":
      return html(page("Done", `<h1>Order placed</h1>${mark}`));
    default:
      return html(page(isB ? "Blocked" : "Allowed", `<h1>${isB ? "Blocked" : "Allowed"} page</h1><button id="b">Button</button><input aria-label="Field">${mark}`));
  }
}

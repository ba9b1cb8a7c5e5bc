// Pages that make the browser, the page or A's own server quote an attacker's URL: a cross-origin
// fetch that B redirects to a URL only B chose and that then fails CORS, a CSP violation, a failed
// WebSocket, console text, a title and page text in every common spelling, an error thrown by a
// page function, A's requests and bodies that carry the attacker's URL. Each URL of B or C carries
// its query marker.
import { type Ctx, type Route, at, attacker, attr, doc, js } from "./html.ts";
import { MARK, type Role } from "./secrets.ts";

/** The attacker's URL the test looks for, in the spellings pages and servers use. */
function forms(c: Ctx, role: Role) {
  const plain = at(c, role, "/fu-chosen", { p: "plain" });
  return {
    plain,
    upper: at(c, role, "/fu-chosen", { p: "upper" }).replace(/^http:/, "HTTP:"),
    // Protocol-relative, as an attribute or a script would spell it.
    relative: at(c, role, "/fu-chosen", { p: "relative" }).replace(/^http:/, ""),
    // A query value: percent-encoded.
    encoded: encodeURIComponent(at(c, role, "/fu-chosen", { p: "encoded" })),
    // Inside a JSON or JavaScript string: every slash escaped.
    jsonEscaped: at(c, role, "/fu-chosen", { p: "json" }).replace(/\//g, "\\/"),
    // With userinfo that names A: the host is still the attacker's.
    userinfo: at(c, role, "/fu-chosen", { p: "userinfo" }).replace("//", `//${c.origin.a.replace("http://", "")}@`),
  };
}

/** A page that quotes the attacker's URL in its text in every spelling, and one of A's own URLs. */
const text: Route = (c) => {
  const x = attacker(c);
  const f = forms(c, x);
  const own = at(c, "a", "/fu-own-path", { keep: "yes" });
  return doc(c, {
    title: `Moved to ${attr(f.plain)}`,
    body: `<h1>Moved</h1>
<p id="plain">Continue at ${attr(f.plain)} please.</p>
<p id="quoted">Chrome says: Access to fetch at '${attr(f.plain)}' from origin '${attr(c.origin.a)}' was blocked.</p>
<p id="upper">Shouting: ${attr(f.upper)}</p>
<p id="relative">Relative: "${attr(f.relative)}"</p>
<p id="encoded">Login: ${attr(at(c, "a", "/login"))}?next=${attr(f.encoded)}</p>
<p id="json">{"next":"${attr(f.jsonEscaped)}"}</p>
<p id="userinfo">Mirror: ${attr(f.userinfo)}</p>
<p><a id="link" href="${attr(f.plain)}">${attr(f.plain)}</a></p>
<p id="own">Our own page: ${attr(own)}</p>
<script>window.fuFail=function(){throw new Error("the document moved to "+${js(f.plain)});};</script>`,
  });
};

/**
 * A page that, on `go(kind)`, makes the browser itself quote an attacker's URL in the console:
 * `cors` fetches B's /fu-bounce, which redirects (with CORS allowed) to a URL of `x` that B chose
 * and that answers without CORS; `ws` opens a WebSocket to the attacker; `log` logs it itself.
 */
const consolePage: Route = (c) => {
  const x = attacker(c);
  const bounce = at(c, "b", "/fu-bounce", { to: x });
  const ws = at(c, x, "/fu-ws").replace(/^http:/, "ws:");
  return doc(c, {
    body: `<h1>Console ${MARK.a}</h1><script>window.go=function(kind){
if(kind==="cors")fetch(${js(bounce)}).then(function(r){return r.text();}).catch(function(){});
if(kind==="ws"){try{var s=new WebSocket(${js(ws)});s.onerror=function(){};}catch(e){}}
if(kind==="log")console.error("upstream moved to "+${js(forms(c, x).plain)});
return kind;};</script>`,
  });
};

/** B's redirect to a URL of `to` only B's server chose; CORS allowed on this hop, so Chrome follows it. */
const fuBounce: Route = (c) => {
  const to = c.url.searchParams.get("to") === "c" ? "c" : "b";
  return {
    status: 302,
    headers: { Location: at(c, to, "/fu-chosen", { chosen: "by-b" }), "Access-Control-Allow-Origin": c.origin.a },
    body: "",
  };
};

/** The attacker's answer with no CORS header: a cross-origin read of it fails. */
const chosen: Route = (c) => ({ status: 200, type: "text/plain", body: `${MARK[c.role]} chosen` });

/** A page whose CSP allows connections to itself only; `go()` connects to the attacker. */
const csp: Route = (c) => {
  const r = doc(c, {
    body: `<h1>CSP</h1><script>window.go=function(){fetch(${js(forms(c, attacker(c)).plain)}).catch(function(){});return 1;};</script>`,
  });
  return { ...r, headers: { "Content-Security-Policy": "connect-src 'self'" } };
};

/**
 * A page whose own requests to A carry the attacker's URL: in the query (as is and encoded) and in
 * the answer's body (/fu-json).
 */
const net: Route = (c) => {
  const f = forms(c, attacker(c));
  const reqs = [
    `${c.origin.a}/api/fu?next=${f.plain}`,
    `${c.origin.a}/api/fu?enc=${f.encoded}`,
    at(c, "a", "/fu-json", { x: attacker(c) }),
  ];
  return doc(c, {
    body: `<h1>Requests</h1><script>window.go=function(){var u=${js(reqs)};return Promise.all(u.map(function(x){return fetch(x,{method:"POST",body:"next="+${js(f.plain)}}).then(function(r){return r.text();});})).then(function(){return u.length;});};</script>`,
  });
};

/** A's API answer that quotes the attacker's URL, plain and JSON-escaped. */
const json: Route = (c) => {
  const f = forms(c, attacker(c));
  return { status: 200, type: "application/json", body: `{"next":${JSON.stringify(f.plain)},"escaped":"${f.jsonEscaped}"}` };
};

export const URL_ROUTES: Record<string, Route> = {
  "/fu-text": text,
  "/fu-console": consolePage,
  "/fu-bounce": fuBounce,
  "/fu-chosen": chosen,
  "/fu-csp": csp,
  "/fu-net": net,
  "/fu-json": json,
};

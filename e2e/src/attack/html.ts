// The building blocks of the attack pages: a request context, a reply, the beacon script every
// page runs, and the document shell that stamps each origin's marker, title and colour.
import { BG, MARK, QS, TITLE, type Attacker, type Role, css } from "./secrets.ts";

export interface Ctx {
  role: Role;
  url: URL;
  method: string;
  body: string;
  origin: Record<Role, string>;
  counters: Map<string, number>;
}

export interface Reply {
  status?: number;
  type?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Drop the connection without an answer. */
  destroy?: boolean;
  /** Send headers and `body`, never finish. */
  hang?: boolean;
}

export type Route = (c: Ctx) => Reply;

export function param(c: Ctx, name: string, dflt = ""): string {
  return c.url.searchParams.get(name) ?? dflt;
}

/** The attacking origin a page of A embeds (x=b|c, default b). */
export function attacker(c: Ctx): Attacker {
  return param(c, "x") === "c" ? "c" : "b";
}

/** A URL on `role`'s origin; B and C URLs always carry their secret query value. */
export function at(c: Ctx, role: Role, path: string, query: Record<string, string | number> = {}): string {
  const u = new URL(path, c.origin[role]);
  if (role !== "a") u.searchParams.set("s", QS[role]);
  // The test's tag travels with every page it loads, so late beacons of an earlier test are told apart.
  const tag = tagOf(c);
  if (tag) u.searchParams.set("t", tag);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
  return u.href;
}

/** The tag (t=…) of the test that loaded this page. */
const tagOf = (c: Ctx) => c.url.searchParams.get("t") ?? "";

export const attr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
export const js = (v: unknown) => JSON.stringify(v).replace(/</g, "\\u003c");

/**
 * The observer every page runs: what the document sees is posted, in order, to `origin`/beacon
 * (one request at a time, so a flush() that resolves means every earlier beacon reached the server).
 * Field values are polled too: text that lands in a field reaches the log even if no listener saw it.
 */
function beaconScript(origin: string, tag: string): string {
  return `<script>(function(){
var O=${js(origin)},G=${js(tag)};var q=Promise.resolve();
function s(k,d){var b=JSON.stringify({k:k,d:d==null?"":String(d),u:String(location.href),g:G});
q=q.then(function(){return fetch(O+"/beacon?k="+encodeURIComponent(k),{method:"POST",mode:"no-cors",body:b,keepalive:true}).catch(function(){});});return q;}
var seen=new WeakMap();function poll(){document.querySelectorAll("input,textarea").forEach(function(el){var v=el.value;
if(v!==(seen.has(el)?seen.get(el):el.defaultValue)){seen.set(el,v);s("value",(el.id||el.nodeName)+"="+v);}});}
setInterval(poll,50);
window.__bk={send:s,flush:function(){poll();return s("flush");}};
function id(t){return t&&(t.id||t.nodeName)||"?";}
["keydown","keyup","keypress"].forEach(function(t){addEventListener(t,function(e){s(t,e.key);},true);});
["mousedown","mouseup","click","dblclick","auxclick","contextmenu","mouseover"].forEach(function(t){addEventListener(t,function(e){s(t,id(e.target));},true);});
addEventListener("focusin",function(e){s("focus",id(e.target));},true);
addEventListener("input",function(e){var t=e.target;s("input",t&&t.value!==undefined?t.value:(t&&t.textContent));},true);
addEventListener("submit",function(e){s("submit",id(e.target));},true);
addEventListener("paste",function(e){s("paste","");},true);
})();</script>`;
}

interface DocOpts {
  title?: string;
  head?: string;
  body: string;
  /** Skip the origin's marker paragraph (a page that must look empty). */
  noMark?: boolean;
  style?: string;
}

/** A full HTML document of `c.role`: its title, marker, colour and beacon. */
export function doc(c: Ctx, o: DocOpts): Reply {
  const r = c.role;
  const title = o.title ?? TITLE[r];
  const mark = o.noMark ? "" : `<p class="mark">${MARK[r]}</p>`;
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${beaconScript(c.origin[r], tagOf(c))}
<style>html,body{margin:0;background:${css(BG[r])}}${o.style ?? ""}</style>${o.head ?? ""}</head><body>${mark}${o.body}</body></html>`;
  return { body };
}

/** The HTML an attacker writes into a blank document it controls (its own marker and beacon). */
export function blankContent(c: Ctx, role: Role, extra = ""): string {
  return `<!doctype html><title>${TITLE[role]}</title>${beaconScript(c.origin[role], tagOf(c))}<style>body{background:${css(BG[role])}}</style>
<h1>${MARK[role]} blank</h1><button id="bbtn" style="width:300px;height:80px;background:transparent">${MARK[role]} button</button><input id="bin" aria-label="${MARK[role]} field">${extra}`;
}

export function redirect(to: string, status = 302): Reply {
  return { status, headers: { Location: to }, body: "" };
}

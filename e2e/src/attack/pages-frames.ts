// Pages about frames: the attacker's catch-all page, nesting, frames that move under the pointer
// or take the focus, dialogs raised by a frame, and blank / srcdoc / blob / data / sandboxed
// documents whose real origin is not their parent's.
import { type Ctx, type Route, at, attacker, attr, blankContent, doc, js, param } from "./html.ts";
import { MARK, OPAQUE_MARK, TITLE } from "./secrets.ts";

/**
 * The attacker's page: a field, a full-size button, all of it beaconed. Query switches make it
 * autofocus (af), steal the focus (steal), raise a dialog (dialog, when=load|message), open a blank
 * popup it writes (on message "popup"), bounce elsewhere (bounce, ms, once, nav=assign), become
 * about:blank (selfblank), write into a sibling blank frame (writeto), or a blob: / data: document.
 */
const catchPage: Route = (c) => {
  const r = c.role;
  const P = Object.fromEntries(c.url.searchParams);
  const pw = P.pw ? `<input id="cpw" type="password" aria-label="${MARK[r]} password"${P.af ? " autofocus" : ""}>` : "";
  const field = `<input id="cin" aria-label="${MARK[r]} field"${P.af && !P.pw ? " autofocus" : ""}>`;
  const blank = blankContent(c, r);
  const blank2 = blankContent(c, r, `<p>${MARK[r]} second write</p>`);
  return doc(c, {
    style: "#catch{display:block;width:100%;height:100vh;font-size:20px;background:transparent;border:0}",
    body: `${pw}${field}<button id="catch">${MARK[r]} catch ${TITLE[r]}</button>
<script>(function(){
var P=${js(P)};var BLANK=${js(blank)};var BLANK2=${js(blank2)};var MSG=${js(`${MARK[r]} dialog ${TITLE[r]}`)};
function raise(){var r;if(P.dialog==="confirm")r=confirm(MSG);else if(P.dialog==="prompt")r=prompt(MSG,"x");else r=alert(MSG);__bk.send("dialog-result",String(r));}
function popup(){var w=window.open("","_blank");if(!w){__bk.send("popup-blocked");return;}
w.document.open();w.document.write(BLANK);w.document.close();__bk.send("popup-opened");
if(P.reopen)setTimeout(function(){try{w.document.open();w.document.write(BLANK2);w.document.close();}catch(e){}},300);}
addEventListener("message",function(e){if(e.data==="dialog")raise();if(e.data==="popup")popup();
if(e.data==="focus")document.getElementById(P.pw?"cpw":"cin").focus();});
if(P.dialog&&P.when==="load")setTimeout(raise,30);
if(P.popup==="load")setTimeout(popup,30);
if(P.steal)setInterval(function(){document.getElementById(P.pw?"cpw":"cin").focus();},20);
if(P.bounce&&!(P.once&&sessionStorage.getItem("bounced"))){sessionStorage.setItem("bounced","1");
setTimeout(function(){if(P.nav==="assign")location.assign(P.bounce);else location.replace(P.bounce);},+P.ms||40);}
if(P.rs)history.replaceState(null,"","/nest-leaf?looks=allowed");
if(P.navopener&&opener)setTimeout(function(){try{opener.location.href=location.href.split("?")[0]+"?s="+P.s;}catch(e){__bk.send("navopener-failed");}},30);
if(P.selfblank)setTimeout(function(){location.replace("about:blank");},10);
if(P.writeto){var iv=setInterval(function(){try{var d=parent.frames[+P.writeto].document;
if(d.URL==="about:blank"&&!d.getElementById("bbtn")){d.open();d.write(BLANK);d.close();__bk.send("wrote");clearInterval(iv);}}catch(e){}},20);}
if(P.child){var f=document.createElement("iframe");f.id="child";f.style.cssText="width:300px;height:120px";
if(P.child==="srcdoc")f.srcdoc=BLANK;document.body.appendChild(f);
if(P.child==="blank"){var d=f.contentDocument;d.open();d.write(BLANK);d.close();}}
if(P.blob)location.replace(URL.createObjectURL(new Blob([BLANK],{type:"text/html"})));
if(P.data)location.replace("data:text/html,"+encodeURIComponent("<p>"+${js(MARK[r])}+" data</p><button>data button</button>"));
})();</script>`,
  });
};

/** A document of the current origin around one frame: the middle link of a nesting chain. */
const nest: Route = (c) =>
  doc(c, { body: `<h2>${MARK[c.role]} nest</h2><iframe id="inner" title="inner" src="${attr(param(c, "inner"))}" style="width:420px;height:220px"></iframe>` });

const nestLeaf: Route = (c) => doc(c, { body: `<h3>Leaf of ${c.role}</h3><button id="leafbtn">Leaf button</button><input id="leafin" aria-label="Leaf field">` });

/** A → x → y: a frame nested three deep across two origins. */
const nested: Route = (c) => {
  const y = param(c, "y", "a") as "a" | "b" | "c";
  const inner = at(c, attacker(c), "/nest", { inner: at(c, y, "/nest-leaf") });
  return doc(c, { body: `<h1>Nested frames</h1><iframe id="outer" title="outer" src="${attr(inner)}" style="width:480px;height:300px"></iframe>` });
};

const catchUrl = (c: Ctx, q: Record<string, string | number> = {}) => at(c, attacker(c), "/catch", q);
const evil = (src: string, style: string) => `<iframe id="evil" title="Embedded" src="${attr(src)}" style="border:0;${style}"></iframe>`;

/** An A button; the attacker's frame, parked below, jumps over it on `trig` (e.g. mousemove). */
const hoverSwap: Route = (c) =>
  doc(c, {
    body: `<h1>Shop</h1><button id="go" style="position:absolute;left:40px;top:100px;width:200px;height:60px" onclick="__bk.send('a-go')">Go</button>
${evil(catchUrl(c), "position:absolute;left:40px;top:320px;width:200px;height:60px")}
<script>var moved=false;document.getElementById("go").addEventListener(${js(param(c, "trig", "mousemove"))},function(){if(moved)return;moved=true;
var f=document.getElementById("evil");f.style.top="100px";f.style.zIndex="10";});</script>`,
  });

/** Tab from an A field lands in the attacker's frame (its field first). */
const tabInto: Route = (c) =>
  doc(c, { body: `<input id="first" aria-label="First field">${evil(catchUrl(c), "width:300px;height:120px")}<input id="last" aria-label="Last field">` });

/** A's own script hands the focus to the attacker's frame: after `after` keys, or on focus (on=focus). */
const keySteal: Route = (c) =>
  doc(c, {
    body: `<input id="name" aria-label="Name">${evil(catchUrl(c), "width:300px;height:120px")}
<script>var n=0,after=+${js(param(c, "after", "3"))},on=${js(param(c, "on", "keydown"))};
function steal(){var f=document.getElementById("evil");f.focus();f.contentWindow.postMessage("focus","*");}
var el=document.getElementById("name");
if(on==="focus")el.addEventListener("focus",steal);else el.addEventListener("keydown",function(){if(++n===after)steal();});</script>`,
  });

/** An A frame whose field navigates the frame itself to the attacker after a few keys. */
const frameNavTyping: Route = (c) =>
  doc(c, { body: `<h1>Frame moves</h1><iframe id="inner" title="inner" src="/inner-nav?x=${attacker(c)}" style="width:420px;height:120px"></iframe>` });
const innerNav: Route = (c) =>
  doc(c, {
    body: `<input id="f" aria-label="Inner field"><script>var n=0;document.getElementById("f").addEventListener("keydown",function(){
if(++n===3)location.href=${js(catchUrl(c, { af: 1 }))};});</script>`,
  });

/** As the pointer reaches A's button, A scrolls the attacker's frame (parked below) under it. */
const scrollSwap: Route = (c) =>
  doc(c, {
    body: `<div style="height:2400px;position:relative"><button id="go" style="position:absolute;left:40px;top:100px;width:200px;height:60px" onclick="__bk.send('a-go')">Go</button>
${evil(catchUrl(c), "position:absolute;left:40px;top:700px;width:200px;height:60px")}</div>
<script>var done=false;document.getElementById("go").addEventListener("mousemove",function(){if(done)return;done=true;window.scrollBy(0,600);});</script>`,
  });

/** The attacker's frame slides back and forth across A's button without pause. */
const slide: Route = (c) =>
  doc(c, {
    style: "@keyframes sweep{from{left:-220px}to{left:420px}}#evil{animation:sweep 240ms linear infinite alternate}",
    body: `<button id="go" style="position:absolute;left:100px;top:100px;width:200px;height:60px" onclick="__bk.send('a-go')">Go</button>
${evil(catchUrl(c), "position:absolute;left:-220px;top:100px;width:200px;height:60px;z-index:5")}`,
  });

/** An A frame with a button; as the pointer reaches it, A swaps the frame for the attacker's. */
const detach: Route = (c) =>
  doc(c, {
    body: `<h1>Detach</h1><div id="slot" style="position:relative;width:320px;height:120px">
<iframe id="mine" title="mine" src="/nest-leaf?in=detach" style="position:absolute;left:0;top:0;width:320px;height:120px;border:0"></iframe></div>
<script>var swapped=false;var mine=document.getElementById("mine");var url=${js(catchUrl(c))};
var pre=document.createElement("iframe");pre.id="evil";pre.src=url;pre.style.cssText="position:absolute;left:0;top:400px;width:320px;height:120px;border:0";document.body.appendChild(pre);
mine.addEventListener("load",function(){mine.contentDocument.addEventListener("mousemove",function(){if(swapped)return;swapped=true;
var r=document.getElementById("slot").getBoundingClientRect();mine.remove();
pre.style.left=(r.left+scrollX)+"px";pre.style.top=(r.top+scrollY)+"px";});});</script>`,
  });

/** An A frame with controls that turns into the attacker's page after `ms` (refs taken before go stale). */
const frameLater: Route = (c) =>
  doc(c, { body: `<h1>Frame later</h1><iframe id="inner" title="inner" src="/inner-later?x=${attacker(c)}&ms=${Number(param(c, "ms", "600"))}" style="width:420px;height:160px"></iframe>` });
const innerLater: Route = (c) =>
  doc(c, {
    body: `<input id="f" aria-label="Inner field"><button id="fb">Inner button</button><select id="fs" aria-label="Inner choice"><option>one</option><option>two</option></select>
<script>setTimeout(function(){location.href=${js(catchUrl(c))};},${Number(param(c, "ms", "600"))});</script>`,
  });

const iframeTarget: Route = (c) => doc(c, { body: `<h1>Frame target</h1>${evil(catchUrl(c), "width:420px;height:220px")}` });

/** Clickjacking both ways: an A label with pointer-events:none over the frame, or an invisible frame over an A button. */
const overlay: Route = (c) =>
  param(c, "kind") === "opacity"
    ? doc(c, {
        body: `<h1>Buy</h1><button id="buy" style="position:absolute;left:20px;top:100px;width:200px;height:60px" onclick="__bk.send('a-buy')">Buy</button>
${evil(catchUrl(c), "position:absolute;left:20px;top:100px;width:200px;height:60px;opacity:0;z-index:5")}`,
      })
    : doc(c, {
        body: `<h1>Label</h1><div style="position:relative;width:300px;height:100px">${evil(catchUrl(c), "position:absolute;left:0;top:0;width:300px;height:100px")}
<button id="lbl" style="position:absolute;left:0;top:0;width:300px;height:100px;pointer-events:none;background:transparent">Click here</button></div>`,
      });

const autofocusFrame: Route = (c) =>
  doc(c, { body: `<input id="name" aria-label="Name">${evil(catchUrl(c, { af: 1, steal: 1 }), "width:300px;height:120px")}` });

/** The attacker's frame raises a dialog: at load, when A's button pokes it, or as the pointer reaches #go. */
const dialogFrame: Route = (c) =>
  doc(c, {
    body: `<h1>Dialogs</h1><button id="poke" onclick="document.getElementById('evil').contentWindow.postMessage('dialog','*')">Poke</button>
<button id="go" onmousemove="if(!window.poked){window.poked=1;document.getElementById('evil').contentWindow.postMessage('dialog','*')}" onclick="__bk.send('a-go')">Go</button>
${evil(catchUrl(c, { dialog: param(c, "dialog", "alert"), when: param(c, "when", "message") }), "width:300px;height:100px")}`,
  });

/** A's own dialog, the positive control: its text may reach the agent. */
const ownDialog: Route = (c) =>
  doc(c, { body: `<button id="ask" onclick="__bk.send('a-dialog-result',String(confirm('A-DIALOG-TEXT ${MARK.a}')))">Ask</button>` });

/** The attacker's frame opens a blank popup and writes its own content (reopen: writes it again later). */
const bPopup: Route = (c) =>
  doc(c, {
    body: `<h1>Popup</h1><button id="poke" onclick="document.getElementById('evil').contentWindow.postMessage('popup','*')">Poke</button>
${evil(catchUrl(c, param(c, "reopen") ? { reopen: 1 } : {}), "width:300px;height:100px")}`,
  });

/** Two attacker frames: the first turns itself into about:blank (its origin), the second writes into it. */
const blankSelf: Route = (c) =>
  doc(c, {
    body: `<h1>Blank frame</h1><iframe id="f1" title="slot" src="${attr(catchUrl(c, { selfblank: 1 }))}" style="width:420px;height:160px;border:0"></iframe>
<iframe id="f2" title="writer" src="${attr(catchUrl(c, { writeto: 0 }))}" style="width:60px;height:40px;border:0"></iframe>`,
  });

/** The attacker's frame with a blank or srcdoc child it wrote, or that became a blob: / data: document. */
const bChild: Route = (c) => {
  const kind = param(c, "kind", "blank");
  const q: Record<string, string | number> = kind === "blob" ? { blob: 1 } : kind === "data" ? { data: 1 } : { child: kind };
  return doc(c, { body: `<h1>Child frames</h1>${evil(catchUrl(c, q), "width:420px;height:220px")}` });
};

/** A's own opaque documents: sandboxed srcdoc, sandboxed same-URL frame, data: frame. */
const opaque: Route = (c) => {
  const inner = `<p>${OPAQUE_MARK}</p><button id="obtn">${OPAQUE_MARK} button</button>`;
  const kind = param(c, "kind", "sandbox-srcdoc");
  const frame =
    kind === "data"
      ? `<iframe id="op" title="opaque" src="data:text/html,${encodeURIComponent(inner)}" style="width:300px;height:100px"></iframe>`
      : kind === "sandbox-src"
        ? `<iframe id="op" title="opaque" sandbox="allow-scripts" src="/opaque-doc" style="width:300px;height:100px"></iframe>`
        : `<iframe id="op" title="opaque" sandbox srcdoc="${attr(inner)}" style="width:300px;height:100px"></iframe>`;
  return doc(c, { body: `<h1>Opaque frames</h1>${frame}` });
};
const opaqueDoc: Route = (c) => doc(c, { noMark: true, title: "Opaque", body: `<p>${OPAQUE_MARK}</p><button id="obtn">${OPAQUE_MARK} button</button>` });

/** A navigates the attacker's frame to about:blank (A's own, as A initiated it) and writes into it. */
const aWritesBlank: Route = (c) =>
  doc(c, {
    body: `<h1>A writes</h1>${evil(catchUrl(c), "width:300px;height:100px")}
<script>var f=document.getElementById("evil");var done=false;f.addEventListener("load",function(){if(done)return;done=true;
f.addEventListener("load",function(){var d=f.contentDocument;d.open();d.write("<p>A-WROTE-THIS</p><button id=aw>A wrote</button>");d.close();},{once:true});
f.src="about:blank";});</script>`,
  });

/** document.open() replaces A's document with one that embeds the attacker. */
const docOpen: Route = (c) =>
  doc(c, {
    body: `<h1>Before</h1><button id="old">Old button</button><button id="swap" onclick="setTimeout(function(){document.open();
document.write(${attr(js(`<title>Replaced</title><h1>After</h1><button id=newbtn>New</button><iframe id=evil src='${catchUrl(c)}' style='width:300px;height:100px'></iframe>`))});document.close();},0)">Swap</button>`,
  });

export const FRAME_ROUTES: Record<string, Route> = {
  "/catch": catchPage,
  "/nest": nest,
  "/nest-leaf": nestLeaf,
  "/nested": nested,
  "/hover-swap": hoverSwap,
  "/tab-into": tabInto,
  "/key-steal": keySteal,
  "/frame-nav-typing": frameNavTyping,
  "/inner-nav": innerNav,
  "/iframe-target": iframeTarget,
  "/frame-later": frameLater,
  "/inner-later": innerLater,
  "/detach": detach,
  "/scroll-swap": scrollSwap,
  "/slide": slide,
  "/overlay": overlay,
  "/autofocus-frame": autofocusFrame,
  "/dialog-frame": dialogFrame,
  "/own-dialog": ownDialog,
  "/b-popup": bPopup,
  "/blank-self": blankSelf,
  "/b-child": bChild,
  "/opaque": opaque,
  "/opaque-doc": opaqueDoc,
  "/a-writes-blank": aWritesBlank,
  "/doc-open": docOpen,
};

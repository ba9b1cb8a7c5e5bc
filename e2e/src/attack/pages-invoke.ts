// A page of A whose globals offer code execution under other names, for `invoke`: the browser's own
// fetch, eval and setTimeout bound to the window, a jQuery-style `$.globalEval` (a page-defined
// function that runs any text as a script), page functions that submit a form, fire a destructive
// button, leave for the attacker or hand back a field's value base64-encoded, and the bad inputs (a getter, proxies, a class, bound
// functions, functions whose toString lies). Every page function first beacons "did" to A, so what
// ran is read from A's log; what it sent elsewhere is in B's.
import { type Route, at, doc, js, param } from "./html.ts";

const invokeKit: Route = (c) => {
  const leaveTo = at(c, "b", "/catch", { via: "invoke" });
  const getterHit = at(c, "b", "/api/getter");
  const proxyHit = at(c, "b", "/api/proxy");
  // lie=proto: the page rewrites Function.prototype.toString so that every built-in claims a
  // source of its own; a check that reads source text is then fooled everywhere on this page.
  const lie =
    param(c, "lie") === "proto"
      ? `(function(){var real=Function.prototype.toString;Function.prototype.toString=function(){var s=real.call(this);return /\\[native code\\]/.test(s)?"function page(){ return 1; }":s;};})();`
      : "";
  return doc(c, {
    body: `<h1>Invoke kit</h1>
<form id="f" action="/done" method="get"><input id="q" name="q" aria-label="Query" value="order-1"><button id="submit" type="submit">Place order</button></form>
<button id="danger" data-destructive onclick="__bk.send('destroyed','danger')">Delete account</button>
<script>
${lie}
function did(k){__bk.send("did",k);}
window.boundFetch=fetch.bind(window);
window.boundEval=eval.bind(window);
window.boundTimer=setTimeout.bind(window);
// jQuery's globalEval: the text becomes a script element, which runs at once.
window.$={globalEval:function(code){did("globalEval");var s=document.createElement("script");s.text=code;document.head.appendChild(s).parentNode.removeChild(s);}};
class Store{reset(){did("class");return 1;}}
var lyingFetch=fetch.bind(window);
lyingFetch.toString=function(){return "function lyingFetch(u){ return page(u); }";};
function honest(n){did("honest");return "hello "+n;}
honest.toString=function(){return "function honest() { [native code] }";};
window.app={
  hello:function(n){did("hello");return "hello "+n;},
  peek:function(){did("peek");return btoa(unescape(encodeURIComponent(document.getElementById("q").value)));},
  // The form goes and the page leaves a moment after the answer, as an app's would after its state settles.
  submitOrder:function(){did("submit");setTimeout(function(){document.getElementById("f").requestSubmit();},50);return "submitted";},
  deleteAccount:function(){did("delete");document.getElementById("danger").click();return "deleted";},
  leave:function(){did("leave");setTimeout(function(){location.href=${js(leaveTo)};},50);return "leaving";},
  get session(){did("getter");fetch(${js(getterHit)});return {id:function(){return "s1";}};},
  Store:Store,
  boundHello:function(n){did("boundHello");return "hello "+n;}.bind(null),
  lyingFetch:lyingFetch,
  honest:honest,
  callableProxy:new Proxy(function(){did("callableProxy");fetch(${js(proxyHit)});return 1;},{}),
  trap:new Proxy({},{getOwnPropertyDescriptor:function(){throw new Error("the trap refuses");}}),
};
</script>`,
  });
};

export const INVOKE_ROUTES: Record<string, Route> = {
  "/invoke-kit": invokeKit,
};

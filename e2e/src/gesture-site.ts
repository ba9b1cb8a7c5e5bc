// Fixture pages for invoke and drag: two loopback servers, each with a request log.
//   a  http://127.0.0.1:<p1>  the allowed origin: a drag-and-drop board (HTML5), a sortable list
//      (pointer events), a page with functions, boards with a frame of another site
//   x  http://127.0.0.2:<p2>  another site (an out-of-process iframe) whose page records every
//      pointer, mouse and drag event it sees and beacons it to its own server
import { LoggedSites } from "./logged-sites.ts";

function page(title: string, body: string, head = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><style>body{margin:0;font:14px sans-serif}</style>${head}</head><body>${body}</body></html>`;
}

/** Every trusted event the allowed page sees, in order (`window.log`), to tell what reached it. */
const LOG = `<script>
window.log = [];
for (const t of ["pointerdown","pointerup","mousedown","mouseup","click","dragstart","dragenter","dragover","drop","dragend"]) {
  window.addEventListener(t, (e) => { window.log.push(t + (e.isTrusted ? "" : ":untrusted")); }, true);
}
</script>`;

/** An HTML5 board: cards are draggable; a column takes a card dropped on it (dataTransfer carries its id). */
const BOARD = `<style>
.col{position:absolute;top:20px;width:220px;height:400px;border:2px solid #888;padding:8px;box-sizing:border-box}
.card{height:40px;margin:6px 0;background:#cde;border:1px solid #69a;line-height:40px;padding:0 8px;cursor:grab}
</style>
<div id="todo" class="col" style="left:20px" aria-label="To do"><h2>To do</h2>
  <div class="card" id="c1" draggable="true">Write spec</div>
  <div class="card" id="c2" draggable="true">Ship it</div>
</div>
<div id="done" class="col" style="left:300px" aria-label="Done"><h2>Done</h2></div>
<script>
document.querySelectorAll(".card").forEach((c) => c.addEventListener("dragstart", (e) => { e.dataTransfer.setData("text/plain", c.id); e.dataTransfer.effectAllowed = "move"; }));
document.querySelectorAll(".col").forEach((col) => {
  col.addEventListener("dragover", (e) => { e.preventDefault(); e.dataTransfer.dropEffect = "move"; });
  col.addEventListener("drop", (e) => { e.preventDefault(); const id = e.dataTransfer.getData("text/plain"); const c = document.getElementById(id); if (c) col.appendChild(c); });
});
</script>`;

/** A list sorted by pointer events (no HTML5 drag): press an item, move, release where it goes. */
const SORTABLE = `<style>
#list{list-style:none;margin:20px;padding:0;width:240px}
#list li{height:40px;line-height:40px;margin:0 0 4px;background:#eec;border:1px solid #aa6;padding:0 8px;touch-action:none;user-select:none}
#list li.dragging{opacity:.6}
</style>
<ul id="list" aria-label="Tasks"><li>Alpha</li><li>Bravo</li><li>Charlie</li><li>Delta</li></ul>
<script>
const list = document.getElementById("list");
let held = null, moves = 0;
list.addEventListener("pointerdown", (e) => {
  const li = e.target.closest("li"); if (!li || !e.isTrusted) return;
  held = li; moves = 0; li.classList.add("dragging"); li.setPointerCapture(e.pointerId); e.preventDefault();
});
list.addEventListener("pointermove", (e) => {
  if (!held || !e.isTrusted) return;
  moves++;
  const others = [...list.children].filter((x) => x !== held);
  const before = others.find((x) => { const r = x.getBoundingClientRect(); return e.clientY < r.top + r.height / 2; });
  list.insertBefore(held, before ?? null);
});
list.addEventListener("pointerup", (e) => {
  if (!held) return;
  held.classList.remove("dragging"); held = null;
  document.body.dataset.sorted = [...list.children].map((x) => x.textContent).join(",") + " after " + moves + " moves";
});
</script>`;

const FUNCTIONS = `<script>
class Store {
  constructor() { this.items = ["a", "b"]; }
  reset(n) { this.items = Array.from({ length: n }, (_, i) => "item" + i); document.body.dataset.items = this.items.join(","); return { count: this.items.length, items: this.items }; }
}
window.app = {
  store: new Store(),
  version: "2.4.1",
  add(a, b) { return a + b; },
  async later(v) { await new Promise((r) => setTimeout(r, 20)); return { doubled: v * 2 }; },
  boom() { throw new RangeError("quota exceeded: 3 of 3 used"); },
  cycle() { const node = { name: "root", children: [] }; node.children.push({ name: "kid", parent: node }); node.self = node; return node; },
  huge() { return "x".repeat(10 * 1024 * 1024); },
  get session() { location.href = "/navigated"; return { id: () => "s1" }; },
};
const lexicalApi = { hello(name) { return "hello " + name; } };
</script><h1>Functions</h1><p id="out"></p>`;

/** The foreign page: every pointer, mouse and drag event it sees goes to window.seen and its server. */
const SINK_HEAD = `<script>
window.seen = [];
for (const t of ["pointerdown","pointermove","pointerup","pointerover","mousedown","mousemove","mouseup","mouseover","click","dragenter","dragover","dragleave","drop"]) {
  window.addEventListener(t, (e) => {
    window.seen.push(t);
    fetch("/beacon", { method: "POST", body: t, keepalive: true });
  }, true);
}
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => { e.preventDefault(); fetch("/beacon", { method: "POST", body: "data=" + e.dataTransfer.getData("text/plain"), keepalive: true }); });
</script>`;

function route(u: URL): string | undefined {
  const q = (k: string) => u.searchParams.get(k) ?? "";
  switch (u.pathname) {
    case "/board":
      return page("Board", BOARD, LOG);
    case "/sortable":
      return page("Sortable", SORTABLE, LOG);
    case "/functions":
      return page("Functions", FUNCTIONS);
    case "/navigated":
      return page("Navigated", "<h1>Navigated by a getter</h1>");
    case "/attack-board":
      // The board, with a frame of another site as a third "column" (drop there: refused), or
      // lying across the way between the columns (the drag passes over it: refused).
      return page(
        "Attack board",
        `${BOARD}<iframe id="xf" title="Partner column" src="${q("x")}/sink-drop" style="position:absolute;border:0;${
          q("at") === "between" ? "left:250px;top:100px;width:40px;height:160px" : "left:560px;top:20px;width:220px;height:400px"
        }"></iframe>`,
        LOG,
      );
    case "/move-board":
      // The partner frame waits out of sight and is moved over the Done column once a drag
      // begins (HTML5 dragstart, or the press of a pointer drag): the end point was clear when judged.
      return page(
        "Move board",
        `${BOARD}<iframe id="xf" title="Partner column" src="${q("x")}/sink-drop" style="position:absolute;border:0;left:-1000px;top:20px;width:220px;height:400px"></iframe>
<script>
const cover = () => { const f = document.getElementById("xf"); f.style.left = "300px"; };
window.addEventListener("${q("on") || "dragstart"}", cover, true);
</script>`,
        LOG,
      );
    case "/sink-drop":
      return page("Partner column", `<div style="width:100%;height:400px;background:#fcc">Drop here</div>`, SINK_HEAD);
    case "/beacon":
    case "/marker":
      return "";
    default:
      return undefined;
  }
}

export class GestureSite extends LoggedSites {
  get a(): string {
    return this.origins[0] as string;
  }
  get x(): string {
    return this.origins[1] as string;
  }

  static async start(): Promise<GestureSite> {
    const { servers, origins, logs } = await LoggedSites.serve(["127.0.0.1", "127.0.0.2"], route);
    return new GestureSite(servers, origins).adopt(logs);
  }
}

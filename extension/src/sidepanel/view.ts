// The transcript view: entries → DOM, batched per animation frame, with a cap on rendered entries
// ("show earlier"), stick-to-bottom scrolling and a "jump to latest" pill. All author text goes
// through renderMarkdown (the one sanitizing sink) or textContent; nothing here assigns HTML.

import type { Entry, Transcript } from "../room/transcript.js";
import { renderMarkdownParts } from "./markdown.js";

/**
 * Fills a bubble with rendered markdown: a huge message's later parts arrive one task each
 * (before `anchor`, the streaming caret), so the panel answers in between; a bubble replaced
 * meanwhile stops receiving them.
 */
function fill(bubble: HTMLElement, text: string, anchor: Node | null = null): void {
  const { first, rest } = renderMarkdownParts(text);
  bubble.insertBefore(first, anchor);
  let i = 0;
  const step = () => {
    const next = rest[i++];
    if (!next || !bubble.isConnected) return;
    bubble.insertBefore(next(), anchor && anchor.parentNode === bubble ? anchor : null);
    if (i < rest.length) setTimeout(step, 0);
  };
  if (rest.length) setTimeout(step, 0);
}

export const RENDER_STEP = 150;
/** A streaming bubble past this size re-renders at most every BIG_EVERY_MS (markdown is O(n)). */
const BIG_TEXT = 8_000;
const BIG_EVERY_MS = 250;
const BOTTOM_SLACK = 48;

export interface ViewActions {
  permission(requestId: string, optionId: string | null): void;
  /** Re-send a person's message to the agents it did not reach. */
  retry(entryId: string): void;
  /** The transcript became empty or stopped being empty (the panel shows its empty state). */
  empty(isEmpty: boolean): void;
}

/** Consecutive messages of one author within this gap show the avatar, name and time once. */
const GROUP_MS = 5 * 60_000;

function author(e: Entry): string | undefined {
  if (e.kind === "user") return `you|${e.to.join(",")}`;
  if (e.kind === "notice") return undefined;
  return `agent|${e.agent}`;
}

/** The entry continues the previous one's group (same author, close in time). */
function continues(prev: Entry | undefined, e: Entry): boolean {
  if (!prev) return false;
  const a = author(e);
  return a !== undefined && a === author(prev) && e.ts - prev.ts < GROUP_MS;
}

export function hue(name: string): number {
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h % 360;
}

export function initial(name: string): string {
  return (name.trim()[0] ?? "?").toUpperCase();
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function clock(ts: number): string {
  return new Date(ts).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function timeEl(ts: number): HTMLTimeElement {
  const t = el("time", "time", clock(ts));
  t.dateTime = new Date(ts).toISOString();
  return t;
}

const TOOL_LABEL = { pending: "pending", running: "running", done: "done", failed: "failed" } as const;
const PLAN_MARK = { pending: "○", in_progress: "◐", completed: "●" } as const;

export class View {
  private readonly nodes = new Map<string, HTMLElement>();
  private readonly dirty = new Set<string>();
  private rebuild = true;
  private scheduled = false;
  private renderCount = RENDER_STEP;
  private stuck = true;
  private readonly lastRender = new Map<string, number>();
  private deferTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly t: () => Transcript,
    private readonly log: HTMLOListElement,
    private readonly scroller: HTMLElement,
    private readonly earlier: HTMLButtonElement,
    private readonly jump: HTMLButtonElement,
    private readonly actions: ViewActions,
  ) {
    scroller.addEventListener("scroll", () => {
      this.stuck = this.atBottom();
      if (this.stuck) this.jump.hidden = true;
    });
    jump.addEventListener("click", () => this.toBottom());
    earlier.addEventListener("click", () => {
      this.renderCount += RENDER_STEP;
      this.rebuild = true;
      this.stuck = false;
      this.schedule();
    });
  }

  private atBottom(): boolean {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < BOTTOM_SLACK;
  }

  toBottom(): void {
    this.stuck = true;
    this.jump.hidden = true;
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Marks entries changed (or added); the DOM catches up on the next animation frame. */
  touch(ids: Iterable<string>): void {
    for (const id of ids) this.dirty.add(id);
    this.schedule();
  }

  reset(): void {
    this.renderCount = RENDER_STEP;
    this.rebuild = true;
    this.stuck = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Renders now (tests and the first paint). */
  flush(): void {
    const tr = this.t();
    for (const id of tr.drainRemoved()) {
      this.nodes.get(id)?.remove();
      this.nodes.delete(id);
    }
    const all = tr.entries;
    const visible = all.slice(-this.renderCount);
    const hiddenCount = all.length - visible.length;
    this.earlier.hidden = hiddenCount === 0;
    this.earlier.textContent = `Show earlier (${hiddenCount})`;
    const grew = this.rebuild || this.dirty.size > 0;
    if (this.rebuild) {
      this.log.replaceChildren();
      this.nodes.clear();
    } else {
      const keep = new Set(visible.map((e) => e.id));
      for (const [id, node] of this.nodes) {
        if (!keep.has(id)) {
          node.remove();
          this.nodes.delete(id);
        }
      }
    }
    this.actions.empty(all.length === 0);
    const deferred: string[] = [];
    const now = performance.now();
    let prev: Entry | undefined;
    for (const e of visible) {
      const before = prev;
      prev = e;
      const node = this.nodes.get(e.id);
      if (node && this.dirty.has(e.id) && e.kind === "agent" && e.streaming && e.text.length > BIG_TEXT) {
        if (now - (this.lastRender.get(e.id) ?? 0) < BIG_EVERY_MS) {
          deferred.push(e.id);
          continue;
        }
        this.lastRender.set(e.id, now);
      }
      if (!node) {
        const n = this.render(e, continues(before, e));
        this.nodes.set(e.id, n);
        this.log.append(n);
      } else if (this.dirty.has(e.id)) {
        const n = this.render(e, continues(before, e));
        node.replaceWith(n);
        this.nodes.set(e.id, n);
      }
    }
    this.dirty.clear();
    if (deferred.length) {
      for (const id of deferred) this.dirty.add(id);
      this.deferTimer ??= setTimeout(() => {
        this.deferTimer = null;
        this.schedule();
      }, BIG_EVERY_MS);
    }
    const rebuilt = this.rebuild;
    this.rebuild = false;
    if (this.stuck) this.scroller.scrollTop = this.scroller.scrollHeight;
    else if (grew && !rebuilt) this.jump.hidden = false;
  }

  private render(e: Entry, cont: boolean): HTMLElement {
    const li = this.entry(e);
    // The first rendered entry always shows its header (CSS: .cont:not(:first-child)).
    if (cont) li.classList.add("cont");
    return li;
  }

  private entry(e: Entry): HTMLElement {
    switch (e.kind) {
      case "user": {
        const li = el("li", "msg me");
        li.dataset.testid = "msg-user";
        const meta = el("div", "meta");
        meta.append(el("span", "name", "You"));
        if (e.to.length) meta.append(el("span", "to", ` to ${e.to.join(", ")}`));
        meta.append(" ", timeEl(e.ts));
        const bubble = el("div", "bubble md");
        fill(bubble, e.text);
        li.append(meta, bubble);
        if (e.undelivered?.agents.length) {
          const row = el("div", "undelivered");
          row.dataset.testid = "undelivered";
          row.append(el("span", undefined, `${e.undelivered.reason} — ${e.undelivered.agents.join(", ")}`));
          const b = el("button", "retry quiet", "Retry");
          b.type = "button";
          b.dataset.testid = "retry";
          b.setAttribute("aria-label", `Retry: send this message again to ${e.undelivered.agents.join(", ")}`);
          b.addEventListener("click", () => this.actions.retry(e.id));
          row.append(b);
          li.append(row);
        }
        return this.finish(li, e);
      }
      case "agent": {
        const li = this.agentRow(e.agent, e.ts, "msg agent");
        li.dataset.testid = "msg-agent";
        li.dataset.streaming = String(e.streaming);
        const body = li.querySelector(".body") as HTMLElement;
        if (e.thought) {
          const d = el("details", "thought");
          d.append(el("summary", undefined, "thinking"), el("div", "thought-text", e.thought));
          body.append(d);
        }
        if (e.text || !e.thought) {
          const bubble = el("div", "bubble md");
          const caret = e.streaming ? bubble.appendChild(el("span", "caret", "▍")) : null;
          fill(bubble, e.text, caret);
          body.append(bubble);
        }
        return this.finish(li, e);
      }
      case "tool": {
        const li = this.agentRow(e.agent, e.ts, "card tool");
        li.dataset.testid = "tool-card";
        li.dataset.status = e.status;
        li.dataset.toolCallId = e.toolCallId;
        const body = li.querySelector(".body") as HTMLElement;
        const head = el("div", "card-head");
        const st = el("span", `status s-${e.status}`, TOOL_LABEL[e.status]);
        st.dataset.testid = "tool-status";
        head.append(el("span", "card-icon", "⚙"), el("span", "card-title", e.title), st);
        body.append(head);
        if (e.touched.length) {
          const ul = el("ul", "touched");
          ul.dataset.testid = "tool-touched";
          for (const t of e.touched) ul.append(el("li", undefined, t));
          body.append(ul);
        }
        if (e.detail) {
          const d = el("details", "detail");
          d.append(el("summary", undefined, "result"), el("pre", "detail-text", e.detail));
          body.append(d);
        }
        return this.finish(li, e);
      }
      case "plan": {
        const li = this.agentRow(e.agent, e.ts, "card plan");
        li.dataset.testid = "plan";
        const body = li.querySelector(".body") as HTMLElement;
        body.append(el("div", "card-head", "Plan"));
        const ul = el("ul", "checklist");
        for (const it of e.items) {
          const item = el("li", `p-${it.status}`);
          item.dataset.status = it.status;
          const mark = el("span", "mark", PLAN_MARK[it.status]);
          mark.setAttribute("aria-label", it.status.replace("_", " "));
          item.append(mark, el("span", "plan-text", it.content));
          ul.append(item);
        }
        body.append(ul);
        return this.finish(li, e);
      }
      case "permission": {
        const li = this.agentRow(e.agent, e.ts, "card perm");
        li.dataset.testid = "permission";
        li.dataset.requestId = e.requestId;
        li.dataset.decided = e.decided;
        const body = li.querySelector(".body") as HTMLElement;
        body.append(el("div", "card-head", `${e.agent} asks to: ${e.title}`));
        if (e.touched.length) {
          const ul = el("ul", "touched");
          for (const t of e.touched) ul.append(el("li", undefined, t));
          body.append(ul);
        }
        if (e.decided) {
          const d = el("div", "decided", e.decided);
          d.dataset.testid = "perm-outcome";
          body.append(d);
        } else {
          const row = el("div", "perm-actions");
          for (const o of e.options) {
            const allow = o.kind.startsWith("allow");
            const b = el("button", allow ? "approve" : "deny", o.name);
            b.type = "button";
            b.dataset.testid = allow ? "perm-allow" : "perm-deny";
            b.dataset.optionId = o.optionId;
            b.addEventListener("click", () => this.actions.permission(e.requestId, o.optionId));
            row.append(b);
          }
          if (e.options.length === 0) {
            const b = el("button", "deny", "Deny");
            b.type = "button";
            b.dataset.testid = "perm-deny";
            b.addEventListener("click", () => this.actions.permission(e.requestId, null));
            row.append(b);
          }
          body.append(row);
        }
        return this.finish(li, e);
      }
      case "notice": {
        const li = el("li", `notice n-${e.level}`);
        li.dataset.testid = "notice";
        li.dataset.level = e.level;
        li.append(el("span", "notice-text", e.text), " ", timeEl(e.ts));
        return this.finish(li, e);
      }
    }
  }

  private agentRow(agent: string, ts: number, cls: string): HTMLLIElement {
    const li = el("li", cls);
    li.dataset.agent = agent;
    li.style.setProperty("--hue", String(hue(agent)));
    const av = el("div", "avatar", initial(agent));
    av.setAttribute("aria-hidden", "true");
    const body = el("div", "body");
    const meta = el("div", "meta");
    meta.append(el("span", "name", agent), " ", timeEl(ts));
    body.append(meta);
    li.append(av, body);
    return li;
  }

  private finish(li: HTMLElement, e: Entry): HTMLElement {
    li.id = `entry-${e.id}`;
    li.dataset.entry = e.id;
    li.dataset.kind = e.kind;
    return li;
  }
}

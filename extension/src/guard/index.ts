// guard.js: the effect guard, a content script declared in the manifest for every frame
// (document_start, ISOLATED world, about:blank and opaque documents too). It runs before any page
// script, so its capture listeners on `window` are the first listeners of every event; while the
// worker has armed the tab for an agent's call it blocks what must not arrive, with
// stopImmediatePropagation + preventDefault (SECURITY I-36…I-38):
// - in a frame whose real origin (`self.origin`) is off the list: every trusted input event;
// - in an allowed frame: keys and text while the focused field (through closed shadow roots too)
//   is a password field, and a submit, a destructive click or a link to another origin the call
//   was not allowed.
// The worker arms and disarms through chrome.scripting (the same isolated world, globalThis.__toriiGuard);
// disarming returns what was blocked, as codes only. A document that starts while its tab may be
// armed asks the worker first and blocks input until it knows (SECURITY I-39).

import type { Block, ArmSpec, EffectKind, EventFacts, Phase, Rights } from "./decide";
import { decide, EFFECT_EVENTS, GUARDED_EVENTS, rightsFor, sendsOffList, settlePending, TYPING_EVENTS } from "./decide";
import { clickEffects, composedClosest, deepFocused, elementAt, focusedIn, isPasswordField, keyEffects, shadowOf, type ClickEffects } from "../page/risk";
import { defaultButton, formOf, formRequest, grantCovers, isForm, type SubmitGrant } from "./secret-submit";
import { implicitLeaves, navigationLeaves, SecretHold, submitLeaves, type NavigateLike } from "./secret-hold";

/** What a frame answers when armed. */
export interface ArmReply {
  allowed: boolean;
  /** Where this frame sits: its index in each ancestor's `window.frames`, from the top (null: cannot tell). */
  path: number[] | null;
  /** The cross-origin child frame that holds the focus (its path), when focus is in one. */
  focusPath?: number[];
}

/** The frame under a point of this frame's viewport: this document, or a cross-origin child at a local point. */
export type Hit = { here: true } | { here: false; path: number[] | null; x: number; y: number };

export interface GuardApi {
  version: number;
  arm(spec: ArmSpec): ArmReply;
  disarm(token: string): Block[];
  /**
   * In a top document: whether it began leaving (a navigation to another document, or a submission
   * nobody cancelled that targets it) while armed with `token`, readable after the disarm; undefined
   * elsewhere or for another token. Absent from a guard an older build left in the document.
   */
  left?(token: string): boolean | undefined;
  hit(x: number, y: number): Hit;
  /** The focused element's facts, for the worker's prediction (never a value). */
  focus(): FocusFacts;
  /**
   * SECURITY I-69: the page engine has just put one secret into the password field `el` for the
   * call armed with `token`; that call's Enter may reach it (guard/secret-submit.ts). False when
   * this frame is not armed for that call.
   */
  grantSubmit(token: string, el: Element, origins: string[]): boolean;
  /**
   * SECURITY I-76: the page engine is about to put the secrets `names` (each bound to its
   * `origins`) into `el`, an element of this document; from now until the document goes, nothing
   * of it is submitted or navigated to another origin (guard/secret-hold.ts). False when `el` is
   * not in this document: the engine then fills nothing.
   */
  holdSecret(el: Element, names: string[], origins: string[][]): boolean;
  /** How many departures of a held secret this document stopped since it was armed with `token` (during the call or after it). */
  secretStops(token: string): number;
}

export interface FocusFacts {
  /** This document holds the focus (not one of its cross-origin frames). */
  here: boolean;
  /** This frame's path (ArmReply.path). */
  path: number[] | null;
  /** The cross-origin child frame that holds it (its path), when one does. */
  framePath?: number[];
  password: boolean;
  /** The origin and URL of the document that holds the focused element (SECURITY I-18). */
  origin: string;
  url: string;
  /** Enter would submit a form. */
  enter: ClickEffects;
  /** Space would activate it. */
  space: ClickEffects;
  label: string;
}

const VERSION = 3;
const MAX_RECORDS = 32;
const PENDING_MS = 5_000;

const g = globalThis as unknown as { __toriiGuard?: GuardApi };
if (!g.__toriiGuard || g.__toriiGuard.version !== VERSION) install();

function install(): void {
  let phase: Phase = "pending";
  let token = "";
  let expires = 0;
  let rights: Rights | undefined;
  let policy: ArmSpec["policy"] | undefined;
  let latched: Block | undefined;
  let records: Block[] = [];
  let pending: Block[] = [];
  let told = false;
  let grant: SubmitGrant | undefined;
  const disarmed = new Set<string>();
  // SECURITY I-76: the secrets this document holds, kept whatever the phase, and the departures
  // stopped since the latest arming (the worker asks after the call's action).
  const hold = new SecretHold();
  const stops = { token: "", n: 0 };

  // The browser's answer, out of the page's reach: about:blank and srcdoc report their creator's
  // origin, a sandboxed document "null".
  const origin = self.origin;
  const subframe = window.parent !== window;

  const apply = (spec: ArmSpec) => {
    listen();
    token = spec.token;
    if (stops.token !== token) {
      stops.token = token;
      stops.n = 0;
    }
    expires = spec.expires;
    rights = rightsFor(spec, origin, location.href);
    policy = spec.policy;
    latched = undefined;
    records = settlePending(pending, rights);
    if (records.length) latched = records[0];
    pending = [];
    told = false;
    grant = undefined;
    phase = "armed";
  };
  const idle = () => {
    phase = "idle";
    rights = undefined;
    latched = undefined;
    pending = [];
    grant = undefined;
  };

  const record = (b: Block) => {
    if (phase === "pending") {
      if (pending.length < MAX_RECORDS) pending.push(b);
      return;
    }
    if (records.length < MAX_RECORDS) records.push(b);
    latched ??= b;
    if (!told) {
      // One message per call and frame, so the worker stops sending the rest at once.
      told = true;
      send({ type: "torii.guard.blocked", token, code: b.code, ...(b.kind ? { kind: b.kind } : {}) }).catch(() => undefined);
    }
  };

  const onEvent = (ev: Event) => {
    if (phase === "idle") return;
    if (phase === "armed" && Date.now() > expires) {
      idle();
      return;
    }
    const f: EventFacts = { type: ev.type, trusted: ev.isTrusted, subframe };
    if (phase === "armed" && rights?.allowed) {
      const focused = TYPING_EVENTS.has(ev.type) || EFFECT_EVENTS.has(ev.type) ? focusedIn(document) : null;
      if (TYPING_EVENTS.has(ev.type)) {
        f.password = isPasswordField(focused);
        if (f.password && grantCovers(grant, token, ev, focused)) f.submitKey = true;
      }
      if (EFFECT_EVENTS.has(ev.type)) {
        f.effects = effectsOf(ev, origin);
        if (policy && sendsOffList(policy, requestsOf(ev))) f.offList = true;
        // SECURITY I-76: the implicit submission an Enter would make, judged at the key.
        if (ev.type === "keydown" && f.effects.includes("submit") && focused) {
          const form = formOf(focused);
          if (implicitLeaves(hold, form, form ? defaultButton(form) : null)) f.secretElsewhere = true;
        }
      }
    }
    const b = decide(phase, rights, latched, f);
    if (!b) {
      // Each event of the one submit key passes once.
      if (f.submitKey) grant?.spent.add(ev.type);
      return;
    }
    ev.stopImmediatePropagation();
    if (ev.cancelable) ev.preventDefault();
    if (!b.quiet) record(b);
  };
  // SECURITY I-76: a departure of a held secret stopped where it happens, whatever caused it; the
  // running call (if any) fails with secret_origin_mismatch.
  const stopSecret = (ev: Event) => {
    ev.stopImmediatePropagation();
    if (ev.cancelable) ev.preventDefault();
    stops.n++;
    if (phase === "armed") record({ code: "secret_origin_mismatch" });
  };
  // A submission, before the form's own handlers (capture) and again once they have run (the first
  // bubble listener on window): they may point it elsewhere (`this.action = …`).
  const onSecretSubmit = (ev: Event) => {
    if (submitLeaves(hold, ev)) stopSecret(ev);
  };
  // The navigation the browser is about to start, with its real URL: form.submit(), a form
  // re-pointed by a listener that ran after ours, a GET form's URL, a link, `location = …`.
  const onSecretNavigate = (ev: Event) => {
    if (ev.cancelable && navigationLeaves(hold, ev as NavigateLike)) stopSecret(ev);
  };
  // While a document that holds a secret is being left, its own pagehide and visibilitychange
  // handlers do not run: on a cross-site navigation they run after the next document committed,
  // when the tab's network rules may already be gone (tools/secret-net.ts).
  let unloading = false;
  const onPageHide = (ev: Event) => {
    if (ev.type === "pageshow") {
      unloading = false;
      return;
    }
    if (!hold.holding) return;
    if (ev.type === "pagehide") unloading = true;
    else if (!unloading) return;
    ev.stopImmediatePropagation();
  };
  const leaving = { token: "", left: false, watching: false };
  const onLeaving = (e: Event) => {
    const f = e.target;
    if (phase !== "armed" || e.defaultPrevented || !isForm(f)) return;
    const by = (e as SubmitEvent).submitter as HTMLButtonElement | HTMLInputElement | null;
    const method = (by?.getAttribute("formmethod") ?? f.getAttribute("method") ?? "").toLowerCase();
    const target = (by?.getAttribute("formtarget") ?? f.getAttribute("target") ?? "").toLowerCase();
    if (method !== "dialog" && ["", "_self", "_top", "_parent"].includes(target)) leaving.left = true;
  };
  // document.open() erases every listener of the window, the guard's too. They are added again
  // when the document is replaced that way (its children go: a mutation, seen a microtask later)
  // and at every arming; adding a listener already there changes nothing, not even its order.
  const listen = () => {
    window.addEventListener("submit", onSecretSubmit, { capture: true });
    for (const t of ["pagehide", "visibilitychange", "pageshow"]) window.addEventListener(t, onPageHide, { capture: true });
    for (const t of GUARDED_EVENTS) window.addEventListener(t, onEvent, { capture: true });
    window.addEventListener("submit", onSecretSubmit);
    if (leaving.watching) window.addEventListener("submit", onLeaving);
  };
  listen();
  new MutationObserver(listen).observe(document, { childList: true });
  (globalThis as { navigation?: EventTarget }).navigation?.addEventListener("navigate", onSecretNavigate);

  // Noted while armed, so the worker waits for the load instead of guessing with a pause. The
  // Navigation API's navigate event comes synchronously from a link or a script. A form's submission
  // is only planned when its submit event passes (its navigate event comes in a later task,
  // possibly after the disarm), so a submit nobody cancelled that targets this document counts too.
  // Installed at the first arming, after the page's own listeners: in the bubble phase on the
  // window, the page's handlers (which may cancel it) have run by then.
  const watchLeaving = () => {
    const nav = (globalThis as { navigation?: EventTarget }).navigation;
    if (leaving.watching || subframe || !nav) return;
    leaving.watching = true;
    nav.addEventListener("navigate", (e) => {
      if (phase === "armed" && !(e as Event & { destination?: { sameDocument?: boolean } }).destination?.sameDocument) leaving.left = true;
    });
    window.addEventListener("submit", onLeaving);
  };

  g.__toriiGuard = {
    version: VERSION,
    arm(spec) {
      disarmed.delete(spec.token);
      apply(spec);
      watchLeaving();
      leaving.token = spec.token;
      leaving.left = false;
      const reply: ArmReply = { allowed: !!rights?.allowed, path: pathOf(window) };
      const f = deepFocused(document);
      const fp = f.crossFrame && f.el ? childPath(f.el) : null;
      if (fp) reply.focusPath = fp;
      return reply;
    },
    disarm(t) {
      disarmed.add(t);
      if (disarmed.size > 64) disarmed.delete(disarmed.values().next().value as string);
      if (phase === "pending" || token !== t) return [];
      const out = records;
      records = [];
      idle();
      return out;
    },
    left: (t) => (leaving.watching && leaving.token === t ? leaving.left : undefined),
    hit: (x, y) => hitAt(x, y),
    focus: () => focusFacts(),
    grantSubmit(t, el, origins) {
      if (phase !== "armed" || t !== token || !rights?.allowed || !isPasswordField(el) || el.ownerDocument !== document) return false;
      grant = { token: t, el, origins: [...origins], spent: new Set() };
      return true;
    },
    holdSecret(el, names, origins) {
      // Not `instanceof`: the engine of a parent document hands in a node of its own realm.
      if (!el || (el as Node).nodeType !== 1 || el.ownerDocument !== document || !Array.isArray(names) || names.length === 0) return false;
      const first = !hold.holding;
      hold.add(names.map(String), names.map((_, i) => (Array.isArray(origins[i]) ? origins[i].map(String) : [])));
      // An unload handler keeps the document out of the back/forward cache (a restored document
      // would run before the worker could restore its rules), and stops the page's own unload
      // handlers added after this one.
      if (first) window.addEventListener("unload", (ev) => ev.stopImmediatePropagation(), { capture: true });
      return true;
    },
    secretStops: (t) => (stops.token === t ? stops.n : 0),
  };

  // SECURITY I-39: a document that starts while its tab may be armed (a frame inserted or navigated
  // during the call) must not take input before it knows; the worker answers at once.
  const timer = setTimeout(() => {
    if (phase === "pending") idle();
  }, PENDING_MS);
  send({ type: "torii.guard.hello" })
    .then((r: unknown) => {
      if (phase !== "pending") return;
      const spec = (r as { arm?: ArmSpec } | undefined)?.arm;
      if (spec && !disarmed.has(spec.token) && Date.now() < spec.expires) apply(spec);
      else idle();
    })
    .catch(() => {
      if (phase === "pending") idle();
    })
    .finally(() => clearTimeout(timer));
}

/** A message to the worker; a guard left over from an extension reload has none to reach. */
function send(m: Record<string, unknown>): Promise<unknown> {
  try {
    return chrome.runtime.sendMessage(m);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The element an event is really aimed at, inside closed shadow roots too. */
function deepTarget(ev: Event): Element | null {
  const first = ev.composedPath()[0];
  let t: Element | null = first instanceof Element ? first : focusedIn(document);
  const m = ev as MouseEvent;
  const pointed = ev instanceof MouseEvent && (m.detail > 0 || m.clientX !== 0 || m.clientY !== 0);
  for (let i = 0; t && i < 64; i++) {
    const root = shadowOf(t);
    if (!root) break;
    const inner = pointed ? root.elementFromPoint(m.clientX, m.clientY) : root.activeElement;
    if (!inner || inner === t) break;
    t = inner;
  }
  return t;
}

function kindsOf(fx: ClickEffects, origin: string): EffectKind[] {
  const out: EffectKind[] = [];
  if (fx.submit) out.push("submit");
  if (fx.destructive) out.push("destructive_click");
  if (fx.href !== undefined && leaves(fx.href, origin)) out.push("new_origin");
  return out;
}

function leaves(href: string, origin: string): boolean {
  try {
    return new URL(href).origin !== origin;
  } catch {
    return true;
  }
}

function effectsOf(ev: Event, origin: string): EffectKind[] {
  if (ev.type === "submit") return ["submit"];
  if (ev.type === "keydown") {
    const k = (ev as KeyboardEvent).key;
    // Enter in a form field submits it (implicit submission fires no click); activation by Enter
    // or Space on a button arrives as a click and is judged there.
    if (k !== "Enter") return [];
    const fx = keyEffects(focusedIn(document), "Enter");
    return fx.submit ? ["submit"] : [];
  }
  const t = deepTarget(ev);
  return t ? kindsOf(clickEffects(t), origin) : [];
}

/** The URLs an effect event would send a request to: the form's action, the link and its pings. */
function requestsOf(ev: Event): string[] {
  if (ev.type === "submit") {
    const form = ev.composedPath()[0];
    // Told by name: a click the engine of a parent document made hands over nodes of its realm.
    if (!isForm(form)) return [];
    // Read past a field named "action" that shadows the form's own property.
    return [formRequest(form, (ev as SubmitEvent).submitter ?? null).url];
  }
  if (ev.type === "keydown") {
    if ((ev as KeyboardEvent).key !== "Enter") return [];
    const el = focusedIn(document);
    const form = el ? formOf(el) : null;
    if (!form) return [];
    return [formRequest(form, defaultButton(form)).url];
  }
  const t = deepTarget(ev);
  if (!t) return [];
  const out: string[] = [];
  const btn = composedClosest(t, "button, input[type=submit i], input[type=image i]") as HTMLButtonElement | null;
  if (btn?.form && btn.type === "submit") out.push(formRequest(btn.form, btn).url);
  const link = composedClosest(t, "a[href], area[href]") as HTMLAnchorElement | null;
  if (link) {
    out.push(link.href);
    for (const p of (link.getAttribute("ping") ?? "").split(/\s+/).filter(Boolean)) {
      try {
        out.push(new URL(p, document.baseURI).href);
      } catch {
        // an unparsable ping sends nothing
      }
    }
  }
  return out;
}

function isFrameEl(el: Element | null): el is HTMLIFrameElement {
  return !!el && (el.localName === "iframe" || el.localName === "frame");
}

/**
 * A frame's place in the tab as indexes into each ancestor's `window.frames`, from the top. Window
 * proxies, `parent` and `frames` can be read across origins, so parent and child compute the same
 * path; the worker maps it to the frame's id from the arming replies. Null when it cannot be told
 * (a frame inside a shadow tree is not in `window.frames`): treated as off the list.
 */
function pathOf(w: Window): number[] | null {
  const out: number[] = [];
  for (let i = 0; i < 32 && w.parent !== w; i++) {
    const idx = Array.prototype.indexOf.call(w.parent.frames, w) as number;
    if (idx < 0) return null;
    out.unshift(idx);
    w = w.parent;
  }
  return out;
}

function childPath(el: Element): number[] | null {
  const w = (el as HTMLIFrameElement).contentWindow;
  return w ? pathOf(w) : null;
}

function hitAt(x: number, y: number): Hit {
  let doc = document;
  for (let i = 0; i < 16; i++) {
    const el = elementAt(doc, x, y);
    if (!isFrameEl(el)) return { here: true };
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const lx = x - (r.left + el.clientLeft + (parseFloat(cs.paddingLeft) || 0));
    const ly = y - (r.top + el.clientTop + (parseFloat(cs.paddingTop) || 0));
    let inner: Document | null = null;
    try {
      inner = el.contentDocument;
    } catch {
      inner = null;
    }
    // A frame we cannot place is judged as off the list.
    if (!inner) return { here: false, path: childPath(el), x: lx, y: ly };
    doc = inner;
    x = lx;
    y = ly;
  }
  return { here: true };
}

function focusFacts(): FocusFacts {
  const f = deepFocused(document);
  const el = f.crossFrame ? null : f.el;
  const out: FocusFacts = {
    here: !f.crossFrame,
    path: pathOf(window),
    password: isPasswordField(el),
    origin: self.origin,
    url: (el?.ownerDocument ?? document).URL,
    enter: keyEffects(el, "Enter"), space: keyEffects(el, " "), label: labelOf(el) };
  const fp = f.crossFrame && f.el ? childPath(f.el) : null;
  if (fp) out.framePath = fp;
  return out;
}

/** A short label for the person's approval window: the element's kind and accessible name, never a field's value. */
function labelOf(el: Element | null): string {
  if (!el) return "";
  const tag = el.localName;
  const field = tag === "input" || tag === "textarea" || (el as HTMLElement).isContentEditable;
  const name = el.getAttribute("aria-label") ?? el.getAttribute("name") ?? el.getAttribute("placeholder") ?? (field ? "" : (el.textContent ?? ""));
  const n = name.replace(/\s+/g, " ").trim().slice(0, 80);
  return n ? `${tag} "${n}"` : tag;
}

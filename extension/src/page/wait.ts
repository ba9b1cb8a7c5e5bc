// wait_for and settle, in-page: a MutationObserver wakes the check, a poll catches what it
// cannot see (style-only changes, closed shadow roots, timers), and a hard timeout ends it.
import { deepQuery } from "./dom";
import { EngineError, fail } from "./errors";
import type { EngineContext } from "./context";
import type { SettleArgs, WaitForArgs } from "./types";
import { visibleText } from "./text";
import { maskHere } from "./secrets";

const MAX_MS = 30_000;

function clampTimeout(v: unknown, dflt: number): number {
  const n = v === undefined ? dflt : Number(v);
  if (!Number.isFinite(n) || n < 0) fail("invalid_argument", "timeoutMs must be a number of milliseconds ≥ 0");
  return Math.min(n, MAX_MS);
}

export function waitFor(engine: EngineContext, a: WaitForArgs): Promise<{ found: boolean; ms: number; state: string }> {
  const state = a.state ?? "appear";
  if (state !== "appear" && state !== "disappear") fail("invalid_argument", 'state must be "appear" or "disappear"');
  const timeout = clampTimeout(a.timeoutMs, 5000);
  const given = [a.selector, a.ref, a.text].filter((x) => x !== undefined && x !== "").length;
  if (given !== 1) fail("invalid_argument", "wait_for needs exactly one of selector, ref or text");
  if (a.selector) deepQuery(a.selector); // validates the selector up front
  const present = (): boolean => {
    if (a.selector) {
      const el = deepQuery(a.selector);
      return !!el && el.checkVisibility({ visibilityProperty: true });
    }
    if (a.ref) {
      try {
        return engine.refs.resolve(a.ref).checkVisibility({ visibilityProperty: true });
      } catch (e) {
        if (e instanceof EngineError && e.code === "stale_ref") return false;
        throw e;
      }
    }
    // SECURITY I-77: the masked text, so waiting can never test a secret's characters.
    const hay = maskHere(visibleText(document.body ?? document.documentElement)).toLowerCase();
    return hay.includes(String(a.text).toLowerCase());
  };
  const t0 = performance.now();
  const goal = state === "appear";
  return new Promise((resolve) => {
    let done = false;
    let pending = false;
    const finish = (found: boolean) => {
      if (done) return;
      done = true;
      mo.disconnect();
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ found, ms: Math.round(performance.now() - t0), state });
    };
    const check = () => {
      if (done) return;
      if (present() === goal) finish(true);
    };
    // Mutation bursts are coalesced into one check per frame-ish tick.
    const mo = new MutationObserver(() => {
      if (pending) return;
      pending = true;
      setTimeout(() => {
        pending = false;
        check();
      }, 16);
    });
    mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    const poll = setInterval(check, 100);
    const timer = setTimeout(() => finish(false), timeout);
    check();
  });
}

export function settle(a: SettleArgs): Promise<{ settled: boolean; ms: number }> {
  const quiet = Math.max(0, Math.min(Number(a.quietMs ?? 300) || 0, 10_000));
  const timeout = clampTimeout(a.timeoutMs, 5000);
  const t0 = performance.now();
  return new Promise((resolve) => {
    let quietTimer: ReturnType<typeof setTimeout>;
    const finish = (settled: boolean) => {
      mo.disconnect();
      clearTimeout(quietTimer);
      clearTimeout(hard);
      resolve({ settled, ms: Math.round(performance.now() - t0) });
    };
    const arm = () => {
      clearTimeout(quietTimer);
      quietTimer = setTimeout(() => finish(true), quiet);
    };
    const mo = new MutationObserver(arm);
    mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    const hard = setTimeout(() => finish(false), timeout);
    arm();
  });
}

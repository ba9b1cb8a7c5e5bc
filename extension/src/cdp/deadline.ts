// Every chrome.debugger / chrome.scripting call has a deadline and honours cancellation, so a tab
// that closes or navigates mid-call yields a typed error, never a hang.

import { toolError, type ToolError } from "../tools/errors.js";

/** Races `p` against a timer and an AbortSignal. The timer error is `timeout` unless `onTimeout` says otherwise. */
export function withDeadline<T>(
  p: Promise<T>,
  ms: number,
  what: string,
  signal?: AbortSignal,
  onTimeout?: () => ToolError,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(abortError(signal, what));
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(onTimeout ? onTimeout() : toolError("timeout", `${what}: no answer within ${Math.round(ms)} ms`));
    }, Math.max(0, ms));
    const onAbort = () => {
      cleanup();
      reject(abortError(signal as AbortSignal, what));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    function cleanup() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    p.then(
      (v) => {
        cleanup();
        resolve(v);
      },
      (e: unknown) => {
        cleanup();
        reject(e);
      },
    );
  });
}

export function abortError(signal: AbortSignal, what: string): ToolError {
  const r: unknown = signal.reason;
  if (r && typeof r === "object" && (r as { name?: string }).name === "ToolError") return r as ToolError;
  return toolError("cancelled", `${what}: cancelled`);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return atMost(new Promise<never>(() => undefined), ms, signal);
}

/** Waits for the event `p` stands for, or `ms` when it does not come; rejects only when cancelled. */
export function atMost(p: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<void> {
  return withDeadline(p, ms, "wait", signal).then(
    () => undefined,
    (e: unknown) => {
      if ((e as ToolError).code === "timeout") return;
      throw e;
    },
  );
}

/** Milliseconds left before `deadline` (epoch ms), capped to `cap`. */
export function left(deadline: number, cap = Infinity): number {
  return Math.max(0, Math.min(cap, deadline - Date.now()));
}

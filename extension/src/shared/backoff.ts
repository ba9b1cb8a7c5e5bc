// Reconnect delays: capped exponential backoff with "equal-ish" jitter, so a daemon restart is
// picked up within a few seconds while many workers do not reconnect in lockstep.

const BACKOFF_BASE_MS = 250;
const BACKOFF_FACTOR = 2;
export const BACKOFF_CAP_MS = 3000;

/** Delay before reconnect attempt number `attempt` (0-based); `random` returns a value in [0, 1). */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const n = Math.max(0, Math.floor(attempt));
  // Stop growing once past the cap so large attempt counts cannot overflow to Infinity.
  const raw = n > 16 ? BACKOFF_CAP_MS : BACKOFF_BASE_MS * BACKOFF_FACTOR ** n;
  const capped = Math.min(BACKOFF_CAP_MS, raw);
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(capped * (0.5 + 0.5 * r));
}

// Wires the audit witness (policy/auditwitness.ts) to chrome.storage.local and the link: a full
// cross-check on every (re)connect, and the head learnt again a little after tool calls, so the
// links we hold stay close to the daemon's newest record (SECURITY I-70).

import { AuditWitness, type Request } from "../policy/auditwitness.js";

const KEY = "auditWitness";
const REFRESH_DELAY_MS = 3_000;

export const auditWitness = new AuditWitness({
  load: async () => (await chrome.storage.local.get(KEY))[KEY],
  save: (s) => chrome.storage.local.set({ [KEY]: s }),
});

let current: { daemonId: string; request: Request } | null = null;
let timer: ReturnType<typeof setTimeout> | null = null;

/** The link is up: hand the daemon our links. */
export function witnessConnected(daemonId: string, request: Request): void {
  current = { daemonId, request };
  auditWitness.check(daemonId, request).then(
    (r) => {
      if (r.mismatch) console.warn(`torii: the daemon's audit store disagrees with the chain this browser saw: ${r.mismatch} — run \`torii audit verify\``);
    },
    (e: unknown) => console.info(`torii: audit cross-check failed: ${e instanceof Error ? e.message : String(e)}`),
  );
}

/** A tool call finished: learn the daemon's head once it has written the record. */
export function witnessCallDone(): void {
  if (!current || timer) return;
  timer = setTimeout(() => {
    timer = null;
    const c = current;
    if (c) auditWitness.check(c.daemonId, c.request, false).catch(() => undefined);
  }, REFRESH_DELAY_MS);
}

// Downloads an agent starts go through the person's `download` approval (SECURITY I-19). A download
// is the agent's when it begins while a write call is in flight on an agent-acted tab, or within
// 2 s after it, from that tab's origin (the download's referrer, else its URL). Everything else —
// the person's own downloads — is left alone. allow: it proceeds; deny: it is cancelled; ask: it
// is held (paused, and its file name not yet determined, so no file can land) until the person
// answers in the approval window. A call still in flight when its download is denied (or times
// out) reports approval_denied (approval_timeout). The pure part is DownloadGuard; installDownloads
// wires it to chrome.downloads. A download the agent's session is allowed to keep is saved under
// torii/<session folder>/ of the browser's download folder and, once complete, moved by the daemon
// into the session's download sandbox, where the agent sees it as a resource (SECURITY I-66).

import type { ApprovalOutcome, ApprovalRequest } from "../policy/approvals.js";
import { originOf } from "../policy/pattern.js";
import { approvalChoice, judgeUrl, type Policy } from "../policy/policy.js";
import { errorResult, toolError, type CallToolResult } from "./errors.js";
import type { Traits } from "./traits.js";
import { unanswerable, type GateContext } from "./gate.js";
import { adoptDownload, safeName } from "./files.js";
import { outbound } from "./secrets.js";

/** How long after a call a download still counts as the agent's. */
const AFTER_CALL_MS = 2_000;
/**
 * How long a write call lingers for a download it may have started, when downloads are not allowed
 * outright and the action could have started one (act() says when it cannot).
 */
export const LINGER_MS = 300;
/** Only these can start a download; typing, filling or hovering never pay the linger. */

export interface DownloadItemLike {
  id: number;
  url: string;
  finalUrl?: string;
  referrer?: string;
  filename?: string;
  byExtensionId?: string;
}

type DownloadVerdict = "proceed" | "cancel";

/** What is decided for one of the agent's downloads; `sandbox` is where a kept one goes. */
export interface Decision {
  verdict: Promise<DownloadVerdict>;
  hold: Promise<boolean>;
  sandbox?: { sessionId: string; folder: string; tabId?: number };
}

/** The download folder's sub-path the browser saves a session's download to (SECURITY I-66). */
export function sandboxTarget(folder: string, item: DownloadItemLike): string {
  return `torii/${folder}/${safeName(downloadName(item))}`;
}

interface CallWindow {
  tool: string;
  linger: boolean;
  gctx: GateContext;
  end?: number;
  decisions: Promise<ApprovalOutcome | "auto">[];
  wake?: () => void;
}

export interface DownloadDeps {
  policy(): Promise<Policy>;
  ask(req: Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">, timeoutMs: number): Promise<ApprovalOutcome>;
  now?(): number;
}

export class DownloadGuard {
  private windows = new Set<CallWindow>();
  private decided = new Map<number, Decision>();
  constructor(private readonly deps: DownloadDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** A write call starts; its tab and origin are read from the gate's context when a download comes. */
  begin(tool: { name: string; traits: Pick<Traits, "effects"> }, gctx: GateContext): CallWindow | undefined {
    if (tool.traits.effects.length === 0) return undefined;
    // Clicks, keys and navigations start downloads late (a redirect, a handler's timer): they linger.
    const linger = tool.traits.effects.some((e) => e === "click" || e === "keys" || e === "navigation");
    const w: CallWindow = { tool: tool.name, linger, gctx, decisions: [] };
    this.windows.add(w);
    return w;
  }

  /** The call's handler finished: wait for its downloads' decisions; a denied one fails the call. */
  async end(w: CallWindow | undefined, r: CallToolResult): Promise<CallToolResult> {
    if (!w) return r;
    const origin = w.gctx.origin ?? "";
    // An action known to have started no download in its tab does not wait. One it started
    // elsewhere (a frame, a new window) or later is still held for the person (owner()); it is
    // only not reported in this call's result.
    if (!r.isError && w.linger && !w.gctx.noDownload && w.decisions.length === 0 && w.gctx.tabId !== undefined && origin) {
      const p = await this.deps.policy();
      if (approvalChoice(p, judgeUrl(p, origin), "download") !== "allow" && w.decisions.length === 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, LINGER_MS);
          w.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    }
    const outs = await Promise.all(w.decisions);
    w.end = this.now();
    setTimeout(() => this.windows.delete(w), AFTER_CALL_MS + 50);
    if (r.isError) return r;
    if (outs.includes("timeout")) return errorResult(toolError("approval_timeout", "the download started by this call got no answer from the person; it was cancelled"));
    // SECURITY I-80: refused at once when no one could be asked; the download was cancelled.
    if (outs.includes("unanswerable")) return errorResult(unanswerable(w.tool, ["download"]));
    if (outs.includes("denied")) return errorResult(toolError("approval_denied", "the person's policy or answer refused the download this call started; it was cancelled"));
    return r;
  }

  /** The window a download belongs to: the latest call on its origin in flight or ended ≤ 2 s ago. */
  private owner(item: DownloadItemLike): CallWindow | undefined {
    if (item.byExtensionId) return undefined;
    const from = originOf(item.referrer || item.finalUrl || item.url);
    if (!from) return undefined;
    const now = this.now();
    let best: CallWindow | undefined;
    for (const w of this.windows) {
      if (w.gctx.tabId === undefined || w.gctx.origin !== from) continue;
      if (w.end !== undefined && now - w.end > AFTER_CALL_MS) continue;
      best = w;
    }
    return best;
  }

  /** The decision already taken for a download, if it is the agent's. */
  decision(id: number): Decision | undefined {
    return this.decided.get(id);
  }

  /** undefined: not the agent's (never touched). Otherwise the decision, taken once per download; `hold` says whether it waits for a refusal or the person. */
  decide(item: DownloadItemLike): Decision | undefined {
    const known = this.decided.get(item.id);
    if (known) return known;
    const w = this.owner(item);
    if (!w) return undefined;
    const origin = w.gctx.origin ?? "";
    const choice = this.deps.policy().then((p) => ({ p, c: approvalChoice(p, judgeUrl(p, origin), "download") }));
    const outcome = choice.then(({ p, c }): Promise<ApprovalOutcome | "auto"> | ApprovalOutcome | "auto" => {
      if (c === "allow") return "auto";
      if (c === "deny") return "denied";
      const to = originOf(item.finalUrl || item.url);
      return this.deps.ask(
        {
          kind: "download",
          tool: w.tool,
          origin,
          ...(to && to !== origin ? { target: to } : {}),
          text: downloadName(item),
          ...(w.gctx.session ? { session: w.gctx.session } : {}),
        },
        p.approvalTimeoutMs,
      );
    });
    const recorded = outcome.then((o) => {
      if (o !== "auto" || w.gctx.approval === undefined) w.gctx.approval = o;
      return o;
    });
    if (w.end === undefined) {
      w.decisions.push(recorded);
      w.wake?.();
    }
    const owner = w.gctx.owner?.id;
    const folder = w.gctx.filesFolder;
    const d: Decision = {
      verdict: recorded.then((o): DownloadVerdict => (o === "auto" || o === "approved" ? "proceed" : "cancel")),
      hold: choice.then(({ c }) => c !== "allow"),
      ...(owner && folder ? { sandbox: { sessionId: owner, folder, ...(w.gctx.tabId !== undefined ? { tabId: w.gctx.tabId } : {}) } } : {}),
    };
    this.decided.set(item.id, d);
    setTimeout(() => this.decided.delete(item.id), 10 * 60_000);
    return d;
  }
}

/** The name the person is shown: Chrome's file name when known, else the URL's last segment. */
export function downloadName(item: DownloadItemLike): string {
  let name = item.filename ?? "";
  if (!name) {
    try {
      name = new URL(item.finalUrl || item.url).pathname;
    } catch {
      name = "";
    }
  }
  return (name.split(/[\\/]/).pop() || "(unnamed)").slice(0, 200);
}

/** Cancels a download; one that already completed (a tiny file can outrun the decision) loses its file. */
async function refuse(id: number): Promise<void> {
  await chrome.downloads.cancel(id).catch(() => undefined);
  const [it] = await chrome.downloads.search({ id }).catch(() => [] as chrome.downloads.DownloadItem[]);
  if (it?.state === "complete") await chrome.downloads.removeFile(id).catch(() => undefined);
}

let guard: DownloadGuard | undefined;

/** The installed guard (undefined in unit tests: calls are not tracked). */
export function downloadGuard(): DownloadGuard | undefined {
  return guard;
}

/** Registers chrome.downloads listeners (service worker start). */
export function installDownloads(deps: DownloadDeps): void {
  if (guard || !chrome.downloads) return;
  const g = new DownloadGuard(deps);
  guard = g;
  chrome.downloads.onCreated.addListener((item) => {
    const d = g.decide(item);
    if (!d) return;
    // Hold the bytes while the person decides; the file name stays undetermined meanwhile too.
    const paused = d.hold.then((h) =>
      h
        ? chrome.downloads.pause(item.id).then(
            () => true,
            () => false,
          )
        : false,
    );
    void d.verdict.then(async (v) => {
      if (v === "cancel") await refuse(item.id);
      else if (await paused) await chrome.downloads.resume(item.id).catch(() => undefined);
    });
  });
  chrome.downloads.onDeterminingFilename.addListener((item, suggest) => {
    const d = g.decide(item);
    if (!d) {
      suggest();
      return;
    }
    void d.verdict.then(async (v) => {
      if (v === "cancel") {
        await refuse(item.id);
        suggest();
      } else if (d.sandbox) {
        // SECURITY I-66: into the session's own folder, never a name the page chose as a path.
        suggest({ filename: sandboxTarget(d.sandbox.folder, item), conflictAction: "uniquify" });
      } else suggest();
    });
    return true;
  });
  chrome.downloads.onChanged.addListener((delta) => {
    if (delta.state?.current !== "complete") return;
    const d = g.decision(delta.id);
    if (!d?.sandbox) return;
    const { sessionId, tabId } = d.sandbox;
    void (async () => {
      if ((await d.verdict) !== "proceed") return;
      // SECURITY I-77: a file from a tab that received a secret cannot be checked for it; the
      // person keeps it in the browser's downloads, the agent never reads it.
      if (tabId !== undefined && (await outbound.holds(tabId))) return;
      const [it] = await chrome.downloads.search({ id: delta.id }).catch(() => [] as chrome.downloads.DownloadItem[]);
      if (!it?.filename) return;
      // The daemon moves it into the sandbox; the browser's record then points at a moved file.
      await adoptDownload(sessionId, it.filename, downloadName(it)).catch((e: unknown) => console.warn("torii: a download was not moved into the sandbox", e));
    })();
  });
}

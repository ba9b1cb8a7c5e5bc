// Secrets the model never sees (SECURITY I-69): the `secrets` tool lists names and origins, never
// values; fill, type and fill_form resolve `{{secret:NAME}}` references here, as late as they can,
// and hand the values to the one document that holds the field (Chrome's document id, so a frame
// that navigated meanwhile receives nothing), whose engine checks its own origin again and
// substitutes. Every secret the person keeps is masked out of everything bound for the agent
// (secrets/outbound.ts), and the audit records only "NAME on ORIGIN".

import { defineTool, type ToolContext } from "./define.js";
import { toolError, type CallToolResult, type ToolError } from "./errors.js";
import type { GateContext } from "./gate.js";
import { withDeadline, left } from "../cdp/deadline.js";
import { MemorySecretBackend, SecretError, SecretStore } from "../secrets/store.js";
import { IndexedDbSecretBackend } from "../secrets/idb.js";
import { secretRefs, TemplateError, type SecretBundle } from "../secrets/template.js";
import { Outbound, sessionTaint } from "../secrets/outbound.js";
import { setCutMask } from "./observe/format.js";
import { holdSecretsIn } from "./secret-net.js";

// Where there is no IndexedDB (a unit test's Node), no secret can ever have been stored.
export const secretStore = new SecretStore(typeof indexedDB === "undefined" ? new MemorySecretBackend() : new IndexedDbSecretBackend());
/** SECURITY I-77: the one mask every result, error and file bound for the agent passes through. */
export const outbound = new Outbound(secretStore, sessionTaint);

export interface Prepared {
  bundle: SecretBundle;
  names: string[];
}

/** The names a call's texts refer to; a malformed reference is invalid_argument naming its field. */
export function referenced(texts: { field: string; text: unknown }[]): string[] {
  const out: string[] = [];
  for (const t of texts) {
    if (typeof t.text !== "string") continue;
    try {
      for (const n of secretRefs(t.text)) if (!out.includes(n)) out.push(n);
    } catch (e) {
      if (e instanceof TemplateError) throw toolError("invalid_argument", `${t.field}: ${e.message}`, undefined, { field: t.field });
      throw e;
    }
  }
  return out;
}

function storeError(e: unknown): ToolError {
  if (e instanceof SecretError && (e.code === "secret_not_found" || e.code === "secret_store_locked")) return toolError(e.code, e.message);
  return toolError("secret_store_locked", "the secret store cannot be read; nothing was filled");
}

/** The values of `names`, decrypted now (a one-time code computed now); undefined when none. */
export async function prepareSecrets(names: string[]): Promise<Prepared | undefined> {
  if (names.length === 0) return undefined;
  let got;
  try {
    got = await secretStore.resolve(names);
  } catch (e) {
    throw storeError(e);
  }
  const bundle: SecretBundle = {};
  for (const [n, { value, info }] of got) {
    bundle[n] = { v: value, o: info.origins };
  }
  return { bundle, names };
}

/** The bundle with the values left out: the origins alone, for a check that fills nothing. */
export function originsOnly(p: Prepared): SecretBundle {
  const b: SecretBundle = {};
  for (const [n, e] of Object.entries(p.bundle)) b[n] = { v: "", o: e.o };
  return b;
}

function mismatch(name: string): ToolError {
  return toolError("secret_origin_mismatch", `secret ${name} is not bound to the origin of the field's document; nothing was filled`);
}

/**
 * The document a frame holds now, judged by its URL against each secret's origins before any value
 * is sent; the values then go to that document or nowhere (EngineOpts.documentId).
 */
export async function secretDocument(tabId: number, frameId: number, names: string[], p: Prepared, ctx: ToolContext): Promise<string> {
  const f = await withDeadline(chrome.webNavigation.getFrame({ tabId, frameId }), left(ctx.deadline, 5_000), "getFrame", ctx.signal).catch(() => null);
  const id = (f as { documentId?: string } | null)?.documentId;
  if (!f || !id) throw toolError("navigation_failed", "the field's frame is gone; nothing was filled");
  let origin = "null";
  try {
    origin = new URL(f.url).origin;
  } catch {
    /* not a URL: matches nothing */
  }
  for (const n of names) if (!p.bundle[n]?.o.includes(origin)) throw mismatch(n);
  // SECURITY I-77: stored before the value leaves the worker, so a restart cannot forget the tab.
  await outbound.received(tabId);
  // SECURITY I-76: the tab's network rules hold the secrets to their origins before any value is sent.
  await holdSecretsIn(tabId, frameId, id, origin, names.map((n) => p.bundle[n]?.o ?? []));
  return id;
}

const uses = new WeakMap<GateContext, Set<string>>();

/** Notes for the audit that these secrets were used on the document's origin (never a value). */
export function noteUse(ctx: ToolContext, names: string[], origin: string): void {
  const g = ctx.gate;
  if (!g || names.length === 0) return;
  let s = uses.get(g);
  if (!s) uses.set(g, (s = new Set()));
  for (const n of names) s.add(`${n} on ${origin}`);
}

/** What the audit records of a call's secrets: "NAME on ORIGIN", comma separated. */
export function secretsAudit(g: GateContext): string | undefined {
  const s = uses.get(g);
  return s && s.size ? [...s].join(", ") : undefined;
}

/**
 * SECURITY I-77: a tool result with every secret the person keeps withheld, in any common encoding,
 * from its text blocks and its structured content (keys too). An image's pixels are not text: they
 * are refused on tabs that received a secret (refuseUnmaskable), never passed through here.
 */
export async function maskResult(r: CallToolResult): Promise<CallToolResult> {
  const m = await outbound.masker();
  if (m.empty) return r;
  const out: CallToolResult = { ...r, content: r.content.map((c) => (c.type === "text" ? { ...c, text: m.text(c.text) } : c)) };
  if (r.structuredContent) out.structuredContent = m.deep(r.structuredContent);
  return out;
}

/**
 * Room a cut made where no mask is (a page's main world, an isolated world without the values)
 * leaves past its limit, so the worker masks the whole secret before it cuts (maskCut): longer than
 * any encoded form of a value of up to 256 characters, or of one 128-character piece of a longer one.
 */
export const CUT_MARGIN = 4_096;

/**
 * SECURITY I-77: `s` masked, then cut to `max` characters: a cut never leaves a piece of a secret
 * the mask could not recognise. Synchronous for code that formats as it goes; callTool has built
 * the mask before any handler runs.
 */
export function maskCut(s: string, max: number): { text: string; cut: boolean } {
  const m = outbound.sync();
  const t = m ? m.text(s) : s;
  return t.length > max ? { text: t.slice(0, max), cut: true } : { text: t, cut: false };
}

/**
 * SECURITY I-77: what no mask can read (pixels, a PDF, bytes that may be compressed) is refused on
 * a tab that received a secret in this browser run; `what` says what was asked.
 */
export async function refuseUnmaskable(tabId: number, what: string): Promise<void> {
  if (await outbound.holds(tabId)) {
    throw toolError("secret_unmaskable", `${what}: tab ${tabId} received one of the person's secrets in this browser run, and ${what} cannot be checked for it; nothing was returned`);
  }
}

export const secrets = defineTool<Record<string, never>>({
  name: "secrets",
  description: "The person's secrets: names and origins, never values; fill/type {{secret:NAME}}.",
  inputSchema: { type: "object", properties: {} },
  traits: { target: "none", reads: "none", effects: [], switch: "none", dialog: "ignores", handoff: "allowed" },
  async handler() {
    let list;
    let locked;
    try {
      [list, locked] = await Promise.all([secretStore.list(), secretStore.locked()]);
    } catch (e) {
      throw storeError(e);
    }
    const lines = list.map((s) => `${s.name} (${s.kind}): ${s.origins.join(", ")}`);
    const head = locked ? "The secret store is locked (only the person can unlock it)." : `${list.length} secret${list.length === 1 ? "" : "s"}.`;
    return {
      text: [head, ...lines, ...(list.length ? ["Use one as {{secret:NAME}}; it is filled only on its origins."] : [])].join("\n"),
      data: { locked, secrets: list },
      whole: false,
    };
  },
});

// ---------- messages from the extension's own pages ----------

type SecretRequest =
  | { type: "torii.secrets.list" }
  | { type: "torii.secrets.add"; name: string; kind: string; value: string; origins: string[] }
  | { type: "torii.secrets.remove"; name: string }
  | { type: "torii.secrets.lock"; locked: boolean };

async function handlePage(m: SecretRequest): Promise<unknown> {
  switch (m.type) {
    case "torii.secrets.list":
      return { secrets: await secretStore.list(), locked: await secretStore.locked() };
    case "torii.secrets.add": {
      const origins = Array.isArray(m.origins) ? m.origins.map(String) : [];
      return { secret: await secretStore.add(String(m.name ?? ""), String(m.kind ?? ""), String(m.value ?? ""), origins) };
    }
    case "torii.secrets.remove":
      return { removed: await secretStore.remove(String(m.name ?? "")) };
    case "torii.secrets.lock":
      await secretStore.setLocked(m.locked === true);
      return { locked: m.locked === true };
  }
}

let installed = false;

/**
 * SECURITY I-69: only the extension's own pages (the options page) add, remove or lock secrets;
 * content scripts, web pages, other extensions and the link have no path here. No answer carries a
 * value.
 */
export function installSecrets(): void {
  if (installed) return;
  installed = true;
  // SECURITY I-77: the mask is built as the worker starts (and again on every change of the
  // store), so text cut to size as it arrives is masked before the cut.
  setCutMask((s) => outbound.sync()?.text(s) ?? s);
  outbound.warm();
  // A closed tab's documents, and the values in them, are gone with it.
  chrome.tabs?.onRemoved?.addListener((tabId) => void outbound.closed(tabId).catch(() => undefined));
  chrome.runtime.onMessage.addListener((msg: unknown, sender, sendResponse: (r: unknown) => void) => {
    const t = msg && typeof msg === "object" ? (msg as { type?: unknown }).type : undefined;
    if (typeof t !== "string" || !t.startsWith("torii.secrets.")) return false;
    if (sender.id !== chrome.runtime.id || !sender.url?.startsWith(self.location.origin + "/")) return false;
    handlePage(msg as SecretRequest).then(
      (r) => {
        outbound.warm();
        sendResponse({ ok: true, ...(r as object) });
      },
      (e: unknown) => sendResponse({ ok: false, error: e instanceof SecretError ? e.message : "the secret store failed", ...(e instanceof SecretError && e.field ? { field: e.field } : {}) }),
    );
    return true;
  });
}

// upload: sets files on an <input type=file> through CDP DOM.setFileInputFiles. The files come only
// from the calling session's download sandbox, named by plain file name (or their resource URI):
// the daemon resolves a name to its path and refuses anything else — a path, another session's
// file, a symlink (SECURITY I-66). The gate has already applied the allowlist, act mode and the
// person's `upload` approval (SECURITY I-16, I-19); the approval showed the file names, never
// their contents.

import { cdp } from "../cdp/debugger.js";
import { left } from "../cdp/deadline.js";
import { defineTool } from "./define.js";
import { toolError, ToolError } from "./errors.js";
import { engine, resolveTab, resolveTarget, type Target } from "./browser.js";
import { fileNames } from "./gate.js";
import { checkName, sandboxPaths } from "./files.js";
import { act, ACTION_PROPS, requireTarget, S, type ActionArgs } from "./common.js";

const MAX_FILES = 32;

/**
 * The sandbox file name an upload entry names: a plain name, or the resource URI of one of the
 * session's files (torii://files/<its folder>/<name>). Anything else is returned as given, for
 * checkName to refuse (a path holds a separator).
 */
export function sandboxName(entry: string, folder: string | undefined): string {
  const prefix = folder ? `torii://files/${folder}/` : undefined;
  if (prefix && entry.startsWith(prefix)) {
    try {
      return decodeURIComponent(entry.slice(prefix.length));
    } catch {
      return entry;
    }
  }
  return entry;
}

interface DomNode {
  nodeId: number;
  backendNodeId: number;
  attributes?: string[];
  children?: DomNode[];
  shadowRoots?: DomNode[];
  contentDocument?: DomNode;
}

function findMarked(n: DomNode | undefined, mark: string): DomNode | undefined {
  if (!n) return undefined;
  const at = n.attributes ?? [];
  for (let i = 0; i + 1 < at.length; i += 2) if (at[i] === "data-torii-file" && at[i + 1] === mark) return n;
  for (const c of [...(n.shadowRoots ?? []), ...(n.contentDocument ? [n.contentDocument] : []), ...(n.children ?? [])]) {
    const f = findMarked(c, mark);
    if (f) return f;
  }
  return undefined;
}

export const upload = defineTool<ActionArgs & Target & { files: string[] }>({
  name: "upload",
  description: "Set sandbox files on a file input.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      ref: S.ref,
      selector: S.selector,
      files: { type: "array", items: { type: "string", minLength: 1, maxLength: 400 }, minItems: 1, maxItems: MAX_FILES },
      ...ACTION_PROPS,
    },
    required: ["files"],
  },
  traits: { target: "tab", reads: "page", effects: ["upload"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    requireTarget(a);
    const names = a.files.map((f) => sandboxName(f, ctx.gate?.filesFolder));
    names.forEach((n, i) => checkName(n, `files[${i}]`));
    const tabId = (await resolveTab(a.tabId)).id as number;
    return act(tabId, a, ctx, async () => {
      const r = await resolveTarget(tabId, a);
      const mark = crypto.randomUUID();
      const m = await engine<{ label: string; multiple: boolean }>(tabId, "markFile", { ...r.args, mark }, { signal: ctx.signal, deadline: ctx.deadline, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
      if (names.length > 1 && !m.value.multiple) throw toolError("invalid_argument", "this file input takes one file", undefined, { field: "files" });
      // SECURITY I-66: only the session's own sandbox files, resolved by the daemon.
      const paths = await sandboxPaths(ctx, names);
      const ms = () => left(ctx.deadline, 10_000);
      const doc = await cdp<{ root: DomNode }>(tabId, "DOM.getDocument", { depth: -1, pierce: true }, ms(), ctx.signal);
      const node = findMarked(doc.root, mark);
      if (!node) throw toolError("not_found", `${a.ref ?? a.selector}: the file input is in a frame upload cannot reach`);
      try {
        await cdp(tabId, "DOM.setFileInputFiles", { files: paths, backendNodeId: node.backendNodeId }, ms(), ctx.signal);
      } catch (e) {
        if (e instanceof ToolError && ["cancelled", "timeout", "no_tab", "navigation_failed", "debugger_conflict"].includes(e.code)) throw e;
        // Chrome judges the paths (and whether Torii may read local files).
        throw toolError("invalid_argument", `Chrome refused the files: ${e instanceof Error ? e.message : String(e)}`, undefined, { field: "files" });
      } finally {
        await cdp(tabId, "DOM.removeAttribute", { nodeId: node.nodeId, name: "data-torii-file" }, 2_000).catch(() => undefined);
      }
      return { text: `set ${names.length} file(s) on ${m.value.label}: ${fileNames(names)}`, data: { files: names.length } };
    });
  },
});

// print_to_pdf: CDP Page.printToPDF into the session's download sandbox, returned as a
// resource_link (files.ts), so the PDF's bytes reach the agent only through resources/read. The PDF
// comes as a stream read in chunks, each passed on to the daemon as it arrives (files.ts openFile):
// no step holds or encodes the whole file, so a 20,000-row page prints within the call's deadline.
// Printing renders the document without showing it, so a background tab prints as it is: the
// tab is never brought forward. Every frame the PDF shows is judged after printing, like a
// screenshot (SECURITY I-42, I-66).

import { cdp } from "../cdp/debugger.js";
import { left } from "../cdp/deadline.js";
import { defineTool, MAX_TOOL_TIMEOUT_MS } from "./define.js";
import { toolError } from "./errors.js";
import { resolveTab } from "./browser.js";
import { S } from "./common.js";
import { watchCapture } from "./origin.js";
import { CHUNK_BYTES, checkName, openFile, type FileWriter } from "./files.js";
import { refuseUnmaskable } from "./secrets.js";

interface Args {
  tabId?: number;
  name?: string;
  scale?: number;
  pageRanges?: string;
}

interface IoRead {
  data: string;
  base64Encoded?: boolean;
  eof: boolean;
}

const PDF_TOO_LARGE_HINT = 'Print fewer pages (pageRanges, e.g. "1-3") or a smaller scale; or screenshot a region.';

/** print-20261201-231500.pdf (UTC). */
function defaultPdfName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `print-${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}.pdf`;
}

export const printToPdf = defineTool<Args>({
  name: "print_to_pdf",
  group: "pdf",
  description: "Print a tab, even a background one, to a PDF resource.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      name: { type: "string", minLength: 1, maxLength: 200, doc: "No folders" },
      scale: { type: "number", minimum: 0.1, maximum: 2 },
      pageRanges: { type: "string", maxLength: 100, doc: '"1-3, 5"' },
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  idempotent: false,
  timeoutMs: MAX_TOOL_TIMEOUT_MS,
  async handler(a, ctx) {
    const name = a.name ?? defaultPdfName();
    checkName(name);
    const tabId = (await resolveTab(a.tabId)).id as number;
    // SECURITY I-77: pixels and PDF bytes cannot be checked for a secret the tab holds.
    await refuseUnmaskable(tabId, "a PDF");
    const watch = await watchCapture(tabId);
    let stream: string;
    try {
      const params: Record<string, unknown> = {
        printBackground: true,
        scale: a.scale ?? 1,
        transferMode: "ReturnAsStream",
        // A tagged PDF walks the page's accessibility tree: on a 3,000-row table it made the PDF
        // 18 times larger (6.6 MiB, not 0.37) and the print nearly 3 times slower.
        generateTaggedPDF: false,
      };
      if (a.pageRanges) params.pageRanges = a.pageRanges;
      let r: { stream?: string };
      try {
        r = await Promise.race([cdp<{ stream?: string }>(tabId, "Page.printToPDF", params, left(ctx.deadline), ctx.signal), watch.interrupted]);
      } catch (e) {
        await watch.check();
        if (e instanceof Error && /page range/i.test(e.message)) throw toolError("invalid_argument", `pageRanges: ${e.message}`, undefined, { field: "pageRanges" });
        throw e;
      }
      if (!r.stream) throw toolError("internal", "the browser printed no PDF stream");
      stream = r.stream;
      // SECURITY I-42: judged once printed, before any byte leaves the browser.
      try {
        await watch.check();
      } catch (e) {
        void cdp(tabId, "IO.close", { handle: stream }, 5_000).catch(() => undefined);
        throw e;
      }
    } finally {
      watch.stop();
    }
    const w = await openFile(ctx, { name, mimeType: "application/pdf", source: { tab: tabId, what: "a PDF" } }, PDF_TOO_LARGE_HINT).catch((e: unknown) => {
      void cdp(tabId, "IO.close", { handle: stream }, 5_000).catch(() => undefined);
      throw e;
    });
    try {
      await pipe(tabId, stream, w, ctx);
      const link = await w.commit();
      return {
        text: `printed tab ${tabId} to ${link.name} (${Math.round(link.size / 1024)} KiB) in the download sandbox: ${link.uri}`,
        data: { tabId, file: link },
        whole: true,
        resources: [link],
      };
    } finally {
      w.cancel();
      void cdp(tabId, "IO.close", { handle: stream }, 5_000).catch(() => undefined);
    }
  },
});

/**
 * Reads the PDF stream in chunks and writes each to the daemon, reading the next while the last
 * one is sent. The file must start as a PDF does, or nothing is saved.
 */
async function pipe(tabId: number, handle: string, w: FileWriter, ctx: { deadline: number; signal: AbortSignal }): Promise<void> {
  const read = () => cdp<IoRead>(tabId, "IO.read", { handle, size: CHUNK_BYTES }, left(ctx.deadline), ctx.signal);
  let next = read();
  for (let first = true; ; first = false) {
    const c = await next;
    if (!c.eof) {
      next = read();
      next.catch(() => undefined);
    }
    // A PDF is binary: the browser sends it as base64.
    if (c.base64Encoded === false || (first && !atob(c.data.slice(0, 8)).startsWith("%PDF-"))) throw toolError("internal", "the browser's print is not a PDF; nothing was saved");
    if (c.data) await w.write(c.data);
    if (c.eof) return;
  }
}

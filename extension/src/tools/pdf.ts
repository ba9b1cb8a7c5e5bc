// print_to_pdf: CDP Page.printToPDF into the session's download sandbox, returned as a
// resource_link (files.ts), so the PDF's bytes reach the agent only through resources/read.
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
import { checkName, MAX_FILE_B64, mib, putFile } from "./files.js";
import { refuseUnmaskable } from "./secrets.js";

interface Args {
  tabId?: number;
  name?: string;
  scale?: number;
  pageRanges?: string;
}


export const PDF_TOO_LARGE_HINT = 'Print fewer pages (pageRanges, e.g. "1-3") or a smaller scale; or screenshot a region.';

/** print-20261201-231500.pdf (UTC). */
export function defaultPdfName(now = new Date()): string {
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
    let data: string;
    try {
      const params: Record<string, unknown> = {
        printBackground: true,
        scale: a.scale ?? 1,
        transferMode: "ReturnAsBase64",
      };
      if (a.pageRanges) params.pageRanges = a.pageRanges;
      let r: { data: string };
      try {
        r = await Promise.race([cdp<{ data: string }>(tabId, "Page.printToPDF", params, left(ctx.deadline, 80_000), ctx.signal), watch.interrupted]);
      } catch (e) {
        await watch.check();
        if (e instanceof Error && /page range/i.test(e.message)) throw toolError("invalid_argument", `pageRanges: ${e.message}`, undefined, { field: "pageRanges" });
        throw e;
      }
      await watch.check();
      data = r.data;
    } finally {
      watch.stop();
    }
    if (data.length > MAX_FILE_B64) {
      throw toolError("too_large", `the PDF is ${mib((data.length * 3) / 4)} (${mib(data.length)} base64), over the ${mib(MAX_FILE_B64)} base64 one file may take through the link; nothing was saved`, PDF_TOO_LARGE_HINT, {
        size: Math.round((data.length * 3) / 4),
        limit: MAX_FILE_B64,
      });
    }
    const link = await putFile(ctx, { name, mimeType: "application/pdf", data, source: { tab: tabId, what: "a PDF" } }, PDF_TOO_LARGE_HINT);
    return {
      text: `printed tab ${tabId} to ${link.name} (${Math.round(link.size / 1024)} KiB) in the download sandbox: ${link.uri}`,
      data: { tabId, file: link },
      whole: true,
      resources: [link],
    };
  },
});

// save_to_file: the agent's own text or bytes as a file of its session's download sandbox, e.g.
// to upload it later (upload takes files from the sandbox only) or to hand the person a result.
// Returned as a resource_link (files.ts, SECURITY I-66).

import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { putFile } from "./files.js";

interface Args {
  name: string;
  text?: string;
  base64?: string;
}

export const saveToFile = defineTool<Args>({
  name: "save_to_file",
  description: "Save text or base64 as a file resource.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", minLength: 1, maxLength: 200, doc: "No folders" },
      text: { type: "string" },
      base64: { type: "string" },
    },
    required: ["name"],
  },
  idempotent: false,
  traits: { target: "none", reads: "none", effects: [], switch: "none", dialog: "ignores", handoff: "allowed" },
  async handler(a, ctx) {
    if ((a.text === undefined) === (a.base64 === undefined)) throw toolError("invalid_argument", "give exactly one of text or base64", undefined, { field: "text" });
    if (a.base64 !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(a.base64)) throw toolError("invalid_argument", "base64: not base64", undefined, { field: "base64" });
    // The type it reads back as comes from the name's extension; one without gets .txt for text.
    const mimeType = a.text !== undefined ? "text/plain" : "application/octet-stream";
    const link = await putFile(ctx, { name: a.name, mimeType, source: "agent", ...(a.text !== undefined ? { text: a.text } : { data: a.base64 as string }) }, "Save less per file: split it into several files.");
    return {
      text: `saved ${link.name} (${link.size} bytes, ${link.mimeType}) in the download sandbox: ${link.uri}`,
      data: { file: link },
      whole: true,
      resources: [link],
    };
  },
});

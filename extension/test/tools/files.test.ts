// Files as resources (SECURITY I-66), the extension's half: names are checked and sizes capped
// before any bytes travel, the daemon's typed refusals come back as tool errors, a kept download
// is saved under torii/<session folder>/ with a name that cannot climb, and a result carries the
// resource_link instead of the bytes.
import { afterEach, describe, expect, it } from "vitest";
import { b64Bytes, CHUNK_BYTES, checkName, MAX_FILE_BYTES, openFile, putFile, safeName, setFileRequester } from "../../src/tools/files.js";
import type { ResourceLink } from "../../src/tools/define.js";
import { sandboxTarget } from "../../src/tools/downloads.js";
import { toCallResult, type ToolContext } from "../../src/tools/define.js";
import { ToolError } from "../../src/tools/errors.js";

const ctx = (id?: string): ToolContext => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 10_000,
  gate: { signal: new AbortController().signal, ...(id ? { owner: { id, label: "e2e" } } : {}), filesFolder: "20261201-120000-e2e-ab12cd34" },
});
const LINK: ResourceLink = { type: "resource_link", uri: "torii://files/20261201-120000-e2e-ab12cd34/a.pdf", name: "a.pdf", mimeType: "application/pdf", size: 3 };

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    if (e instanceof ToolError) return e.code;
    throw e;
  }
}

describe("files as resources", () => {
  afterEach(() => setFileRequester(() => Promise.reject(new Error("no link in this test"))));

  it("names with path separators, dots or control characters are refused before anything is sent", async () => {
    const sent: unknown[] = [];
    setFileRequester(async (_m, p) => {
      sent.push(p);
      return LINK;
    });
    for (const bad of ["../../.bashrc", "a/b.pdf", "a\\b.pdf", "..", ".env", "", "x\u0000y", "é".repeat(101)]) {
      expect(() => checkName(bad), JSON.stringify(bad)).toThrow(ToolError);
      expect(await code(putFile(ctx("s-1"), { name: bad, mimeType: "text/plain", text: "x", source: "agent" })), bad).toBe("invalid_argument");
    }
    expect(sent).toEqual([]);
    expect(await code(putFile(ctx("s-1"), { name: "ok.txt", mimeType: "text/plain", text: "x", source: "agent" }))).toBe("ok");
    expect(sent).toEqual([{ sessionId: "s-1", name: "ok.txt", mimeType: "text/plain", text: "x" }]);
  });

  it("names with a bidi control character are refused naming its code point, before anything is sent (SECURITY I-85)", async () => {
    const sent: unknown[] = [];
    setFileRequester(async (_m, p) => {
      sent.push(p);
      return LINK;
    });
    for (const cp of [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) {
      const name = `invoice${String.fromCodePoint(cp)}fdp.exe`;
      const e = await putFile(ctx("s-1"), { name, mimeType: "text/plain", text: "x", source: "agent" }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ToolError);
      expect((e as ToolError).code).toBe("invalid_argument");
      const hex = cp.toString(16).toUpperCase().padStart(4, "0");
      expect((e as ToolError).message).toContain(`U+${hex}`);
      // The message shows the name escaped, so it cannot reorder what the reader sees.
      expect((e as ToolError).message).not.toContain(String.fromCodePoint(cp));
      expect(() => checkName(name, "saveAs")).toThrow(/^saveAs: /);
    }
    expect(sent).toEqual([]);
    for (const ok of ["résumé.txt", "تقرير.pdf", "レポート.pdf"]) expect(() => checkName(ok)).not.toThrow();
    expect(safeName("invoice\u202efdp.exe")).toBe("invoicefdp.exe");
  });

  it("a file over the total cap is too_large with the fix, and nothing is sent", async () => {
    let sent = 0;
    setFileRequester(async () => {
      sent++;
      return LINK;
    });
    const e = await openFile(ctx("s-1"), { name: "big.pdf", mimeType: "application/pdf", source: "agent", size: MAX_FILE_BYTES + 1 }, "Print fewer pages (pageRanges).").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect((e as ToolError).code).toBe("too_large");
    expect((e as ToolError).message).toMatch(/MiB/);
    expect((e as ToolError).hint).toContain("pageRanges");
    expect(sent).toBe(0);
  });

  it("a file over one chunk goes in bounded chunks, in order, then commit (SECURITY I-81)", async () => {
    const calls: { m: string; p: Record<string, unknown> }[] = [];
    setFileRequester(async (m, p) => {
      calls.push({ m, p: p as Record<string, unknown> });
      if (m === "torii/files/begin") return { id: "t1", chunkMax: CHUNK_BYTES };
      if (m === "torii/files/chunk") return { received: 0 };
      return { ...LINK, size: (p as { size: number }).size };
    });
    const text = "row of a long table\n".repeat(70_000); // 1.4 MB
    const link = await putFile(ctx("s-1"), { name: "t.txt", mimeType: "text/plain", text, source: "agent" });
    expect(calls.map((c) => c.m)).toEqual(["torii/files/begin", "torii/files/chunk", "torii/files/chunk", "torii/files/chunk", "torii/files/commit"]);
    expect(calls[0]?.p).toMatchObject({ sessionId: "s-1", name: "t.txt", size: text.length });
    let off = 0;
    let got = "";
    for (const c of calls.filter((x) => x.m === "torii/files/chunk")) {
      expect(c.p.offset).toBe(off);
      const n = b64Bytes(c.p.data as string);
      expect(n).toBeLessThanOrEqual(CHUNK_BYTES);
      got += atob(c.p.data as string);
      off += n;
    }
    expect(got).toBe(text);
    expect(calls[4]?.p).toEqual({ sessionId: "s-1", id: "t1", size: text.length });
    expect(link.size).toBe(text.length);
  });

  it("a refused chunk or a cancelled call cancels the transfer; nothing more is sent", async () => {
    const calls: string[] = [];
    setFileRequester(async (m) => {
      calls.push(m);
      if (m === "torii/files/begin") return { id: "t1", chunkMax: CHUNK_BYTES };
      if (m === "torii/files/chunk") throw Object.assign(new Error("chunk out of order"), { code: -32602, data: { toolCode: "invalid_argument" } });
      return {};
    });
    const w = await openFile(ctx("s-1"), { name: "a.pdf", mimeType: "application/pdf", source: "agent" });
    expect(await code(w.write(btoa("%PDF-1.7")))).toBe("invalid_argument");
    expect(await code(w.commit())).toBe("cancelled");
    expect(calls).toEqual(["torii/files/begin", "torii/files/chunk", "torii/files/cancel"]);

    calls.length = 0;
    setFileRequester(async (m) => {
      calls.push(m);
      return m === "torii/files/begin" ? { id: "t2" } : { received: 3 };
    });
    const ac = new AbortController();
    const c = { ...ctx("s-1"), signal: ac.signal };
    const w2 = await openFile(c, { name: "a.pdf", mimeType: "application/pdf", source: "agent" });
    await w2.write(btoa("abc"));
    ac.abort();
    expect(await code(w2.write(btoa("def")))).toBe("cancelled");
    expect(await code(w2.commit())).toBe("cancelled");
    expect(calls).toEqual(["torii/files/begin", "torii/files/chunk", "torii/files/cancel"]);
  });

  it("the daemon's typed refusal is the tool error it names; no session is invalid_argument", async () => {
    setFileRequester(async () => {
      throw Object.assign(new Error("files: not a file of this session's sandbox"), { code: -32602, data: { toolCode: "not_found" } });
    });
    expect(await code(putFile(ctx("s-1"), { name: "a.txt", mimeType: "text/plain", text: "x", source: "agent" }))).toBe("not_found");
    expect(await code(putFile(ctx(), { name: "a.txt", mimeType: "text/plain", text: "x", source: "agent" }))).toBe("invalid_argument");
  });

  it("a kept download goes to torii/<folder>/ under a name that cannot climb", () => {
    expect(sandboxTarget("f1", { id: 1, url: "http://x/", filename: "../../.bashrc" })).toBe("torii/f1/bashrc");
    expect(sandboxTarget("f1", { id: 1, url: "http://x/dir/report.csv" })).toBe("torii/f1/report.csv");
    expect(safeName("C:\\Users\\x\\..\\.ssh\\id_rsa")).toBe("id_rsa");
    expect(safeName("...")).toBe("download");
  });

  it("a result carries the resource_link after the text, not the bytes", () => {
    const r = toCallResult({ text: "saved a.pdf", data: { file: LINK }, whole: true, resources: [LINK] });
    expect(r.content).toEqual([{ type: "text", text: "saved a.pdf" }, LINK]);
  });
});

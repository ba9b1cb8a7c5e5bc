// toCallResult: the text block and structuredContent each carry the whole result, once; on the
// link the text crosses once, and the daemon copies it into structuredContent (META_TEXT).
import { describe, expect, it } from "vitest";
import { META_TEXT, toCallResult } from "../../src/tools/define.js";

describe("toCallResult", () => {
  it("data without `whole`: structuredContent is the data, marked for the daemon to add the same text", () => {
    const r = toCallResult({ text: "tab 1 · T · u\n- button \"Go\" [ref=e1]", data: { tabId: 1, url: "u" } });
    expect(r.content).toEqual([{ type: "text", text: "tab 1 · T · u\n- button \"Go\" [ref=e1]" }]);
    expect(r.structuredContent).toEqual({ tabId: 1, url: "u" });
    expect(r._meta).toEqual({ [META_TEXT]: true });
  });
  it("`whole` data is structuredContent as it is (its fields already say what the text says)", () => {
    const r = toCallResult({ text: "1 match\n- button \"Go\" [ref=e1]", data: { total: 1, matches: [{ line: "- button \"Go\" [ref=e1]" }] }, whole: true });
    expect(r.structuredContent).toEqual({ total: 1, matches: [{ line: "- button \"Go\" [ref=e1]" }] });
    expect(r._meta).toBeUndefined();
  });
  it("no data: no structuredContent (a client reading it falls back to the text)", () => {
    expect(toCallResult({ text: "done" }).structuredContent).toBeUndefined();
  });
  it("an image: no structuredContent, so a client reading it falls back to the content blocks that carry the image", () => {
    const r = toCallResult({ text: "screenshot: 2x2 png", data: { width: 2 }, images: [{ data: "AAAA", mimeType: "image/png" }] });
    expect(r.structuredContent).toBeUndefined();
    expect(r.content).toEqual([{ type: "text", text: "screenshot: 2x2 png" }, { type: "image", data: "AAAA", mimeType: "image/png" }]);
  });
});

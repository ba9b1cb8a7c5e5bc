import { describe, expect, it } from "vitest";
import { asToolError, ERROR_CODES, ERROR_HINTS, errorResult, forRead, READ_HINTS, toolError } from "../../src/tools/errors.js";

describe("errors", () => {
  it("every code has a one-line hint", () => {
    for (const c of ERROR_CODES) {
      expect(c).toMatch(/^[a-z_]+$/);
      expect(ERROR_HINTS[c].length).toBeGreaterThan(10);
      expect(ERROR_HINTS[c]).not.toContain("\n");
    }
    for (const c of ["no_tab", "stale_ref", "not_found", "not_visible", "covered", "not_editable", "timeout", "navigation_failed", "busy",
      "extension_not_connected", "invalid_argument", "screenshot_too_large", "dialog_blocking", "cancelled", "internal", "paused"]) {
      expect(ERROR_CODES).toContain(c);
    }
  });
  it("formats an MCP error result", () => {
    const r = errorResult(toolError("covered", "Buy is covered", undefined, { coveredBy: { ref: "e9" } }));
    expect(r).toEqual({
      content: [{ type: "text", text: `covered: Buy is covered\nhint: ${ERROR_HINTS.covered}` }],
      structuredContent: { error: { code: "covered", message: "Buy is covered", hint: ERROR_HINTS.covered, coveredBy: { ref: "e9" } } },
      isError: true,
    });
  });
  it("classifies Chrome error strings", () => {
    expect(asToolError(new Error("No tab with id: 12.")).code).toBe("no_tab");
    expect(asToolError(new Error("Cannot access a chrome:// URL")).code).toBe("unsupported_page");
    expect(asToolError(new Error("Another debugger is already attached to the tab with id: 3.")).code).toBe("debugger_conflict");
    expect(asToolError(new Error("Frame with ID 4 was removed.")).code).toBe("navigation_failed");
    expect(asToolError(new Error("weird")).code).toBe("internal");
  });
});

describe("a read-only tool's failure", () => {
  it("a timeout or a dropped answer says nothing changed, never that it may have run", () => {
    const t = forRead(toolError("timeout", "screenshot: no result within 50000 ms; it may have run"));
    expect(t.message).toBe("screenshot: no result within 50000 ms; it only reads, so nothing changed");
    expect(t.hint).toBe(READ_HINTS.timeout);
    expect(t.hint).not.toMatch(/may have/);
    expect(forRead(toolError("too_large", "dropped")).hint).toBe(READ_HINTS.too_large);
    // A hint of the tool's own, and other codes, stay.
    expect(forRead(toolError("timeout", "the page did not answer", "Retry later.")).hint).toBe("Retry later.");
    const nf = toolError("not_found", "nothing");
    expect(forRead(nf)).toBe(nf);
  });
});

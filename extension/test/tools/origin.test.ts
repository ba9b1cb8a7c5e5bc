// The pure parts of the read gates: judging a document by what it reports itself, dialogs named
// without their text when foreign, browser messages without URLs, and the gate leaving a relative
// fetch_in_page URL to the page's own base URL (SECURITY I-40…I-44).
import { afterEach, describe, expect, it } from "vitest";
import { docAllowed } from "../../src/tools/origin.js";
import { dialogText, DialogRaised } from "../../src/tools/browser.js";
import { classifyChromeError } from "../../src/tools/errors.js";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { getTool } from "../../src/tools/registry.js";
import { defaultPolicy, permissivePolicy, type Policy } from "../../src/policy/policy.js";
import { ToolError } from "../../src/tools/errors.js";

const policy = (pattern: string, extra: Record<string, unknown> = {}): Policy => ({ ...defaultPolicy(), actMode: true, rules: [{ pattern, ...extra }] });

describe("docAllowed: a document by its own origin", () => {
  const p = policy("good.example");
  it("an allowed origin with its own URL passes; another origin does not, whatever its URL says", () => {
    expect(docAllowed(p, "https://good.example", "https://good.example/a?b")).toBe(true);
    expect(docAllowed(p, "https://evil.example", "https://good.example/")).toBe(false);
    // A blank document (popup, frame, srcdoc) is judged by the origin it reports.
    expect(docAllowed(p, "https://good.example", "about:blank")).toBe(true);
    expect(docAllowed(p, "https://evil.example", "about:blank")).toBe(false);
    expect(docAllowed(p, "https://evil.example", "about:srcdoc")).toBe(false);
    expect(docAllowed(p, "https://good.example", "blob:https://good.example/4f1c")).toBe(true);
  });
  it("opaque, file, data and malformed origins never pass, permissive policy included", () => {
    for (const pol of [p, permissivePolicy()]) {
      for (const o of ["null", "file://", "data:", "", "https://good.example/", "https://good.example:443", "javascript:", "chrome://settings"]) {
        expect(docAllowed(pol, o, "about:blank"), o).toBe(false);
      }
    }
    expect(docAllowed(permissivePolicy(), "http://127.0.0.1:5555", "http://127.0.0.1:5555/x")).toBe(true);
  });
  it("a path rule admits the document at that path only, never a blank document of the origin", () => {
    const pp = policy("https://good.example/app/*");
    expect(docAllowed(pp, "https://good.example", "https://good.example/app/x")).toBe(true);
    expect(docAllowed(pp, "https://good.example", "https://good.example/other")).toBe(false);
    expect(docAllowed(pp, "https://good.example", "about:blank")).toBe(false);
  });
});

describe("dialogs of foreign frames carry no text", () => {
  it("a foreign dialog is named by its type only, with a hint to hand off", () => {
    const e = new DialogRaised({ type: "prompt", message: "", foreign: true });
    expect(e.code).toBe("dialog_blocking");
    expect(e.message).toContain("prompt");
    expect(e.message).toContain("only the person");
    expect(e.hint).toContain("handoff");
    expect(dialogText({ type: "alert", message: "hello", foreign: true })).not.toContain("hello");
  });
  it("an allowed frame's dialog keeps its text", () => {
    expect(dialogText({ type: "confirm", message: "Delete it?" })).toContain("Delete it?");
    expect(new DialogRaised({ type: "alert", message: "hi" }).hint).not.toContain("handoff");
  });
});

describe("browser messages lose the URLs they quote", () => {
  it("every URL scheme a blocked page could be named by", () => {
    const msg = classifyChromeError('Cannot access contents of url "https://evil.example/p?token=1". See blob:https://evil.example/u, data:text/html,x, about:blank and ws://evil.example:9/.').message;
    expect(msg).not.toMatch(/evil\.example|token|text\/html|about:blank/);
    expect(msg).toContain("Cannot access contents of url");
  });
  it("the classification still reads the original text", () => {
    const e = classifyChromeError('Cannot access contents of url "https://evil.example/". Extension manifest must request permission to access this host.');
    expect(e.code).toBe("unsupported_page");
    expect(e.message).not.toContain("evil.example");
    expect(classifyChromeError("No tab with id: 5.").code).toBe("no_tab");
  });
});

describe("fetch_in_page at the gate", () => {
  afterEach(() => setGateState({ paused: () => false }));
  const env = (p: Policy): PolicyEnv => ({
    policy: async () => p,
    tab: async (id) => ({ tabId: id ?? 7, url: "https://good.example/page" }),
    inHandoff: () => false,
    checkNoDialog: () => undefined,
    allFramesAllowed: async () => true,
    risk: async () => undefined,
    inputFacts: async (_t, origin) => ({ origin }),
    ask: async () => "approved",
  } as PolicyEnv);
  async function code(args: Record<string, unknown>): Promise<string> {
    setGateState({ paused: () => false, env: env(policy("good.example", { fetch: true, approvals: { evaluate: "allow" } })) });
    const ctx: GateContext = { signal: new AbortController().signal };
    try {
      await gate({ tool: getTool("fetch_in_page")!, args }, ctx);
      return "ok";
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      return e.code;
    }
  }
  it("an absolute URL off the list is refused before the page is asked; a relative one is left to the page's base URL", async () => {
    expect(await code({ url: "https://evil.example/x" })).toBe("origin_not_allowed");
    expect(await code({ url: "https://good.example/x" })).toBe("ok");
    // Only the page knows its <base href>: the handler resolves and judges it there.
    expect(await code({ url: "collect?x=1" })).toBe("ok");
    expect(await code({ url: "//evil.example/x" })).toBe("ok");
  });
});

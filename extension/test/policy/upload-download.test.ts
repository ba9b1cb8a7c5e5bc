// The upload and download approval kinds (SECURITY I-19): the policy's defaults and per-origin
// choices, the gate asking about upload with file names (never paths or contents), and the
// download guard attributing only the agent's downloads and applying allow / ask / deny.
import { afterEach, describe, expect, it } from "vitest";
import { approvalChoice, defaultPolicy, judgeUrl, normalizePolicy, permissivePolicy, type Policy } from "../../src/policy/policy.js";
import type { ApprovalRequest } from "../../src/policy/approvals.js";
import { gate, setGateState, type GateContext, type PolicyEnv } from "../../src/tools/gate.js";
import { getTool } from "../../src/tools/registry.js";
import { ToolError, type CallToolResult } from "../../src/tools/errors.js";
import { DownloadGuard, LINGER_MS, downloadName } from "../../src/tools/downloads.js";
import { sandboxName } from "../../src/tools/upload.js";
import { checkName } from "../../src/tools/files.js";

const NO_EFFECT = { submit: false, destructive: false };
/** The target the fake page describes: a button the page marks destructive. */
const DELETE_BUTTON = { label: 'button "Delete"', click: { submit: false, destructive: true }, enter: NO_EFFECT, space: NO_EFFECT };

type Req = Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">;
const ORIGIN = "https://good.example";
const policyWith = (c: Partial<Policy["approvals"]>, rule: Partial<Policy["approvals"]> = {}): Policy => ({
  ...defaultPolicy(),
  actMode: true,
  approvals: { ...defaultPolicy().approvals, ...c },
  rules: [{ pattern: "good.example", approvals: rule }],
});

describe("policy: upload and download kinds", () => {
  it("default to ask; permissive allows; per-origin choice wins; off the list is deny", () => {
    const d = defaultPolicy();
    expect(d.approvals.upload).toBe("ask");
    expect(d.approvals.download).toBe("ask");
    expect(permissivePolicy().approvals.upload).toBe("allow");
    expect(permissivePolicy().approvals.download).toBe("allow");
    const p = policyWith({ upload: "allow", download: "ask" }, { download: "deny" });
    expect(approvalChoice(p, judgeUrl(p, `${ORIGIN}/x`), "upload")).toBe("allow");
    expect(approvalChoice(p, judgeUrl(p, `${ORIGIN}/x`), "download")).toBe("deny");
    expect(approvalChoice(p, judgeUrl(p, "https://other.example/"), "download")).toBe("deny");
    const n = normalizePolicy({ approvals: { upload: "deny", download: "nonsense" } });
    expect(n.approvals.upload).toBe("deny");
    expect(n.approvals.download).toBe("ask");
  });
});

describe("gate: upload", () => {
  afterEach(() => setGateState({ paused: () => false }));
  const run = async (p: Policy, answer: "approved" | "denied" = "approved", url = `${ORIGIN}/`) => {
    const asked: Req[] = [];
    const env: PolicyEnv = {
      policy: async () => p,
      tab: async (id) => ({ tabId: id ?? 7, url }),
      inHandoff: () => false,
      checkNoDialog: () => undefined,
      allFramesAllowed: async () => true,
      risk: async () => ({ label: 'button "Choose file"', isPassword: false, submit: false, destructive: false }),
      inputFacts: async (_t, origin, _e, args) => ({ origin, ...(args.ref || args.selector ? { target: DELETE_BUTTON } : {}) }),
      ask: async (r) => {
        asked.push(r);
        return answer;
      },
    };
    setGateState({ paused: () => false, env });
    const ctx: GateContext = { signal: new AbortController().signal };
    try {
      await gate({ tool: getTool("upload")!, args: { selector: "#f", files: ["torii://files/20261201-secret-ab12/report.pdf", "photo.png"] } }, ctx);
      return { code: "ok", asked };
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      return { code: e.code, asked };
    }
  };
  it("ask shows file names and the target, not paths; deny refuses; act mode and allowlist apply", async () => {
    const ask = await run(policyWith({ upload: "ask" }));
    expect(ask.code).toBe("ok");
    expect(ask.asked).toHaveLength(1);
    expect(ask.asked[0]).toMatchObject({ kind: "upload", tool: "upload", element: 'button "Choose file"', text: "report.pdf, photo.png" });
    expect(JSON.stringify(ask.asked)).not.toContain("secret");
    expect(JSON.stringify(ask.asked)).not.toContain("torii://");
    expect((await run(policyWith({ upload: "ask" }), "denied")).code).toBe("approval_denied");
    expect((await run(policyWith({ upload: "deny" }))).code).toBe("approval_denied");
    const allow = await run(policyWith({ upload: "allow" }));
    expect(allow).toEqual({ code: "ok", asked: [] });
    expect((await run({ ...policyWith({ upload: "allow" }), actMode: false })).code).toBe("act_mode_off");
    expect((await run(policyWith({ upload: "allow" }), "approved", "https://evil.example/")).code).toBe("origin_not_allowed");
  });
  it("sandbox file names only: a path, another folder's URI or a dot name is refused (SECURITY I-66)", () => {
    const folder = "20261201-120000-e2e-ab12cd34";
    expect(sandboxName("a.txt", folder)).toBe("a.txt");
    expect(sandboxName(`torii://files/${folder}/my%20file.pdf`, folder)).toBe("my file.pdf");
    // Another session's URI is not turned into a name: it stays a string with separators.
    expect(sandboxName("torii://files/other-folder/a.txt", folder)).toBe("torii://files/other-folder/a.txt");
    for (const bad of ["/tmp/a.txt", "C:\\a.txt", "../a.txt", "..", ".bashrc", "a/b", "torii://files/other-folder/a.txt", sandboxName(`torii://files/${folder}/..%2Fx`, folder)]) {
      expect(() => checkName(bad, "files[0]"), bad).toThrow(ToolError);
    }
    expect(() => checkName("a.txt")).not.toThrow();
  });
});

describe("download guard", () => {
  const ok: CallToolResult = { content: [{ type: "text", text: "clicked" }] };
  const guard = (p: Policy, answer: "approved" | "denied" | "timeout" = "approved", now = () => Date.now()) => {
    const asked: Req[] = [];
    const g = new DownloadGuard({
      policy: async () => p,
      ask: async (r) => {
        asked.push(r);
        return answer;
      },
      now,
    });
    return { g, asked };
  };
  const ctxOn = (tabId = 7, origin = ORIGIN): GateContext => ({ signal: new AbortController().signal, tabId, origin });
  const item = (id: number, referrer = `${ORIGIN}/page`) => ({ id, url: `${ORIGIN}/files/report.csv`, referrer });

  it("the person's downloads are never touched: other origins, no call, extension-started", async () => {
    const { g } = guard(policyWith({ download: "deny" }));
    expect(g.decide(item(1))).toBeUndefined();
    const w = g.begin(getTool("click")!, ctxOn());
    expect(g.decide(item(2, "https://other.example/"))).toBeUndefined();
    expect(g.decide({ ...item(3), byExtensionId: "abc" })).toBeUndefined();
    expect(g.begin(getTool("snapshot")!, ctxOn())).toBeUndefined();
    await g.end(w, ok);
  });
  it("deny: cancelled, and the call in flight reports approval_denied", async () => {
    const { g, asked } = guard(policyWith({ download: "ask" }, { download: "deny" }));
    const w = g.begin(getTool("click")!, ctxOn());
    const d = g.decide(item(4))!;
    expect(await d.hold).toBe(true);
    expect(await d.verdict).toBe("cancel");
    const r = await g.end(w, ok);
    expect(r.isError).toBe(true);
    expect((r.structuredContent?.error as { code: string }).code).toBe("approval_denied");
    expect(asked).toHaveLength(0);
  });
  it("ask: the person sees the file name; approve proceeds, timeout cancels", async () => {
    const a = guard(policyWith({ download: "ask" }));
    const w = a.g.begin(getTool("click")!, ctxOn());
    const end = a.g.end(w, ok);
    const d = a.g.decide(item(5))!;
    expect(await d.verdict).toBe("proceed");
    expect(await end).toBe(ok);
    expect(a.asked[0]).toMatchObject({ kind: "download", tool: "click", origin: ORIGIN, text: "report.csv" });
    const t = guard(policyWith({ download: "ask" }), "timeout");
    const w2 = t.g.begin(getTool("click")!, ctxOn());
    expect(await t.g.decide(item(6))!.verdict).toBe("cancel");
    expect((((await t.g.end(w2, ok)).structuredContent?.error) as { code: string }).code).toBe("approval_timeout");
  });
  it("ask: a click whose page stayed put ends at once; one that may have left waits for a late download and reports it", async () => {
    const a = guard(policyWith({ download: "ask" }), "denied");
    const stayed = { ...ctxOn(), noDownload: true };
    const w = a.g.begin(getTool("click")!, stayed);
    const t0 = Date.now();
    expect(await a.g.end(w, ok)).toBe(ok);
    expect(Date.now() - t0).toBeLessThan(LINGER_MS);
    // A download it started elsewhere right after is still the agent's: held, asked, cancelled.
    const late = a.g.decide(item(9))!;
    expect(await late.hold).toBe(true);
    expect(await late.verdict).toBe("cancel");
    expect(a.asked).toHaveLength(1);
    // The page could not tell: the call waits, and a download that comes meanwhile fails it.
    const w2 = a.g.begin(getTool("click")!, ctxOn());
    const end = a.g.end(w2, ok);
    setTimeout(() => a.g.decide(item(10)), LINGER_MS / 3);
    expect(((await end).structuredContent?.error as { code: string }).code).toBe("approval_denied");
  });
  it("allow: proceeds without holding; within 2 s after the call still counts, later not", async () => {
    let now = 1_000_000;
    const { g } = guard(policyWith({ download: "allow" }), "approved", () => now);
    const w = g.begin(getTool("click")!, ctxOn());
    expect(await g.end(w, ok)).toBe(ok);
    now += 1_500;
    const d = g.decide(item(7))!;
    expect(await d.hold).toBe(false);
    expect(await d.verdict).toBe("proceed");
    now += 1_000;
    expect(g.decide(item(8))).toBeUndefined();
  });
  it("names", () => {
    expect(downloadName({ id: 1, url: "https://a.example/x/y/file.zip?q=1" })).toBe("file.zip");
    expect(downloadName({ id: 1, url: "https://a.example/", filename: "/dl/got.txt" })).toBe("got.txt");
  });
});

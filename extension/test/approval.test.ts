// @vitest-environment jsdom
// The approval window as the person sees it: the real page script on the real approval.html, its
// countdown driven by the request's expiry (fake clock), ending in a plain "expired".
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { ApprovalRequest } from "../src/policy/approvals.js";

const html = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../static/approval.html"), "utf8");
const T0 = Date.parse("2026-01-01T12:00:00Z");

let approvals: ApprovalRequest[];
let changed: (() => void) | undefined;

function request(expiresInMs: number): ApprovalRequest {
  return {
    id: "r1",
    kind: "submit",
    tool: "click",
    origin: "https://shop.example",
    session: "agent:alpha:1",
    createdAt: T0,
    expiresAt: T0 + expiresInMs,
  };
}

/** Loads the page script afresh against the page's own markup. */
async function openWindow(): Promise<void> {
  document.documentElement.innerHTML = new DOMParser().parseFromString(html, "text/html").documentElement.innerHTML;
  history.replaceState(null, "", "#id=r1");
  vi.resetModules();
  await import("../src/approval/approval.js");
  await vi.advanceTimersByTimeAsync(0); // the first listApprovals answer
}

const state = () => document.getElementById("state")!.textContent;
const buttonsDisabled = () => ["approve", "deny"].map((b) => (document.getElementById(b) as HTMLButtonElement).disabled);

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  approvals = [];
  changed = undefined;
  vi.stubGlobal("chrome", {
    runtime: {
      sendMessage: async (msg: { type: string }) => {
        if (msg.type === "torii.approval.list") return { ok: true, approvals };
        if (msg.type === "torii.approval.decide") return { ok: true };
        return { ok: false, error: "unexpected" };
      },
      onMessage: { addListener: (fn: (m: unknown) => void) => (changed = () => fn({ type: "torii.policy.changed" })) },
    },
  });
  vi.stubGlobal("close", () => {});
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("approval window countdown", () => {
  test("counts down each second from the request's expiry and then says it expired", async () => {
    approvals = [request(3_000)];
    await openWindow();
    expect(state()).toBe("The agent waits for your answer (3 s left).");
    await vi.advanceTimersByTimeAsync(999);
    expect(state()).toBe("The agent waits for your answer (3 s left).");
    await vi.advanceTimersByTimeAsync(1);
    expect(state()).toBe("The agent waits for your answer (2 s left).");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(state()).toBe("The agent waits for your answer (1 s left).");
    expect(buttonsDisabled()).toEqual([false, false]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(state()).toMatch(/^Expired: /);
    expect(buttonsDisabled()).toEqual([true, true]);
    // The worker then drops the request and says the list changed: still expired, not "answered".
    approvals = [];
    changed?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(state()).toMatch(/^Expired: /);
  });

  test("keeps time from the expiry when the window opens late, and a re-render does not reset it", async () => {
    approvals = [request(60_000)];
    vi.setSystemTime(T0 + 15_500);
    await openWindow();
    expect(state()).toBe("The agent waits for your answer (45 s left).");
    await vi.advanceTimersByTimeAsync(5_000);
    changed?.(); // another request came or went
    await vi.advanceTimersByTimeAsync(0);
    expect(state()).toBe("The agent waits for your answer (40 s left).");
  });

  test("a request answered elsewhere before it expired says so, and the countdown stops", async () => {
    approvals = [request(10_000)];
    await openWindow();
    approvals = [];
    changed?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(state()).toBe("This request was answered or has expired.");
    await vi.advanceTimersByTimeAsync(20_000);
    expect(state()).toBe("This request was answered or has expired.");
  });

  test("the person's answer stays on screen; the countdown no longer writes over it", async () => {
    approvals = [request(10_000)];
    await openWindow();
    document.getElementById("approve")!.click();
    await vi.advanceTimersByTimeAsync(0);
    expect(state()).toBe("Approved.");
    approvals = [];
    changed?.();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(state()).toBe("Approved.");
  });
});

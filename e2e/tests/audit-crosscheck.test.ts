// SECURITY I-70: the browser keeps the audit chain links the daemon showed it and hands them back on
// every reconnect; a daemon whose audit store was replaced behind its back says so in `torii status`,
// `torii doctor` and its log. Real Chromium, the real extension, the real daemon.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, test } from "vitest";
import { type Browser, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

interface Witness {
  daemonId: string;
  links: { seq: number; hash: string }[];
  mismatch?: string;
}

interface AuditStatus {
  audit?: { head: { seq: number }; crossCheck?: { ok: boolean; seq?: number; mismatch?: string; checked: number } };
}

describeBrowser("audit cross-check", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;

  test("a reconnect cross-checks the chain; a replaced audit.db is reported in status, doctor and the log", async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    for (let i = 0; i < 3; i++) {
      const r = await torii.cli(["exec", "--session-label", "e2e-audit", "tabs"], { timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
    }
    const witness = () =>
      popup.evaluate(async () => {
        const c = (globalThis as unknown as { chrome: { storage: { local: { get(k: string): Promise<Record<string, unknown>> } } } }).chrome;
        return (await c.storage.local.get("auditWitness")).auditWitness as Witness | undefined;
      });
    // The extension learns the head a few seconds after the calls: it now holds record 3.
    const held = await pollUntil("the extension to hold the chain's head", async () => {
      const w = await witness();
      return w && w.links.some((l) => l.seq >= 3) ? w : undefined;
    }, { timeoutMs: 20_000 });
    const verify = await torii.cli(["audit", "verify"]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toContain("chain ok: 3 record(s) verified");

    // An intact store: the reconnect's cross-check passes.
    await torii.stop();
    await torii.start();
    await torii.waitForLink(true, 15_000);
    const ok = await pollUntil("the cross-check after the restart", async () => {
      const s = await torii.cliJSON<AuditStatus>(["status", "--json"]);
      return s.audit?.crossCheck;
    }, { timeoutMs: 15_000 });
    expect(ok.ok, JSON.stringify(ok)).toBe(true);
    expect(ok.checked).toBeGreaterThanOrEqual(1);

    // audit.db is replaced while the daemon is down: it starts an empty chain of its own.
    await torii.stop();
    for (const sfx of ["", "-wal", "-shm"]) await rm(join(torii.stateDir, "audit.db" + sfx), { force: true });
    await torii.start();
    await torii.waitForLink(true, 15_000);
    const bad = await pollUntil("the mismatch in status", async () => {
      const s = await torii.cliJSON<AuditStatus>(["status", "--json"]);
      return s.audit?.crossCheck && !s.audit.crossCheck.ok ? s.audit.crossCheck : undefined;
    }, { timeoutMs: 15_000 });
    const newest = Math.max(...held.links.map((l) => l.seq));
    expect(bad.mismatch).toContain(`the browser saw record ${newest} but the store ends at 0`);
    const status = await torii.cli(["status"]);
    expect(status.stdout).toContain("MISMATCH with browser");
    expect(status.stdout).toContain("torii audit verify");
    const doctor = await torii.cli(["doctor"]);
    expect(doctor.code).not.toBe(0);
    expect(doctor.stdout).toMatch(/audit chain.*FAIL|FAIL.*audit chain/);
    expect(doctor.stdout).toContain("audit verify");
    expect(torii.log.toString()).toContain("the store disagrees with what a browser saw of the chain");
    // The browser keeps its evidence for the next reconnect.
    const after = await witness();
    expect(after?.mismatch).toContain(`record ${newest}`);
    expect(after?.links).toEqual(held.links.filter((l) => after?.links.some((x) => x.seq === l.seq)));
  });
});

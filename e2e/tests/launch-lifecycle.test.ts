// The managed browser's life: it asks no Google service anything at start (observed through a
// recording proxy it is pointed at), a second `torii launch` reuses it, `torii stop` ends it.
import { chmod, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { browserPath } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { killByArg, pidsWithArg } from "../src/procs.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";

/** A forward proxy that records the host of every request and CONNECT, and answers 502. */
async function recordingProxy(): Promise<{ server: Server; port: number; hosts: string[] }> {
  const hosts: string[] = [];
  const server = createServer((req, res) => {
    hosts.push(req.headers.host ?? new URL(req.url ?? "", "http://x").host);
    res.writeHead(502).end();
  });
  server.on("connect", (req, socket) => {
    hosts.push(req.url ?? "");
    socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as AddressInfo).port, hosts };
}

const google = /(^|\.)(google|googleapis|gstatic|gvt1|gvt2|googleusercontent|doubleclick|1e100)\.[a-z.]+(:\d+)?$/i;

describeBrowser("managed browser lifecycle", () => {
  const rig = useRig();
  let root: string | undefined;
  let profile: string | undefined;
  let proxy: Server | undefined;
  afterAll(async () => {
    if (profile) await killByArg(profile);
    proxy?.close();
    if (root) await removeDir(root);
  });

  test("starts asking no Google service anything, a second launch reuses it, stop ends it", { timeout: 180_000 }, async () => {
    const torii = await rig.daemon();
    await torii.start();
    root = await shortTempDir();
    profile = join(root, "profile");
    const p = await recordingProxy();
    proxy = p.server;
    // The browser, pointed at the proxy: everything it fetches off loopback shows up there.
    const wrapper = join(root, "browser");
    await writeFile(wrapper, `#!/bin/sh\nexec '${browserPath ?? ""}' --proxy-server=http://127.0.0.1:${p.port} "$@"\n`);
    await chmod(wrapper, 0o755);

    const first = await torii.cli(["launch", "--browser", wrapper, "--headless", "--permissive", "--profile", profile], {
      timeoutMs: 90_000,
    });
    if (first.code !== 0) {
      const log = await readFile(join(torii.stateDir, "browser.log"), "utf8").catch(() => "");
      expect.fail(`torii launch exited ${first.code}\n${first.stdout}\n${first.stderr}\n${log.slice(-3000)}`);
    }
    expect(first.stdout).toMatch(/paired as "[^"]*" \(/);
    const [pid] = await pidsWithArg(profile);
    expect(pid, "the managed browser runs").toBeGreaterThan(0);

    // The proxy does see this browser: a page it is sent to arrives there. Chromium's start-up
    // requests come before this one, which is what the assertion below relies on.
    // "Ready" means ready: the first call right after launch runs.
    const nav = await torii.cli(["exec", "navigate", "url=http://probe.torii.test/"], { timeoutMs: 60_000 });
    expect(nav.stderr, "navigate right after launch").not.toContain("extension_not_connected");
    await pollUntil("the probe request to reach the proxy", async () => p.hosts.includes("probe.torii.test") || undefined, {
      timeoutMs: 30_000,
    }).catch(() => expect.fail(`the proxy never saw the browser (navigate: ${nav.stdout} ${nav.stderr}); hosts: ${p.hosts.join(", ")}`));
    expect(p.hosts.filter((h) => google.test(h)), `hosts the browser asked for: ${p.hosts.join(", ")}`).toEqual([]);

    // A second launch (as a second `make run`, which adds --reuse) reuses it.
    const second = await torii.cli(["launch", "--browser", wrapper, "--headless", "--permissive", "--reuse", "--profile", profile], {
      timeoutMs: 60_000,
    });
    expect(second.code, `${second.stdout}\n${second.stderr}`).toBe(0);
    expect(second.stdout).toContain(`already running (pid ${pid}, profile ${profile}), paired as "`);
    expect(await pidsWithArg(profile)).toContain(pid);

    // stop ends the daemon and the browser, cleanly.
    const stop = await torii.cli(["stop"], { timeoutMs: 60_000 });
    expect(stop.code, `${stop.stdout}\n${stop.stderr}`).toBe(0);
    expect(stop.stdout).toContain(`stopped the managed browser (pid ${pid}, profile ${profile})\n`);
    expect(stop.stdout).toMatch(/stopped the daemon \(pid \d+\)\n/);
    await pollUntil("the browser to be gone", async () => ((await pidsWithArg(profile ?? "")).length === 0) || undefined, {
      timeoutMs: 15_000,
    });
    expect(await torii.healthzOrNull()).toBeUndefined();
    const again = await torii.cli(["stop"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing to stop");
  });
});

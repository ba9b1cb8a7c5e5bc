// Install without a toolchain: the npm packages `make dist` builds (scripts/dist), installed from
// their tarballs with an empty npm cache and no network, as `npx` would install them, and then
// used the way the README says: `torii launch`, then an agent's `torii mcp`, then `torii stop`.
// The install sits under a folder named _npx, as npx's cache does, so torii names itself by the
// npx command when it tells the person how to point an agent at it.
import { spawn } from "node:child_process";
import { chmod, mkdir, readdir, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { browserPath, repoRoot } from "../src/env.ts";
import { describeBrowser } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { killByArg, pidsWithArg } from "../src/procs.ts";
import { Site } from "../src/site.ts";
import { Torii } from "../src/torii.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    p.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      p.kill("SIGKILL");
      reject(new Error(`${cmd} ${args.join(" ")} timed out after ${opts.timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs);
    p.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    p.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const VERSION = "0.0.0-e2e.1";
const NPX = "npx -y @torii-browser/torii";
const PLATFORM_PKG = `@torii-browser/torii-${process.platform}-${process.arch}`;

describeBrowser("the npm package", () => {
  let root: string | undefined;
  let torii: Torii | undefined;
  let site: Site | undefined;
  let mcp: Mcp | undefined;
  let bin: string | undefined;
  let profile: string | undefined;
  afterAll(async () => {
    await mcp?.close();
    if (bin && torii) await run(bin, ["stop"], { env: torii.env, timeoutMs: 30_000 }).catch(() => undefined);
    if (profile) await killByArg(profile);
    await torii?.dispose();
    await site?.close();
    if (root) await removeDir(root);
  });

  test("built by scripts/dist, installed offline: version, launch with a policy, an agent over mcp, stop", { timeout: 420_000 }, async () => {
    root = await shortTempDir();
    const home = join(root, "home");
    await mkdir(home);
    // The binary embeds the extension/dist the suite already built; scripts/dist does not rebuild it.
    const dist = join(root, "dist");
    const built = await run(join(repoRoot, "scripts", "dist"), [], {
      cwd: repoRoot,
      env: { ...process.env, DIST_PLATFORMS: "host", DIST_DIR: dist, VERSION },
      timeoutMs: 300_000,
    });
    expect(built.code, `scripts/dist failed\n${built.stdout}\n${built.stderr}`).toBe(0);
    const tarballs = (await readdir(dist)).filter((f) => f.endsWith(".tgz")).sort();
    expect(tarballs).toEqual([`torii-browser-torii-${VERSION}.tgz`, `torii-browser-torii-${process.platform}-${process.arch}-${VERSION}.tgz`]);

    // An empty project and an empty npm cache; --offline: nothing may come from a registry.
    const app = join(root, "_npx", "e2e");
    await mkdir(app, { recursive: true });
    await writeFile(join(app, "package.json"), '{ "name": "npm-package-e2e", "private": true }\n');
    const env = { ...process.env, HOME: home, npm_config_userconfig: join(home, ".npmrc"), npm_config_update_notifier: "false" };
    const installed = await run("npm", ["install", "--offline", "--cache", join(root, "npm-cache"), "--no-audit", "--no-fund", ...tarballs.map((t) => join(dist, t))], {
      cwd: app,
      env,
      timeoutMs: 120_000,
    });
    expect(installed.code, `npm install failed\n${installed.stdout}\n${installed.stderr}`).toBe(0);
    bin = join(app, "node_modules", ".bin", "torii");

    // An install that lost the binary's executable bit still runs: the bin restores it.
    const exe = join(app, "node_modules", PLATFORM_PKG, "bin", process.platform === "win32" ? "torii.exe" : "torii");
    await chmod(exe, 0o644);
    torii = await Torii.create();
    const tenv = { ...torii.env, HOME: home };
    const version = await run(bin, ["version"], { env: tenv, timeoutMs: 30_000 });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(new RegExp(`^torii ${VERSION.replace(/\./g, "\\.")}`));
    expect((await stat(exe)).mode & 0o111).not.toBe(0);

    // The binary's exit code comes through the bin unchanged.
    const bad = await run(bin, ["no-such-command"], { env: tenv, timeoutMs: 30_000 });
    const direct = await run(exe, ["no-such-command"], { env: tenv, timeoutMs: 30_000 });
    expect(direct.code).not.toBe(0);
    expect(bad.code).toBe(direct.code);

    // launch: the daemon starts in the background, the managed browser with the person's policy.
    site = await Site.start();
    profile = join(root, "profile");
    const allowed = `127.0.0.1:${site.port}`;
    const launched = await run(bin, ["launch", "--browser", browserPath ?? "", "--headless", "--profile", profile, "--allow", allowed, "--act"], {
      env: tenv,
      timeoutMs: 120_000,
    });
    expect(launched.code, `torii launch failed\nstdout: ${launched.stdout}\nstderr: ${launched.stderr}`).toBe(0);
    // What the person is told to give an agent is the npx line, not a path in npx's cache.
    expect(launched.stdout).toContain(`${NPX} mcp`);
    expect(launched.stdout).not.toContain(join("node_modules", ".bin"));

    // An agent through the official MCP SDK, started by the package's bin.
    mcp = await Mcp.connect(torii, "npm-package", [], bin);
    const nav = await pollUntil("the launch policy to be in force", async () => {
      const n = await mcp!.call("navigate", { url: site!.url("session.html?id=N") });
      return n.isError ? undefined : n;
    }, { timeoutMs: 30_000, intervalMs: 250 });
    expect(nav.text).toContain("Session page");
    const tabs = await mcp.call("tabs");
    expect(tabs.isError, tabs.text).toBe(false);
    expect(tabs.text).toContain(`${allowed}/session.html?id=N`);
    await mcp.close();
    mcp = undefined;

    // stop: the daemon and the managed browser end.
    const stopped = await run(bin, ["stop"], { env: tenv, timeoutMs: 60_000 });
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain("stopped the managed browser");
    await pollUntil("the managed browser's processes to exit", async () => (await pidsWithArg(profile!)).length === 0, { timeoutMs: 15_000 });

    // Without the platform package (an install with --omit=optional): a clear error naming it.
    await rename(join(app, "node_modules", PLATFORM_PKG), join(root, "moved-away"));
    const missing = await run(bin, ["version"], { env: tenv, timeoutMs: 30_000 });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`the platform package ${PLATFORM_PKG} is not installed`);
    expect(missing.stderr).toContain(`${process.platform}-${process.arch}`);
  });
});

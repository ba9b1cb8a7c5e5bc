#!/usr/bin/env node
// Runs the prebuilt torii binary that the platform package for this machine
// (@torii-browser/torii-<platform>-<arch>, an optional dependency) installed.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const MAIN = "@torii-browser/torii";
// The platforms `make dist` builds, in Node's names (process.platform-process.arch).
const SUPPORTED = ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "win32-arm64", "win32-x64"];

const platform = `${process.platform}-${process.arch}`;
const pkg = `${MAIN}-${platform}`;
const exe = process.platform === "win32" ? "torii.exe" : "torii";

function fail(message) {
  process.stderr.write(`torii: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  if (!SUPPORTED.includes(platform)) {
    fail(
      `there is no prebuilt torii for this platform (${platform}); prebuilt: ${SUPPORTED.join(", ")}.\n` +
        "  fix: build it from source (Go and Node.js): git clone the Torii repository, then `make build` gives bin/torii",
    );
  }
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    fail(
      `the platform package ${pkg} is not installed, so there is no torii binary for this platform (${platform}).\n` +
        `  fix: install it again with optional dependencies (not --omit=optional / --no-optional), e.g. \`npm install ${MAIN}\`, ` +
        `or add it yourself: \`npm install ${pkg}\``,
    );
  }
}

// Some installs (an unpacked tarball, a copied node_modules) lose the executable bit.
function ensureExecutable(file) {
  if (process.platform === "win32") return;
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    try {
      fs.chmodSync(file, 0o755);
    } catch (err) {
      fail(`${file} is not executable and could not be made so (${err.message}).\n  fix: chmod +x ${file}`);
    }
  }
}

function onPath(name, target) {
  const real = (p) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return "";
    }
  };
  const want = real(target);
  const exts = process.platform === "win32" ? ["", ".cmd", ".exe"] : [""];
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const found = real(path.join(dir, name + ext));
      if (found && found === want) return true;
    }
  }
  return false;
}

// How an agent's MCP config should start torii again: what torii prints for agents.
function selfCommand() {
  const script = process.argv[1] || "";
  if (script.split(/[\\/]/).includes("_npx")) return `npx -y ${MAIN}`;
  if (onPath("torii", script)) return "torii";
  const quoted = /\s/.test(script) ? `"${script}"` : script;
  return process.platform === "win32" ? `node ${quoted}` : quoted;
}

const bin = binaryPath();
ensureExecutable(bin);

const child = spawn(bin, process.argv.slice(2), {
  stdio: "inherit",
  env: { ...process.env, TORII_SELF_COMMAND: selfCommand() },
  windowsHide: true,
});

// The binary handles these itself (torii mcp ends its session, launch --foreground stops its
// browser), so they are passed on, not acted on here.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const handlers = {};
for (const sig of forwarded) {
  handlers[sig] = () => {
    try {
      child.kill(sig);
    } catch {
      // the child has gone already
    }
  };
  try {
    process.on(sig, handlers[sig]);
  } catch {
    // not a signal on this platform (SIGHUP on Windows)
  }
}

child.on("error", (err) => fail(`could not run ${bin}: ${err.message}`));
child.on("exit", (code, signal) => {
  for (const sig of forwarded) process.removeListener(sig, handlers[sig]);
  if (signal) {
    // End the same way, so a shell or supervisor sees what the binary saw.
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});

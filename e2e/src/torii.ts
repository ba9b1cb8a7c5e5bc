// A real `torii serve` on a free loopback port with its own state and config
// dirs, and the real CLI pointed at it.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { toriiBin } from "./env.ts";
import { Tail, freePort, pollUntil, removeDir, shortTempDir } from "./util.ts";

export interface Healthz {
  ok: boolean;
  version?: string;
  daemonId: string;
  extensionConnected: boolean;
}

export interface Device {
  deviceId: string;
  name: string;
  origin: string;
  createdAt?: string;
  lastSeen?: string;
  connected?: boolean;
}

export interface PendingPair {
  requestId: string;
  deviceName?: string;
  origin?: string;
  code: string;
  createdAt?: string;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const p of live) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
});

/** Tracks a child so it is killed if the test process dies first. */
export function track(p: ChildProcess): ChildProcess {
  live.add(p);
  p.on("exit", () => live.delete(p));
  return p;
}

export function exited(p: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), timeoutMs);
    p.once("exit", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** "123 456", "123456" → "123456". */
export function normalizeCode(s: string): string {
  return s.replace(/\D/g, "");
}

export class Torii {
  readonly log = new Tail();
  private proc: ChildProcess | undefined;
  private constructor(
    readonly root: string,
    readonly stateDir: string,
    readonly configDir: string,
    readonly port: number,
  ) {}

  /** Fresh dirs and a free port; writes config.json with that port. Does not start. */
  static async create(): Promise<Torii> {
    const root = await shortTempDir();
    const stateDir = join(root, "s");
    const configDir = join(root, "c");
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    const port = await freePort();
    const t = new Torii(root, stateDir, configDir, port);
    // The download sandbox inside the test's own folder, never the person's ~/Downloads.
    await writeFile(join(configDir, "config.json"), JSON.stringify({ listen: t.addr, filesRoot: t.filesRoot }) + "\n", { mode: 0o600 });
    return t;
  }

  /** Adds to config.json (before start, or before a reload): `agents`, `broker`, limits. */
  async configure(settings: Record<string, unknown>): Promise<void> {
    const path = join(this.configDir, "config.json");
    const cfg = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
    await writeFile(path, JSON.stringify({ ...cfg, ...settings }) + "\n", { mode: 0o600 });
  }

  /** The daemon's download sandbox (config filesRoot). */
  get filesRoot(): string {
    return join(this.root, "files", "torii");
  }

  get addr(): string {
    return `127.0.0.1:${this.port}`;
  }
  get httpUrl(): string {
    return `http://${this.addr}`;
  }
  get wsUrl(): string {
    return `ws://${this.addr}/acp`;
  }
  /**
   * Where this daemon's discovery record goes (the default state dir's parent, XDG_STATE_HOME): its
   * own, so daemons of different tests never read each other's, nor the person's. A test of
   * clean-environment clients sets it to `<their HOME>/.local/state`.
   */
  xdgStateHome = "";
  get env(): NodeJS.ProcessEnv {
    const xdg = this.xdgStateHome || join(this.root, "xdg");
    return { ...process.env, TORII_STATE_DIR: this.stateDir, TORII_CONFIG_DIR: this.configDir, XDG_STATE_HOME: xdg, NO_COLOR: "1" };
  }
  get running(): boolean {
    return !!this.proc && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Starts `torii serve` and waits until /healthz answers ok. */
  async start({ timeoutMs = 15_000 } = {}): Promise<Healthz> {
    if (this.running) throw new Error("torii serve already running");
    this.log.push(`\n--- torii serve --listen ${this.addr} --verbose ---\n`);
    const p = track(
      spawn(toriiBin, ["serve", "--listen", this.addr, "--verbose"], { env: this.env, stdio: ["ignore", "pipe", "pipe"] }),
    );
    p.stdout?.setEncoding("utf8").on("data", (d: string) => this.log.push(d));
    p.stderr?.setEncoding("utf8").on("data", (d: string) => this.log.push(d));
    p.on("exit", (code, sig) => this.log.push(`--- torii serve exited code=${code} signal=${sig} ---\n`));
    this.proc = p;
    return pollUntil(
      `torii serve to answer /healthz on ${this.addr}`,
      async () => {
        if (!this.running) throw new Error(`torii serve exited early:\n${this.log}`);
        const h = await this.healthz();
        return h.ok ? h : undefined;
      },
      { timeoutMs, intervalMs: 50 },
    );
  }

  /** SIGTERM (as a person's Ctrl-C or a service manager would), SIGKILL after a grace period. */
  async stop({ graceMs = 10_000 } = {}): Promise<void> {
    const p = this.proc;
    if (!p || !this.running) return;
    p.kill("SIGTERM");
    if (!(await exited(p, graceMs))) {
      this.log.push(`--- torii serve ignored SIGTERM for ${graceMs} ms: SIGKILL ---\n`);
      p.kill("SIGKILL");
      await exited(p, 5_000);
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    await removeDir(this.root);
  }

  async healthz(): Promise<Healthz> {
    const res = await fetch(`${this.httpUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
    if (!res.ok) throw new Error(`/healthz: HTTP ${res.status}`);
    return (await res.json()) as Healthz;
  }

  /** healthz, or undefined while the daemon does not answer. */
  async healthzOrNull(): Promise<Healthz | undefined> {
    try {
      return await this.healthz();
    } catch {
      return undefined;
    }
  }

  /** Runs `torii ARGS…` against this daemon's dirs. */
  cli(args: string[], { input, timeoutMs = 30_000 }: { input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
    return new Promise((resolve, reject) => {
      const p = track(spawn(toriiBin, args, { env: this.env, stdio: ["pipe", "pipe", "pipe"] }));
      let stdout = "";
      let stderr = "";
      p.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      p.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const timer = setTimeout(() => {
        p.kill("SIGKILL");
        reject(new Error(`torii ${args.join(" ")} timed out after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, timeoutMs);
      p.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
      p.on("close", (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
      // A command that does not read stdin may exit first: ignore EPIPE on it.
      p.stdin?.on("error", () => {});
      p.stdin?.end(input ?? "");
    });
  }

  /** Runs a CLI command that must succeed and print JSON. */
  async cliJSON<T = unknown>(args: string[]): Promise<T> {
    const r = await this.cli(args);
    if (r.code !== 0) throw new Error(`torii ${args.join(" ")} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    try {
      return JSON.parse(r.stdout) as T;
    } catch {
      throw new Error(`torii ${args.join(" ")} did not print JSON:\n${r.stdout}\nstderr: ${r.stderr}`);
    }
  }

  /** `torii devices list --json`, as {devices:[…]} or a bare array. */
  async devices(): Promise<Device[]> {
    const out = await this.cliJSON<{ devices?: Device[] | null } | Device[]>(["devices", "list", "--json"]);
    const list = Array.isArray(out) ? out : (out.devices ?? []);
    return list;
  }

  /** `torii pair list --json`, as {requests:[…]} or a bare array. */
  async pendingPairs(): Promise<PendingPair[]> {
    const out = await this.cliJSON<{ requests?: PendingPair[] | null } | PendingPair[]>(["pair", "list", "--json"]);
    return Array.isArray(out) ? out : (out.requests ?? []);
  }

  /** Waits until /healthz reports the extension link up (or down). */
  waitForLink(up: boolean, timeoutMs = 15_000): Promise<Healthz> {
    return pollUntil(
      `/healthz extensionConnected=${up}`,
      async () => {
        const h = await this.healthz();
        return h.extensionConnected === up ? h : undefined;
      },
      { timeoutMs, intervalMs: 50 },
    );
  }

  /** Starts the interactive `torii pair`, as a person at a terminal would. */
  pairInteractive(): PairSession {
    return new PairSession(track(spawn(toriiBin, ["pair"], { env: this.env, stdio: ["pipe", "pipe", "pipe"] })));
  }
}

/** The terminal side of `torii pair`: read the prompt, answer it. */
export class PairSession {
  private out = "";
  private readonly waiters = new Set<() => void>();
  constructor(readonly proc: ChildProcess) {
    proc.stdin?.on("error", () => {}); // EPIPE if it exits before the answer is read
    const onData = (d: string) => {
      this.out += d;
      for (const w of this.waiters) w();
    };
    proc.stdout?.setEncoding("utf8").on("data", onData);
    proc.stderr?.setEncoding("utf8").on("data", onData);
    proc.on("exit", () => {
      for (const w of this.waiters) w();
    });
  }

  get output(): string {
    return this.out;
  }

  private waitFor(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const m = this.out.match(re);
        if (m) {
          done();
          resolve(m);
        } else if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
          done();
          reject(new Error(`torii pair exited (${this.proc.exitCode ?? this.proc.signalCode}) before printing ${re}:\n${this.out}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`torii pair did not print ${re} within ${timeoutMs} ms; it printed:\n${this.out}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Waits for `Device "NAME" (ORIGIN) wants to pair.`, `Code: 123 456` and `Approve? [y/N]`. */
  async prompt(timeoutMs = 20_000): Promise<{ name: string; origin: string; code: string }> {
    await this.waitFor(/Approve\?/i, timeoutMs);
    const dev = this.out.match(/Device "([^"]*)" \(([^)]*)\) wants to pair/);
    const code = this.out.match(/Code:\s*(\d{3})\s?(\d{3})/);
    if (!code) throw new Error(`torii pair printed no "Code: NNN NNN" line:\n${this.out}`);
    return { name: dev?.[1] ?? "", origin: dev?.[2] ?? "", code: `${code[1]}${code[2]}` };
  }

  answer(text: string): void {
    this.proc.stdin?.write(text);
    this.proc.stdin?.end();
  }

  async exit(timeoutMs = 20_000): Promise<number | null> {
    if (!(await exited(this.proc, timeoutMs))) {
      this.proc.kill("SIGKILL");
      throw new Error(`torii pair did not exit within ${timeoutMs} ms after the answer:\n${this.out}`);
    }
    return this.proc.exitCode;
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill("SIGKILL");
  }
}

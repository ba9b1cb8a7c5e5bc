import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Polls `fn` until it returns a truthy value; throws with `what` on timeout. */
export async function pollUntil<T>(
  what: string,
  fn: () => Promise<T> | T,
  { timeoutMs = 15_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  let last: T | undefined;
  for (;;) {
    try {
      last = await fn();
      if (last) return last as NonNullable<T>;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() >= deadline) {
      const detail = lastErr ? ` (last error: ${String(lastErr)})` : last !== undefined ? ` (last value: ${JSON.stringify(last)})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A free loopback TCP port (the daemon must listen on a port the extension is told in advance). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      if (addr === null || typeof addr === "string") return reject(new Error("no port"));
      srv.close(() => resolve(addr.port));
    });
  });
}

/** A short temp dir: the daemon's unix socket path must stay under 108 bytes. */
export async function shortTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "te-"));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Keeps the tail of a stream's text for failure reports. */
export class Tail {
  private text = "";
  constructor(private readonly max = 64 * 1024) {}
  push(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.max) this.text = this.text.slice(this.text.length - this.max);
  }
  toString(): string {
    return this.text;
  }
}

/** p's value, or undefined once ms have passed or p failed: for cleanup that must not stall a test. */
export const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T | undefined> =>
  Promise.race([p.catch(() => undefined), new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);

// A flood of connections to the link endpoint that upgrade and never authenticate, holding every
// unauthenticated slot (SECURITY I-4, I-57). Each one forges the extension's Origin and names a
// paired device in torii/hello, which makes it unevictable: with all slots so held, the daemon
// refuses the next upgrade without a live ticket with 503, so the paired extension gets back in
// only by its reserved way. Connections the daemon closes (the 10 s authentication deadline) are
// replaced at once. Raw sockets, so the flood controls every header and sees every status.
import { randomBytes } from "node:crypto";
import { type Socket, connect } from "node:net";
import { EXTENSION_ORIGIN } from "./env.ts";

/** The daemon's cap of unauthenticated connections (internal/link MaxUnauthenticated). */
export const MAX_UNAUTHENTICATED = 128;

interface Upgraded {
  status: number;
  sock: Socket;
  /** Bytes after the HTTP response head. */
  rest: Buffer;
}

/** Opens a TCP connection and sends a WebSocket upgrade; resolves with the response status. */
function upgrade(host: string, port: number, timeoutMs = 5_000): Promise<Upgraded> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port });
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error("upgrade timed out"));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      clearTimeout(timer);
      sock.off("data", onData);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head.subarray(0, end).toString("latin1"))?.[1] ?? 0);
      resolve({ status, sock, rest: head.subarray(end + 4) });
    };
    sock.on("data", onData);
    sock.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.once("connect", () => {
      sock.write(
        `GET /acp HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Protocol: acp.v1\r\nOrigin: ${EXTENSION_ORIGIN}\r\n\r\n`,
      );
    });
  });
}

/** One masked client text frame. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  const mask = randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x81, 0x80 | len]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff]);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([head, mask, body]);
}

/**
 * A fresh anonymous upgrade, as anything but the ticket-holding extension makes one: its HTTP
 * status (101 means a slot was free; the connection is dropped at once either way).
 */
export async function probeAnonymous(host: string, port: number): Promise<number> {
  const u = await upgrade(host, port);
  u.sock.destroy();
  return u.status;
}

export class Flood {
  private readonly socks = new Set<Socket>();
  private stopped = false;
  private refused = 0;
  private held = 0;
  private onChange: (() => void) | null = null;
  private fillers = 0;
  /** Upgrades that failed other than by 503 (they would mean the flood is not what it claims). */
  readonly errors: string[] = [];

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly deviceId: string,
    private readonly parallel = 16,
  ) {}

  /** Connections that upgraded and had their hello answered for the paired device. */
  get holding(): number {
    return this.held;
  }

  /** Starts filling; resolves once every slot is held and the daemon refused one more (503). */
  async start(timeoutMs = 10_000): Promise<void> {
    for (let i = 0; i < this.parallel; i++) this.filler();
    await this.until(() => this.held >= MAX_UNAUTHENTICATED && this.refused > 0, timeoutMs, "every slot held and a 503");
  }

  private until(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.onChange = null;
        reject(new Error(`flood: timed out after ${timeoutMs} ms waiting for ${what} (holding ${this.held}, errors ${this.errors.slice(0, 3).join("; ")})`));
      }, timeoutMs);
      this.onChange = () => {
        if (!pred()) return;
        clearTimeout(timer);
        this.onChange = null;
        resolve();
      };
      this.onChange();
    });
  }

  private changed(): void {
    this.onChange?.();
  }

  /** Opens connections one after another until the daemon refuses one; then waits for a close. */
  private filler(): void {
    if (this.stopped || this.fillers >= this.parallel) return;
    this.fillers++;
    void (async () => {
      try {
        while (!this.stopped) {
          const ok = await this.openOne();
          if (!ok) return; // full: a close wakes a filler again
        }
      } finally {
        this.fillers--;
      }
    })();
  }

  /** One held connection; false when the daemon refused it (503) or it could not be made. */
  private async openOne(): Promise<boolean> {
    let u: Upgraded;
    try {
      u = await upgrade(this.host, this.port);
    } catch (e) {
      this.errors.push(String(e));
      return false;
    }
    if (u.status !== 101) {
      u.sock.destroy();
      if (u.status === 503) this.refused++;
      else this.errors.push(`HTTP ${u.status}`);
      this.changed();
      return false;
    }
    if (this.stopped) {
      u.sock.destroy();
      return false;
    }
    const sock = u.sock;
    this.socks.add(sock);
    let seen = u.rest.toString("latin1");
    let counted = false;
    await new Promise<void>((resolve) => {
      const onData = (d: Buffer) => {
        seen += d.toString("latin1");
        if (!counted && seen.includes('"paired":true')) {
          counted = true;
          this.held++;
          this.changed();
          resolve();
        }
      };
      sock.on("data", onData);
      sock.once("close", () => {
        this.socks.delete(sock);
        if (counted) this.held--;
        resolve();
        // The daemon ended it (deadline or eviction): put another in its place.
        if (!this.stopped) this.filler();
      });
      sock.on("error", () => {});
      const hello = {
        jsonrpc: "2.0",
        id: 1,
        method: "torii/hello",
        params: { protocol: 1, deviceId: this.deviceId, clientNonce: randomBytes(32).toString("base64url") },
      };
      sock.write(textFrame(JSON.stringify(hello)));
    });
    return counted;
  }

  /** Ends the flood and closes every connection it holds. */
  stop(): void {
    this.stopped = true;
    for (const s of this.socks) s.destroy();
    this.socks.clear();
  }
}
